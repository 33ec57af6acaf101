import { cpus, totalmem } from 'node:os';
import { stats, type ConcurrentResult, type IdleResult, type RetrievalTurn } from './chat-parts.js';
import { concurrentSection, errorsOf, idleSection, ms, NO_ANSWER, x } from './chat-report-load.js';
import { findings } from './chat-report-findings.js';
import { table } from './sections.js';

/** The chat section of BENCHMARKS.md from the figures of one run of bench/chat.ts. */

export interface ChatReport {
  date: string;
  /** The commit measured, and the files of src/ that differed from it at the start. */
  code?: { commit: string; changed: string[] };
  load: Record<string, number>;
  versions: { postgres: string; redis: string };
  node: string;
  settings: Record<string, number | boolean>;
  env: Record<string, string>;
  seed: { documents: number; chunks: number; active: number; seconds: number };
  turns: RetrievalTurn[];
  idle: IdleResult;
  concurrent: ConcurrentResult;
  /** Part 3 again, each on an instance that differs in `env`. */
  variants: VariantResult[];
}

export interface VariantResult {
  name: string;
  /** What differs, in words. */
  what: string;
  env: Record<string, string>;
  result: ConcurrentResult;
}

// ---------------------------------------------------------------------------------------------
// 1. Retrieval and the extractive model

const spanOf = (t: RetrievalTurn, name: string) => t.spans.find((s) => s.name === name);
const dur = (t: RetrievalTurn, name: string) => {
  const s = spanOf(t, name);
  return s === undefined ? Number.NaN : s.end - s.start;
};

/** Consecutive stretches of a turn, client send to first chunk at the client (ms). */
function segments(t: RetrievalTurn): Record<string, number> | undefined {
  const admit = spanOf(t, 'admit');
  const history = spanOf(t, 'history');
  const retrieval = spanOf(t, 'retrieval');
  const out = spanOf(t, 'first chunk out');
  const question = spanOf(t, 'store question');
  if (!admit || !history || !retrieval || !out || !question) return undefined;
  return {
    'frame reaches `admitSend` (socket, JSON, schema check)': admit.start,
    '`admitSend`: token check, send rate (Redis)': admit.end - admit.start,
    'question stored, answer stream opened, cancel subscribed': history.start - admit.end,
    '… of which storing the question (`messages.append`)': question.end - question.start,
    'history read (`messages.thread`)': history.end - history.start,
    'retrieval (`SearchService.search` in `ChatService.passages`)': retrieval.end - history.end,
    '… full-text ranking (PostgreSQL)': dur(t, 'lexical ranking'),
    '… dense ranking (in-process index, concurrent with it)': dur(t, 'dense ranking'),
    '… passages read (PostgreSQL)': dur(t, 'passages read'),
    'extractive model to the first chunk in the answer stream': out.start - retrieval.end,
    'first chunk: stream (Redis), follower, socket, client': t.turn.firstChunkMs - out.start,
  };
}

function breakdown(turns: RetrievalTurn[]): { rows: (string | number)[][]; ok: number } {
  const all = turns.map(segments).filter((s) => s !== undefined);
  const first = stats(turns.map((t) => t.turn.firstChunkMs));
  const rows = Object.keys(all[0] ?? {}).map((name) => {
    const s = stats(all.map((seg) => seg[name]!));
    const share = name.startsWith('…') ? '' : `${((100 * s.p50) / first.p50).toFixed(0)}%`;
    return [name, ms(s.p50), ms(s.p99), share];
  });
  const after = (name: string) =>
    stats(turns.map((t) => spanOf(t, name)).flatMap((s) => (s ? [s.end - s.start] : [])));
  const store = after('store answer');
  const rest = stats(turns.map((t) => t.turn.doneMs - t.turn.firstChunkMs));
  rows.push(
    ['**first chunk at the client**', `**${ms(first.p50)}**`, ms(first.p99), '100%'],
    ['first chunk to `message_done` at the client', ms(rest.p50), ms(rest.p99), ''],
    ['… of which storing the answer (`messages.append`)', ms(store.p50), ms(store.p99), ''],
  );
  return { rows, ok: all.length };
}

function retrievalSection(r: ChatReport): string {
  const { turns } = r;
  const first = stats(turns.map((t) => t.turn.firstChunkMs));
  const done = stats(turns.map((t) => t.turn.doneMs));
  const search = stats(turns.map((t) => t.searchMs));
  const inTurn = stats(
    turns
      .flatMap((t) => (spanOf(t, 'retrieval') ? [spanOf(t, 'retrieval')!] : []))
      .map((s) => s.end - s.start),
  );
  const goal = 1.5 * search.p50 + 5;
  const order = (searchFirst: boolean) => {
    const part = turns.filter((t) => t.searchFirst === searchFirst);
    return `${ms(stats(part.map((t) => t.turn.firstChunkMs)).p50)} / ${ms(stats(part.map((t) => t.searchMs)).p50)}`;
  };
  const refused = turns.filter((t) => t.turn.text.startsWith(NO_ANSWER)).length;
  const { rows, ok } = breakdown(turns);
  return `### 1. The extractive model over ${String(r.seed.active)} chunks, one turn at a time

| measure (${String(turns.length)} questions) | p50 ms | p99 ms | max ms | p50 / search p50 |
| --- | --- | --- | --- | --- |
| **\`SearchService.search\` alone (baseline)** | ${ms(search.p50)} | ${ms(search.p99)} | ${ms(search.max)} | 1.00 |
| retrieval inside the turn (same call, timed in the turn) | ${ms(inTurn.p50)} | ${ms(inTurn.p99)} | ${ms(inTurn.max)} | ${x(inTurn.p50 / search.p50)} |
| **first \`chunk\` at the client** | ${ms(first.p50)} | ${ms(first.p99)} | ${ms(first.max)} | ${x(first.p50 / search.p50)} |
| \`message_done\` at the client | ${ms(done.p50)} | ${ms(done.p99)} | ${ms(done.max)} | ${x(done.p50 / search.p50)} |

Goal: first chunk p50 ≤ 1.5 × search p50 + 5 ms = ${ms(goal)} ms: **${first.p50 <= goal ? 'met' : 'missed'}**
(${ms(first.p50)} ms). First chunk / search p50 with the baseline search timed right before the turn
(${String(turns.filter((t) => t.searchFirst).length)} questions, at random) and right after it (the
others): ${order(true)} ms and ${order(false)} ms. ${String(refused)} of
${String(turns.length)} answers were the model's "I could not find an answer" (the off-topic tenth
of the questions, and questions the passages do not answer well enough); errors: ${errorsOf(turns.map((t) => t.turn))}.

Where the time to the first chunk goes (each stretch from wrappers around the chat engine's
collaborators in the service process, ${String(ok)} turns; stretches follow one another, so their
p50s add up to about the first chunk's; clocks of two processes on one machine):

${table(['stretch', 'p50 ms', 'p99 ms', 'share of first-chunk p50'], rows)}`;
}

function codeLine(r: ChatReport): string {
  if (r.code === undefined) return 'not recorded';
  const changed = r.code.changed.map((f) => `\`${f}\``).join(', ');
  return (
    `commit \`${r.code.commit}\`` +
    (changed === '' ? '' : ` with uncommitted changes in ${changed} (the working tree at the time)`)
  );
}

export function render(r: ChatReport): string {
  const when = r.date.replace('T', ' ').slice(0, 16);
  const load = Object.entries(r.load)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
  const env = Object.entries(r.env).map(([k, v]) => [`\`${k}\``, `\`${v}\``]);
  return `## Chat: retrieval and first chunk, idle sockets, turns at once

Written by \`bench/chat.ts\`; edit the script, not this section.

- Command: \`make bench-chat\` (\`npx tsx bench/chat.ts\`)
- Date: ${when} UTC
- Machine: ${cpus()[0]?.model ?? '?'}, ${String(cpus().length)} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB;
  load average (1 min) ${load}; Node ${r.node}; PostgreSQL ${r.versions.postgres} and Redis
  ${r.versions.redis} on the same machine. The benchmark's client, the service, PostgreSQL and
  Redis share the cores; other work was running on the machine, so only ratios within the run compare.
- Code: ${codeLine(r)}
- Service: a child process (\`bench/lib/chat-server.ts\`: \`loadConfig\`, \`createDeps\`,
  \`buildApp\` as \`src/main.ts\` wires them, run by \`node --import tsx\`) on a scratch
  PostgreSQL database (dropped at the end) and a Redis key prefix of its own (deleted at the end):
  chat pub/sub and answer streams on Redis, the embedded vector index, the offline hashed
  embeddings and the offline extractive model, as deployed without an LLM endpoint. Settings are the
  defaults except those below. Wrappers around the chat engine's collaborators time each turn's
  steps and take every search past the search cache, so that each costs what a new question's
  does (bench instrumentation; \`src/\` is not changed).
- Knowledge base: ${String(r.seed.documents)} synthetic guideline documents (\`bench/lib/chat-corpus.ts\`:
  24 conditions with their drugs, tests and populations; dosing, monitoring, referral and
  counselling sentences), uploaded over HTTP to \`POST /api/admin/kb/documents\` and indexed by the
  service's own jobs: ${String(r.seed.active)} active chunks in ${r.seed.seconds.toFixed(0)} s, then
  \`VACUUM (ANALYZE)\`. Questions: generated in the same vocabulary, one in ten off topic.

${retrievalSection(r)}

${idleSection(r.idle, Number(r.settings.pings), Number(r.settings.pingRate))}

${concurrentSection(r.concurrent, r.variants)}

${findings(r)}

### Service settings that differ from the defaults

${table(['variable', 'value'], env)}

Plus \`DATABASE_URL\`, \`REDIS_URL\`, \`REDIS_PREFIX\`, \`JWT_SECRET\`, \`DATA_DIR\` and the bootstrap
administrator of the run. \`WS_IDLE_TIMEOUT_MS\` and \`ACCESS_TOKEN_TTL_SECONDS\` are raised only so
that no socket or token expires during the run.`;
}
