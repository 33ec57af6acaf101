import { QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import { VectorStoreError } from './errors.js';
import type { VectorHit, VectorPoint, VectorStore } from './types.js';

export interface QdrantVectorStoreOptions {
  url: string;
  apiKey?: string | undefined;
  /** Put before every collection name: several deployments can share one Qdrant. */
  collectionPrefix: string;
  /** Points per upsert request. */
  batchSize?: number;
  timeoutMs?: number;
}

/** Payload fields the adapter filters on; keyword indexes keep those filters fast. */
const INDEXED_FIELDS = ['documentId', 'jobId', 'category'] as const;
const MAX_DETAIL = 300;

/** One collection per model and size, so vectors of different models never meet. */
export function collectionName(prefix: string, model: string, dimensions: number): string {
  return `${prefix}${model}_${dimensions}`.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 200);
}

const match = (key: string, value: string) => ({ key, match: { value } });

/** The filter of a search restricted to one category, or none. */
export const categoryFilter = (category: string | undefined) =>
  category === undefined ? {} : { filter: { must: [match('category', category)] } };

/** The collection a store works in once `ensureReady` has run. */
export interface ReadyCollection {
  name: string;
  dimensions: number;
}

/**
 * What the Qdrant stores share: the client, the error mapping, and the parts of a collection's
 * life that do not depend on its vectors (creation racing other instances, payload indexes,
 * deletes by document or job, the readiness probe).
 */
export class QdrantCollections {
  readonly client: QdrantClient;

  constructor(private readonly options: Omit<QdrantVectorStoreOptions, 'collectionPrefix'>) {
    this.client = new QdrantClient({
      url: options.url,
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      // The default sends GET / from the constructor and only logs the outcome.
      checkCompatibility: false,
      timeout: options.timeoutMs ?? 10_000,
    });
  }

  /**
   * Checks every point's size, then writes them `batchSize` at a time, each batch applied before
   * the next (`wait`); `vectorOf` gives what a point stores (one vector, or named ones).
   */
  async upsertPoints(
    name: string,
    dimensions: number,
    points: readonly VectorPoint[],
    vectorOf: (p: VectorPoint) => Schemas['PointStruct']['vector'],
  ): Promise<void> {
    for (const p of points) checkLength(p.vector, dimensions);
    const batchSize = this.options.batchSize ?? 256;
    for (let start = 0; start < points.length; start += batchSize) {
      const batch = points.slice(start, start + batchSize).map((p) => ({
        id: p.id,
        vector: vectorOf(p),
        payload: { ...p.payload },
      }));
      await this.call('upsert', () => this.client.upsert(name, { wait: true, points: batch }));
    }
  }

  /**
   * Makes collection `name` usable: created with `create` when missing, else its vectors checked by
   * `check` (which throws when they do not fit); then the payload indexes the filters need.
   */
  async ensure(
    name: string,
    create: Schemas['CreateCollection'],
    check: (info: Schemas['CollectionInfo']) => void,
  ): Promise<void> {
    const info = await this.call('read collection', () => this.client.getCollection(name)).catch(
      (err: unknown) => {
        if (err instanceof VectorStoreError && err.status === 404) return null;
        throw err;
      },
    );
    if (info === null) await this.create(name, create);
    else check(info);
    // Also for an existing collection: its creator may have stopped before adding them.
    const indexed = new Set(Object.keys(info?.payload_schema ?? {}));
    for (const field of INDEXED_FIELDS.filter((f) => !indexed.has(f))) {
      await this.call('create payload index', () =>
        this.client.createPayloadIndex(name, {
          field_name: field,
          field_schema: 'keyword',
          wait: true,
        }),
      );
    }
  }

  /** Removes a document's points, except those written by `exceptJobId` when given. */
  async deleteByDocument(name: string, documentId: string, exceptJobId?: string): Promise<void> {
    const except = exceptJobId === undefined ? {} : { must_not: [match('jobId', exceptJobId)] };
    const filter = { must: [match('documentId', documentId)], ...except };
    await this.call('delete', () => this.client.delete(name, { wait: true, filter }));
  }

  async deleteByJob(name: string, jobId: string): Promise<void> {
    const filter = { must: [match('jobId', jobId)] };
    await this.call('delete', () => this.client.delete(name, { wait: true, filter }));
  }

  /** Lists collections before `ensureReady` (no name yet), afterwards checks that ours still exists. */
  async probe(name: string | undefined): Promise<void> {
    if (name === undefined) {
      await this.call('list collections', () => this.client.getCollections());
      return;
    }
    const { exists } = await this.call('probe', () => this.client.collectionExists(name));
    if (!exists)
      throw new VectorStoreError('qdrant', `Qdrant collection ${name} is missing`, false);
  }

  async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toVectorStoreError(operation, err, this.options.apiKey);
    }
  }

  private async create(name: string, body: Schemas['CreateCollection']): Promise<void> {
    try {
      await this.call('create collection', () => this.client.createCollection(name, body));
    } catch (err) {
      // Another instance created it in the meantime: fine, same name means same schema.
      const lostRace =
        err instanceof VectorStoreError &&
        (err.status === 409 || (err.status === 400 && err.message.includes('already exists')));
      if (!lostRace) throw err;
    }
  }
}

/**
 * Qdrant over its REST API. Point ids are the chunk UUIDs; the payload carries what filters and
 * deletes need. Every write waits until Qdrant applied it (`wait=true`), so a delete that returned
 * is visible to the next search.
 */
export class QdrantVectorStore implements VectorStore {
  readonly kind = 'qdrant' as const;
  private readonly qdrant: QdrantCollections;
  private collection: ReadyCollection | undefined;

  constructor(private readonly options: QdrantVectorStoreOptions) {
    this.qdrant = new QdrantCollections(options);
  }

  async ensureReady(dimensions: number, model: string): Promise<void> {
    const name = collectionName(this.options.collectionPrefix, model, dimensions);
    if (this.collection?.name === name) return;
    await this.qdrant.ensure(
      name,
      { vectors: { size: dimensions, distance: 'Cosine' } },
      (info) => {
        checkVectors(name, info, dimensions);
      },
    );
    this.collection = { name, dimensions };
  }

  async upsert(points: readonly VectorPoint[]): Promise<void> {
    const { name, dimensions } = requireReady(this.collection);
    await this.qdrant.upsertPoints(name, dimensions, points, (p) => Array.from(p.vector));
  }

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
        ...categoryFilter(options.category),
        limit: options.limit,
        with_payload: false,
      }),
    );
    return result.points.map((p) => ({ id: String(p.id), score: p.score }));
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

/** The collection a store was made ready for, or the error of using it before. */
export function requireReady(collection: ReadyCollection | undefined): ReadyCollection {
  if (collection === undefined) {
    throw new VectorStoreError('qdrant', 'vector store used before ensureReady', false);
  }
  return collection;
}

export function checkLength(vector: Float32Array, dimensions: number): void {
  if (vector.length !== dimensions) {
    const message = `vector has ${vector.length} dimensions, the collection ${dimensions}`;
    throw new VectorStoreError('qdrant', message, false);
  }
}

/** The size and distance of dense vector params (`{ size, distance }`), when they are such. */
export function denseParams(params: unknown): { size?: number; distance?: string } {
  const p = (typeof params === 'object' && params !== null ? params : {}) as {
    size?: unknown;
    distance?: unknown;
  };
  return {
    ...(typeof p.size === 'number' ? { size: p.size } : {}),
    ...(typeof p.distance === 'string' ? { distance: p.distance } : {}),
  };
}

function checkVectors(name: string, info: Schemas['CollectionInfo'], dimensions: number): void {
  // A single unnamed vector is `{ size, distance }`; named vectors are a map of those.
  const { size, distance } = denseParams(info.config.params.vectors);
  if (size !== dimensions || distance !== 'Cosine') {
    const found = size === undefined ? 'named or no vectors' : `${size} (${distance ?? '?'})`;
    const message = `Qdrant collection ${name} holds vectors of size ${found}, expected ${dimensions} (Cosine)`;
    throw new VectorStoreError('qdrant', message, false);
  }
}

/**
 * One error for every failure, with what Qdrant said (its `status.error`) but never the API key:
 * HTTP 5xx, 408, 429, timeouts and network failures are retryable, other answers are not.
 */
export function toVectorStoreError(
  operation: string,
  err: unknown,
  apiKey?: string,
): VectorStoreError {
  const redact = (text: string) => (apiKey ? text.split(apiKey).join('[redacted]') : text);
  const fail = (detail: string, retryable: boolean, status?: number) =>
    new VectorStoreError(
      'qdrant',
      redact(`Qdrant ${operation} failed: ${detail}`),
      retryable,
      status,
    );
  if (err instanceof VectorStoreError) return err;
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    name?: unknown;
    status?: unknown;
    data?: { status?: { error?: unknown } };
    cause?: { code?: unknown };
  };
  if (typeof e.status === 'number') {
    const said = e.data?.status?.error;
    const detail = typeof said === 'string' ? `: ${said.slice(0, MAX_DETAIL)}` : '';
    const retryable = e.status >= 500 || e.status === 408 || e.status === 429;
    return fail(`HTTP ${e.status}${detail}`, retryable, e.status);
  }
  if (e.name === 'QdrantClientResourceExhaustedError')
    return fail('HTTP 429: rate limited', true, 429);
  if (e.name === 'QdrantClientTimeoutError') return fail('timed out', true);
  if (err instanceof TypeError) {
    // fetch() rejects with a TypeError for connection failures; the cause says which.
    const code = typeof e.cause?.code === 'string' ? e.cause.code : err.message;
    return fail(`network error (${code})`, true);
  }
  const message = err instanceof Error ? err.message : String(err);
  return fail(message.split('\n')[0]?.slice(0, MAX_DETAIL) ?? 'unknown error', false);
}
