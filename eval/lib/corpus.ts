import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expandAbbreviations } from '../../src/modules/knowledge/abbreviations.js';
import { chunkPages } from '../../src/modules/knowledge/chunk.js';

/** One retrievable passage, as the indexer would store it. */
export interface EvalChunk {
  id: string;
  docKey: string;
  /** The chunk's own text: what `answer_contains` is looked for in. */
  text: string;
  /** What search reads (title, heading, text; abbreviations expanded), as in the indexer. */
  searchText: string;
}

export interface Question {
  id: string;
  split: 'dev' | 'heldout';
  question: string;
  doc_key: string;
  answer_contains: string;
}

/** The `# Title` line, as an uploader would type it; the file name otherwise. */
function titleOf(text: string, docKey: string): string {
  return /^# (.+)$/m.exec(text)?.[1]?.trim() ?? docKey;
}

/** Chunks every corpus file with the knowledge module's chunker (text files: one page, null). */
export async function loadCorpus(dir: string): Promise<EvalChunk[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.txt')).sort();
  const chunks: EvalChunk[] = [];
  for (const file of files) {
    const docKey = file.replace(/\.txt$/, '');
    const text = await readFile(join(dir, file), 'utf8');
    const title = titleOf(text, docKey);
    for (const chunk of chunkPages([{ page: null, text }])) {
      const parts = [title, chunk.heading ?? '', chunk.text].filter((s) => s !== '');
      chunks.push({
        id: `${docKey}#${chunk.index}`,
        docKey,
        text: chunk.text,
        searchText: expandAbbreviations(parts.join('\n')),
      });
    }
  }
  return chunks;
}

export async function loadQuestions(path: string): Promise<Question[]> {
  return JSON.parse(await readFile(path, 'utf8')) as Question[];
}
