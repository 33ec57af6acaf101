import type { Passage } from '../../providers/llm/types.js';
import type { CitationDto } from '../conversations/schema.js';

/** `[3]`, `[3, 5]` or `[3,5]`: a model's reference to passages by their number. */
const MARKER = /\[(\d{1,4}(?:\s*,\s*\d{1,4})*)\]/g;
/** What may still become a marker when the next delta arrives: `[`, `[1`, `[1,`, `[1, 2`. */
const OPEN_MARKER = /\[\d{0,4}(?:\s*,\s*\d{0,4})*\s*$/;
const SNIPPET_CHARS = 300;

/**
 * Rewrites a streamed answer's passage references into citation markers (DECISIONS 3): passages
 * are numbered as retrieved, citations from 1 in order of first use, so the model's `[4] … [2]`
 * becomes `[1] … [2]`. A reference to a passage that does not exist is dropped, so every marker
 * in the text has its citation and every citation is used. Works on deltas: a marker split across
 * two deltas is held back until it is complete.
 */
export class CitationMarkers {
  private held = '';
  private readonly order: number[] = [];
  private readonly byPassage = new Map<number, number>();

  constructor(private readonly passages: () => readonly Passage[]) {}

  /** The text to send for this delta (possibly empty while a marker is incomplete). */
  push(delta: string): string {
    const text = this.held + delta;
    const open = OPEN_MARKER.exec(text);
    const cut = open === null || open[0].length > 24 ? text.length : open.index;
    this.held = text.slice(cut);
    return this.rewrite(text.slice(0, cut));
  }

  /** The rest at the end of the answer. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return this.rewrite(rest);
  }

  citations(): CitationDto[] {
    const byN = new Map(this.passages().map((p) => [p.n, p]));
    return this.order.flatMap((n, i) => {
      const p = byN.get(n);
      if (p === undefined) return [];
      return [
        {
          index: i + 1,
          documentId: p.documentId,
          docKey: p.docKey,
          title: p.title,
          version: p.version,
          chunkId: p.chunkId,
          page: p.page,
          snippet: snippet(p.text),
          score: Math.min(1, Math.max(0, p.score)),
        },
      ];
    });
  }

  private rewrite(text: string): string {
    const known = new Set(this.passages().map((p) => p.n));
    return text.replace(MARKER, (_all, list: string) => {
      const numbers = list.split(',').map((s) => Number(s.trim()));
      return numbers
        .filter((n) => known.has(n))
        .map((n) => `[${String(this.indexOf(n))}]`)
        .filter((marker, i, all) => all.indexOf(marker) === i)
        .join('');
    });
  }

  private indexOf(n: number): number {
    let index = this.byPassage.get(n);
    if (index === undefined) {
      this.order.push(n);
      index = this.order.length;
      this.byPassage.set(n, index);
    }
    return index;
  }
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= SNIPPET_CHARS) return flat;
  const cut = flat.lastIndexOf(' ', SNIPPET_CHARS);
  return `${flat.slice(0, cut > SNIPPET_CHARS / 2 ? cut : SNIPPET_CHARS)}…`;
}
