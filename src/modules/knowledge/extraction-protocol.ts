import type { Definition } from './definitions.js';
import type { MessagePort } from 'node:worker_threads';
import type { ExtractionBudgets } from '../../config-knowledge.js';
import { expandAbbreviations } from './abbreviations.js';
import type { Chunk } from './chunk.js';
import type { SupportedType } from './content-type.js';
import type { ExtractionErrorDetails } from './extract.js';

/**
 * What the HTTP thread and an extraction thread say to each other about one job. The thread gets
 * the stored original as `bytes` messages, then sends the chunks back a batch at a time and waits
 * for an `ack` after each, so the chunks in flight (and the memory they take) stay bounded and the
 * database writes set the pace.
 */

export interface ExtractionTask {
  /** The job's channel; transferred with the task. */
  port: MessagePort;
  contentType: SupportedType;
  /** The document's title, which goes into every chunk's search text. */
  title: string;
  budgets: Omit<ExtractionBudgets, 'maxCpuMs'>;
  batchSize: number;
  /** Hashed embeddings of this many dimensions, computed in the thread; null: the caller embeds. */
  embedDimensions: number | null;
}

/** From the HTTP thread to the extraction thread. */
export type ToThread = { type: 'bytes'; chunk: Uint8Array } | { type: 'end' } | { type: 'ack' };

/** A chunk as the indexer stores it. */
export interface ExtractedChunk extends Omit<Chunk, 'startOffset'> {
  /** What full-text search and embeddings read. */
  searchText: string;
  /** `searchText` analysed for the lexical index (`analyse`), terms separated by spaces. */
  terms: string;
}

/** From the extraction thread to the HTTP thread. */
export type FromThread =
  | { type: 'started' }
  | {
      type: 'chunked';
      pages: number;
      chunks: number;
      /** The abbreviations and pairs of names the document defines (definitions.ts), capped. */
      definitions: Definition[];
    }
  | {
      type: 'batch';
      chunks: ExtractedChunk[];
      /** One vector per chunk, `embedDimensions` floats each, back to back; null: not embedded. */
      vectors: Float32Array | null;
    };

/** The task's answer: failures the document causes come back as data, never as a thrown error. */
export type ExtractionResult =
  { ok: true; pages: number; chunks: number } | { ok: false; error: ExtractionErrorDetails };

/** What full-text search and embeddings read: title, heading and text, abbreviations expanded. */
export function searchTextOf(title: string, chunk: Pick<Chunk, 'heading' | 'text'>): string {
  const text = [title, chunk.heading ?? '', chunk.text].filter((s) => s !== '').join('\n');
  return expandAbbreviations(text);
}
