import type { Definition } from './definitions.js';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ExtractionBudgets } from '../../config-knowledge.js';
import { BusyClock } from './busy-clock.js';
import type { SupportedType } from './content-type.js';
import { ExtractionError, limitExceeded } from './extract.js';
import type {
  ExtractedChunk,
  ExtractionResult,
  ExtractionTask,
  FromThread,
} from './extraction-protocol.js';

/**
 * The extraction threads (piscina): one job per thread at a time, each thread with a heap limit,
 * at a lower CPU priority than the thread answering HTTP. A job is stopped by terminating its
 * thread (piscina does that when the job's signal aborts; a new thread replaces it), which is how
 * its CPU budget, a deletion, a newer version and shutdown end it, whatever pdf.js is doing.
 */

export interface PoolOptions {
  threads: number;
  maxHeapMb: number;
}

export interface ExtractRequest {
  /** The stored original. */
  source: AsyncIterable<Uint8Array>;
  contentType: SupportedType;
  title: string;
  budgets: ExtractionBudgets;
  batchSize: number;
  embedDimensions: number | null;
  /** Stops the job; the extraction then throws the signal's reason. */
  signal: AbortSignal;
}

export type ExtractionEvent =
  | { type: 'chunked'; pages: number; chunks: number; definitions: Definition[] }
  | { type: 'batch'; chunks: ExtractedChunk[]; vectors: Float32Array[] | null };

export interface ExtractionSummary {
  pages: number;
  chunks: number;
}

/** Worker threads run at this nice value above the process's (Linux; ignored elsewhere). */
const NICE_INCREMENT = 10;
/** An idle thread is kept this long for the next job (pdf.js loads once per thread). */
const IDLE_MS = 60_000;

export class ExtractionPool {
  private readonly pool: Piscina<ExtractionTask, ExtractionResult>;

  constructor(private readonly options: PoolOptions) {
    // From the sources (tsx, vitest) the thread needs tsx's loader too; the build is plain JS.
    const fromSource = import.meta.url.endsWith('.ts');
    this.pool = new Piscina({
      filename: new URL(`./extraction-thread.${fromSource ? 'ts' : 'js'}`, import.meta.url).href,
      execArgv: fromSource ? withTsx(process.execArgv) : process.execArgv,
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: IDLE_MS,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb },
      atomics: 'disabled',
      niceIncrement: NICE_INCREMENT,
    });
  }

  get threads(): number {
    return this.options.threads;
  }

  /**
   * Runs one job on a thread. Yields progress and batches of chunks; the thread waits while the
   * caller handles a batch (the CPU budget's clock stops meanwhile) and goes on when it asks for
   * the next. Throws an ExtractionError for what the document causes, including EXTRACTION_LIMIT.
   */
  async *extract(request: ExtractRequest): AsyncGenerator<ExtractionEvent, ExtractionSummary> {
    request.signal.throwIfAborted();
    const controller = new AbortController();
    const forward = () => {
      controller.abort(request.signal.reason);
    };
    request.signal.addEventListener('abort', forward, { once: true });
    const { maxCpuMs } = request.budgets;
    // Held until the thread has started and has the whole original.
    const expire = () => {
      controller.abort(cpuLimit(maxCpuMs));
    };
    const clock = new BusyClock(maxCpuMs, expire, 2);
    const { port1, port2 } = new MessageChannel();
    const inbox = new Inbox(port1);
    const task = this.pool.run(taskOf(request, port2), {
      transferList: [port2],
      signal: controller.signal,
    });
    task.then(
      (result) => {
        inbox.push({ type: 'settled', result });
      },
      (error: unknown) => {
        inbox.push({ type: 'settled', error });
      },
    );
    try {
      await send(request.source, port1, controller.signal);
      clock.release();
      for (;;) {
        const item = await inbox.next();
        if (item.type === 'settled') return this.outcome(item, controller.signal);
        if (item.type === 'started') {
          clock.release();
          continue;
        }
        clock.hold();
        yield item.type === 'batch' ? { ...item, vectors: split(item) } : item;
        clock.release();
        if (item.type === 'batch') port1.postMessage({ type: 'ack' });
      }
    } finally {
      clock.stop();
      request.signal.removeEventListener('abort', forward);
      controller.abort(); // a thread still running (the caller stopped early) is terminated
      port1.close();
    }
  }

  /** Stops every thread at once, ending their jobs. */
  async destroy(): Promise<void> {
    await this.pool.destroy();
  }

  private outcome(item: Settled, signal: AbortSignal): ExtractionSummary {
    if (item.result?.ok === true) return { pages: item.result.pages, chunks: item.result.chunks };
    if (item.result?.ok === false) throw ExtractionError.from(item.result.error);
    if (signal.aborted) throw signal.reason;
    if (isOutOfMemory(item.error)) {
      throw limitExceeded(
        'memory',
        `Extraction needed more than the ${this.options.maxHeapMb} MB of memory a worker thread may use.`,
      );
    }
    throw item.error;
  }
}

const cpuLimit = (ms: number) =>
  limitExceeded(
    'cpu_time',
    `Extraction took more than ${ms / 1000} s of processing time; at most ${ms / 1000} s are allowed.`,
  );

const isOutOfMemory = (error: unknown) =>
  error instanceof Error && (error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY';

function withTsx(execArgv: string[]): string[] {
  return execArgv.some((arg) => arg.includes('tsx')) ? execArgv : [...execArgv, '--import', 'tsx'];
}

function taskOf(request: ExtractRequest, port: MessagePort): ExtractionTask {
  const { maxDecodedBytes, maxPages, maxChunks } = request.budgets;
  return {
    port,
    contentType: request.contentType,
    title: request.title,
    budgets: { maxDecodedBytes, maxPages, maxChunks },
    batchSize: request.batchSize,
    embedDimensions: request.embedDimensions,
  };
}

/** Streams the original to the thread; each piece is copied once and its copy moved over. */
async function send(source: AsyncIterable<Uint8Array>, port: MessagePort, signal: AbortSignal) {
  for await (const piece of source) {
    signal.throwIfAborted();
    const copy = new Uint8Array(piece);
    port.postMessage({ type: 'bytes', chunk: copy }, [copy.buffer]);
  }
  port.postMessage({ type: 'end' });
}

function split(batch: Extract<FromThread, { type: 'batch' }>): Float32Array[] | null {
  const { vectors, chunks } = batch;
  if (vectors === null || chunks.length === 0) return null;
  const size = vectors.length / chunks.length;
  return chunks.map((_, i) => vectors.subarray(i * size, (i + 1) * size));
}

interface Settled {
  type: 'settled';
  result?: ExtractionResult;
  error?: unknown;
}

/** The thread's messages and the task's end, in the order they arrive. */
class Inbox {
  private readonly items: (FromThread | Settled)[] = [];
  private wake: (() => void) | null = null;

  constructor(port: MessagePort) {
    port.on('message', (message: FromThread) => {
      this.push(message);
    });
  }

  push(item: FromThread | Settled): void {
    this.items.push(item);
    this.wake?.();
  }

  async next(): Promise<FromThread | Settled> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) return item;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }
}
