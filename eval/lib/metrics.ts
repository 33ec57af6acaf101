/** Reciprocal rank fusion (best first); k = 60 as in the service's search. */
export function rrf(rankings: readonly (readonly string[])[], k = 60): string[] {
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    ranking.forEach((id, i) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + i + 1)));
  }
  return [...scores.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([id]) => id);
}

export interface Scores {
  recallAt5: number;
  mrr: number;
  n: number;
}

/** Recall@5 (a relevant chunk in the top 5) and MRR (over the whole ranking) per question. */
export function score(rankings: readonly (readonly string[])[], relevant: readonly Set<string>[]) {
  let hits = 0;
  let rr = 0;
  rankings.forEach((ranking, q) => {
    const rank = ranking.findIndex((id) => relevant[q]?.has(id) === true);
    if (rank !== -1 && rank < 5) hits += 1;
    if (rank !== -1) rr += 1 / (rank + 1);
  });
  const n = rankings.length;
  return { recallAt5: hits / Math.max(1, n), mrr: rr / Math.max(1, n), n } satisfies Scores;
}
