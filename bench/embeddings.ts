import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HashedEmbeddings } from '../src/providers/embeddings/hashed.js';

/**
 * Speed of the offline hashed embedder on ~800-character passages of the eval corpus, single
 * core: `npx tsx bench/embeddings.ts`. A warm-up pass first, so the JIT is not what is measured.
 */

const CHUNK_CHARS = 800;
const ROUNDS = 5;

async function passages(): Promise<string[]> {
  const dir = join(import.meta.dirname, '..', 'eval', 'corpus');
  const out: string[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.txt'))) {
    const text = await readFile(join(dir, file), 'utf8');
    for (let i = 0; i + CHUNK_CHARS <= text.length; i += CHUNK_CHARS) {
      out.push(text.slice(i, i + CHUNK_CHARS));
    }
  }
  return out;
}

const texts = await passages();
for (const dimensions of [384, 768]) {
  const provider = new HashedEmbeddings({ dimensions });
  await provider.embed(texts);
  const started = performance.now();
  for (let r = 0; r < ROUNDS; r += 1) await provider.embed(texts);
  const seconds = (performance.now() - started) / 1000;
  const rate = (texts.length * ROUNDS) / seconds;
  console.log(`${provider.model}: ${rate.toFixed(0)} passages/s (${texts.length} x ${ROUNDS})`);
}
