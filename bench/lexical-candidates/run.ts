import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { searchTextOf } from '../../src/modules/knowledge/extraction-protocol.js';
import { ADMIN_DATABASE_URL } from '../lib/fixtures.js';
import { corpusDocuments } from '../lib/guideline-corpus.js';
import { num, percentile, prng, shuffled, table, writeSection } from '../lib/sections.js';
import { analyse, queryTerms } from '../../src/modules/knowledge/lexical/analysis.js';
import { CANDIDATES, type CandidateKey, type Chunk } from './candidates.js';
import { Postings } from '../../src/modules/knowledge/lexical/postings.js';

/**
 * `make bench-lexical-candidates` (issue 24, item 1): ranked lexical indexes measured on the same
 * chunks and questions. The chunks are those of bench/knowledge.ts (guideline text recombined
 * from eval/corpus, cut by the service's chunker), analysed once by analysis.ts; every candidate
 * is given the same terms. Each candidate runs at each size in its own Node process (so its
 * memory is its own; killed past its time budget): build, memory after GC, top-50 search latency
 * one question at a time, then 16 at once, and agreement with exact BM25 (own postings scored
 * exhaustively, in this process). Writes the "Lexical index candidates" section of BENCHMARKS.md.
 * Knobs: BENCH_LEXICAL_SIZES (20000,200000), BENCH_LEXICAL_ONLY (candidate keys, comma-separated),
 * BENCH_LEXICAL_BUDGET_S (600 per candidate and size), BENCH_ROUNDS (10), BENCH_WRITE=0.
 */

const settings = {
  sizes: (process.env.BENCH_LEXICAL_SIZES ?? '20000,200000').split(',').map(Number),
  only: process.env.BENCH_LEXICAL_ONLY?.split(',') ?? Object.keys(CANDIDATES),
  budgetMs: num('BENCH_LEXICAL_BUDGET_S', 600) * 1000,
  rounds: num('BENCH_ROUNDS', 10),
  /** The timed rounds stop after this much search time (at least one round). */
  searchBudgetMs: 60_000,
  write: process.env.BENCH_WRITE !== '0',
};
const K = 50;
const CLIENTS = 16;
const QUESTIONS = path.resolve(import.meta.dirname, '..', '..', 'eval', 'questions.json');

interface Query {
  id: string;
  terms: string[];
}

interface ChildResult {
  build: Record<string, number> & { ms: number };
  memory: { heap: number; external: number; rss: number };
  describe: Record<string, number | string>;
  latencies: number[];
  sequentialPerSecond: number;
  concurrentPerSecond: number;
  concurrentP50: number;
  /** Top K per question, from the first timed round. */
  tops: Record<string, number[]>;
}

type Built = Pick<ChildResult, 'build' | 'memory'>;
type Outcome =
  { ok: true; result: ChildResult } | { ok: false; reason: string; seconds: number; built?: Built };

// ---------------------------------------------------------------------------------------------
// The child: one candidate at one size.

async function child(key: CandidateKey, dir: string, size: number, databaseUrl: string) {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  const lines = readFileSync(path.join(dir, `chunks-${size}.txt`), 'utf8').split('\n');
  const chunks: Chunk[] = lines
    .slice(0, size)
    .map((text, id) => ({ id, text, terms: text === '' ? [] : text.split(' ') }));
  const queries = JSON.parse(readFileSync(path.join(dir, 'queries.json'), 'utf8')) as Query[];
  const settle = () => {
    for (let i = 0; i < 3; i++) gc();
    return process.memoryUsage();
  };
  const before = settle();
  const candidate = CANDIDATES[key].make(databaseUrl);
  const t0 = performance.now();
  const parts = await candidate.build(chunks);
  const buildMs = performance.now() - t0;
  const after = settle();
  const describe = (await candidate.describe?.()) ?? {};
  console.log(`  built in ${(buildMs / 1000).toFixed(1)} s`);
  const memory = {
    heap: after.heapUsed - before.heapUsed,
    external: after.external - before.external,
    rss: after.rss - before.rss,
  };
  const build = { ...parts, ms: buildMs };
  // Reported even if the searches then exceed the budget.
  writeFileSync(path.join(dir, `built-${key}-${size}.json`), JSON.stringify({ build, memory }));

  // One untimed round (stopped after half the rounds' budget).
  const warm = performance.now();
  for (const q of queries) {
    if (performance.now() - warm > settings.searchBudgetMs / 2) break;
    await candidate.search(q.terms, K);
  }
  const random = prng(size);
  const latencies: number[] = [];
  const tops: Record<string, number[]> = {};
  let searchMs = 0;
  for (let round = 0; round < settings.rounds && searchMs < settings.searchBudgetMs; round++) {
    for (const q of shuffled(queries, random)) {
      const t = performance.now();
      const top = await candidate.search(q.terms, K);
      const ms = performance.now() - t;
      latencies.push(ms);
      searchMs += ms;
      if (round === 0) tops[q.id] = top;
    }
  }
  // 16 clients at once, each running the questions in its own order: twice the searches of the
  // rounds (at most 2000), stopped after half the rounds' time budget.
  const total = Math.max(queries.length * 2, Math.min(2000, Math.round(latencies.length * 2)));
  let next = 0;
  const concurrent: number[] = [];
  const tc = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const order = shuffled(queries, prng(size + c + 1));
      for (let i = c; next < total && performance.now() - tc < settings.searchBudgetMs / 2; i++) {
        next++;
        const t = performance.now();
        await candidate.search(order[i % order.length]!.terms, K);
        concurrent.push(performance.now() - t);
      }
    }),
  );
  const concurrentMs = performance.now() - tc;
  await candidate.close?.();
  const result: ChildResult = {
    build,
    memory,
    describe,
    latencies,
    sequentialPerSecond: latencies.length / (searchMs / 1000),
    concurrentPerSecond: concurrent.length / (concurrentMs / 1000),
    concurrentP50: percentile(Float64Array.from(concurrent).sort(), 0.5),
    tops,
  };
  writeFileSync(path.join(dir, `result-${key}-${size}.json`), JSON.stringify(result));
}

// ---------------------------------------------------------------------------------------------
// The parent: data, reference, children, report.

/** The first `size` chunks of the knowledge bench's corpus, analysed, one line of terms each. */
function writeChunks(dir: string, size: number): { documents: number; ms: number } {
  const t0 = performance.now();
  const lines: string[] = [];
  let documents = 0;
  for (const doc of corpusDocuments(size)) {
    documents++;
    for (const chunk of doc.chunks) {
      if (lines.length < size) lines.push(analyse(searchTextOf(doc.title, chunk)).join(' '));
    }
  }
  writeFileSync(path.join(dir, `chunks-${size}.txt`), lines.join('\n'));
  return { documents, ms: performance.now() - t0 };
}

function runChild(
  key: CandidateKey,
  dir: string,
  size: number,
  databaseUrl: string,
): Promise<Outcome> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  return new Promise((resolve) => {
    // A larger heap than Node's default (about 4 GiB here), so that the hungriest library is
    // measured rather than stopped; the memory columns show what it takes.
    const args = [
      ...process.execArgv,
      '--expose-gc',
      '--max-old-space-size=12288',
      import.meta.filename,
    ];
    const proc = spawn(process.execPath, [...args, 'child', key, dir, String(size), databaseUrl], {
      stdio: ['ignore', 'inherit', 'pipe'],
      // LANCE_CPU_THREADS: lance 0.31.0's FTS index build deadlocks when its CPU pool has a single
      // thread, as it has on 2 cores (lancedb/lancedb#3568; this bench's first run stopped there at
      // 200,000 chunks, every thread parked, until the budget killed it). Two threads avoid it.
      env: { ...process.env, RUST_LOG: 'error', LANCE_CPU_THREADS: '2' },
    });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
      process.stderr.write(d);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill('SIGKILL');
    }, settings.budgetMs);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      const builtFile = path.join(dir, `built-${key}-${size}.json`);
      const built = existsSync(builtFile)
        ? (JSON.parse(readFileSync(builtFile, 'utf8')) as Built)
        : undefined;
      const failed = (reason: string): Outcome =>
        built === undefined
          ? { ok: false, reason, seconds: seconds() }
          : { ok: false, reason, seconds: seconds(), built };
      if (timedOut) {
        resolve(failed(`exceeded budget (${settings.budgetMs / 1000} s)`));
      } else if (code !== 0) {
        const last = stderr.trim().split('\n').slice(-3).join(' ').slice(0, 300);
        resolve(failed(`failed (${code ?? signal}): ${last}`));
      } else {
        const file = path.join(dir, `result-${key}-${size}.json`);
        resolve({
          ok: true,
          result: JSON.parse(readFileSync(file, 'utf8')) as ChildResult,
        });
      }
    });
  });
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

interface Row {
  key: CandidateKey;
  size: number;
  outcome: Outcome;
  recall10: number;
  in50: number;
}

interface SizeReport {
  size: number;
  documents: number;
  analyseMs: number;
  matches: Float64Array;
  refMs: Float64Array;
  rows: Row[];
}

async function main(): Promise<void> {
  const date = new Date();
  const load = loadavg()[0] ?? 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'lexbench-'));
  try {
    const questions = JSON.parse(readFileSync(QUESTIONS, 'utf8')) as {
      id: string;
      question: string;
    }[];
    const queries: Query[] = questions.map((q) => ({ id: q.id, terms: queryTerms(q.question) }));
    writeFileSync(path.join(dir, 'queries.json'), JSON.stringify(queries));
    const reports: SizeReport[] = [];
    for (const size of settings.sizes) {
      const { documents, ms: analyseMs } = writeChunks(dir, size);
      console.log(
        `${size} chunks from ${documents} documents, analysed in ${analyseMs.toFixed(0)} ms`,
      );
      // The reference: exact BM25 over the same terms.
      const lines = readFileSync(path.join(dir, `chunks-${size}.txt`), 'utf8').split('\n');
      const reference = new Postings(lines.map((l) => (l === '' ? [] : l.split(' '))));
      const refTop = new Map<string, number[]>();
      const refMs: number[] = [];
      for (const q of queries) {
        const t = performance.now();
        refTop.set(q.id, reference.exhaustive(q.terms, K));
        refMs.push(performance.now() - t);
      }
      const matches = Float64Array.from(queries.map((q) => reference.matching(q.terms))).sort();
      const rows: Row[] = [];
      for (const key of Object.keys(CANDIDATES) as CandidateKey[]) {
        if (!settings.only.includes(key)) continue;
        console.log(`${key} at ${size} chunks`);
        const name = `lexbench_${process.pid}_${size}`;
        let url = '';
        if (key === 'rum') {
          await admin((c) => c.query(`create database ${name}`));
          const u = new URL(ADMIN_DATABASE_URL);
          u.pathname = `/${name}`;
          url = u.toString();
        }
        const outcome = await runChild(key, dir, size, url).finally(async () => {
          if (key === 'rum')
            await admin((c) => c.query(`drop database if exists ${name} with (force)`));
        });
        let recall10 = Number.NaN;
        let in50 = Number.NaN;
        if (outcome.ok) {
          const r10: number[] = [];
          const r50: number[] = [];
          for (const q of queries) {
            const ref = refTop.get(q.id)!.slice(0, 10);
            if (ref.length === 0) continue;
            // Tied chunks (the corpus repeats passages) count as the reference's: a chunk is
            // right if its exact score reaches the reference's 10th.
            const floor = reference.scoreOf(q.terms, ref.at(-1)!) * (1 - 1e-9);
            const right = (ids: number[]) =>
              Math.min(
                ref.length,
                ids.filter((d) => reference.scoreOf(q.terms, d) >= floor).length,
              );
            const got = outcome.result.tops[q.id] ?? [];
            r10.push(right(got.slice(0, 10)) / ref.length);
            r50.push(right(got) / ref.length);
          }
          recall10 = r10.reduce((a, b) => a + b, 0) / r10.length;
          in50 = r50.reduce((a, b) => a + b, 0) / r50.length;
          const lat = Float64Array.from(outcome.result.latencies).sort();
          console.log(
            `  p50 ${percentile(lat, 0.5).toFixed(2)} ms, p99 ${percentile(lat, 0.99).toFixed(2)} ms, ` +
              `${outcome.result.concurrentPerSecond.toFixed(0)}/s with ${CLIENTS} clients, ` +
              `recall@10 ${recall10.toFixed(3)}`,
          );
        } else {
          console.log(`  ${outcome.reason}`);
        }
        rows.push({ key, size, outcome, recall10, in50 });
      }
      reports.push({
        size,
        documents,
        analyseMs,
        matches,
        refMs: Float64Array.from(refMs).sort(),
        rows,
      });
    }
    writeFileSync(path.join(tmpdir(), 'lexbench-last.json'), JSON.stringify(reports, null, 1));
    await writeSection(
      'lexical-candidates',
      render(date, load, reports, queries.length),
      settings.write,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');
const f2 = (v: number) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(2) : v.toFixed(1)) : '–');
const int = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–');

function goalFor(size: number): number {
  return size <= 20_000 ? 10 : 30;
}

function rowCells(r: Row): (string | number)[] {
  const label = CANDIDATES[r.key].label;
  if (!r.outcome.ok) {
    const built = r.outcome.built;
    const failure = `**${r.outcome.reason}** after ${r.outcome.seconds.toFixed(0)} s`;
    if (built === undefined) return [label, failure, ...Array<string>(10).fill('')];
    // Built, then the searches did not finish: the build figures, and the failure.
    return [
      label,
      f1(built.build.ms / 1000),
      int(r.size / (built.build.ms / 1000)),
      int((built.memory.heap + built.memory.external) / r.size),
      int(built.memory.rss / r.size),
      '',
      failure,
      ...Array<string>(4).fill(''),
      'no',
    ];
  }
  const x = r.outcome.result;
  const lat = Float64Array.from(x.latencies).sort();
  const p50 = percentile(lat, 0.5);
  const heap = (x.memory.heap + x.memory.external) / r.size;
  const extra =
    typeof x.describe.diskBytes === 'number'
      ? `${int(x.describe.diskBytes / r.size)} on disk`
      : typeof x.describe.indexBytes === 'number'
        ? `${int(x.describe.indexBytes / r.size)} index, ${int(Number(x.describe.tableBytes) / r.size)} table`
        : typeof x.describe.typedBytes === 'number'
          ? `${int(x.describe.typedBytes / r.size)} typed arrays`
          : '';
  const parts = Object.entries(x.build)
    .filter(([k]) => k !== 'ms')
    .map(([k, v]) => `${k.replace(' ms', '')} ${(v / 1000).toFixed(1)} s`)
    .join(', ');
  const met = p50 <= goalFor(r.size) && x.concurrentPerSecond >= 200;
  return [
    label,
    `${f1(x.build.ms / 1000)}${parts === '' ? '' : ` (${parts})`}`,
    int(r.size / (x.build.ms / 1000)),
    int(heap),
    int(x.memory.rss / r.size),
    extra,
    f2(p50),
    f2(percentile(lat, 0.99)),
    int(x.sequentialPerSecond),
    `${int(x.concurrentPerSecond)} (p50 ${f1(x.concurrentP50)} ms)`,
    `${r.recall10.toFixed(3)} / ${r.in50.toFixed(3)}`,
    met ? 'yes' : 'no',
  ];
}

function render(date: Date, load: number, reports: SizeReport[], questions: number): string {
  const when = date.toISOString().replace('T', ' ').slice(0, 16);
  const cpu = cpus()[0]?.model ?? '?';
  const sizes = reports.map(
    (s) =>
      `### ${s.size.toLocaleString('en-US')} chunks

${s.documents} documents. A question's OR matches a median ${int(percentile(s.matches, 0.5))} chunks
(${((100 * percentile(s.matches, 0.5)) / s.size).toFixed(0)}%; max ${int(percentile(s.matches, 1))}).

${table(
  [
    'candidate',
    'build s',
    'chunks/s',
    'heap B/chunk',
    'RSS B/chunk',
    'other B/chunk',
    'p50 ms',
    'p99 ms',
    'searches/s, 1 client',
    `searches/s, ${CLIENTS} clients`,
    'recall@10 / ref top 10 in top 50',
    `goal (p50 ≤ ${goalFor(s.size)} ms, ≥ 200/s)`,
  ],
  s.rows.map(rowCells),
)}
`,
  );
  return `## Lexical index candidates (issue 24)

Written by \`bench/lexical-candidates/run.ts\`; edit the script, not this section. The choice
made from these figures: docs/adr/0004-lexical-index.md.

- Command: \`make bench-lexical-candidates\` (\`npm ci --prefix bench/lexical-candidates\`, then
  \`npx tsx bench/lexical-candidates/run.ts\`)
- Date: ${when} UTC
- Machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load average
  ${load.toFixed(2)} at the start (other work may have been running: only comparisons within the
  run hold); Node ${process.version}. PostgreSQL 15 on the same machine over TCP (127.0.0.1),
  default settings, a scratch database per size, dropped at the end.

Data: the first N chunks of the knowledge benchmark's corpus (\`bench/lib/guideline-corpus.ts\`:
guideline text recombined from \`eval/corpus\`, cut by the service's chunker, about 800
characters), each chunk's search text (\`searchTextOf\`: title, heading, text, abbreviations
expanded) analysed once by \`bench/lexical-candidates/analysis.ts\` (the service's folding,
tokenizing and stopwords, then the Porter stemmer of \`stemmer\`). Every candidate is given those
terms (joined by spaces, split on spaces by its tokenizer), so the candidates differ by their
index only; PostgreSQL gets \`to_tsvector('simple', terms)\`, LanceDB a whitespace tokenizer
without stemming or stopwords (with \`LANCE_CPU_THREADS=2\`: on 2 cores its FTS build otherwise
deadlocks, lancedb/lancedb#3568). Questions: the ${questions} questions
of \`eval/questions.json\` (splits \`dev\` and \`heldout\`, both seen), prepared as the service
prepares them for full text (abbreviations expanded, clinical terms of lay words added), analysed
by the same function: OR of their distinct terms, top ${K}.

Measure, per candidate and size, in a Node process of its own (\`--expose-gc\`), killed after
${settings.budgetMs / 1000} s, heap limit 12 GiB: build (all chunks into an empty index); memory as the change in
heap + external (the JS heap and buffers) and RSS from before the build to after it, after GC, per
chunk (for LanceDB the index is on disk and read through its cache: its directory size; for RUM,
the index and table relation sizes; the client process holds nothing); one untimed round of every
question (at most ${settings.searchBudgetMs / 2000} s), then up to ${settings.rounds} rounds (shuffled, stopped after ${settings.searchBudgetMs / 1000} s of search) one
search at a time: p50, p99 and searches/s; then ${CLIENTS} clients at once (each awaits its search
and starts the next; twice as many searches, at most 2000 or ${settings.searchBudgetMs / 2000} s): searches/s
and their p50. In-process JavaScript indexes search on the one
thread, so ${CLIENTS} clients only queue. Agreement: recall@10 is the share of exact BM25's top 10
(own postings, every match scored; k1 = 1.2, b = 0.75) in the candidate's top 10, and the second
figure its share in the candidate's top ${K}, averaged over questions; a chunk whose exact score
ties the reference's 10th counts as the reference's (the corpus repeats passages, so ties are
common, and the float sums of two exact methods break them differently). The libraries were
configured for plain BM25 where they allow it (MiniSearch and Orama: k = 1.2, b = 0.75, d = 0),
yet MiniSearch multiplies each score by the number of question terms matched and Orama divides a
term's frequency by the chunk's length first; wink computes its own idf, FlexSearch ranks by term
position and count (not BM25), RUM by \`ts_rank\`-like distance, LanceDB by its own BM25.

${sizes.join('\n')}`;
}

// ---------------------------------------------------------------------------------------------

const [mode, key, dir, size, databaseUrl] = process.argv.slice(2);
if (mode === 'child') {
  await child(key as CandidateKey, dir!, Number(size), databaseUrl ?? '');
} else {
  await main();
}
