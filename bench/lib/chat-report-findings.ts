import { stats, type ConcurrentResult, type RetrievalTurn, type Stats } from './chat-parts.js';
import { concurrentSummary, idleSummary, ms } from './chat-report-load.js';
import type { ChatReport } from './chat-report.js';

/** The closing subsection of the chat section: what the figures say, and what to change. */

const kib = (bytes: number) => (bytes / 1024).toFixed(1);

function stepOf(t: RetrievalTurn, name: string): number {
  const s = t.spans.find((span) => span.name === name);
  return s === undefined ? Number.NaN : s.end - s.start;
}

function single(r: ChatReport): string {
  const p50 = (f: (t: RetrievalTurn) => number) => stats(r.turns.map(f)).p50;
  const first = p50((t) => t.turn.firstChunkMs);
  const search = p50((t) => t.searchMs);
  const lexical = p50((t) => stepOf(t, 'lexical ranking'));
  const retrieval = p50((t) => stepOf(t, 'retrieval'));
  return (
    `- **One turn at a time** the first chunk comes ${ms(first - search)} ms after the search ` +
    `alone would have returned (p50 ${ms(first)} against ${ms(search)} ms): retrieval is ` +
    `${((100 * retrieval) / first).toFixed(0)}% of the wait, and the full-text statement ` +
    `(${ms(lexical)} ms) nearly all of retrieval. Storing the question, reading the history, the ` +
    `extractive model and the way through the answer stream to the socket take a few milliseconds ` +
    `each (table of part 1). Nothing in the chat engine stands out; a faster first chunk for one ` +
    `turn means a cheaper full-text statement (see the knowledge-base section).`
  );
}

function idle(r: ChatReport): string {
  const { perSocket, loaded, alone } = idleSummary(r.idle);
  const rss = perSocket('rss');
  const heap = stats(perSocket('heapUsed')).p50;
  return (
    `- **Idle sockets** cost about ${kib(heap)} KiB of V8 heap each (the \`ws\` socket, its ` +
    `\`ChatConnection\` and token) and ${kib(Math.min(...rss))} to ${kib(Math.max(...rss))} KiB ` +
    `of RSS depending on the round (RSS follows the heap's growth and release, the heap figure is ` +
    `the steady one); a ping's round trip stays at p50 ${ms(loaded.p50)} ms, p99 ` +
    `${ms(loaded.p99)} ms (one socket alone: ${ms(alone.p99)} ms). Nothing to change.`
  );
}

const step = (c: ConcurrentResult, name: string, q: 'p50' | 'p99' = 'p50') =>
  stats(c.bursts.map((b) => b.steps[name]?.[q] ?? Number.NaN)).p50;

function burstLine(c: ConcurrentResult) {
  const { all, pooled, timedOut } = concurrentSummary(c);
  const first: Stats = stats(all.map((t) => t.firstChunkMs));
  const done = all.map((t) => t.doneMs);
  return { all: all.length, p50: first.p50, p99: pooled.p99, timedOut, done };
}

function concurrent(r: ChatReport): string {
  const c = r.concurrent;
  const n = c.users * c.perUser;
  const base = burstLine(c);
  const lexicalP99 = step(c, 'lexical ranking', 'p99');
  const lines = [
    `- **${String(n)} turns at once** overwhelm retrieval, and the way searches share the ` +
      `database makes it all or nothing. A search makes two or three round trips on the service's ` +
      `pool of 10 connections: the full-text statement; the vector index's freshness check, when ` +
      `the last is older than \`VECTOR_INDEX_MAX_STALENESS_MS\` (1 s; one check shared by every ` +
      `search waiting for it); then the passages read. node-postgres gives a freed connection to ` +
      `the query that has waited longest, so every search's later round trips queue behind the ` +
      `full-text statements of the whole burst (the last of them ends after ${ms(lexicalP99)} ms ` +
      `at p99): the dense ranking (the freshness check) takes p50 ${ms(step(c, 'dense ranking'))} ms, the passages read ` +
      `p99 ${ms(step(c, 'passages read', 'p99'))} ms, and \`SearchService.search\` ends at p50 ` +
      `${ms(step(c, 'retrieval'))} ms for all of them alike, past the 5 s retrieval timeout: ` +
      `${String(base.timedOut)} of ${String(base.all)} turns answered without passages. The ` +
      `searches the timeout gave up on keep running, so storing the answers waited p50 ` +
      `${ms(step(c, 'store answer'))} ms behind them.`,
  ];
  const alone = (x: ConcurrentResult) => ms(concurrentSummary(x).alone.p50);
  const busier = (a: ConcurrentResult, b: ConcurrentResult) =>
    concurrentSummary(a).alone.p50 > 1.3 * concurrentSummary(b).alone.p50
      ? '; the machine was busier meanwhile, so compare with care'
      : '';
  for (const v of r.variants) {
    const b = burstLine(v.result);
    const env = Object.entries(v.env)
      .map(([k, value]) => `\`${k}=${value}\``)
      .join(', ');
    lines.push(
      `- **Variant** ${env}, ${v.what}: dense ranking p50 ` +
        `${ms(step(v.result, 'dense ranking'))} ms, passages read p50 ` +
        `${ms(step(v.result, 'passages read'))} ms, search p50 ${ms(step(v.result, 'retrieval'))} ` +
        `ms; ${String(b.timedOut)} of ${String(b.all)} turns timed out (default: ` +
        `${String(base.timedOut)}); first chunk p50 ${ms(b.p50)} ms and p99 ${ms(b.p99)} ms ` +
        `(default: ${ms(base.p50)} and ${ms(base.p99)} ms); \`message_done\` p99 ` +
        `${ms(stats(b.done).p99)} ms (default: ${ms(stats(base.done).p99)} ms); storing the ` +
        `answer p50 ${ms(step(v.result, 'store answer'))} ms (default: ` +
        `${ms(step(c, 'store answer'))} ms). One turn alone on that instance: p50 ` +
        `${alone(v.result)} ms (default instance: ${alone(c)} ms${busier(v.result, c)}).`,
    );
  }
  const rate = n / (lexicalP99 / 1000);
  return `${lines.join('\n')}

What to change (nothing in \`src/\` was changed by this benchmark):

1. **Bound the searches running at once, first come, first served** (a semaphore around
   \`SearchService.search\` or in \`ChatService.passages\`, sized to the database's cores; or a
   small pool of its own for retrieval): a search then keeps its place through all its round
   trips, the early turns get their passages in time, and the chat's short statements (question,
   history, answer) no longer queue behind searches. The "at most 4 chat searches" variant above is
   this, done by the benchmark's wrapper.
2. **Stop the searches a turn gave up on.** \`retrieveWithin\` (\`src/modules/chat/turn-inputs.ts\`,
   from \`ChatService.passages\`) races the search against \`retrievalTimeoutMs\` and leaves it
   running; pass the timeout's \`AbortSignal\` into
   \`SearchService.search\`, check it before each round trip, and bound the full-text statement
   itself (\`SET LOCAL statement_timeout\` in a transaction, or node-postgres \`query_timeout\`),
   so the database stops working for turns that have already answered.
3. **Do not make a search wait for the vector index's freshness check** when a copy is loaded
   and this instance wrote nothing since: serve the loaded copy and check in the background (or
   on a connection of its own). Alone it does not help (the first variant: the passages read waits
   instead), with 1 it takes one queued round trip out of every search.
4. **Capacity.** At ${String(r.seed.active)} chunks one full-text statement is ~${ms(stats(r.turns.map((t) => stepOf(t, 'lexical ranking'))).p50)}
   ms of PostgreSQL time; this machine got through about ${rate.toFixed(0)} a second, however they
   are scheduled. Bursts like this one also need the cheaper statement (knowledge-base section) or
   more database cores, and past what fits in the timeout, refusing a send (\`RATE_LIMITED\`) is
   kinder than queueing it.`;
}

export function findings(r: ChatReport): string {
  return `### What the figures say, and what to change

${single(r)}
${idle(r)}
${concurrent(r)}`;
}
