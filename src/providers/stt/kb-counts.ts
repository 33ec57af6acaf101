import { spokenSentences } from './spoken-words.js';

/**
 * Counting for the knowledge base's language model, in bounded memory: the texts are read once
 * into a stream of word ids (4 bytes a word, at most `maxTokens` words), the vocabulary is chosen
 * from the word counts, and the 2- and 3-grams are counted in maps of numbers whose size is capped
 * (past the cap the rarest n-grams are dropped, so a huge input costs bounded memory and the rare
 * n-grams it loses are those a pruned model would drop anyway).
 *
 * Out-of-dictionary words: the decoder can only output dictionary words, so a word the dictionary
 * lacks (after British-to-American spelling) is no word of the model. It is not mapped to <unk>
 * (mass the decoder could never use, and which would be added to the generic model's own <unk> on
 * interpolation): it cuts the sentence instead, and no n-gram spans it. Words past the vocabulary
 * cap are treated the same way.
 */

export interface CountOptions {
  maxVocabulary: number;
  maxNgramsPerOrder: number;
  maxTokens: number;
  /** Whether a lower-case word is in the dictionary (for abbreviations said as words). */
  isWord: (word: string) => boolean;
  /** The dictionary's spelling of a word, or undefined when it has none. */
  resolve: (word: string) => string | undefined;
  /** How many of the most frequent out-of-dictionary words to report. */
  reportOutOfDictionary: number;
}

export interface NgramCounts {
  /** Words by id: the vocabulary, then `</s>` (id V) and `<s>` (id V + 1). */
  words: string[];
  /** Count of each id as a predicted word (`<s>` is never predicted: 0). */
  unigrams: Float64Array;
  /** Keyed `a * base + b` and `(a * base + b) * base + c`. */
  bigrams: Map<number, number>;
  trigrams: Map<number, number>;
  base: number;
  stats: CountStats;
}

export interface CountStats {
  sentences: number;
  /** Words read, in and out of the dictionary. */
  tokens: number;
  outOfDictionaryTokens: number;
  /** The most frequent out-of-dictionary words, most frequent first (reportOutOfDictionary). */
  outOfDictionaryWords: { word: string; count: number }[];
  /** Input past maxTokens was not read. */
  truncated: boolean;
  /** n-grams of these counts or fewer were dropped while counting to keep to the cap (0: none). */
  droppedWhileCounting: { bigrams: number; trigrams: number };
}

const SENTENCE_END = 0xffffffff;
const CUT = 0xfffffffe;
const MAX_VOCABULARY = 60_000; // keeps trigram keys below 2^53
const MAX_OOV_TRACKED = 100_000;

class IdStream {
  data = new Uint32Array(1 << 16);
  length = 0;
  push(id: number) {
    if (this.length === this.data.length) {
      const grown = new Uint32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = id;
  }
}

interface Entry {
  word: string;
  id: number;
  count: number;
}

interface Collected {
  stream: IdStream;
  entries: Entry[];
  stats: CountStats;
}

function collect(texts: Iterable<string>, options: CountOptions): Collected {
  const stream = new IdStream();
  const entries = new Map<string, Entry>();
  const oov = new Map<string, number>();
  const stats: CountStats = {
    sentences: 0,
    tokens: 0,
    outOfDictionaryTokens: 0,
    outOfDictionaryWords: [],
    truncated: false,
    droppedWhileCounting: { bigrams: 0, trigrams: 0 },
  };
  outer: for (const text of texts) {
    for (const sentence of spokenSentences(text, { isWord: options.isWord })) {
      if (stats.tokens + sentence.length > options.maxTokens) {
        stats.truncated = true;
        break outer;
      }
      stats.sentences++;
      stats.tokens += sentence.length;
      for (const written of sentence) {
        const word = options.resolve(written);
        if (word === undefined) {
          stats.outOfDictionaryTokens++;
          if (oov.has(written) || oov.size < MAX_OOV_TRACKED) {
            oov.set(written, (oov.get(written) ?? 0) + 1);
          }
          stream.push(CUT);
          continue;
        }
        let entry = entries.get(word);
        if (entry === undefined) {
          entry = { word, id: entries.size, count: 0 };
          entries.set(word, entry);
        }
        entry.count++;
        stream.push(entry.id);
      }
      stream.push(SENTENCE_END);
    }
  }
  stats.outOfDictionaryWords = [...oov]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, options.reportOutOfDictionary)
    .map(([word, count]) => ({ word, count }));
  return { stream, entries: [...entries.values()], stats };
}

/** The `limit` most frequent words (ties: alphabetical) as a map from old id to new id. */
function chooseVocabulary(entries: Entry[], limit: number) {
  const kept = [...entries]
    .sort((a, b) => b.count - a.count || (a.word < b.word ? -1 : 1))
    .slice(0, Math.min(limit, MAX_VOCABULARY))
    .sort((a, b) => a.id - b.id);
  const remap = new Int32Array(entries.length).fill(-1);
  kept.forEach((entry, i) => (remap[entry.id] = i));
  return { remap, vocabulary: kept.map((entry) => entry.word) };
}

/** Adds one to `key`; past `max` keys, drops the rarest until a quarter of the room is free. */
function increment(map: Map<number, number>, key: number, max: number): number {
  map.set(key, (map.get(key) ?? 0) + 1);
  if (map.size <= max) return 0;
  let floor = 0;
  while (map.size > max * 0.75) {
    floor++;
    for (const [k, count] of map) if (count <= floor) map.delete(k);
  }
  return floor;
}

/** Reads the texts once and counts their 1-, 2- and 3-grams. */
export function countNgrams(texts: Iterable<string>, options: CountOptions): NgramCounts {
  const { stream, entries, stats } = collect(texts, options);
  const { remap, vocabulary } = chooseVocabulary(entries, options.maxVocabulary);
  const end = vocabulary.length;
  const start = end + 1;
  const base = end + 2;
  const unigrams = new Float64Array(base);
  const bigrams = new Map<number, number>();
  const trigrams = new Map<number, number>();
  const max = options.maxNgramsPerOrder;
  let atSentenceStart = true;
  let p2 = -1; // two words back, -1 when none
  let p1 = -1;
  for (let i = 0; i < stream.length; i++) {
    const raw = stream.data[i] ?? CUT;
    const id = raw === SENTENCE_END ? end : raw === CUT ? -1 : (remap[raw] ?? -1);
    if (id < 0) {
      [p2, p1, atSentenceStart] = [-1, -1, false];
      continue;
    }
    if (atSentenceStart) [p2, p1, atSentenceStart] = [-1, start, false];
    if (!(raw === SENTENCE_END && p1 < 0)) unigrams[id] = (unigrams[id] ?? 0) + 1;
    if (p1 >= 0) {
      const floor = increment(bigrams, p1 * base + id, max);
      stats.droppedWhileCounting.bigrams = Math.max(stats.droppedWhileCounting.bigrams, floor);
    }
    if (p2 >= 0) {
      const floor = increment(trigrams, (p2 * base + p1) * base + id, max);
      stats.droppedWhileCounting.trigrams = Math.max(stats.droppedWhileCounting.trigrams, floor);
    }
    if (raw === SENTENCE_END) [p2, p1, atSentenceStart] = [-1, -1, true];
    else [p2, p1] = [p1, id];
  }
  return { words: [...vocabulary, '</s>', '<s>'], unigrams, bigrams, trigrams, base, stats };
}
