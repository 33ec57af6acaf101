import type { IndexedEntry } from './dense-index.js';
import type { VectorHit } from './types.js';

/** A stored row as the thread takes it: the vector still base64 (decoded in the thread). */
export interface DenseRow extends IndexedEntry {
  embeddingBase64: string;
}

/** Which rows a removal drops: a document's (but `exceptJobId`'s), or one job's. */
export type DenseRemoval = { documentId: string; exceptJobId: string | null } | { jobId: string };

/**
 * From the service's thread to the dense index's thread. Every message has an answer. A build
 * fills an index aside (`build-begin`, `rows` with `aside`, `build-commit` swaps it in); searches
 * meanwhile use the live one.
 */
export type ToDenseThread = { id: number } & (
  | { type: 'build-begin'; dimensions: number; approximateFrom: number | null }
  | { type: 'rows'; aside: boolean; rows: DenseRow[] }
  | { type: 'build-commit' }
  | { type: 'drop' }
  | { type: 'remove'; removal: DenseRemoval }
  | { type: 'search'; query: Float32Array; limit: number; category: string | null }
  | { type: 'status' }
);

/** What the live copy holds: its rows, those not yet linked into its graph, how it ranks now. */
export interface DenseStatus {
  rows: number;
  waitingRows: number;
  ranking: 'exact' | 'approximate';
}

export type FromDenseThread =
  | { id: number; type: 'done'; size: number }
  | { id: number; type: 'found'; hits: VectorHit[] }
  | ({ id: number; type: 'status' } & DenseStatus)
  | { id: number; type: 'failed'; message: string };
