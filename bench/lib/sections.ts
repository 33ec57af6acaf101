import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';

/**
 * What the data benchmarks (conversations, knowledge) share: settings from the environment, a
 * seeded random source, percentiles, Markdown tables, and their own section of BENCHMARKS.md.
 */

export const BENCHMARKS_FILE = path.resolve(import.meta.dirname, '..', '..', 'BENCHMARKS.md');

/** A numeric setting from the environment, e.g. `BENCH_ROUNDS`. */
export const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

/** A small seeded generator (mulberry32): the same data and order on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The nearest-rank percentile of ascending values. */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
export const table = (head: string[], rows: (string | number)[][]) =>
  [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');

/**
 * Formats `markdown` as the repository's Prettier would and puts it between the benchmark's
 * markers in BENCHMARKS.md (appended when they are absent); returns the formatted section.
 */
export async function writeSection(
  name: string,
  markdown: string,
  write: boolean,
): Promise<string> {
  const options = (await resolveConfig(BENCHMARKS_FILE)) ?? {};
  const section = (
    await format(markdown, { ...options, parser: 'markdown', proseWrap: 'always' })
  ).trim();
  console.log(`\n${section}\n`);
  if (!write) return section;
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const block = `${start}\n\n${section}\n\n${end}`;
  const current = existsSync(BENCHMARKS_FILE)
    ? readFileSync(BENCHMARKS_FILE, 'utf8')
    : '# Benchmarks\n';
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  writeFileSync(
    BENCHMARKS_FILE,
    from >= 0 && to > from
      ? current.slice(0, from) + block + current.slice(to + end.length)
      : `${current.trimEnd()}\n\n${block}\n`,
  );
  console.log('wrote BENCHMARKS.md');
  return section;
}

/** Runs a benchmark's `main`, always running its clean-up (also on Ctrl-C). */
export async function runBenchmark(
  adminUrl: string,
  main: () => Promise<void>,
  cleanUp: () => Promise<void>,
): Promise<void> {
  process.once('SIGINT', () => {
    void cleanUp().then(() => process.exit(130));
  });
  try {
    console.log(`admin database ${adminUrl}`);
    await main();
  } catch (err) {
    process.exitCode = 1;
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  } finally {
    await cleanUp();
  }
}
