import { readDictionaryWords } from './kb-dictionary.js';
import { buildKbLanguageModel, type KbLanguageModel } from './kb-language-model.js';
import { flitePronunciations } from './kb-pronunciations.js';

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
 * bench/voice-wer.ts: the missing words are most of the recognizer's clinical errors.
 */
export async function buildAdaptedModel(
  texts: readonly string[],
  dictionaryPath?: string,
): Promise<AdaptedBuild> {
  const dictionary = await readDictionaryWords(dictionaryPath);
  const plain = buildKbLanguageModel(texts, { dictionary, reportOutOfDictionary: MAX_ADDED_WORDS });
  const added = await flitePronunciations(plain.stats.outOfDictionaryWords.map((w) => w.word));
  if (added.size === 0) return { ...plain, words: [] };
  const extended = new Set([...dictionary, ...added.keys()]);
  const model = buildKbLanguageModel(texts, { dictionary: extended });
  const words = [...added].map(([word, phones]) => ({ word, phones }));
  return { ...model, words };
}
