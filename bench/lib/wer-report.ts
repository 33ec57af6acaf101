import { table } from './sections.js';
import { wordErrorRate, type WordEdits } from './wer.js';

/** The voice WER benchmark's figures and its Markdown section. */

/**
 * The sets: the clinical questions' tuning and held-out halves and everyday sentences (spoken by
 * the engines), a person's recorded phrases and numbers (human).
 */
export type Split = 'tune' | 'heldout' | 'general' | 'phrases' | 'numbers';
export const SPLITS: readonly Split[] = ['tune', 'heldout', 'general'];

export interface Result {
  config: string;
  source: string;
  voice: string;
  split: Split;
  id: string;
  edits: WordEdits;
  hypothesis: string;
  audioSeconds: number;
  decodeSeconds: number;
}

export const werOf = (results: readonly Result[], config: string, voice: string, split: Split) =>
  werOver(results, config, [voice], split);

/** The WER of a set over several voices together (all their errors over all their words). */
export const werOver = (
  results: readonly Result[],
  config: string,
  voices: readonly string[],
  split: Split,
) =>
  wordErrorRate(
    results
      .filter((r) => r.config === config && voices.includes(r.voice) && r.split === split)
      .map((r) => r.edits),
  );

/** Decoding time over audio time, over the clips of `voices`. */
export function realTimeFactor(
  results: readonly Result[],
  config: string,
  voices: readonly string[],
): number {
  const mine = results.filter((r) => r.config === config && voices.includes(r.voice));
  const decode = mine.reduce((s, r) => s + r.decodeSeconds, 0);
  return decode / mine.reduce((s, r) => s + r.audioSeconds, 0);
}

/**
 * The model to use: the lowest clinical WER on the tuning split (mean of the voices) among the
 * candidates that keep general English within `maxGeneralDelta` of the generic model on every voice.
 */
export function chooseModel(
  results: readonly Result[],
  voices: readonly string[],
  candidates: readonly string[],
  maxGeneralDelta: number,
): string | undefined {
  const mean = (config: string, split: Split) =>
    voices.reduce((s, v) => s + werOf(results, config, v, split), 0) / voices.length;
  const allowed = candidates.filter((c) =>
    voices.every(
      (v) =>
        werOf(results, c, v, 'general') - werOf(results, 'generic', v, 'general') <=
        maxGeneralDelta + 1e-9,
    ),
  );
  // Ties: the earlier candidate (smaller weight, plain dictionary first).
  return allowed
    .map((c, i) => ({ c, i, wer: mean(c, 'tune') }))
    .sort((a, b) => a.wer - b.wer || a.i - b.i)[0]?.c;
}

const f = (x: number) => x.toFixed(3);
const signed = (x: number) => (x >= 0 ? `+${x.toFixed(3)}` : x.toFixed(3));

export function werTable(
  results: readonly Result[],
  configs: readonly string[],
  voices: readonly string[],
  splits: readonly Split[] = SPLITS,
) {
  const head = ['model', ...voices.flatMap((v) => splits.map((s) => `${v} ${s}`)), 'RTF'];
  const rows = configs.map((c) => [
    c,
    ...voices.flatMap((v) => splits.map((s) => f(werOf(results, c, v, s)))),
    realTimeFactor(results, c, voices).toFixed(3),
  ]);
  return table(head, rows);
}

export function deltaTable(results: readonly Result[], chosen: string, voices: readonly string[]) {
  const rows = voices.flatMap((v) =>
    SPLITS.map((s) => {
      const generic = werOf(results, 'generic', v, s);
      const adapted = werOf(results, chosen, v, s);
      const goal = s === 'general' ? 'delta ≤ +0.030' : 'adapted ≤ 0.150';
      const met = s === 'general' ? adapted - generic <= 0.03 + 1e-9 : adapted <= 0.15;
      return [v, s, f(generic), f(adapted), signed(adapted - generic), goal, met ? 'yes' : 'no'];
    }),
  );
  return table(['voice', 'set', 'generic WER', `${chosen} WER`, 'delta', 'goal', 'met'], rows);
}
