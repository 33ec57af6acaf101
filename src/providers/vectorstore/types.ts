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
  readonly kind: 'embedded' | 'qdrant';
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
