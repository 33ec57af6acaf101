import { spokenWords } from '../../providers/tts/index.js';

/**
 * What the listener heard of an answer cut short (DECISIONS 5): the stored text of an interrupted
 * answer is the text of the audio played, never a word whose audio was not played.
 *
 * Each spoken sentence knows its audio's duration. The sentences whose audio ended before the cut
 * are whole (with their `[n]` markers). The one being played is cut by its spoken form: the speech
 * engine says "Give five hundred milligrams twice daily" for "Give 500 mg twice daily.", six words,
 * each taken as an equal share of the sentence's audio; the words whose share was wholly played are
 * heard (rounded down), and a displayed word is kept only when every word it is said as was heard
 * ("500" only after "five hundred"). Citation markers are not spoken: in a cut sentence they are
 * dropped. A sentence whose audio the engine had not finished making (its length unknown) keeps
 * nothing: where its words fall cannot be told.
 */

export interface SpokenSentence {
  /** The sentence as displayed (with its `[n]` markers). */
  text: string;
  /** Duration of its audio, as far as the engine has made it. */
  ms: number;
  /** The engine made all of its audio: `ms` is its whole duration. */
  complete: boolean;
}

const MARKER = /^\[\d+(?:,\s*\d+)*\]$/;

export function heardText(
  sentences: readonly SpokenSentence[],
  playedMs: number,
  language?: string,
): string {
  const parts: string[] = [];
  let start = 0;
  for (const s of sentences) {
    if (s.complete && playedMs >= start + s.ms) {
      parts.push(s.text);
      start += s.ms;
      continue;
    }
    if (s.complete && s.ms > 0) {
      const partial = leadingWords(s.text, Math.max(0, playedMs - start) / s.ms, language);
      if (partial !== '') parts.push(partial);
    }
    break;
  }
  return parts.join(' ');
}

/**
 * The displayed words of `text` said within the first `share` (0..1) of its audio: the longest run
 * of leading words whose spoken form (that of the text up to them) is all within the words heard.
 */
export function leadingWords(text: string, share: number, language?: string): string {
  const heard = Math.floor(spokenWords(text, language).length * share);
  const tokens = text.split(/\s+/).filter((t) => t !== '');
  let keep = 0;
  let said = 0;
  for (let i = 1; i <= tokens.length; i++) {
    // The most said by any prefix so far: a word never counts as said sooner than one before it.
    const before = said;
    said = Math.max(said, spokenWords(tokens.slice(0, i).join(' '), language).length);
    if (said > heard) break;
    // The cut ends at a word said ("-" or a marker after it is not kept on its own).
    if (said > before) keep = i;
  }
  return tokens
    .slice(0, keep)
    .filter((t) => !MARKER.test(t))
    .join(' ');
}
