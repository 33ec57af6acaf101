/** What a vector carries besides itself: enough to filter and to clean up by document or job. */
export interface VectorPayload {
  documentId: string;
  docKey: string;
  category: string;
  /** The indexing job that wrote it: a reindex replaces the vectors of earlier jobs. */
  jobId: string;
}

export interface VectorPoint {
  /** The chunk id (UUID). */
  id: string;
  vector: Float32Array;
  payload: VectorPayload;
  /**
   * The chunk's analysed terms (`analyse`, src/modules/knowledge/lexical/analysis.ts), separated
   * by spaces: the hybrid store's sparse BM25 vector is made from them; other stores ignore them.
   */
  terms?: string | undefined;
}

export interface VectorHit {
  id: string;
  /** Cosine similarity, -1..1. */
  score: number;
}

/**
 * Dense vectors of knowledge-base chunks. The database stays the source of truth for which chunks
 * may be returned (active, not superseded): callers filter hits through it, so a store that lags
 * behind can cost recall but never returns a superseded passage.
 */
export interface VectorStore {
  readonly kind: 'embedded' | 'qdrant' | 'qdrant-hybrid';
  /** Creates what the store needs for vectors of this size and model (idempotent). */
  ensureReady(dimensions: number, model: string): Promise<void>;
  upsert(points: readonly VectorPoint[]): Promise<void>;
  /** `signal`: the caller gave up; the search may end early with the signal's reason. */
  search(
    vector: Float32Array,
    options: { limit: number; category?: string | undefined; signal?: AbortSignal | undefined },
  ): Promise<VectorHit[]>;
  /** Removes a document's vectors, except those written by `exceptJobId` when given. */
  deleteByDocument(documentId: string, options?: { exceptJobId?: string }): Promise<void>;
  /** Removes the vectors one job wrote (a job that failed for good). */
  deleteByJob(jobId: string): Promise<void>;
  /** Throws when the store cannot be used (the /ready `qdrant` check). */
  probe(): Promise<void>;
  /** Releases what the store holds in this process (the embedded store's thread). */
  close(): Promise<void>;
}

/** One ranking of both kinds at once (`HybridVectorStore.hybridSearch`). */
export interface HybridSearchInput {
  /** The question's distinct analysed terms (`queryTerms`). */
  terms: readonly string[];
  /** The question's dense vector. */
  vector: Float32Array;
  /** How many candidates each ranking (terms, vector) contributes to the fusion. */
  candidates: number;
  /** Chunk ids returned at most. */
  limit: number;
  category?: string | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * A store that also ranks by the chunks' terms (BM25) and fuses both rankings itself, so a search
 * needs no lexical index in this process (KB_SEARCH_ENGINE=qdrant).
 */
export interface HybridVectorStore extends VectorStore {
  readonly kind: 'qdrant-hybrid';
  /** Chunk ids, best first. */
  hybridSearch(input: HybridSearchInput): Promise<string[]>;
}

export function isHybridStore(store: VectorStore): store is HybridVectorStore {
  return store.kind === 'qdrant-hybrid' && 'hybridSearch' in store;
}
