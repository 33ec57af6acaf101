import { countNgrams, type CountStats } from './kb-counts.js';
import { spellingResolver } from './kb-dictionary.js';
import { estimate } from './kb-estimate.js';

/**
 * The knowledge base's language model for PocketSphinx (issue 11): a trigram ARPA model of what
 * people say when they read the knowledge base aloud, in the words of the recognizer's
 * dictionary, for the recognizer to interpolate with its generic en-us model.
 *
 * Steps: each text is normalised into spoken sentences (spoken-words.ts), each word is looked up
 * in the dictionary (British spellings fall back to American ones), words the dictionary lacks cut
 * the sentence (see kb-counts.ts: no <unk>), the vocabulary is capped to the most frequent words,
 * 1-3 grams are counted in bounded memory, trigrams seen once are pruned, and interpolated
 * Witten-Bell estimates are written with back-off weights that keep every context normalised
 * (kb-estimate.ts). The same texts in the same order give the same file, byte for byte.
 *
 * Clinical words the dictionary lacks ("metformin", "atrial") can be given pronunciations with
 * kb-pronunciations.ts: add those lines to the recognizer's dictionary and build again with the
 * words in `dictionary` (stats.outOfDictionaryWords lists them; see bench/voice-wer.ts).
 */

export interface KbLanguageModelOptions {
  /** The words of the recognizer's dictionary (readDictionaryWords). */
  dictionary: ReadonlySet<string>;
  /** At most this many words (the most frequent; at most 60,000). Default 30,000. */
  maxVocabulary?: number;
  /** Cap on distinct 2-grams and on distinct 3-grams held while counting. Default 1,500,000. */
  maxNgramsPerOrder?: number;
  /** Trigrams seen fewer times are pruned. Default 2 (singletons go). */
  minTrigramCount?: number;
  /** Words read at most (4 bytes each while counting); the rest is left out. Default 20,000,000. */
  maxTokens?: number;
  /**
   * How many of the most frequent out-of-dictionary words `stats` lists (default 50): candidates
   * for kb-pronunciations.ts, after which the model can be built again with them in `dictionary`.
   */
  reportOutOfDictionary?: number;
}

export interface KbLanguageModel {
  /** The model as ARPA text (log10 probabilities), `<s>` and `</s>` included. */
  arpa: string;
  /**
   * The number of 1-, 2- and 3-grams. With no word of the input in the dictionary the model holds
   * only `<s>` and `</s>` (ngrams [2, 0, 0]): valid, but worth nothing; callers should not load it.
   */
  ngrams: [number, number, number];
  stats: CountStats;
}

export function buildKbLanguageModel(
  texts: Iterable<string>,
  options: KbLanguageModelOptions,
): KbLanguageModel {
  const { dictionary } = options;
  const counts = countNgrams(texts, {
    maxVocabulary: options.maxVocabulary ?? 30_000,
    maxNgramsPerOrder: options.maxNgramsPerOrder ?? 1_500_000,
    maxTokens: options.maxTokens ?? 20_000_000,
    reportOutOfDictionary: options.reportOutOfDictionary ?? 50,
    isWord: (word) => dictionary.has(word),
    resolve: spellingResolver(dictionary),
  });
  const { arpa, ngrams } = estimate(counts, { minTrigramCount: options.minTrigramCount ?? 2 });
  return { arpa, ngrams, stats: counts.stats };
}
