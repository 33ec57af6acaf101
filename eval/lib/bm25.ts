import { stem, STOPWORDS, tokenize } from '../../src/providers/embeddings/text.js';

/**
 * An in-memory stand-in for the PostgreSQL full-text path: BM25 over stemmed words, any query
 * word may match (OR), like the service's `plainto_tsquery` with '&' turned into '|'. Swap it for
 * the real query by implementing the same `Ranker` on a database.
 */
export type Ranker = (query: string, limit: number) => string[];

function terms(text: string): string[] {
  return tokenize(text)
    .filter((w) => !STOPWORDS.has(w))
    .map(stem);
}

export function bm25Ranker(
  docs: readonly { id: string; text: string }[],
  { k1 = 1.2, b = 0.75 } = {},
): Ranker {
  const tfs = docs.map((d) => {
    const tf = new Map<string, number>();
    for (const t of terms(d.text)) tf.set(t, (tf.get(t) ?? 0) + 1);
    return { id: d.id, tf, length: [...tf.values()].reduce((a, c) => a + c, 0) };
  });
  const avgLength = tfs.reduce((a, d) => a + d.length, 0) / Math.max(1, tfs.length);
  const df = new Map<string, number>();
  for (const d of tfs) for (const t of d.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const idf = (t: string) => {
    const n = df.get(t) ?? 0;
    return Math.log(1 + (tfs.length - n + 0.5) / (n + 0.5));
  };
  return (query, limit) => {
    const q = [...new Set(terms(query))];
    const scored = tfs.map((d) => {
      let score = 0;
      for (const t of q) {
        const f = d.tf.get(t) ?? 0;
        if (f > 0)
          score += (idf(t) * f * (k1 + 1)) / (f + k1 * (1 - b + (b * d.length) / avgLength));
      }
      return { id: d.id, score };
    });
    return scored
      .filter((s) => s.score > 0)
      .sort((x, y) => y.score - x.score || x.id.localeCompare(y.id))
      .slice(0, limit)
      .map((s) => s.id);
  };
}
