import type { MessagePort, Transferable } from 'node:worker_threads';
import { analyse } from './lexical/analysis.js';
import { definitionsIn, DocumentDefinitions, type Definition } from './definitions.js';
import { HashedEmbeddings } from '../../providers/embeddings/hashed.js';
import { chunkPages, TooManyChunks, type Chunk } from './chunk.js';
import { ExtractionError, extractPages, limitExceeded } from './extract.js';
import {
  searchTextOf,
  type ExtractedChunk,
  type ExtractionResult,
  type ExtractionTask,
  type FromThread,
  type ToThread,
} from './extraction-protocol.js';

/**
 * The entry of an extraction thread (piscina's worker file): everything CPU-heavy about one job,
 * off the thread that answers HTTP. Reads the original from the job's channel, checks the PDF's
 * decoded size, extracts, chunks, adds the abbreviations the document defines to its chunks'
 * search text (definitions.ts), (for the offline embeddings) embeds, and sends the chunks back in
 * batches. Logs nothing: what it could say is about the document's content.
 */
export default async function extract(task: ExtractionTask): Promise<ExtractionResult> {
  const channel = new Channel(task.port);
  try {
    channel.post({ type: 'started' });
    const chunks = await chunksOf(task, await channel.bytes());
    const pages = chunks.pages;
    // The abbreviations and names the document defines: for the knowledge base's glossary, and
    // for the search text of every chunk of it.
    const found = definitionsOf(chunks.list);
    channel.post({ type: 'chunked', pages, chunks: chunks.list.length, definitions: found });
    const embedder =
      task.embedDimensions === null
        ? null
        : new HashedEmbeddings({ dimensions: task.embedDimensions });
    const definitions = new DocumentDefinitions(found);
    for (let start = 0; start < chunks.list.length; start += task.batchSize) {
      const batch = chunks.list
        .slice(start, start + task.batchSize)
        .map((chunk): ExtractedChunk => {
          const searchText = definitions.searchText(searchTextOf(task.title, chunk), chunk.text);
          return {
            index: chunk.index,
            text: chunk.text,
            page: chunk.page,
            heading: chunk.heading,
            searchText,
            terms: analyse(searchText).join(' '),
          };
        });
      const vectors = embedder === null ? null : embedAll(embedder, batch);
      channel.post(
        { type: 'batch', chunks: batch, vectors },
        vectors === null ? [] : [vectors.buffer],
      );
      await channel.ack();
    }
    return { ok: true, pages, chunks: chunks.list.length };
  } catch (error) {
    if (error instanceof ExtractionError) return { ok: false, error: error.details };
    throw error;
  } finally {
    channel.close();
  }
}

/**
 * A document's definitions kept, at most: a real document defines a few dozen; a text built to
 * fill the glossary (every line "x (y)") is cut here.
 */
const MAX_DEFINITIONS = 500;

/** The document's own definitions, each short form once (the first found), at most 500. */
function definitionsOf(chunks: readonly Chunk[]): Definition[] {
  const found = new Map<string, Definition>();
  for (const chunk of chunks) {
    for (const d of definitionsIn(chunk.text)) {
      if (found.size >= MAX_DEFINITIONS) return [...found.values()];
      if (!found.has(d.short)) found.set(d.short, d);
    }
  }
  return [...found.values()];
}

/** Extraction and chunking within the job's budgets; the pages' text is dropped on return. */
async function chunksOf(
  task: ExtractionTask,
  bytes: Uint8Array,
): Promise<{ pages: number; list: Chunk[] }> {
  const { maxPages, maxDecodedBytes, maxChunks } = task.budgets;
  const pages = await extractPages(bytes, task.contentType, { maxPages, maxDecodedBytes });
  try {
    return { pages: pages.length, list: chunkPages(pages, { maxChunks }) };
  } catch (error) {
    if (!(error instanceof TooManyChunks)) throw error;
    throw limitExceeded(
      'chunks',
      `The document makes more than ${maxChunks} chunks; at most ${maxChunks} can be indexed.`,
    );
  }
}

/** The batch's vectors in one buffer, so it crosses to the HTTP thread without a copy. */
function embedAll(embedder: HashedEmbeddings, batch: ExtractedChunk[]): Float32Array<ArrayBuffer> {
  const vectors = new Float32Array(new ArrayBuffer(batch.length * embedder.dimensions * 4));
  batch.forEach((chunk, i) => {
    vectors.set(embedder.embedOne(chunk.searchText), i * embedder.dimensions);
  });
  return vectors;
}

/** The job's channel, seen from the thread: incoming messages queued until asked for. */
class Channel {
  private readonly queue: ToThread[] = [];
  private waiting: (() => void) | null = null;

  constructor(private readonly port: MessagePort) {
    port.on('message', (message: ToThread) => {
      this.queue.push(message);
      this.waiting?.();
    });
  }

  post(message: FromThread, transfer: Transferable[] = []): void {
    this.port.postMessage(message, transfer);
  }

  /** The original, sent as `bytes` messages up to `end`. */
  async bytes(): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for (;;) {
      const message = await this.next();
      if (message.type === 'end') return Buffer.concat(parts);
      if (message.type === 'bytes') parts.push(message.chunk);
    }
  }

  async ack(): Promise<void> {
    while ((await this.next()).type !== 'ack');
  }

  close(): void {
    this.port.close();
  }

  private async next(): Promise<ToThread> {
    for (;;) {
      const message = this.queue.shift();
      if (message !== undefined) return message;
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = null;
    }
  }
}
