import type { Schemas } from '@qdrant/js-client-rest';
import { SERVICE_BM25 } from '../../modules/knowledge/lexical/segments.js';
import { VectorStoreError } from './errors.js';
import {
  categoryFilter,
  checkLength,
  collectionName,
  denseParams,
  QdrantCollections,
  requireReady,
  type QdrantVectorStoreOptions,
  type ReadyCollection,
} from './qdrant.js';
import type { HybridSearchInput, HybridVectorStore, VectorHit, VectorPoint } from './types.js';

/** The point's named vectors: the embedding, and the BM25 term weights. */
const DENSE = 'dense';
const SPARSE = 'bm25';

/** A Qdrant sparse vector: unique unsigned 32-bit indices (ascending here) and their values. */
export interface SparseVector {
  indices: number[];
  values: number[];
}

const utf8 = new TextEncoder();

/**
 * A term's sparse index: FNV-1a (32 bits) over its UTF-8 bytes, unsigned, as Qdrant wants sparse
 * indices. Stable across processes and releases (a chunk indexed once is queried by every later
 * instance): changing it means reindexing every document. Two distinct terms may share an index
 * (a vocabulary of 100,000 terms holds about one such pair): within one vector their weights are
 * summed, and a question with one of them also matches chunks with the other. That costs a little
 * precision, never a missed match.
 */
export function termIndex(term: string): number {
  let hash = 0x811c9dc5;
  for (const byte of utf8.encode(term)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Weights by index, summed where terms collide, as a sparse vector in ascending index order. */
function sparseOf(weights: Iterable<[string, number]>): SparseVector {
  const byIndex = new Map<number, number>();
  for (const [term, weight] of weights) {
    const index = termIndex(term);
    byIndex.set(index, (byIndex.get(index) ?? 0) + weight);
  }
  const indices = [...byIndex.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => byIndex.get(i) ?? 0) };
}

/**
 * A chunk's sparse vector: for each distinct term, BM25's term-frequency part with the service's
 * parameters (SERVICE_BM25), `tf * (k1 + 1) / (tf + k1)`. With b = 0 there is no length
 * normalisation, so the weight needs nothing from the rest of the collection; Qdrant multiplies
 * it by the term's IDF at query time (`modifier: 'idf'`), which makes the dot product with a query
 * of ones the chunk's BM25 score.
 */
export function documentSparseVector(
  terms: readonly string[],
  k1: number = SERVICE_BM25.k1,
): SparseVector {
  const tf = new Map<string, number>();
  for (const term of terms) if (term !== '') tf.set(term, (tf.get(term) ?? 0) + 1);
  return sparseOf([...tf].map(([term, n]): [string, number] => [term, (n * (k1 + 1)) / (n + k1)]));
}

/** A question's sparse vector: each distinct term weighs 1 (its IDF is Qdrant's). */
export function querySparseVector(terms: readonly string[]): SparseVector {
  const distinct = new Set(terms.filter((t) => t !== ''));
  return sparseOf([...distinct].map((term): [string, number] => [term, 1]));
}

/**
 * Both rankings of a knowledge-base search in Qdrant (KB_SEARCH_ENGINE=qdrant): each point holds
 * the chunk's embedding (`dense`) and its BM25 term weights (`bm25`, a sparse vector whose IDF
 * Qdrant computes from the collection), and one Query API call fuses a sparse and a dense
 * prefetch by reciprocal rank. Its collection is not the dense-only store's (another schema): its
 * name ends in `_hybrid`. Deletes, the probe, payload indexes and error mapping are the dense
 * store's (QdrantCollections); as there, the database stays the source of truth for which chunks
 * may be returned.
 */
export class QdrantHybridStore implements HybridVectorStore {
  readonly kind = 'qdrant-hybrid' as const;
  private readonly qdrant: QdrantCollections;
  private collection: ReadyCollection | undefined;

  constructor(private readonly options: QdrantVectorStoreOptions) {
    this.qdrant = new QdrantCollections(options);
  }

  async ensureReady(dimensions: number, model: string): Promise<void> {
    const name = `${collectionName(this.options.collectionPrefix, model, dimensions)}_hybrid`;
    if (this.collection?.name === name) return;
    const create: Schemas['CreateCollection'] = {
      vectors: { [DENSE]: { size: dimensions, distance: 'Cosine' } },
      sparse_vectors: { [SPARSE]: { modifier: 'idf' } },
    };
    await this.qdrant.ensure(name, create, (info) => {
      checkHybrid(name, info, dimensions);
    });
    this.collection = { name, dimensions };
  }

  /**
   * Points without terms (a chunk of stopwords only, or a caller that has none) get an empty sparse
   * vector, which Qdrant accepts (since 1.7) and leaves out of the sparse index: such a chunk is
   * found by its embedding only.
   */
  async upsert(points: readonly VectorPoint[]): Promise<void> {
    const { name, dimensions } = requireReady(this.collection);
    await this.qdrant.upsertPoints(name, dimensions, points, (p) => ({
      [DENSE]: Array.from(p.vector),
      [SPARSE]: documentSparseVector(p.terms === undefined ? [] : p.terms.split(' ')),
    }));
  }

  /** The dense ranking alone (VectorStore's search; `SearchService.dense`, the evaluation). */
  async search(
    vector: Float32Array,
    options: { limit: number; category?: string | undefined; signal?: AbortSignal | undefined },
  ): Promise<VectorHit[]> {
    options.signal?.throwIfAborted();
    const { name, dimensions } = requireReady(this.collection);
    checkLength(vector, dimensions);
    if (options.limit <= 0) return [];
    const result = await this.qdrant.call('search', () =>
      this.qdrant.client.query(name, {
        query: Array.from(vector),
        using: DENSE,
        ...categoryFilter(options.category),
        limit: options.limit,
        with_payload: false,
      }),
    );
    return result.points.map((p) => ({ id: String(p.id), score: p.score }));
  }

  /**
   * Chunk ids, best first: the `candidates` best by BM25 (the sparse prefetch) and by the embedding
   * (the dense prefetch), both within the category when given, fused by Qdrant's reciprocal rank
   * fusion. A question without terms (stopwords only) sends the dense prefetch alone.
   */
  async hybridSearch(input: HybridSearchInput): Promise<string[]> {
    input.signal?.throwIfAborted();
    const { name, dimensions } = requireReady(this.collection);
    checkLength(input.vector, dimensions);
    if (input.limit <= 0 || input.candidates <= 0) return [];
    const filter = categoryFilter(input.category);
    const sparse = querySparseVector(input.terms);
    const prefetch: Schemas['Prefetch'][] = [
      ...(sparse.indices.length === 0
        ? []
        : [{ query: sparse, using: SPARSE, limit: input.candidates, ...filter }]),
      { query: Array.from(input.vector), using: DENSE, limit: input.candidates, ...filter },
    ];
    const result = await this.qdrant.call('hybrid search', () =>
      this.qdrant.client.query(name, {
        prefetch,
        query: { fusion: 'rrf' },
        limit: input.limit,
        with_payload: false,
      }),
    );
    input.signal?.throwIfAborted();
    return result.points.map((p) => String(p.id));
  }

  async deleteByDocument(
    documentId: string,
    options: { exceptJobId?: string } = {},
  ): Promise<void> {
    const { name } = requireReady(this.collection);
    await this.qdrant.deleteByDocument(name, documentId, options.exceptJobId);
  }

  async deleteByJob(jobId: string): Promise<void> {
    await this.qdrant.deleteByJob(requireReady(this.collection).name, jobId);
  }

  /** Lists collections before `ensureReady`, afterwards checks that ours still exists. */
  probe(): Promise<void> {
    return this.qdrant.probe(this.collection?.name);
  }

  /** Nothing held in process: the client's HTTP connections close on their own. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** An existing collection must hold both named vectors as created here. */
function checkHybrid(name: string, info: Schemas['CollectionInfo'], dimensions: number): void {
  const { params } = info.config;
  const vectors = (params.vectors ?? {}) as Record<string, unknown>;
  const { size, distance } = denseParams(vectors[DENSE]);
  const sparse = params.sparse_vectors?.[SPARSE];
  const denseOk = size === dimensions && distance === 'Cosine';
  const sparseOk = sparse?.modifier === 'idf';
  if (denseOk && sparseOk) return;
  const found = [
    size === undefined
      ? `no dense vector "${DENSE}"`
      : `"${DENSE}" of size ${size} (${distance ?? '?'})`,
    sparse === undefined
      ? `no sparse vector "${SPARSE}"`
      : `"${SPARSE}" with modifier ${typeof sparse.modifier === 'string' ? sparse.modifier : 'none'}`,
  ].join(' and ');
  const message =
    `Qdrant collection ${name} holds ${found}, expected "${DENSE}" of size ${dimensions} (Cosine) ` +
    `and "${SPARSE}" with modifier idf`;
  throw new VectorStoreError('qdrant', message, false);
}
