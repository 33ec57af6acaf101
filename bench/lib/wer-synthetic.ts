import { prng } from './sections.js';

/**
 * A large knowledge base for measuring the language-model builder's time and memory: chunks of
 * about 2,000 characters made of the corpus's sentences in a seeded random order, each word
 * replaced, one time in five, by a random word of a large word list (so the large text has far
 * more distinct n-grams than the corpus repeated would), and numbers changed at random.
 */
export function* syntheticKnowledgeBase(
  corpus: readonly string[],
  words: readonly string[],
  totalChars: number,
  seed = 11,
): Generator<string> {
  const random = prng(seed);
  const sentences = corpus
    .flatMap((text) => text.split(/(?<=[.!?])\s+|\n+/))
    .filter((s) => s.trim().length > 0);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  let produced = 0;
  while (produced < totalChars) {
    let chunk = '';
    while (chunk.length < 2000) {
      const sentence = pick(sentences)
        .split(' ')
        .map((w) => {
          if (/^\d+$/.test(w)) return String(Math.floor(random() * 500));
          return random() < 0.2 ? pick(words) : w;
        })
        .join(' ');
      chunk += `${sentence} `;
    }
    produced += chunk.length;
    yield chunk;
  }
}
