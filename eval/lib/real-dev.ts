import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fraction, type AnswerSplits } from './answers.js';
import { LedgerError, type LedgerRow } from './splits.js';

/**
 * The real documents of issue 25 and their question files, as eval/answers.ts --corpus reads
 * them: the shared development questions (`../shared/corpus/real-dev/questions.json`, split
 * `real-dev`) and the blind splits written on the same documents (`eval/real-dev/rd-*.json`, split
 * named as the file). Each file is a split of eval/SPLITS.md; the ledger says which are seen.
 */

const root = resolve(import.meta.dirname, '..', '..');
/** The shared corpus folder, outside the repository. */
export const SHARED_CORPUS = resolve(root, '..', 'shared', 'corpus');
/** How the ledger names the shared question file. */
const SHARED_QUESTIONS = '../shared/corpus/real-dev/questions.json';

export interface RealDocument {
  key: string;
  /** The first line of the file: the source's title. */
  title: string;
  text: string;
}

export interface RealQuestion {
  id: string;
  split: string;
  q: string;
  /** The document that answers it; null for a question no document answers. */
  doc_key: string | null;
  /** Lower-case substrings of the document; an answer carrying any one gives the fact. */
  keys: string[];
}

interface QuestionFile {
  questions: { id?: string; q: string; doc_key: string | null; keys: string[] }[];
}

export async function loadDocuments(dir: string): Promise<RealDocument[]> {
  const names = (await readdir(dir)).filter((f) => f.endsWith('.txt')).sort();
  return Promise.all(
    names.map(async (name) => {
      const text = await readFile(join(dir, name), 'utf8');
      return {
        key: name.replace(/\.txt$/, ''),
        title: text.split('\n', 1)[0]?.trim() ?? name,
        text,
      };
    }),
  );
}

async function readQuestions(path: string, split: string, prefix: string): Promise<RealQuestion[]> {
  const file = JSON.parse(await readFile(path, 'utf8')) as QuestionFile;
  return file.questions.map((q, i) => ({
    id: q.id ?? `${prefix}${String(i + 1).padStart(2, '0')}`,
    split,
    q: q.q,
    doc_key: q.doc_key,
    keys: q.keys,
  }));
}

/**
 * The question files of `corpus` (only `real-dev` has any) with the split each forms, and the
 * seen and blind splits among them as the ledger marks them. A file the ledger does not list
 * stops the run, as an unlisted split of eval/answers.json does.
 */
export async function loadRealQuestions(
  corpus: string,
  ledger: readonly LedgerRow[],
): Promise<{ questions: RealQuestion[]; splits: AnswerSplits }> {
  if (corpus !== 'real-dev') {
    throw new LedgerError(
      `--corpus ${corpus}: only real-dev has questions here (real-test is held out: it is only ` +
        'uploaded and indexed)',
    );
  }
  const files = [
    { ledger: SHARED_QUESTIONS, path: join(SHARED_CORPUS, 'real-dev', 'questions.json') },
  ];
  const own = join(root, 'eval', 'real-dev');
  for (const name of (await readdir(own)).filter((f) => /^rd-.+\.json$/.test(f)).sort()) {
    files.push({ ledger: `eval/real-dev/${name}`, path: join(own, name) });
  }
  const questions: RealQuestion[] = [];
  const seen: string[] = [];
  const blind: string[] = [];
  for (const file of files) {
    const row = ledger.find((r) => r.questions === file.ledger);
    if (row === undefined) {
      throw new LedgerError(
        `${file.ledger} is not in eval/SPLITS.md: add its row before running it`,
      );
    }
    (row.status === 'seen' ? seen : blind).push(row.split);
    questions.push(...(await readQuestions(file.path, row.split, `${row.split}-`)));
  }
  return { questions, splits: { seen, blind } };
}

/** What the service answered: the stored answer of message_done. */
export interface RealAnswer {
  content: string;
  /** The documents (doc_key) of the answer's citations, in marker order. */
  cited: string[];
}

export interface RealJudged {
  answerable: boolean;
  /** No citation: the service gave no grounded answer. */
  declined: boolean;
  /** A key in the answer and the right document among its citations. */
  fact: boolean;
  rightDocument: boolean;
  citations: number;
  /** Citations of the question's own document (none for an unanswerable question). */
  preciseCitations: number;
}

/**
 * One answer judged. An answer with no citation is a decline: a grounded service's answer rests
 * on passages it cites (the offline model's "could not find" has none). For an unanswerable
 * question every citation is imprecise: there was nothing to cite.
 */
export function judgeReal(q: RealQuestion, a: RealAnswer): RealJudged {
  const answerable = q.doc_key !== null;
  const declined = a.cited.length === 0;
  const rightDocument = q.doc_key !== null && a.cited.includes(q.doc_key);
  const text = a.content.toLowerCase();
  return {
    answerable,
    declined,
    fact: rightDocument && q.keys.some((k) => text.includes(k.toLowerCase())),
    rightDocument,
    citations: a.cited.length,
    preciseCitations: answerable ? a.cited.filter((d) => d === q.doc_key).length : 0,
  };
}

export interface RealScores {
  answerable: number;
  unanswerable: number;
  facts: number;
  rightDocument: number;
  falseRefusals: number;
  declinedUnanswerable: number;
  citations: number;
  preciseCitations: number;
}

export function tallyReal(judged: readonly RealJudged[]): RealScores {
  const s: RealScores = {
    answerable: 0,
    unanswerable: 0,
    facts: 0,
    rightDocument: 0,
    falseRefusals: 0,
    declinedUnanswerable: 0,
    citations: 0,
    preciseCitations: 0,
  };
  for (const j of judged) {
    if (j.answerable) {
      s.answerable += 1;
      if (j.fact) s.facts += 1;
      if (j.rightDocument) s.rightDocument += 1;
      if (j.declined) s.falseRefusals += 1;
    } else {
      s.unanswerable += 1;
      if (j.declined) s.declinedUnanswerable += 1;
    }
    s.citations += j.citations;
    s.preciseCitations += j.preciseCitations;
  }
  return s;
}

export const REAL_HEADER =
  'split | key fact, cited | right document cited | false refusals | unanswerable declined | citation precision';

export function realRow(label: string, s: RealScores): string {
  return [
    label,
    fraction(s.facts, s.answerable),
    fraction(s.rightDocument, s.answerable),
    fraction(s.falseRefusals, s.answerable),
    fraction(s.declinedUnanswerable, s.unanswerable),
    fraction(s.preciseCitations, s.citations),
  ].join(' | ');
}
