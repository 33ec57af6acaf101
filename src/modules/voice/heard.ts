/**
 * What the listener heard of an answer cut short (DECISIONS 5): the stored text of an interrupted
 * answer is the text of the audio played, never text that was not spoken. Each spoken sentence
 * knows its audio's duration; the sentences whose audio ended before the cut are whole, the one
 * being played is cut in proportion to the time played, at a word (citation markers are not
 * spoken, so they do not count as words; a marker is kept only with its whole sentence).
 */

export interface SpokenSentence {
  /** The sentence as displayed (with its `[n]` markers). */
  text: string;
  /** Duration of its audio. */
  ms: number;
}

const MARKER = /^\[\d+(?:,\s*\d+)*\]$/;

export function heardText(sentences: readonly SpokenSentence[], playedMs: number): string {
  const parts: string[] = [];
  let start = 0;
  for (const s of sentences) {
    if (playedMs >= start + s.ms) {
      parts.push(s.text);
      start += s.ms;
      continue;
    }
    const share = s.ms <= 0 ? 0 : Math.max(0, playedMs - start) / s.ms;
    const partial = leadingWords(s.text, share);
    if (partial !== '') parts.push(partial);
    break;
  }
  return parts.join(' ');
}

/** The first `share` (0..1) of the spoken words of `text`, rounded down. */
function leadingWords(text: string, share: number): string {
  const tokens = text.split(/\s+/).filter((t) => t !== '' && !MARKER.test(t));
  const keep = Math.floor(tokens.length * share);
  return tokens.slice(0, keep).join(' ');
}
