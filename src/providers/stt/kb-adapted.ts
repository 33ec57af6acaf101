import { readDictionaryWords } from './kb-dictionary.js';
import { buildKbLanguageModel, type KbLanguageModel } from './kb-language-model.js';
import { flitePronunciations } from './kb-pronunciations.js';

/**
 * The knowledge-base model's share when the service interpolates it with the generic one: chosen
 * by bench/voice-wer.ts on its tuning questions (BENCHMARKS.md "Voice: word error rate").
 */
export const KB_MODEL_WEIGHT = 0.2;

/** Out-of-dictionary words given pronunciations at most (the most frequent first). */
const MAX_ADDED_WORDS = 2000;

export interface AdaptedBuild extends KbLanguageModel {
  /** Words of the model the recognizer's dictionary lacks, with Flite's pronunciations (CMU phones). */
  words: { word: string; phones: string }[];
}

/**
 * The knowledge base's model as the recognizer loads it: the model of its texts, with the words
 * the dictionary lacks (drug names, most often) given pronunciations by Flite's letter-to-sound
 * rules and kept in the model instead of cutting its sentences. Chosen over the model alone by
 * bench/voice-wer.ts: the missing words are most of the recognizer's clinical errors. `pronounce`
 * (Flite's rules unless given) lets the benchmark try other sources of pronunciations.
 */
export async function buildAdaptedModel(
  texts: readonly string[],
  dictionaryPath?: string,
  pronounce: (words: string[]) => Promise<Map<string, string>> = flitePronunciations,
): Promise<AdaptedBuild> {
  const dictionary = await readDictionaryWords(dictionaryPath);
  const plain = buildKbLanguageModel(texts, { dictionary, reportOutOfDictionary: MAX_ADDED_WORDS });
  const added = await pronounce(plain.stats.outOfDictionaryWords.map((w) => w.word));
  if (added.size === 0) return { ...plain, words: [] };
  const extended = new Set([...dictionary, ...added.keys()]);
  const model = buildKbLanguageModel(texts, { dictionary: extended });
  const words = [...added].map(([word, phones]) => ({ word, phones }));
  return { ...model, words };
}
