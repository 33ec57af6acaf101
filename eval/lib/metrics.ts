export interface Scores {
  recallAt5: number;
  mrr: number;
  n: number;
}

/** The 1-based rank of the first relevant id, or 0 when none is ranked. */
export function firstHit(ranking: readonly string[], relevant: ReadonlySet<string>): number {
  return ranking.findIndex((id) => relevant.has(id)) + 1;
}

/** Recall@5 (a relevant chunk in the top 5) and MRR (over the whole ranking) per question. */
export function score(
  rankings: readonly (readonly string[])[],
  relevant: readonly ReadonlySet<string>[],
): Scores {
  let hits = 0;
  let rr = 0;
  rankings.forEach((ranking, q) => {
    const rank = firstHit(ranking, relevant[q] ?? new Set());
    if (rank !== 0 && rank <= 5) hits += 1;
    if (rank !== 0) rr += 1 / rank;
  });
  const n = rankings.length;
  return { recallAt5: hits / Math.max(1, n), mrr: rr / Math.max(1, n), n };
}
