import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Type, type Static } from 'typebox';
import { strictAjv } from '../../src/platform/http/validation.js';

/**
 * Checks the question files written on the real-dev documents (issue 25): the blind splits of
 * this folder (rd-*.json) and the shared development questions, ../shared/corpus/real-dev/
 * questions.json. It reads the documents and the questions only; it answers nothing.
 *
 *   npx tsx eval/real-dev/verify.ts                      # the splits here and the shared file
 *   npx tsx eval/real-dev/verify.ts --corpus DIR         # the documents from another folder
 *   npx tsx eval/real-dev/verify.ts --split a.json ...   # only these files (as blind splits)
 *
 * Exit 0 when every check passes, 1 when one fails (each failure is printed), 2 when the
 * documents cannot be read.
 */

const root = resolve(import.meta.dirname, '..', '..');
const SPLITS_DIR = import.meta.dirname;
const DEFAULT_CORPUS = resolve(root, '..', 'shared', 'corpus', 'real-dev');

/** How far (in characters of the normalised document) a key may stand from its evidence. */
export const NEAR = 300;

const QuestionSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1 })),
    q: Type.String({ minLength: 1 }),
    doc_key: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    keys: Type.Array(Type.String({ minLength: 1 })),
    evidence: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  },
  { additionalProperties: false },
);
const FileSchema = Type.Object(
  { _comment: Type.String(), questions: Type.Array(QuestionSchema) },
  { additionalProperties: false },
);
type Question = Static<typeof QuestionSchema>;
const validateFile = strictAjv().compile<Static<typeof FileSchema>>(FileSchema);

/** What a question file must hold, and how strictly its keys are judged. */
export interface Expectation {
  answerable: number;
  /** Answerable questions per document: at least, at most. */
  perDocument: readonly [number, number];
  unanswerable: number;
  /** Blind splits carry an id per question. */
  ids: boolean;
  /**
   * A key far from its evidence, or found in another document, is an error (the splits written
   * here) or only a note (the shared file, which this project does not edit: a few of its keys
   * give the same fact where the document states it a second time, away from the evidence).
   */
  strictKeys: boolean;
}

export const BLIND_SPLIT: Expectation = {
  answerable: 42,
  perDocument: [3, 3],
  unanswerable: 14,
  ids: true,
  strictKeys: true,
};
export const SHARED_QUESTIONS: Expectation = {
  answerable: 48,
  perDocument: [3, 4],
  unanswerable: 14,
  ids: false,
  strictKeys: false,
};

export interface QuestionFile {
  /** As printed in messages. */
  name: string;
  questions: Question[];
  expect: Expectation;
}

export interface Findings {
  errors: string[];
  notes: string[];
}

/** Lower case, every run of white space one space: how evidence and keys are matched. */
export const normalise = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();
/** For comparing questions: also without punctuation. */
const bare = (text: string) =>
  normalise(text)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) {
    found.push(at);
  }
  return found;
}

/** The documents of a real-dev folder, key → normalised text. */
export function readCorpus(dir: string): Map<string, string> {
  const documents = new Map<string, string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.txt'))) {
    documents.set(basename(file, '.txt'), normalise(readFileSync(join(dir, file), 'utf8')));
  }
  return documents;
}

export function parseQuestionFile(name: string, text: string, expect: Expectation): QuestionFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`${name}: not JSON (${(error as Error).message})`);
  }
  if (!validateFile(data)) {
    const [first] = validateFile.errors ?? [];
    throw new Error(`${name}: ${first?.instancePath ?? ''} ${first?.message ?? 'invalid'}`);
  }
  return { name, questions: data.questions, expect };
}

function checkAnswerable(
  where: string,
  q: Question,
  documents: Map<string, string>,
  expect: Expectation,
  findings: Findings,
): void {
  const doc = q.doc_key === null ? undefined : documents.get(q.doc_key);
  if (doc === undefined) {
    findings.errors.push(`${where}: doc_key ${q.doc_key ?? 'null'} is not a document`);
    return;
  }
  if (q.keys.length === 0) findings.errors.push(`${where}: an answerable question has no keys`);
  const evidence = normalise(q.evidence ?? '');
  const spans = evidence === '' ? [] : occurrences(doc, evidence);
  if (spans.length === 0) findings.errors.push(`${where}: evidence not found in ${q.doc_key}`);
  const question = normalise(q.q);
  const loose = expect.strictKeys ? findings.errors : findings.notes;
  for (const key of q.keys) {
    const k = normalise(key);
    if (key !== key.toLowerCase()) findings.errors.push(`${where}: key "${key}" is not lower case`);
    if (question.includes(k)) findings.errors.push(`${where}: key "${key}" is in the question`);
    if (!doc.includes(k)) {
      findings.errors.push(`${where}: key "${key}" not found in ${q.doc_key}`);
      continue;
    }
    const near = spans.some((at) =>
      doc.slice(Math.max(0, at - NEAR), at + evidence.length + NEAR).includes(k),
    );
    if (spans.length > 0 && !near) {
      loose.push(`${where}: key "${key}" is not within ${NEAR} characters of its evidence`);
    }
    const elsewhere = [...documents].filter(([d, text]) => d !== q.doc_key && text.includes(k));
    if (elsewhere.length > 0) {
      loose.push(`${where}: key "${key}" is also in ${elsewhere.map(([d]) => d).join(', ')}`);
    }
  }
}

function checkCounts(file: QuestionFile, documents: Map<string, string>, findings: Findings) {
  const { expect, questions, name } = file;
  const answerable = questions.filter((q) => q.doc_key !== null);
  const unanswerable = questions.length - answerable.length;
  if (answerable.length !== expect.answerable) {
    findings.errors.push(`${name}: ${answerable.length} answerable, not ${expect.answerable}`);
  }
  if (unanswerable !== expect.unanswerable) {
    findings.errors.push(`${name}: ${unanswerable} unanswerable, not ${expect.unanswerable}`);
  }
  const [least, most] = expect.perDocument;
  for (const key of documents.keys()) {
    const n = answerable.filter((q) => q.doc_key === key).length;
    if (n < least || n > most) {
      const want = least === most ? `${least}` : `${least}-${most}`;
      findings.errors.push(`${name}: ${n} questions on ${key}, not ${want}`);
    }
  }
}

/** Every check on every file; duplicates and ids are compared across all the files given. */
export function check(files: readonly QuestionFile[], documents: Map<string, string>): Findings {
  const findings: Findings = { errors: [], notes: [] };
  const ids = new Map<string, string>();
  const asked = new Map<string, string>();
  const facts: { where: string; doc: string; keys: string[] }[] = [];
  for (const file of files) {
    checkCounts(file, documents, findings);
    file.questions.forEach((q, i) => {
      const where = `${file.name} ${q.id ?? `#${i + 1}`}`;
      if (file.expect.ids && q.id === undefined) findings.errors.push(`${where}: no id`);
      if (q.id !== undefined) {
        const first = ids.get(q.id);
        if (first !== undefined) findings.errors.push(`${where}: id also used by ${first}`);
        else ids.set(q.id, where);
      }
      const text = bare(q.q);
      const same = asked.get(text);
      if (same !== undefined) findings.errors.push(`${where}: the same question as ${same}`);
      else asked.set(text, where);
      if (q.doc_key === null) {
        if (q.keys.length > 0 || q.evidence !== null) {
          findings.errors.push(`${where}: unanswerable, so keys must be [] and evidence null`);
        }
        return;
      }
      checkAnswerable(where, q, documents, file.expect, findings);
      const keys = q.keys.map(normalise);
      // The same fact asked twice: a key of one is, or holds, a key of the other.
      for (const other of facts) {
        const overlap =
          other.doc === q.doc_key &&
          keys.some((k) => other.keys.some((o) => k.includes(o) || o.includes(k)));
        if (overlap) findings.errors.push(`${where}: asks the same fact as ${other.where}`);
      }
      facts.push({ where, doc: q.doc_key, keys });
    });
  }
  return findings;
}

function main(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      corpus: { type: 'string', default: DEFAULT_CORPUS },
      split: { type: 'string', multiple: true, default: [] },
    },
  });
  const corpus = resolve(values.corpus);
  if (!existsSync(corpus) || !statSync(corpus).isDirectory()) {
    console.error(
      `eval/real-dev/verify.ts: no real-dev corpus at ${corpus}. It is read from ` +
        `../shared/corpus/real-dev/ beside the repository, or give its folder with --corpus DIR.`,
    );
    return 2;
  }
  const documents = readCorpus(corpus);
  if (documents.size === 0) {
    console.error(`eval/real-dev/verify.ts: ${corpus} holds no <key>.txt document`);
    return 2;
  }
  const shown = (path: string) => relative(process.cwd(), path) || path;
  const splitPaths =
    values.split.length > 0
      ? values.split.map((p) => resolve(p))
      : readdirSync(SPLITS_DIR)
          .filter((f) => /^rd-.*\.json$/.test(f))
          .sort()
          .map((f) => join(SPLITS_DIR, f));
  const sources: [string, Expectation][] = splitPaths.map((p) => [p, BLIND_SPLIT]);
  const shared = join(corpus, 'questions.json');
  if (values.split.length === 0 && existsSync(shared)) sources.push([shared, SHARED_QUESTIONS]);
  let files: QuestionFile[];
  try {
    files = sources.map(([path, expect]) =>
      parseQuestionFile(shown(path), readFileSync(path, 'utf8'), expect),
    );
  } catch (error) {
    console.error(`eval/real-dev/verify.ts: ${(error as Error).message}`);
    return 1;
  }
  const { errors, notes } = check(files, documents);
  for (const file of files) {
    const answerable = file.questions.filter((q) => q.doc_key !== null).length;
    console.log(
      `${file.name}: ${answerable} answerable + ${file.questions.length - answerable} unanswerable`,
    );
  }
  console.log(`${documents.size} documents in ${shown(corpus)}`);
  if (notes.length > 0) {
    console.log(`\nnotes (loose keys of the shared file, which this project does not edit):`);
    for (const note of notes) console.log(`  ${note}`);
  }
  if (errors.length > 0) {
    console.error(`\n${errors.length} problem(s):`);
    for (const error of errors) console.error(`  ${error}`);
    return 1;
  }
  console.log('\nall checks pass');
  return 0;
}

if (process.argv[1] === import.meta.filename) process.exitCode = main(process.argv.slice(2));
