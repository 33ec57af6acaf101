import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { ensureAdmin } from '../../src/modules/users/bootstrap.js';
import { createLogger } from '../../src/platform/logger.js';
import type { LlmEvent } from '../../src/providers/llm/types.js';
import { EmbeddedVectorStore } from '../../src/providers/vectorstore/embedded.js';

/**
 * The service for bench/chat.ts, in a child process of its own: wired as src/main.ts wires it
 * (config from the environment, createDeps, buildApp, the bootstrap administrator), listening on
 * a free port, and answering the benchmark over IPC: `search` times `SearchService.search` alone
 * in this process, `memory` reports `process.memoryUsage()` after a full GC, `spans` hands over
 * the timings recorded by wrappers around the chat engine's collaborators (bench instrumentation
 * only; nothing in src/ changes), `lexical` what the lexical index holds, `stop` closes the app.
 *
 * Run as `node --import tsx bench/lib/chat-server.ts`.
 */

export interface Span {
  name: string;
  /** Wall-clock milliseconds (performance.timeOrigin + performance.now()): across processes. */
  start: number;
  end: number;
}

export type Request =
  | { id: number; cmd: 'search'; query: string; limit: number }
  | { id: number; cmd: 'memory' | 'spans' | 'inflight' | 'lexical' | 'dense' | 'loop' | 'stop' };

/** The service's event-loop delay since the last call, ms (5 ms resolution). */
export interface LoopDelay {
  p99: number;
  max: number;
  /** The garbage collector's pauses of the service's thread meanwhile: count, total and longest, ms. */
  gc?: { count: number; totalMs: number; maxMs: number };
}

export interface MemoryReport {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  vmRssKiB: number;
  sockets: number;
}

const now = () => performance.timeOrigin + performance.now();
const spans: Span[] = [];
let inflightSearches = 0;
/** Set while the benchmark's own baseline search runs: its steps are not a turn's. */
const baseline = new AsyncLocalStorage<true>();
const record = (span: Span) => {
  if (baseline.getStore() === undefined) spans.push(span);
};

/**
 * Wraps `obj[key]` (an async method, private ones included: the instance's own property shadows
 * the prototype's) so each call records a span named by `name(args)`.
 */
function timeMethod(obj: object, key: string, name: (args: unknown[]) => string): void {
  const target = obj as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const original = target[key]!.bind(obj);
  target[key] = async (...args: unknown[]) => {
    const start = now();
    try {
      return await original(...args);
    } finally {
      record({ name: name(args), start, end: now() });
    }
  };
}

/**
 * A what-if, not the service's behaviour: BENCH_SEARCH_CONCURRENCY > 0 lets at most that many
 * chat searches run at once (first come, first served), the others wait for a slot.
 */
function searchSlots(limit: number): () => Promise<(() => void) | undefined> {
  let active = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next === undefined) active--;
    else next();
  };
  return async () => {
    if (limit <= 0) return undefined;
    if (active < limit) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    return release;
  };
}

/** The chat engine's collaborators, timed where the chat service calls them. */
function instrument(deps: Deps): void {
  const { service, hub, llm } = deps.chat;
  const search = deps.knowledge.search;
  timeMethod(hub, 'admitSend', () => 'admit');
  timeMethod(service, 'send', () => 'send');
  timeMethod(service.deps.messages, 'append', (a) => {
    const role = (a[2] as { role?: string } | undefined)?.role;
    return role === 'user' ? 'store question' : 'store answer';
  });
  timeMethod(service.deps.messages, 'thread', () => 'history');
  // SearchService's steps: the two rankings (concurrent), then the passages read.
  timeMethod(
    (search as unknown as { lexicalIndex: object }).lexicalIndex,
    'search',
    () => 'lexical ranking',
  );
  timeMethod(search, 'denseRanking', () => 'dense ranking');
  timeMethod(search, 'passages', () => 'passages read');
  // The embedded vector store: each search waits in `refresh` for a freshness check (`catchUp`)
  // when the last one is older than VECTOR_INDEX_MAX_STALENESS_MS; concurrent searches share it.
  const vectors = deps.knowledge.vectors;
  if ('refresh' in vectors && 'catchUp' in vectors) {
    timeMethod(vectors, 'refresh', () => 'vector freshness wait');
    timeMethod(vectors, 'catchUp', () => 'vector catch-up');
  }
  // Past the search cache: the baseline and the turn search the same question, and whichever came
  // second would be a cache hit. Every search here costs what a new question's does.
  const original = (search as unknown as { run: typeof search.search }).run.bind(search);
  const slots = searchSlots(Number(process.env.BENCH_SEARCH_CONCURRENCY ?? 0));
  search.search = async (...args) => {
    inflightSearches++;
    const start = now();
    const release = await slots();
    if (release !== undefined) record({ name: 'search queue', start, end: now() });
    try {
      return await original(...args);
    } finally {
      release?.();
      inflightSearches--;
      record({ name: 'retrieval', start, end: now() });
    }
  };
  const stream = llm.stream.bind(llm);
  llm.stream = (request, options) => {
    const start = now();
    return (async function* timed(): AsyncIterable<LlmEvent> {
      let first = true;
      for await (const event of stream(request, options)) {
        if (first && event.type === 'text_delta') {
          record({ name: 'model to first text', start, end: now() });
          first = false;
        }
        yield event;
      }
      record({ name: 'model', start, end: now() });
    })();
  };
  const streams = service.deps.streams;
  const append = streams.append.bind(streams);
  const firstChunk = new Set<string>();
  streams.append = (messageId, seq, frame) => {
    if (frame.type === 'chunk' && !firstChunk.has(messageId)) {
      firstChunk.add(messageId);
      const at = now();
      record({ name: 'first chunk out', start: at, end: at });
    }
    append(messageId, seq, frame);
  };
  // The baseline: the same SearchService instance, called directly; its steps are not recorded.
  baselineSearch = (query, options) => baseline.run(true, () => original(query, options));
}

let baselineSearch: Deps['knowledge']['search']['search'] | undefined;

// A full GC on demand without --expose-gc on the command line: the extraction threads inherit the
// process's execArgv, and a worker refuses V8 flags there.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function vmRssKiB(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
}

async function memory(deps: Deps): Promise<MemoryReport> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    vmRssKiB: vmRssKiB(),
    sockets: deps.chat.hub.size,
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config);
  const deps = await createDeps(config, log);
  if (config.bootstrapAdmin !== undefined) {
    const { email, password } = config.bootstrapAdmin;
    const { db } = deps.database;
    await ensureAdmin(
      { db, auth: deps.auth, users: deps.users, audit: deps.audit },
      email,
      password,
      'bootstrap',
    );
  }
  instrument(deps);
  const { app } = await buildApp(deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;

  // The service's own event-loop delay, from the last `loop` call on (ms).
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  let gcPauses: number[] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcPauses.push(entry.duration);
  }).observe({ entryTypes: ['gc'] });

  const answer = async (req: Request): Promise<unknown> => {
    switch (req.cmd) {
      case 'search': {
        const start = performance.now();
        const hits = await baselineSearch!(req.query, { limit: req.limit });
        return { ms: performance.now() - start, hits: hits.length };
      }
      case 'memory':
        return memory(deps);
      case 'spans':
        return spans.splice(0);
      case 'inflight':
        return inflightSearches;
      case 'loop': {
        const gc = {
          count: gcPauses.length,
          totalMs: gcPauses.reduce((a, b) => a + b, 0),
          maxMs: Math.max(0, ...gcPauses),
        };
        const delay: LoopDelay = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, gc };
        loop.reset();
        gcPauses = [];
        return delay;
      }
      case 'lexical':
        // What the index holds once built (the search warms it first).
        await deps.knowledge.lexical.warm();
        return deps.knowledge.lexical.state ?? null;
      case 'dense': {
        // The embedded dense copy's rows and those not yet linked into its graph (null on Qdrant).
        const vectors = deps.knowledge.vectors;
        return vectors instanceof EmbeddedVectorStore ? vectors.status() : null;
      }
      case 'stop':
        await app.close();
        await deps.close();
        setImmediate(() => process.exit(0));
        return true;
    }
  };
  process.on('message', (req: Request) => {
    answer(req).then(
      (result) => process.send?.({ id: req.id, result }),
      (err: unknown) => process.send?.({ id: req.id, error: String(err) }),
    );
  });
  // The benchmark is gone (crashed or interrupted): do not outlive it.
  process.once('disconnect', () => process.exit(0));
  process.send?.({ ready: port });
}

main().catch((err: unknown) => {
  process.stderr.write(`chat bench server failed: ${String(err)}\n`);
  process.exit(1);
});
