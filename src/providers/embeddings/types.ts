/**
 * Turns text into dense vectors for semantic search. Vectors are L2-normalised, so a dot product
 * is their cosine similarity. `model` is stored with every chunk (`embedding_model`): vectors of
 * different models are never compared.
 */
export interface EmbeddingsProvider {
  readonly model: string;
  readonly dimensions: number;
  /** One vector per text, in order. Batches as the backend needs; honours `signal`. */
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<Float32Array[]>;
}
