import { performance } from 'node:perf_hooks';
import { CHAT_LIMITS } from '../../src/modules/chat/service.js';
import { questions } from './chat-corpus.js';
import {
  BenchSocket,
  newConversation,
  newUser,
  type ServerChild,
  type TurnResult,
} from './chat-client.js';
import type { MemoryReport, Span } from './chat-server.js';
import { sleep } from './processes.js';
import { percentile, prng } from './sections.js';

/** The three measurements of bench/chat.ts; each returns raw figures for chat-report.ts. */

export interface Stats {
  n: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export function stats(values: readonly number[]): Stats {
  const sorted = Float64Array.from(values).sort();
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    n: values.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: percentile(sorted, 1),
    mean: values.length === 0 ? Number.NaN : sum / values.length,
  };
}

/** What the chat retrieves per question: the baseline searches for as many. */
const PASSAGES = CHAT_LIMITS.passages;

// ---------------------------------------------------------------------------------------------
// 1. One turn at a time over the knowledge base, against SearchService.search alone.

export interface RetrievalTurn {
  searchMs: number;
  hits: number;
  turn: TurnResult;
  /** Server-side spans of the turn, in ms from the client's send. */
  spans: { name: string; start: number; end: number }[];
  searchFirst: boolean;
}

export async function retrievalPart(
  server: ServerChild,
  token: string,
  count: number,
  warmup: number,
): Promise<RetrievalTurn[]> {
  const socket = await BenchSocket.open(server.port, token);
  const asked = [...questions(warmup, 2), ...questions(count, 1)];
  const turns: RetrievalTurn[] = [];
  const coin = prng(99);
  let conversation = '';
  for (const [i, question] of asked.entries()) {
    if (i % 5 === 0) conversation = await newConversation(server.base, token);
    await server.call('spans');
    // The baseline search runs right before the turn or right after it, at random.
    const searchFirst = coin() < 0.5;
    const search = () => server.call('search', { query: question, limit: PASSAGES });
    const found = searchFirst ? await search() : undefined;
    const turn = await socket.turn(conversation, question);
    const after = found ?? (await search());
    // Let the turn's last writes land before collecting its spans.
    await sleep(5);
    const origin = performance.timeOrigin + turn.sentAt;
    const spans = (await server.call('spans')).map((s: Span) => ({
      name: s.name,
      start: s.start - origin,
      end: s.end - origin,
    }));
    if (i >= warmup) turns.push({ searchMs: after.ms, hits: after.hits, turn, spans, searchFirst });
    if ((i + 1) % 50 === 0) console.log(`retrieval: ${String(i + 1)}/${String(asked.length)}`);
  }
  socket.close();
  return turns;
}

// ---------------------------------------------------------------------------------------------
// 2. Idle sockets: memory per socket and ping round trips.

export interface PingRun {
  sockets: number;
  rtt: Stats;
  /** Every round trip, ms, in the order sent. */
  raw: number[];
  seconds: number;
}

export interface IdleRound {
  /** With the one socket open, right before the round's sockets open. */
  before: MemoryReport;
  after: MemoryReport;
  openSeconds: number;
  stillOpen: number;
  /** Pings spread over the open sockets. */
  loaded: PingRun;
  /** Pings on the one socket again, once the others closed. */
  alone: PingRun;
}

export interface IdleResult {
  before: MemoryReport;
  opened: number;
  baseline: PingRun;
  rounds: IdleRound[];
}

/** `count` pings at `rate` a second, each on a socket drawn at random, not waiting for answers. */
async function pingRun(sockets: BenchSocket[], count: number, rate: number, seed: number) {
  const random = prng(seed);
  const started = performance.now();
  const pending: Promise<number>[] = [];
  for (let k = 0; k < count; k++) {
    const due = started + (k * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const socket = sockets[Math.floor(random() * sockets.length)]!;
    pending.push(socket.ping(seed * 1_000_000 + k));
  }
  const rtt = await Promise.all(pending);
  return {
    sockets: sockets.length,
    rtt: stats(rtt),
    raw: rtt,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Opens `count` sockets with at most `parallel` handshakes at a time. */
async function openMany(port: number, token: string, count: number, parallel: number) {
  const sockets: BenchSocket[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      sockets.push(await BenchSocket.open(port, token));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return sockets;
}

/**
 * One socket open, its pings (the baseline) and RSS; then `rounds` times: `sockets` more opened,
 * RSS, pings spread over them, all closed, pings on the one socket again.
 */
export async function idlePart(
  server: ServerChild,
  user: { email: string; password: string },
  opts: { sockets: number; pings: number; rate: number; rounds: number },
): Promise<IdleResult> {
  const token = await newUser(server.base, user.email, user.password);
  // Warm-up: the connection path and the ping path run a few hundred times before anything counts.
  const warm = await openMany(server.port, token, 200, 50);
  await pingRun(warm, 400, 400, 1);
  for (const s of warm) s.close();
  await sleep(1000);
  const one = await BenchSocket.open(server.port, token);
  const baseline = await pingRun([one], opts.pings, opts.rate, 2);
  const before = await server.call('memory');
  console.log(`idle: ${String(before.sockets)} socket(s), RSS ${mib(before.rss)} MiB`);
  const rounds: IdleRound[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    const roundBefore = r === 0 ? before : await server.call('memory');
    const t0 = performance.now();
    const many = await openMany(server.port, token, opts.sockets, 100);
    const openSeconds = (performance.now() - t0) / 1000;
    await sleep(2000);
    const after = await server.call('memory');
    const loaded = await pingRun(many, opts.pings, opts.rate, 10 + 2 * r);
    const stillOpen = many.filter((s) => s.open).length;
    for (const s of many) s.close();
    for (let i = 0; i < 100 && (await server.call('memory')).sockets > 1; i++) await sleep(200);
    await sleep(1000);
    const alone = await pingRun([one], opts.pings, opts.rate, 11 + 2 * r);
    rounds.push({ before: roundBefore, after, openSeconds, stillOpen, loaded, alone });
    console.log(
      `idle round ${String(r + 1)}: ${String(after.sockets)} sockets in ${openSeconds.toFixed(1)} s, ` +
        `RSS ${mib(after.rss)} MiB, ping p99 ${loaded.rtt.p99.toFixed(2)} ms ` +
        `(one socket: ${alone.rtt.p99.toFixed(2)} ms)`,
    );
  }
  one.close();
  return { before, opened: opts.sockets, baseline, rounds };
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

// ---------------------------------------------------------------------------------------------
// 3. Many turns started at once, against one turn alone.

export interface Burst {
  turns: TurnResult[];
  /** Durations of the turns' steps during the burst, by span name (see chat-server.ts). */
  steps: Record<string, Stats>;
  /** When each step started, ms from the burst's start (the clients' sends), by span name. */
  startedAt?: Record<string, Stats>;
  seconds: number;
}

export interface ConcurrentResult {
  alone: TurnResult[];
  aloneSteps: Record<string, Stats>;
  bursts: Burst[];
  users: number;
  perUser: number;
}

/** The durations of the spans recorded since the last call, by name. */
async function steps(server: ServerChild): Promise<Record<string, Stats>> {
  return (await timeline(server, 0)).steps;
}

/**
 * The spans recorded since the last call, by name: their durations, and when they started, in ms
 * from `origin` (a `performance.timeOrigin`-based time, as the spans are).
 */
async function timeline(
  server: ServerChild,
  origin: number,
): Promise<{ steps: Record<string, Stats>; startedAt: Record<string, Stats> }> {
  const durations = new Map<string, number[]>();
  const starts = new Map<string, number[]>();
  for (const span of await server.call('spans')) {
    durations.set(span.name, [...(durations.get(span.name) ?? []), span.end - span.start]);
    starts.set(span.name, [...(starts.get(span.name) ?? []), span.start - origin]);
  }
  const byName = (m: Map<string, number[]>) =>
    Object.fromEntries([...m].map(([name, v]) => [name, stats(v)]));
  return { steps: byName(durations), startedAt: byName(starts) };
}

async function drained(server: ServerChild): Promise<void> {
  for (let i = 0; i < 600 && (await server.call('inflight')) > 0; i++) await sleep(100);
  await sleep(500);
}

export async function concurrentPart(
  server: ServerChild,
  opts: {
    users: number;
    perUser: number;
    bursts: number;
    alone: number;
    password: string;
    /** Tells this run's accounts from another's on the same database. */
    tag: string;
  },
): Promise<ConcurrentResult> {
  const sockets: { socket: BenchSocket; conversation: string }[] = [];
  const tokens: string[] = [];
  for (let u = 0; u < opts.users; u++) {
    const email = `chat-bench-${opts.tag}-${String(u)}.${String(process.pid)}@example.org`;
    const token = await newUser(server.base, email, opts.password);
    tokens.push(token);
    for (let k = 0; k < opts.perUser; k++) {
      const conversation = await newConversation(server.base, token);
      sockets.push({ socket: await BenchSocket.open(server.port, token), conversation });
    }
  }
  // One turn alone: the first user's first socket, a new conversation every 5 questions.
  const first = sockets[0]!.socket;
  // One untimed turn first: a fresh instance loads its vector index on its first search.
  await first.turn(await newConversation(server.base, tokens[0]!), 'Warm-up question on dosing.');
  const alone: TurnResult[] = [];
  await server.call('spans');
  let conversation = '';
  for (const [i, q] of questions(opts.alone, 3).entries()) {
    if (i % 5 === 0) conversation = await newConversation(server.base, tokens[0]!);
    alone.push(await first.turn(conversation, q));
  }
  await drained(server);
  const aloneSteps = await steps(server);
  const bursts: Burst[] = [];
  for (let b = 0; b < opts.bursts; b++) {
    const asked = questions(sockets.length, 10 + b);
    const t0 = performance.now();
    const turns = await Promise.all(
      sockets.map(({ socket, conversation }, j) => socket.turn(conversation, asked[j]!)),
    );
    const seconds = (performance.now() - t0) / 1000;
    await drained(server);
    bursts.push({ turns, ...(await timeline(server, performance.timeOrigin + t0)), seconds });
    const p99 = stats(turns.map((t) => t.firstChunkMs)).p99;
    console.log(
      `burst ${String(b + 1)}: first chunk p99 ${p99.toFixed(0)} ms, ${seconds.toFixed(1)} s`,
    );
  }
  for (const s of sockets) s.socket.close();
  return { alone, aloneSteps, bursts, users: opts.users, perUser: opts.perUser };
}
