import { spokenSentences, type SpokenOptions } from '../../src/providers/stt/spoken-words.js';

/**
 * Word error rate: the word-level Levenshtein distance between a reference and a hypothesis
 * (substitutions + deletions + insertions) over the number of reference words, both sides
 * normalised the same way first (lower case, numbers as words, no punctuation).
 */

export interface WordEdits {
  substitutions: number;
  deletions: number;
  insertions: number;
  /** Reference words. */
  words: number;
}

/** The words both sides are compared in: spoken-words.ts's normalisation, sentences joined. */
export function werWords(text: string, options: SpokenOptions = {}): string[] {
  return spokenSentences(text, options).flat();
}

/** The cheapest alignment; among equally cheap ones, substitutions before deletions. */
export function wordEdits(reference: readonly string[], hypothesis: readonly string[]): WordEdits {
  const n = hypothesis.length;
  // Each cell: [cost, substitutions, deletions, insertions] of the best path to it.
  let previous: number[][] = Array.from({ length: n + 1 }, (_, j) => [j, 0, 0, j]);
  for (let i = 1; i <= reference.length; i++) {
    const current: number[][] = [[i, 0, i, 0]];
    for (let j = 1; j <= n; j++) {
      const same = reference[i - 1] === hypothesis[j - 1];
      const diagonal = previous[j - 1]!;
      const up = previous[j]!;
      const left = current[j - 1]!;
      const candidates = [
        [diagonal[0]! + (same ? 0 : 1), diagonal[1]! + (same ? 0 : 1), diagonal[2]!, diagonal[3]!],
        [up[0]! + 1, up[1]!, up[2]! + 1, up[3]!],
        [left[0]! + 1, left[1]!, left[2]!, left[3]! + 1],
      ];
      current.push(candidates.reduce((best, c) => (c[0]! < best[0]! ? c : best)));
    }
    previous = current;
  }
  const [, substitutions, deletions, insertions] = previous[n]!;
  return {
    substitutions: substitutions!,
    deletions: deletions!,
    insertions: insertions!,
    words: reference.length,
  };
}

export const errors = (e: WordEdits) => e.substitutions + e.deletions + e.insertions;

/** The corpus WER of many utterances: all errors over all reference words (NaN for none). */
export function wordErrorRate(edits: readonly WordEdits[]): number {
  const words = edits.reduce((sum, e) => sum + e.words, 0);
  return edits.reduce((sum, e) => sum + errors(e), 0) / words;
}
