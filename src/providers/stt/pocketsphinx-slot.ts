import type { Worker } from 'node:worker_threads';
import type { AdaptedModel, ModelPaths } from './pocketsphinx-binding.js';
import type { FromThread, ThreadData, ToThread } from './pocketsphinx-protocol.js';
import { startThread } from '../../platform/threads.js';

/**
 * One decoder thread as the pool sees it: its state, the model version it has loaded and the
 * utterance it is decoding. The pool decides; the slot only talks to its thread.
 */

export type SlotState = 'starting' | 'idle' | 'busy' | 'loading' | 'dead';

/** What a running utterance hears from its thread. */
export type UtteranceEvent =
  | { type: 'partial'; text: string }
  | { type: 'final'; text: string; decodeMs: number; endMs: number }
  | { type: 'failed'; message: string; crashed: boolean };

export interface SlotOptions {
  paths: ModelPaths;
  partialIntervalMs: number;
  /** The adapted model the new decoder loads at start, and its version in the pool. */
  adapted: AdaptedModel | null;
  modelVersion: number;
  onMessage: (slot: Slot, message: FromThread) => void;
  onExit: (slot: Slot, error: unknown, wasReady: boolean) => void;
}

/** Decoder threads get a small JavaScript heap: the decoder's memory is native. */
const THREAD_HEAP_MB = 64;

export class Slot {
  readonly worker: Worker;
  readonly #cancelled: Int32Array;
  state: SlotState = 'starting';
  /** The adapted-model version this decoder has (or is loading). */
  modelVersion: number;
  setupMs = 0;
  /** The utterance or model load in progress: the last id sent. */
  #nextId = 0;
  currentId = 0;
  listener: ((event: UtteranceEvent) => void) | null = null;
  /** Armed while the thread owes an answer (a final, an abort, a model load). */
  #watchdog: NodeJS.Timeout | undefined;

  constructor(options: SlotOptions) {
    const cancelled = new SharedArrayBuffer(4);
    this.#cancelled = new Int32Array(cancelled);
    this.modelVersion = options.modelVersion;
    const data: ThreadData = {
      paths: options.paths,
      adapted: options.adapted,
      partialIntervalMs: options.partialIntervalMs,
      cancelled,
    };
    this.worker = startThread(import.meta.url, 'pocketsphinx-thread', {
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
    this.worker.on('message', (message: FromThread) => {
      options.onMessage(this, message);
    });
    let failure: unknown;
    this.worker.on('error', (error) => {
      failure = error;
    });
    this.worker.on('exit', () => {
      this.disarm();
      const { state } = this;
      this.state = 'dead';
      if (state !== 'dead') options.onExit(this, failure, state !== 'starting');
    });
  }

  #send(message: ToThread, transfer: ArrayBuffer[] = []): void {
    if (this.state !== 'dead') this.worker.postMessage(message, transfer);
  }

  /** Starts an utterance and answers its id; its events go to `listener` until it ends. */
  begin(listener: (event: UtteranceEvent) => void): number {
    this.currentId = ++this.#nextId;
    this.listener = listener;
    this.#send({ type: 'start', id: this.currentId });
    return this.currentId;
  }

  /** Moves the samples to the thread: the caller must not touch them afterwards. */
  audio(id: number, samples: Int16Array<ArrayBuffer>): void {
    if (id !== this.currentId) return;
    this.#send({ type: 'audio', id, samples }, [samples.buffer]);
  }

  end(id: number, timeoutMs: number): void {
    if (id !== this.currentId) return;
    this.#send({ type: 'end', id });
    this.arm(timeoutMs);
  }

  /** Drops the utterance: audio already queued for it is skipped, its hypothesis discarded. */
  abort(id: number, timeoutMs: number): void {
    if (id !== this.currentId || this.state !== 'busy') return;
    this.listener = null;
    Atomics.store(this.#cancelled, 0, id);
    this.#send({ type: 'abort', id });
    this.arm(timeoutMs);
  }

  loadModel(model: AdaptedModel | null, version: number, timeoutMs: number): void {
    this.state = 'loading';
    this.modelVersion = version;
    this.currentId = ++this.#nextId;
    this.#send({ type: 'model', id: this.currentId, model });
    this.arm(timeoutMs);
  }

  /** A thread that owes an answer for longer than `ms` is stuck in native code: it is replaced. */
  arm(ms: number): void {
    this.disarm();
    this.#watchdog = setTimeout(() => {
      void this.worker.terminate();
    }, ms);
  }

  disarm(): void {
    if (this.#watchdog !== undefined) clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
  }

  /** Frees the decoder and ends the thread; terminates it if it does not end within `ms`. */
  async close(ms: number): Promise<void> {
    if (this.state === 'dead') return;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.state = 'dead';
    this.disarm();
    this.worker.postMessage({ type: 'close' } satisfies ToThread);
    const timer = setTimeout(() => void this.worker.terminate(), ms);
    await exited;
    clearTimeout(timer);
  }

  /** Ends the thread at once (tests use it as a crash). */
  async kill(): Promise<void> {
    await this.worker.terminate();
  }
}
