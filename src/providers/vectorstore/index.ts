import type { Db } from '../../db/client.js';
import { EmbeddedVectorStore, type EmbeddedVectorStoreOptions } from './embedded.js';
import { QdrantVectorStore, type QdrantVectorStoreOptions } from './qdrant.js';
import type { VectorStore } from './types.js';

export type VectorStoreOptions =
  | ({ kind: 'embedded'; db: Db } & EmbeddedVectorStoreOptions)
  | ({ kind: 'qdrant' } & QdrantVectorStoreOptions);

/** The embedded store by default; Qdrant when the configuration names a URL (QDRANT_URL). */
export function createVectorStore(options: VectorStoreOptions): VectorStore {
  return options.kind === 'qdrant'
    ? new QdrantVectorStore(options)
    : new EmbeddedVectorStore(options.db, options);
}

export { VectorStoreError } from './errors.js';
export type { VectorHit, VectorPayload, VectorPoint, VectorStore } from './types.js';
