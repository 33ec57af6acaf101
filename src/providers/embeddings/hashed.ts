import { analyse, stem } from './text.js';
import type { EmbeddingsProvider } from './types.js';

/**
 * The offline default: signed feature hashing, no model file, no network, deterministic across
 * processes and machines (integer hashing only). Three feature groups:
 *  - character 3–5-grams of each word padded with boundary marks, so morphology and spelling
 *    variants overlap ("hypertensive" ~ "hypertension");
 *  - stemmed words;
 *  - pairs of consecutive stemmed words, so "heart failure" is more than "heart" + "failure".
 * Each group is scaled to a fixed share of the vector whatever the text length, with sublinear
 * term frequency (1 + ln tf), then the whole vector is L2-normalised. Lay terms add their clinical
 * equivalents (lexicon.ts); abbreviations are the caller's to expand, as the knowledge indexer and
 * search do.
 */

export interface FeatureWeights {
  chars: number;
  words: number;
  pairs: number;
}

export interface HashedEmbeddingsOptions {
  /** Vector size; more dimensions mean fewer hash collisions and more storage. Default 768. */
  dimensions?: number;
  /** For tuning only: weights other than the defaults give a differently named model. */
  weights?: FeatureWeights;
}

/**
 * Bump when features, weights, lexicon or hashing change: stored vectors become incomparable.
 * v2: the lexicon's abbreviations removed (callers expand abbreviations before embedding).
 * v3: everyday lay words added to the lexicon (lexicon-lay.ts).
 */
const VERSION = 'v3';
const DEFAULT_DIMENSIONS = 768;
// Chosen on the dev questions of eval/ (see eval/README.md): char n-grams at half weight keep
// morphology without letting common word shapes dominate.
export const DEFAULT_WEIGHTS: Readonly<FeatureWeights> = { chars: 0.5, words: 1, pairs: 0.5 };

const SEED_CHARS = 0x9e3779b1;
const SEED_WORDS = 0x85ebca6b;
const SEED_PAIRS = 0xc2b2ae35;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function hashString(text: string, seed: number): number {
  let h = (FNV_OFFSET ^ seed) >>> 0;
  for (let i = 0; i < text.length; i += 1) {
    h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  }
  return h >>> 0;
}

/** Murmur3's finaliser: spreads FNV's weak low bits before they pick a bucket and a sign. */
function mix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

type Counts = Map<number, number>;

function count(counts: Counts, key: number): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Character 3-, 4- and 5-grams of "<word>", hashed in place without building substrings. */
function addCharGrams(word: string, counts: Counts): void {
  const padded = `<${word}>`;
  const length = padded.length;
  for (let start = 0; start + 3 <= length; start += 1) {
    let h = (FNV_OFFSET ^ SEED_CHARS) >>> 0;
    const end = Math.min(start + 5, length);
    for (let i = start; i < end; i += 1) {
      h = Math.imul(h ^ padded.charCodeAt(i), FNV_PRIME);
      if (i - start >= 2) count(counts, h >>> 0);
    }
  }
}

interface Features {
  chars: Counts;
  words: Counts;
  pairs: Counts;
}

export function extractFeatures(text: string): Features {
  const features: Features = { chars: new Map(), words: new Map(), pairs: new Map() };
  for (const segment of analyse(text)) {
    let previous: number | undefined;
    for (const word of segment) {
      addCharGrams(word, features.chars);
      const h = hashString(stem(word), SEED_WORDS);
      count(features.words, h);
      if (previous !== undefined) count(features.pairs, mix(previous ^ SEED_PAIRS) ^ h);
      previous = h;
    }
  }
  return features;
}

/** Adds one group, scaled so its features' weights have L2 norm `weight`. */
function addGroup(vector: Float32Array, counts: Counts, weight: number): void {
  if (counts.size === 0 || weight === 0) return;
  let norm = 0;
  for (const tf of counts.values()) norm += (1 + Math.log(tf)) ** 2;
  const scale = weight / Math.sqrt(norm);
  const dims = vector.length;
  for (const [key, tf] of counts) {
    const m = mix(key);
    const bucket = (m >>> 1) % dims;
    const value = (1 + Math.log(tf)) * scale;
    vector[bucket] = (vector[bucket] ?? 0) + ((m & 1) === 1 ? value : -value);
  }
}

function normalise(vector: Float32Array): boolean {
  let sum = 0;
  for (const v of vector) sum += v * v;
  if (sum === 0) return false;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i += 1) vector[i] = (vector[i] ?? 0) * inv;
  return true;
}

export class HashedEmbeddings implements EmbeddingsProvider {
  readonly model: string;
  readonly dimensions: number;
  readonly #weights: Readonly<FeatureWeights>;

  constructor(options: HashedEmbeddingsOptions = {}) {
    const dimensions = options.dimensions ?? DEFAULT_DIMENSIONS;
    if (!Number.isInteger(dimensions) || dimensions < 16 || dimensions > 4096) {
      throw new RangeError('hashed embeddings: dimensions must be an integer in 16..4096');
    }
    this.dimensions = dimensions;
    this.#weights = options.weights ?? DEFAULT_WEIGHTS;
    const w = this.#weights;
    const custom = options.weights === undefined ? '' : `-w${w.chars}-${w.words}-${w.pairs}`;
    this.model = `hashed-ngrams-${VERSION}-${dimensions}${custom}`;
  }

  embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    // A throw inside the executor (an abort) becomes the rejection.
    return new Promise((resolve) => {
      resolve(texts.map((text) => this.#embedChecked(text, options.signal)));
    });
  }

  /** Synchronous work: checking between texts is what keeps a large batch cancellable. */
  #embedChecked(text: string, signal: AbortSignal | undefined): Float32Array {
    signal?.throwIfAborted();
    return this.embedOne(text);
  }

  /**
   * A text with no usable word (empty, punctuation, only stopwords) still gets a unit vector, the
   * same for all such texts, so stores never see a zero vector; it is near-orthogonal to the rest.
   */
  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const features = extractFeatures(text);
    addGroup(vector, features.chars, this.#weights.chars);
    addGroup(vector, features.words, this.#weights.words);
    addGroup(vector, features.pairs, this.#weights.pairs);
    if (!normalise(vector)) {
      addGroup(vector, new Map([[hashString('\u0000empty', SEED_WORDS), 1]]), 1);
    }
    return vector;
  }
}
