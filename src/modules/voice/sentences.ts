/**
 * Sentences out of a streamed answer, for speech: each goes to the speech engine as soon as it is
 * complete, so the first audio leaves long before the answer is. A citation marker after a
 * sentence's full stop ("... daily. [2]") stays with that sentence. Not a boundary: a decimal
 * point ("1.5"), an abbreviation followed by a lower-case word ("e.g. aspirin"). A sentence that
 * runs on past `maxChars` is cut at its last comma or space, so speech never waits for long.
 * With `firstClause`, the answer's first sentence is cut at its first clause (a comma, semicolon
 * or colon after at least four words, with four more after it): the first audio is that much
 * shorter to make, so it leaves sooner.
 */
export class SentenceSplitter {
  private buffer = '';
  private emitted = 0;

  constructor(
    private readonly maxChars = 240,
    private readonly firstClause = false,
  ) {}

  /** Adds streamed text; returns the sentences it completed. */
  push(text: string): string[] {
    this.buffer += text;
    const out: string[] = [];
    for (;;) {
      const end = this.boundary();
      if (end === undefined) break;
      const sentence = this.buffer.slice(0, end).trim();
      this.buffer = this.buffer.slice(end);
      if (sentence !== '') out.push(sentence);
      this.emitted += 1;
    }
    return out;
  }

  /** What is left at the end of the answer. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest === '' ? [] : [rest];
  }

  /** The end of the first complete sentence in the buffer, if one is certain yet. */
  private boundary(): number | undefined {
    const b = this.buffer;
    if (this.firstClause && this.emitted === 0) {
      const clause = /^((?:\S+\s+){3,}?\S+[,;:])\s+(?=(?:\S+\s+){3}\S)/.exec(b);
      if (clause?.[1] !== undefined && !/[.!?]/.test(clause[1])) return clause[0].length;
    }
    const stop = /([.!?]+["')\]]*)((?:\s*\[\d+(?:,\s*\d+)*\])*)(\s+)(?=(\S))|\n\s*\n/g;
    for (let m = stop.exec(b); m !== null; m = stop.exec(b)) {
      if (m[0].startsWith('\n')) return m.index + m[0].length;
      const next = m[4] ?? '';
      // A marker that has not fully arrived yet ("daily. [1"): wait for it.
      if (next === '[') continue;
      const word = /(\S+)$/.exec(b.slice(0, m.index + (m[1]?.length ?? 0)))?.[1] ?? '';
      // "e.g. aspirin", "approx. 5": a lower-case word or a digit goes on with the sentence.
      if (/^[a-z0-9]/.test(next) && (word.length <= 6 || /\.\w/.test(word))) continue;
      return m.index + m[0].length;
    }
    if (b.length > this.maxChars) {
      const cut = Math.max(b.lastIndexOf(', ', this.maxChars), b.lastIndexOf(' ', this.maxChars));
      return cut > 0 ? cut + 1 : this.maxChars;
    }
    return undefined;
  }
}

/** How the voice pipeline cuts an answer for speech (the first clause first). */
export const speechSplitter = (): SentenceSplitter => new SentenceSplitter(240, true);
