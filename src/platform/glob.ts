/**
 * Redis's glob (the language of `SCAN MATCH` and `KEYS`) as a regular expression, so that a
 * pattern selects the same keys in an instance's memory as in Redis: `*` any run of characters
 * (separators included), `?` one character, `[abc]`, `[a-z]` and `[^abc]` classes, and `\x` the
 * character x itself. Redis treats an unclosed `[` as a class running to the end of the pattern;
 * that is nearly always a typing mistake, so it is refused here instead (`GlobError`).
 */
export class GlobError extends Error {}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/-]/g;
const literal = (ch: string) => ch.replace(REGEX_SPECIAL, '\\$&');

/** The class starting after `[` at `start`: its regex source and the index after its `]`. */
function classAt(pattern: string, start: number): { source: string; next: number } {
  let i = start;
  let negate = false;
  if (pattern[i] === '^') {
    negate = true;
    i += 1;
  }
  const parts: string[] = [];
  while (i < pattern.length && pattern[i] !== ']') {
    let ch = pattern[i] ?? '';
    if (ch === '\\' && i + 1 < pattern.length) {
      i += 1;
      ch = pattern[i] ?? '';
    }
    if (pattern[i + 1] === '-' && i + 2 < pattern.length && pattern[i + 2] !== ']') {
      let end = pattern[i + 2] ?? '';
      let skip = 3;
      if (end === '\\' && i + 3 < pattern.length) {
        end = pattern[i + 3] ?? '';
        skip = 4;
      }
      // Redis accepts a reversed range ([z-a]) as the same range.
      const [lo, hi] = ch <= end ? [ch, end] : [end, ch];
      parts.push(`${literal(lo)}-${literal(hi)}`);
      i += skip;
      continue;
    }
    parts.push(literal(ch));
    i += 1;
  }
  if (i >= pattern.length) throw new GlobError('has a "[" without its "]"');
  // An empty class matches nothing in Redis; so does (?!) here.
  const body = parts.join('');
  const source = body === '' ? (negate ? '[\\s\\S]' : '(?!)') : `[${negate ? '^' : ''}${body}]`;
  return { source, next: i + 1 };
}

/** The whole-string regular expression equivalent to a Redis glob. Throws `GlobError`. */
export function globToRegExp(pattern: string): RegExp {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i] ?? '';
    if (ch === '*') {
      out += '[\\s\\S]*';
      while (pattern[i + 1] === '*') i += 1;
    } else if (ch === '?') {
      out += '[\\s\\S]';
    } else if (ch === '[') {
      const cls = classAt(pattern, i + 1);
      out += cls.source;
      i = cls.next;
      continue;
    } else if (ch === '\\' && i + 1 < pattern.length) {
      i += 1;
      out += literal(pattern[i] ?? '');
    } else {
      out += literal(ch);
    }
    i += 1;
  }
  return new RegExp(`^${out}$`);
}

/** `text` with every glob character escaped, so that it matches only itself. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\^]/g, '\\$&');
}
