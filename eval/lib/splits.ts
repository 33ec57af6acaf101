import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The ledger of evaluation splits, eval/SPLITS.md: for each split of eval/answers.json,
 * eval/questions.json and the real-dev question files (issue 25), when it was written, when its
 * figures were first looked at, and whether it is still blind. The table there is the only list
 * of blind and seen splits; this module reads it.
 */

export const LEDGER_PATH = join(import.meta.dirname, '..', 'SPLITS.md');

export type SplitStatus = 'seen' | 'blind';

export interface LedgerRow {
  /**
   * The question file, as the ledger writes it: `eval/answers.json`, `eval/questions.json`, a
   * split file of `eval/real-dev/` or the shared `../shared/corpus/real-dev/questions.json`.
   */
  questions: string;
  split: string;
  /** "figures first looked at": `never` while the split is blind, else the commit and when. */
  firstLookedAt: string;
  status: SplitStatus;
  /** The BENCHMARKS.md heading its blind figures stand under, if any. */
  blindReport: string | undefined;
}

/** A request the ledger refuses, or a ledger that cannot be read: the message says which. */
export class LedgerError extends Error {
  override name = 'LedgerError';
}

const COLUMNS = {
  questions: 'questions',
  split: 'split',
  firstLookedAt: 'figures first looked at',
  status: 'status',
  blindReport: 'blind report',
} as const;

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());
}

const unquote = (cell: string) => cell.replace(/^[`"]|[`"]$/g, '');

/** The first table whose header names every column the ledger needs, row by row. */
export function parseLedger(markdown: string): LedgerRow[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => {
    if (!line.trimStart().startsWith('|')) return false;
    const header = cells(line);
    return Object.values(COLUMNS).every((c) => header.includes(c));
  });
  if (start < 0) throw new LedgerError('eval/SPLITS.md has no table with the ledger columns');
  const header = cells(lines[start] ?? '');
  const at = (row: string[], column: string) => row[header.indexOf(column)] ?? '';
  const rows: LedgerRow[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.trimStart().startsWith('|')) break;
    const row = cells(line);
    const status = at(row, COLUMNS.status);
    const split = unquote(at(row, COLUMNS.split));
    if (status !== 'seen' && status !== 'blind') {
      throw new LedgerError(
        `eval/SPLITS.md: split ${split} has status "${status}", not seen/blind`,
      );
    }
    const firstLookedAt = at(row, COLUMNS.firstLookedAt);
    if ((status === 'blind') !== (firstLookedAt === 'never')) {
      throw new LedgerError(
        `eval/SPLITS.md: split ${split} is ${status} but its figures were first looked at ` +
          `"${firstLookedAt}": a split is blind exactly while that is "never"`,
      );
    }
    const report = at(row, COLUMNS.blindReport);
    rows.push({
      questions: unquote(at(row, COLUMNS.questions)),
      split,
      firstLookedAt,
      status,
      blindReport: report === 'none' ? undefined : unquote(report),
    });
  }
  return rows;
}

export async function readLedger(path = LEDGER_PATH): Promise<LedgerRow[]> {
  return parseLedger(await readFile(path, 'utf8'));
}
