import { randomUUID } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';

/**
 * Checks that a file is a well-formed ARPA language model before sphinxbase reads it: its ARPA
 * reader crashes the whole process (a segmentation fault, not an error) on a truncated file, and
 * `ngram_model_read` does on a missing one. Checked: the `\data\` counts, each section's lines
 * (a log10 probability, n words, an optional back-off weight), every word of a longer n-gram a
 * unigram, every n-gram's prefix present one order down, no duplicates, and `\end\`.
 * Runs on a decoder thread (synchronous reads are fine there). Throws an Error saying what is wrong.
 */

/** Larger files are refused: a knowledge-base model is a few MB to a few tens of MB. */
export const MAX_ARPA_BYTES = 512 * 1024 * 1024;

/**
 * Reads `file` once, checks it, and writes what was checked to a file of this thread's own, which
 * it answers: sphinxbase then reads exactly the text that was checked, whatever happens to `file`
 * meanwhile (replaced, truncated or removed by the process that wrote it). The caller removes
 * the copy once sphinxbase has read it.
 */
export function checkedArpaCopy(file: string): string {
  const size = statSync(file).size;
  if (size > MAX_ARPA_BYTES)
    throw new Error(`the ARPA file is larger than ${MAX_ARPA_BYTES} bytes`);
  const text = readFileSync(file, 'utf8');
  checkArpa(text);
  const copy = join(
    tmpdir(),
    `ps-lm-${String(process.pid)}-${String(threadId)}-${randomUUID()}.arpa`,
  );
  writeFileSync(copy, text, { mode: 0o600 });
  return copy;
}

export function checkArpa(text: string): void {
  const lines = text.split(/\r?\n/);
  let i = 0;
  const skipBlank = () => {
    while (i < lines.length && lines[i]?.trim() === '') i += 1;
  };
  skipBlank();
  if (lines[i]?.trim() !== '\\data\\') throw new Error('not an ARPA file: no \\data\\ section');
  i += 1;
  const counts: number[] = [];
  for (let m = /^ngram (\d+)=(\d+)$/.exec(lines[i]?.trim() ?? ''); m !== null;) {
    if (Number(m[1]) !== counts.length + 1) throw new Error('ARPA: ngram counts out of order');
    counts.push(Number(m[2]));
    i += 1;
    m = /^ngram (\d+)=(\d+)$/.exec(lines[i]?.trim() ?? '');
  }
  if (counts.length === 0 || counts[0] === 0) throw new Error('ARPA: no unigrams');
  let previous = new Set<string>();
  let unigrams = new Set<string>();
  counts.forEach((count, index) => {
    const n = index + 1;
    skipBlank();
    if (lines[i]?.trim() !== `\\${n}-grams:`) throw new Error(`ARPA: no \\${n}-grams: section`);
    i += 1;
    const seen = new Set<string>();
    for (let k = 0; k < count; k += 1, i += 1) {
      const key = ngramKey(lines[i], n, i);
      if (seen.has(key)) throw new Error(`ARPA line ${i + 1}: duplicate n-gram`);
      if (n > 1) {
        const words = key.split(' ');
        if (!words.every((w) => unigrams.has(w))) {
          throw new Error(`ARPA line ${i + 1}: a word that is not a unigram`);
        }
        if (!previous.has(words.slice(0, -1).join(' '))) {
          throw new Error(`ARPA line ${i + 1}: its prefix is not in the ${n - 1}-grams`);
        }
      }
      seen.add(key);
    }
    if (n === 1) unigrams = seen;
    previous = seen;
  });
  skipBlank();
  if (lines[i]?.trim() !== '\\end\\')
    throw new Error('ARPA: no \\end\\ where expected (truncated?)');
}

function ngramKey(line: string | undefined, n: number, index: number): string {
  const fields = line?.trim().split(/\s+/) ?? [];
  const ok =
    (fields.length === n + 1 || fields.length === n + 2) &&
    isNumber(fields[0]) &&
    (fields.length === n + 1 || isNumber(fields[n + 1]));
  if (!ok) throw new Error(`ARPA line ${index + 1}: not a ${n}-gram line (truncated?)`);
  return fields.slice(1, n + 1).join(' ');
}

const isNumber = (field: string | undefined) =>
  field !== undefined && field !== '' && Number.isFinite(Number(field));
