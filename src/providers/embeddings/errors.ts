/**
 * A failure of an embeddings backend. `retryable` says whether the same request may succeed later
 * (rate limit, server error, network, timeout); the retry policy itself lives with the caller
 * (the indexing job's backoff, or the shared retry helper), so the adapter never retries on its
 * own. Messages never carry the API key nor the texts being embedded.
 */
export class EmbeddingsProviderError extends Error {
  override readonly name = 'EmbeddingsProviderError';

  constructor(
    readonly provider: string,
    message: string,
    readonly retryable: boolean,
    /** HTTP status when the backend answered; undefined for network failures and bad payloads. */
    readonly status?: number,
    /** From a Retry-After header on 429/503, when given. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}
