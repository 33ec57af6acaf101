import type { NgramCounts } from './kb-counts.js';

/**
 * Interpolated Witten-Bell estimates of a trigram model, written as an ARPA back-off model.
 *
 *   p(w | h) = (c(h w) + T(h) p(w | h')) / (c(h) + T(h))
 *
 * with T(h) the number of distinct words seen after h and h' the history without its first word;
 * unigrams are interpolated with the uniform distribution. Every n-gram kept in the file carries
 * that probability; each history's back-off weight is then computed from the n-grams actually kept,
 *
 *   bow(h) = (1 - sum of p(w | h) over kept w) / (1 - sum of p(w | h') over the same w),
 *
 * so every context's distribution sums to one, pruned n-grams included.
 */

export interface EstimateOptions {
  /** Trigrams seen fewer times are left out (their mass goes to the back-off). */
  minTrigramCount: number;
}

export interface ArpaResult {
  arpa: string;
  ngrams: [number, number, number];
}

const at = (values: Float64Array, i: number) => values[i] ?? 0;
const log10 = (p: number) => (p > 0 ? Math.log10(p) : -99);
const fmt = (x: number) => (Object.is(Math.round(x * 1e6), -0) ? '0' : x.toFixed(6));

interface ContextTotals {
  total: Map<number, number>;
  types: Map<number, number>;
}

function totalsByContext(ngrams: Map<number, number>, base: number): ContextTotals {
  const total = new Map<number, number>();
  const types = new Map<number, number>();
  for (const [key, count] of ngrams) {
    const context = Math.floor(key / base);
    total.set(context, (total.get(context) ?? 0) + count);
    types.set(context, (types.get(context) ?? 0) + 1);
  }
  return { total, types };
}

/** Back-off weights from the kept n-grams' probabilities and their lower-order probabilities. */
function backOffWeights(sums: Map<number, [number, number]>): Map<number, number> {
  const weights = new Map<number, number>();
  for (const [context, [high, low]] of sums) {
    const denominator = 1 - low;
    weights.set(context, denominator > 1e-12 ? Math.max(1 - high, 0) / denominator : 1);
  }
  return weights;
}

function addSum(sums: Map<number, [number, number]>, context: number, high: number, low: number) {
  const sum = sums.get(context);
  if (sum) {
    sum[0] += high;
    sum[1] += low;
  } else sums.set(context, [high, low]);
}

export function estimate(counts: NgramCounts, options: EstimateOptions): ArpaResult {
  const { words, unigrams, bigrams, trigrams, base } = counts;
  const start = base - 1;
  // Unigrams: every word but <s>, interpolated with the uniform distribution.
  let n = 0;
  let seen = 0;
  for (let id = 0; id < start; id++) {
    n += at(unigrams, id);
    if (at(unigrams, id) > 0) seen++;
  }
  const p1 = new Float64Array(base);
  for (let id = 0; id < start; id++)
    p1[id] = n > 0 ? (at(unigrams, id) + seen / start) / (n + seen) : 1 / start;

  // Bigrams: all counted ones are kept.
  const bi = totalsByContext(bigrams, base);
  const p2 = new Map<number, number>();
  const sums2 = new Map<number, [number, number]>();
  for (const [key, count] of bigrams) {
    const [a, b] = [Math.floor(key / base), key % base];
    const t = bi.types.get(a) ?? 0;
    const p = (count + t * at(p1, b)) / ((bi.total.get(a) ?? 0) + t);
    p2.set(key, p);
    addSum(sums2, a, p, at(p1, b));
  }
  const bow1 = backOffWeights(sums2);
  const bigramProbability = (b: number, c: number) =>
    p2.get(b * base + c) ?? (bow1.get(b) ?? 1) * at(p1, c);

  // Trigrams: frequent enough, and both their 2-gram prefix and suffix are in the model.
  const tri = totalsByContext(trigrams, base);
  const p3 = new Map<number, number>();
  const sums3 = new Map<number, [number, number]>();
  for (const [key, count] of trigrams) {
    const ab = Math.floor(key / base);
    const [b, c] = [ab % base, key % base];
    if (count < options.minTrigramCount || !p2.has(ab) || !p2.has(b * base + c)) continue;
    const t = tri.types.get(ab) ?? 0;
    const lower = bigramProbability(b, c);
    const p = (count + t * lower) / ((tri.total.get(ab) ?? 0) + t);
    p3.set(key, p);
    addSum(sums3, ab, p, lower);
  }
  const bow2 = backOffWeights(sums3);
  return { arpa: write(words, p1, bow1, p2, bow2, p3, base), ngrams: [base, p2.size, p3.size] };
}

function write(
  words: string[],
  p1: Float64Array,
  bow1: Map<number, number>,
  p2: Map<number, number>,
  bow2: Map<number, number>,
  p3: Map<number, number>,
  base: number,
): string {
  // Alphabetical word order, n-grams in the order of their words' ranks: deterministic.
  const order = words
    .map((_, i) => i)
    .sort((a, b) => ((words[a] ?? '') < (words[b] ?? '') ? -1 : 1));
  const rank = new Float64Array(base);
  order.forEach((id, r) => (rank[id] = r));
  const word = (id: number) => words[id] ?? '';
  const line = (logProb: number, text: string, bow: number | undefined) =>
    bow === undefined ? `${fmt(logProb)}\t${text}` : `${fmt(logProb)}\t${text}\t${fmt(log10(bow))}`;
  const start = base - 1;
  const out: string[] = ['\\data\\', `ngram 1=${base}`, `ngram 2=${p2.size}`, `ngram 3=${p3.size}`];
  out.push('', '\\1-grams:');
  for (const id of order)
    out.push(line(id === start ? -99 : log10(at(p1, id)), word(id), bow1.get(id)));
  out.push('', '\\2-grams:');
  for (const [key, p] of sortedByRank(p2, base, rank, 2)) {
    const [a, b] = [Math.floor(key / base), key % base];
    out.push(line(log10(p), `${word(a)} ${word(b)}`, bow2.get(key)));
  }
  out.push('', '\\3-grams:');
  for (const [key, p] of sortedByRank(p3, base, rank, 3)) {
    const ab = Math.floor(key / base);
    const text = `${word(Math.floor(ab / base))} ${word(ab % base)} ${word(key % base)}`;
    out.push(line(log10(p), text, undefined));
  }
  out.push('', '\\end\\', '');
  return out.join('\n');
}

/** The entries of `map` in the order of their words' ranks. */
function sortedByRank(
  map: Map<number, number>,
  base: number,
  rank: Float64Array,
  order: number,
): [number, number][] {
  const ranked = (key: number, words: number): number =>
    words === 1
      ? at(rank, key)
      : ranked(Math.floor(key / base), words - 1) * base + at(rank, key % base);
  return [...map]
    .map(([key, p]) => [ranked(key, order), key, p] as const)
    .sort((x, y) => x[0] - y[0])
    .map(([, key, p]) => [key, p]);
}
