import data from './data/clinical-abbreviations.json' with { type: 'json' };

/**
 * Clinical abbreviations expanded in place ("HTN" becomes "HTN hypertension"), on queries and on
 * the text indexed for search, so a query in either form finds a passage written in the other.
 * The list lives in data/clinical-abbreviations.json (an import, so the build copies it to dist).
 */

type Expansions = Readonly<Record<string, string | readonly string[]>>;

interface AbbreviationData {
  /** The lower-case form is no everyday word: matched in any case. */
  matchAnyCase: Expansions;
  /** Matched only as written: the lower-case form is a word ("cap", "sob") or means something else. */
  matchExactCase: Expansions;
}

export interface AbbreviationMatch {
  /** As written in the text. */
  abbreviation: string;
  expansions: readonly string[];
  /** Position of its first occurrence. */
  start: number;
  end: number;
}

const list = (value: string | readonly string[]) => (typeof value === 'string' ? [value] : value);

function buildLookup(source: AbbreviationData) {
  const exact = new Map<string, readonly string[]>();
  const anyCase = new Map<string, readonly string[]>();
  for (const [key, value] of Object.entries(source.matchExactCase)) exact.set(key, list(value));
  for (const [key, value] of Object.entries(source.matchAnyCase)) {
    anyCase.set(key.toLowerCase(), list(value));
  }
  return { exact, anyCase };
}

const LOOKUP = buildLookup(data satisfies AbbreviationData);

/** How many abbreviations the list holds. */
export const abbreviationCount = LOOKUP.exact.size + LOOKUP.anyCase.size;

// Words, with inner hyphens, slashes and ampersands: "COVID-19", "N/V", "U&E", "HTN/T2DM".
const TOKEN = /[\p{L}\p{N}]+(?:[-/&][\p{L}\p{N}]+)*/gu;
/** A token joined from parts, and each part. */
const JOINED = /[-/&]/;
const PART = /[\p{L}\p{N}]+/gu;

/** The text's words as written, with inner hyphens, slashes and ampersands ("tTG-IgA"). */
export function writtenWords(text: string): string[] {
  return [...text.matchAll(TOKEN)].map((m) => m[0]);
}

interface Found {
  expansions: readonly string[];
  /** From matchExactCase: a word in a run of capitals may be an ordinary word ("SUCH AS"). */
  exact: boolean;
}

/** The expansions of one token as written, including plurals such as "NSAIDs" or "ccbs". */
function lookUp(token: string): Found | undefined {
  const exact = LOOKUP.exact.get(token);
  if (exact) return { expansions: exact, exact: true };
  const anyCase = LOOKUP.anyCase.get(token.toLowerCase());
  if (anyCase) return { expansions: anyCase, exact: false };
  // A lower-case plural "s" only: "ARBS" would be an abbreviation of its own.
  if (token.length < 3 || !token.endsWith('s')) return undefined;
  return lookUp(token.slice(0, -1));
}

/**
 * An upper-case word that may be an ordinary word ("SUCH", "AS"): next to one, an exact-case
 * abbreviation is probably a word too, in a heading set in capitals.
 */
function isCapitalWord(token: string | undefined): boolean {
  return token !== undefined && /^\p{Lu}{2,}$/u.test(token) && lookUp(token)?.exact !== false;
}

/** Whether the words around the `i`-th token are in capitals. */
function inCapitals(tokens: readonly RegExpExecArray[], i: number): boolean {
  return isCapitalWord(tokens[i - 1]?.[0]) || isCapitalWord(tokens[i + 1]?.[0]);
}

/** Each abbreviation's first occurrence, in order of appearance. */
export function abbreviationsIn(text: string): AbbreviationMatch[] {
  const tokens = [...text.matchAll(TOKEN)];
  const matches: AbbreviationMatch[] = [];
  const seen = new Set<string>();
  // Runs for every word of every analysed sentence (the extractive model's hot path): no closure
  // or regular expression per word.
  const add = (i: number, abbreviation: string, start: number): boolean => {
    const found = lookUp(abbreviation);
    if (!found || (found.exact && inCapitals(tokens, i))) return false;
    const key = abbreviation.toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      matches.push({ abbreviation, expansions: found.expansions, start, end: start + key.length });
    }
    return true;
  };
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i];
    if (token === undefined || add(i, token[0], token.index)) continue;
    // "HTN/T2DM" is no entry of its own, but both of its parts are.
    if (!JOINED.test(token[0])) continue;
    for (const part of token[0].matchAll(PART)) add(i, part[0], token.index + part.index);
  }
  return matches;
}

/**
 * The text with the expansions of each abbreviation inserted after its first occurrence, except
 * those the text already contains ("hypertension (HTN)" stays as it is).
 */
export function expandAbbreviations(text: string): string {
  const lower = text.toLowerCase();
  let result = '';
  let copied = 0;
  // After the whole word: "HTN/T2DM hypertension type 2 diabetes mellitus".
  const wordEnd = /[\p{L}\p{N}&/-]*/uy;
  for (const match of abbreviationsIn(text)) {
    const missing = match.expansions.filter((e) => !lower.includes(e.toLowerCase()));
    if (missing.length === 0) continue;
    wordEnd.lastIndex = match.end;
    const end = match.end + (wordEnd.exec(text)?.[0].length ?? 0);
    result += `${text.slice(copied, end)} ${missing.join(' ')}`;
    copied = end;
  }
  return result + text.slice(copied);
}
