import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { readDictionaryWords } from '../../src/providers/stt/kb-dictionary.js';
import { buildKbLanguageModel } from '../../src/providers/stt/kb-language-model.js';
import { syntheticKnowledgeBase } from './wer-synthetic.js';

/**
 * Run in a process of its own by bench/voice-wer.ts (so its peak memory is its own): builds the
 * language model of a synthetic knowledge base of the given size in MB and prints one JSON line
 * with the time, the peak RSS and the model's size.
 */

const megabytes = Number(process.argv[2] ?? 50);
const corpusDir = path.resolve(import.meta.dirname, '..', '..', 'eval', 'corpus');
const corpus = readdirSync(corpusDir)
  .sort()
  .map((file) => readFileSync(path.join(corpusDir, file), 'utf8'));
const dictionary = await readDictionaryWords();
const words = [...dictionary].filter((w) => /^[a-z]+$/.test(w)).slice(0, 40_000);
const rssBefore = process.memoryUsage().rss;
const started = performance.now();
const model = buildKbLanguageModel(syntheticKnowledgeBase(corpus, words, megabytes * 1e6), {
  dictionary,
});
console.log(
  JSON.stringify({
    megabytes,
    seconds: (performance.now() - started) / 1000,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    rssBeforeMiB: rssBefore / 2 ** 20,
    ngrams: model.ngrams,
    arpaMB: model.arpa.length / 1e6,
    tokens: model.stats.tokens,
    truncated: model.stats.truncated,
    droppedWhileCounting: model.stats.droppedWhileCounting,
  }),
);
