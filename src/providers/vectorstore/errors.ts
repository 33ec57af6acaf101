/** A vector store failure: `retryable` when trying again later may succeed (5xx, network). */
export class VectorStoreError extends Error {
  constructor(
    readonly provider: 'embedded' | 'qdrant',
    message: string,
    readonly retryable: boolean,
    /** The HTTP status a remote store answered, when it answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'VectorStoreError';
  }
}
