import { table } from './sections.js';
import { wordErrorRate, type WordEdits } from './wer.js';

/** The voice WER benchmark's figures and its Markdown section. */

export type Split = 'tune' | 'heldout' | 'general';
export const SPLITS: readonly Split[] = ['tune', 'heldout', 'general'];

export interface Result {
  config: string;
  voice: string;
  split: Split;
  id: string;
  edits: WordEdits;
  hypothesis: string;
  audioSeconds: number;
  decodeSeconds: number;
}

export const werOf = (results: readonly Result[], config: string, voice: string, split: Split) =>
  wordErrorRate(
    results
      .filter((r) => r.config === config && r.voice === voice && r.split === split)
      .map((r) => r.edits),
  );

export function realTimeFactor(results: readonly Result[], config: string): number {
  const mine = results.filter((r) => r.config === config);
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
) {
  const head = ['model', ...voices.flatMap((v) => SPLITS.map((s) => `${v} ${s}`)), 'RTF'];
  const rows = configs.map((c) => [
    c,
    ...voices.flatMap((v) => SPLITS.map((s) => f(werOf(results, c, v, s)))),
    realTimeFactor(results, c).toFixed(3),
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
