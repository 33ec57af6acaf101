import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { chunkPages, type Chunk } from '../../src/modules/knowledge/chunk.js';
import { prng } from './sections.js';

/**
 * The search corpus of the benchmarks: guideline-style text documents recombined from the 12
 * documents of eval/corpus, deterministic (the same `n` gives the same document on every run), so
 * every benchmark and backend gets the same text. Used by bench/knowledge.ts (issue 4) and
 * bench/lexical-candidates (issue 24).
 */

const CORPUS_DIR = path.resolve(import.meta.dirname, '..', '..', 'eval', 'corpus');

interface Section {
  heading: string;
  /** Each block is a list (kept whole) or a paragraph split into sentences. */
  blocks: { list: string } | { sentences: string[] };
}
export interface Source {
  key: string;
  title: string;
  sections: { heading: string; blocks: Section['blocks'][] }[];
}

export function loadSources(): Source[] {
  return readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith('.txt'))
    .sort()
    .map((file) => {
      const text = readFileSync(path.join(CORPUS_DIR, file), 'utf8');
      let title = file;
      const sections: Source['sections'] = [];
      for (const block of text.split(/\n{2,}/)) {
        const trimmed = block.trim();
        if (trimmed.startsWith('# ')) title = trimmed.slice(2);
        else if (trimmed.startsWith('## '))
          sections.push({ heading: trimmed.slice(3), blocks: [] });
        else if (trimmed !== '' && sections.length > 0) {
          sections
            .at(-1)!
            .blocks.push(
              trimmed.startsWith('- ')
                ? { list: trimmed }
                : { sentences: trimmed.split(/(?<=[.!?])\s+(?=[A-Z0-9])/) },
            );
        }
      }
      return { key: file.replace(/\.txt$/, ''), title, sections };
    });
}

const REGIONS = ['North', 'South', 'East', 'West', 'Central', 'Coastal', 'Metropolitan', 'Rural'];
const KINDS = ['trust guideline', 'practice protocol', 'ward handbook', 'formulary note'];

/**
 * Document `n`: a title, then 8 to 14 sections, most from one topic and some from others; in each
 * paragraph a sentence is dropped with probability 0.15, one of another paragraph of the same
 * topic added with probability 0.15, and neighbours swapped with probability 0.2.
 */
export function generatedDocument(sources: Source[], n: number): { title: string; text: string } {
  const random = prng(1_000_003 * (n + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const base = sources[n % sources.length]!;
  const title = `${base.title} (${pick(REGIONS)} ${pick(KINDS)}, ${2015 + Math.floor(random() * 10)}, edition ${n + 1})`;
  const parts = [`# ${title}`];
  const sectionCount = 8 + Math.floor(random() * 7);
  for (let s = 0; s < sectionCount; s++) {
    const source = random() < 0.7 ? base : pick(sources);
    const section = pick(source.sections);
    parts.push(`## ${section.heading}`);
    const sentences = source.sections.flatMap((x) =>
      x.blocks.flatMap((b) => ('sentences' in b ? b.sentences : [])),
    );
    for (const block of section.blocks) {
      if ('list' in block) {
        parts.push(block.list);
        continue;
      }
      const out: string[] = [];
      for (const sentence of block.sentences) {
        if (random() >= 0.15) out.push(sentence);
        if (random() < 0.15) out.push(pick(sentences));
      }
      for (let i = 1; i < out.length; i++) {
        if (random() < 0.2) [out[i - 1], out[i]] = [out[i]!, out[i - 1]!];
      }
      if (out.length > 0) parts.push(out.join(' '));
    }
  }
  return { title, text: `${parts.join('\n\n')}\n` };
}

/** Documents, with their chunks as the indexer cuts them, until the chunks reach `target`. */
export function* corpusDocuments(
  target: number,
): Generator<{ title: string; text: string; chunks: Chunk[] }> {
  const sources = loadSources();
  let total = 0;
  for (let n = 0; total < target; n++) {
    const doc = generatedDocument(sources, n);
    const chunks = chunkPages([{ page: null, text: doc.text }]);
    total += chunks.length;
    yield { ...doc, chunks };
  }
}

/** Documents until their chunks (as the indexer will cut them) reach `target`. */
export function searchCorpus(target: number): { title: string; text: string; chunks: number }[] {
  return [...corpusDocuments(target)].map(({ title, text, chunks }) => ({
    title,
    text,
    chunks: chunks.length,
  }));
}
