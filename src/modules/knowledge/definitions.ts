import { isGeneralWord } from '../../providers/embeddings/general-english.js';

/**
 * Abbreviations a document defines itself: "latent TB infection (LTBI)", "creatinine clearance
 * (CrCl)", and the other way round, "HGA (human granulocytic anaplasmosis)". Found with the
 * algorithm of Schwartz and Hearst (2003): a short form in parentheses is matched, character by
 * character from its end, against the words before it, and the long form is the shortest run of
 * those words, starting at a word's start, that holds its characters in order (words whose
 * initials spell it are tried first). The indexer adds a definition's short form to the search
 * text of the document's chunks that spell out its long form (`DocumentDefinitions`), so a question
 * asking in the document's own abbreviation finds the passages that never use it: the knowledge
 * base's own text says what its abbreviations mean, no list does.
 */

export interface Definition {
  /** As written: "LTBI"; for a pair of names, the one before the parenthesis ("VYVANSE"). */
  short: string;
  /** As written: "latent TB infection"; for a pair of names, the one inside ("lisdexamfetamine"). */
  long: string;
  /**
   * `abbreviation`, or `name`: two names of one thing, a brand and its generic name, in either
   * order ("lisinopril (Zestril)", "VYVANSE (lisdexamfetamine dimesylate)").
   */
  kind: 'abbreviation' | 'name';
}

const PARENTHESIS = /\(([^()]{1,80})\)/g;
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'-]*/gu;

/** A short form: one or two words of 2 to 10 characters, starting with a letter or a digit. */
function isShortForm(text: string): boolean {
  return (
    text.length >= 2 &&
    text.length <= 10 &&
    text.split(/\s+/).length <= 2 &&
    /^[\p{L}\p{N}]/u.test(text) &&
    /\p{L}/u.test(text) &&
    // A short form is written apart from prose: a capital or a digit in it ("CrCl", "T2DM", "mg").
    /[\p{Lu}\p{N}]/u.test(text)
  );
}

/**
 * The long form of `short` at the end of `before`, or undefined. `before` is cut to the words a
 * long form may have: min(|short| + 5, 2 × |short|).
 */
export function longFormOf(short: string, before: string): string | undefined {
  const words = [...before.matchAll(WORD)];
  const most = Math.min(short.length + 5, short.length * 2);
  const initials = byInitials(short, words, before);
  if (initials !== undefined) return initials;
  const first = words.at(-most) ?? words[0];
  if (first === undefined) return undefined;
  const candidate = before.slice(first.index);
  const s = short.toLowerCase();
  const l = candidate.toLowerCase();
  let li = l.length - 1;
  for (let si = s.length - 1; si >= 0; si -= 1) {
    const c = s[si] ?? '';
    if (!/[\p{L}\p{N}]/u.test(c)) continue;
    // The short form's first character must start a word of the long form.
    const atStart = (i: number) => i === 0 || !/[\p{L}\p{N}]/u.test(l[i - 1] ?? '');
    while (li >= 0 && (l[li] !== c || (si === 0 && !atStart(li)))) li -= 1;
    if (li < 0) return undefined;
    li -= 1;
  }
  const long = candidate.slice(li + 1).trim();
  const start = long.search(/[\p{L}\p{N}]/u);
  const trimmed = start < 0 ? '' : long.slice(start);
  if (trimmed.length <= short.length || trimmed.split(/\s+/).length < 2) return undefined;
  if (trimmed.toLowerCase().includes(s)) return undefined;
  return trimmed;
}

/** Small words a long form may hold that its short form skips ("Food and Drug Administration"). */
const SKIPPED = new Set(['and', 'of', 'the', 'for', 'in', 'to', 'with', 'on']);

/**
 * The words before whose initials spell the short form ("tuberculin skin test": TST), tried
 * first: the character match alone would settle for the shortest run ("test" holds t, s, t).
 */
function byInitials(short: string, words: RegExpExecArray[], before: string): string | undefined {
  const letters = short.toLowerCase().replace(/[^\p{L}]/gu, '');
  if (letters.length < 2) return undefined;
  let spelled = '';
  for (let k = words.length - 1; k >= 0 && spelled.length < letters.length; k -= 1) {
    const word = words[k]?.[0] ?? '';
    if (SKIPPED.has(word.toLowerCase())) continue;
    spelled = (word[0] ?? '').toLowerCase() + spelled;
    if (spelled === letters) return before.slice(words[k]?.index).trim();
  }
  return undefined;
}

/** A trademark sign, dropped from a name. */
const MARK = /[®™]/g;
/**
 * A drug name as written: four small letters or more, maybe after a capital, or six capitals or
 * more ("VYVANSE"); not an abbreviation ("IGRA") nor a pronunciation ("KAH-wah-SAH-ke").
 */
const NAME_WORD = /^(?:\p{Lu}?\p{Ll}{4,}|\p{Lu}{6,})$/u;

/**
 * The two names of a pair written "name (other name)": the word before the parenthesis and what
 * it holds (one to three words), each a name of the field, not everyday English (a brand and its
 * generic name: "lisinopril (Zestril)", "VYVANSE (lisdexamfetamine dimesylate)"; not "pain
 * (headache)").
 */
function namePair(before: string, inside: string): Definition | undefined {
  const last = [...before.matchAll(WORD)].at(-1);
  if (last === undefined || !before.replace(MARK, '').trimEnd().endsWith(last[0])) return undefined;
  const first = last[0].replace(MARK, '');
  const other = inside.replace(MARK, '').trim();
  const words = other.split(/\s+/);
  if (words.length > 3 || !words.every((w) => NAME_WORD.test(w))) return undefined;
  const isName = (w: string) => NAME_WORD.test(w) && !isGeneralWord(w);
  if (!isName(first) || !isName(words[0] ?? '')) return undefined;
  // Two forms of one word ("pericardium (pericardial effusion)") are not two names.
  if (first.slice(0, 5).toLowerCase() === other.slice(0, 5).toLowerCase()) return undefined;
  return { short: first, long: other, kind: 'name' };
}

/**
 * An abbreviation defined by "long form (SHORT)", or "SHORT (long form)": "HGA (human
 * granulocytic anaplasmosis)", the short form just before the parenthesis.
 */
function abbreviation(before: string, inside: string): Definition | undefined {
  if (isShortForm(inside)) {
    const long = longFormOf(inside, before);
    return long === undefined ? undefined : { short: inside, long, kind: 'abbreviation' };
  }
  const last = [...before.matchAll(WORD)].at(-1)?.[0];
  if (last === undefined || !isShortForm(last) || !before.trimEnd().endsWith(last))
    return undefined;
  return longFormOf(last, inside) === inside
    ? { short: last, long: inside, kind: 'abbreviation' }
    : undefined;
}

/** The definitions a text makes, each once (the first long form found for a short form). */
export function definitionsIn(text: string): Definition[] {
  const found = new Map<string, Definition>();
  for (const match of text.matchAll(PARENTHESIS)) {
    const inside = (match[1] ?? '').trim();
    const before =
      text
        .slice(Math.max(0, match.index - 200), match.index)
        .split(/[.;:!?\n]/)
        .at(-1) ?? '';
    const definition = abbreviation(before, inside) ?? namePair(before, inside);
    if (definition !== undefined && !found.has(definition.short)) {
      found.set(definition.short, definition);
    }
  }
  return [...found.values()];
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const wordsOf = (s: string, flags: string) =>
  new RegExp(`(?<![\\p{L}\\p{N}])${escape(s).replace(/\s+/g, '\\s+')}(?![\\p{L}\\p{N}])`, flags);

/**
 * A document's abbreviations, ready to add to its chunks' search text: the short form of each
 * whose long form a chunk spells out without it, so that a chunk saying "latent TB infection" is
 * found by "LTBI" too. (The other way, the long form added where only the short form stands, was
 * measured and left out: it moved the retrieval evaluation's MRR from 0.739 to 0.715, the long
 * form's common words diluting the ranking. Pairs of names are left out: the knowledge base's
 * glossary (glossary.ts) adds the other name to a query instead, and the chunks keep what their
 * text says. Measured on real-dev when names went into the search text and the model had no
 * glossary: "Max daily dose of lisdexamfetamine" found only chunks saying VYVANSE, and was declined.)
 */
export class DocumentDefinitions {
  private readonly matchers: { short: string; hasShort: RegExp; hasLong: RegExp }[];

  constructor(definitions: readonly Definition[]) {
    this.matchers = definitions
      .filter((d) => d.kind === 'abbreviation')
      .map((d) => ({
        short: d.short,
        // The short form as written ("HD" is not "hd"), the long form in any case, across lines.
        hasShort: wordsOf(d.short, 'u'),
        hasLong: wordsOf(d.long, 'iu'),
      }));
  }

  /** `searchText` (of the chunk whose text is `text`) with the short forms it lacks. */
  searchText(searchText: string, text: string): string {
    const added = this.matchers
      .filter((m) => m.hasLong.test(text) && !m.hasShort.test(text))
      .map((m) => m.short);
    return added.length === 0 ? searchText : `${searchText}\n${added.join('\n')}`;
  }
}
