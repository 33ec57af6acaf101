import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  answerSplits,
  loadAnswerQuestions,
  planSplits,
  type AnswerSplits,
} from '../eval/lib/answers.js';
import { loadQuestions } from '../eval/lib/corpus.js';
import { LEDGER_PATH, LedgerError, parseLedger, readLedger } from '../eval/lib/splits.js';

/**
 * Blind means blind (issue 22): the ledger of evaluation splits, eval/SPLITS.md, says which
 * splits have been seen, and nothing may ask for a blind figure of one of them. These tests run
 * the real guard of eval/answers.ts against the real ledger, and read the reports (BENCHMARKS.md,
 * eval/README.md) for a seen split called blind where its figures are given.
 */

const root = path.join(import.meta.dirname, '..');
const ledger = await readLedger();
const answerQuestions = await loadAnswerQuestions(path.join(root, 'eval', 'answers.json'));
const splits: AnswerSplits = answerSplits(ledger, answerQuestions);
/** The question files whose splits are fields of their questions; the ledger lists them all. */
const PROJECT_FILES = ['eval/answers.json', 'eval/questions.json'];

describe('the ledger (eval/SPLITS.md)', () => {
  it('lists every split of both question files, each once', async () => {
    const retrieval = await loadQuestions(path.join(root, 'eval', 'questions.json'));
    const used = [
      ...new Set(answerQuestions.map((q) => `eval/answers.json ${q.split}`)),
      ...new Set(retrieval.map((q) => `eval/questions.json ${q.split}`)),
    ];
    const listed = ledger.map((r) => `${r.questions} ${r.split}`);
    expect(listed.length).toBe(new Set(listed).size);
    const ofBoth = ledger.filter((r) => PROJECT_FILES.includes(r.questions));
    expect(new Set(ofBoth.map((r) => `${r.questions} ${r.split}`))).toEqual(new Set(used));
  });

  it('names, in its other rows, a question file of the project that holds that split', () => {
    // The real-dev splits of issue 25: one file each, named as the split. The shared corpus
    // (../shared/) is not in the repository and may be absent, so its rows are not opened.
    const others = ledger.filter(
      (r) => !PROJECT_FILES.includes(r.questions) && !r.questions.startsWith('../shared/'),
    );
    expect(others.length).toBeGreaterThan(0);
    for (const row of others) {
      expect(existsSync(path.join(root, row.questions)), row.questions).toBe(true);
      expect(path.basename(row.questions)).toBe(`${row.split}.json`);
    }
    // And every split file of eval/real-dev/ has its row.
    const files = readdirSync(path.join(root, 'eval', 'real-dev'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => `eval/real-dev/${f}`);
    expect(files.length).toBeGreaterThan(0);
    expect(others.map((r) => r.questions)).toEqual(expect.arrayContaining(files));
  });

  it('refuses a split of eval/answers.json that it does not list', () => {
    const [first] = splits.seen;
    const without = ledger.filter(
      (r) => !(r.questions === 'eval/answers.json' && r.split === first),
    );
    expect(() => answerSplits(without, answerQuestions)).toThrow(
      new RegExp(`has split ${first ?? ''}, which eval/SPLITS.md does not list`),
    );
  });

  it('cannot mark a split blind once its figures have been looked at', () => {
    const text = readFileSync(LEDGER_PATH, 'utf8');
    const seenRow = text
      .split('\n')
      .find((l) => /\|\s*seen\s*\|\s*$/.test(l) && !l.includes('never'));
    expect(seenRow).toBeDefined();
    const doctored = text.replace(seenRow!, seenRow!.replace(/seen(\s*\|\s*)$/, 'blind$1'));
    expect(() => parseLedger(doctored)).toThrow(/is blind but its figures were first looked at/);
  });
});

describe('eval/answers.ts --blind', () => {
  it('has seen splits to refuse (the ledger is read, not empty)', () => {
    expect(splits.seen.length).toBeGreaterThan(0);
  });

  it.each([...splits.seen, 'tune', 'all'])(
    'refuses a blind figure of %s, which is seen',
    (split) => {
      expect(() => planSplits(splits, { split, blind: true })).toThrow(LedgerError);
      expect(() => planSplits(splits, { split, blind: true })).toThrow(/--blind asks for blind/);
    },
  );

  it('refuses a split the ledger does not list, with or without --blind', () => {
    for (const blind of [true, false]) {
      expect(() => planSplits(splits, { split: 'heldout99', blind })).toThrow(
        /heldout99 is not a split of eval\/SPLITS.md/,
      );
    }
  });

  it('answers the blind splits only with --blind, and only when there are some', () => {
    const tuning = planSplits(splits, { blind: false });
    expect([...tuning.answered]).toEqual(splits.seen);
    expect(tuning.reported).toEqual(['tune', ...splits.seen, 'all']);
    for (const split of splits.blind) {
      expect(() => planSplits(splits, { split, blind: false })).toThrow(/is blind/);
      expect(planSplits(splits, { split, blind: true }).reported).toEqual([split]);
    }
    if (splits.blind.length === 0) {
      expect(() => planSplits(splits, { blind: true })).toThrow(/marks no split blind/);
    } else {
      const report = planSplits(splits, { blind: true });
      expect([...report.answered]).toEqual([...splits.seen, ...splits.blind]);
    }
  });

  it('is refused by the command itself, before anything is indexed', async () => {
    const [split = ''] = splits.seen;
    const run = promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'eval/answers.ts', '--split', split, '--blind'],
      { cwd: root, timeout: 60_000 },
    );
    const failure = await run.then(
      () => undefined,
      (error: unknown) => error as { code: number; stdout: string; stderr: string },
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain(`${split} is seen (eval/SPLITS.md)`);
    expect(failure?.stdout).toBe('');
  }, 60_000);
});

/**
 * Where the reports call a split blind. A figure is reported in a table row, whose first cell
 * names the split and how it stands ("heldout5, blind (30 + 8)"), or in a sentence on "the blind
 * split `heldout3`". Those are the two forms looked for, after any heading (which is recorded);
 * "blind no longer" in a first cell is not a call. Lines are joined per paragraph, so a sentence
 * wrapped across lines is still found; code blocks are skipped.
 */
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The split's name as a whole word: `heldout` is not found in `heldout4` nor in `held-out`. */
const named = (name: string) => new RegExp(`(?<![\\w-])${escape(name)}(?![\\w-])`);
/** The first cell of a table row, or undefined for any other line. */
const firstCell = (line: string) =>
  line.trimStart().startsWith('|')
    ? (line.trim().replace(/^\|/, '').split('|')[0] ?? '')
    : undefined;

function blindCalls(markdown: string, names: readonly string[]) {
  const found: { split: string; heading: string; text: string }[] = [];
  let heading = '';
  let paragraph: string[] = [];
  let fenced = false;
  const flush = () => {
    const text = paragraph.join(' ');
    for (const split of names) {
      if (new RegExp(`\\bblind split \`?${escape(split)}(?![\\w-])`, 'i').test(text)) {
        found.push({ split, heading, text });
      }
    }
    paragraph = [];
  };
  for (const line of markdown.split('\n')) {
    const first = firstCell(line);
    if (line.trimStart().startsWith('```')) {
      flush();
      fenced = !fenced;
    } else if (fenced) {
      continue;
    } else if (/^#{1,6} /.test(line)) {
      flush();
      heading = line.replace(/^#+ /, '').trim();
    } else if (first !== undefined) {
      flush();
      if (!/\bblind\b(?! no longer)/i.test(first)) continue;
      for (const split of names) {
        if (named(split).test(first)) found.push({ split, heading, text: line });
      }
    } else if (line.trim() === '') {
      flush();
    } else {
      paragraph.push(line);
    }
  }
  flush();
  return found;
}

describe('the reports call no seen split blind', () => {
  const names = [...new Set(ledger.map((r) => r.split))];
  /** Blind in the ledger, or the text is that split's one blind report. */
  const allowed = (split: string, heading: string) =>
    ledger.some(
      (r) =>
        r.split === split &&
        (r.status === 'blind' ||
          (r.blindReport !== undefined && heading.startsWith(r.blindReport))),
    );

  it('finds the calls it looks for (the check reads what it should)', () => {
    const sample = [
      '## Round 9',
      '| split | key fact |',
      '| --- | --- |',
      '| **heldout4, blind (28 + 8)** | 60.7% |',
      '| heldout4, blind no longer (28 + 8) | 60.7% |',
      '',
      'Goals on the blind',
      'split `heldout4`: not met. And heldout4, blind no longer.',
    ].join('\n');
    expect(blindCalls(sample, ['heldout4', 'heldout'])).toEqual([
      { split: 'heldout4', heading: 'Round 9', text: '| **heldout4, blind (28 + 8)** | 60.7% |' },
      {
        split: 'heldout4',
        heading: 'Round 9',
        text: 'Goals on the blind split `heldout4`: not met. And heldout4, blind no longer.',
      },
    ]);
  });

  it.each(['BENCHMARKS.md', 'eval/README.md'])('%s', (file) => {
    const calls = blindCalls(readFileSync(path.join(root, file), 'utf8'), names);
    const wrong = calls.filter((c) => !allowed(c.split, c.heading));
    expect(wrong).toEqual([]);
  });

  it('and give no figure of a split the ledger still marks blind', () => {
    // A table row whose first cell names a split reports its figures: once a report does, the
    // ledger must say the split is seen (in the same commit as the report).
    const blind = ledger.filter((r) => r.status === 'blind').map((r) => r.split);
    const rows = ['BENCHMARKS.md', 'eval/README.md'].flatMap((file) =>
      readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .flatMap((l) => firstCell(l) ?? []),
    );
    const reported = blind.filter((split) => rows.some((first) => named(split).test(first)));
    expect(reported).toEqual([]);
  });
});
