import { ProviderError } from '../llm/types.js';
import type { AdaptedModel, ModelPaths } from './pocketsphinx-binding.js';
import type { FromThread } from './pocketsphinx-protocol.js';
import { WaitQueue } from './pocketsphinx-queue.js';
import { Slot } from './pocketsphinx-slot.js';

/**
 * Decoder threads, each with one decoder built once. An utterance borrows a free decoder (or waits
 * in a bounded queue, for a bounded time) and gives it back when it ends. The adapted model loads
 * into a decoder while it is free. A thread that dies is replaced; one that cannot start breaks it.
 */

export interface PoolOptions {
  size: number;
  maxQueue: number;
  acquireTimeoutMs: number;
  /** Longest wait for a thread's answer (a final, an abort, a model load) before it is replaced. */
  answerTimeoutMs: number;
  partialIntervalMs: number;
  paths: ModelPaths;
  adapted: AdaptedModel | null;
}

export interface PoolStats {
  size: number;
  idle: number;
  busy: number;
  queued: number;
  /** Threads replaced after a crash or a stall since start. */
  replaced: number;
  /** Each live decoder's set-up time, in ms. */
  setupMs: number[];
}

interface ModelWaiter {
  version: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const PROVIDER = 'pocketsphinx';
const CLOSE_MS = 2_000;

export class DecoderPool {
  readonly #options: PoolOptions;
  readonly #slots: Slot[] = [];
  readonly #waiters = new WaitQueue<Slot>();
  readonly #modelWaiters: ModelWaiter[] = [];
  #model: AdaptedModel | null;
  #modelVersion = 0;
  #replaced = 0;
  #broken: string | null = null;
  #closed = false;
  readonly #ready: Promise<void>;
  #readyWaiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];

  constructor(options: PoolOptions) {
    this.#options = options;
    this.#model = options.adapted;
    for (let i = 0; i < options.size; i += 1) this.#slots.push(this.#spawn());
    this.#ready = new Promise((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
    this.#ready.catch(() => undefined);
  }

  /** Resolves when every decoder is built; rejects if one cannot be. */
  ready(): Promise<void> {
    return this.#ready;
  }

  stats(): PoolStats {
    const live = this.#slots.filter((s) => s.state !== 'starting' && s.state !== 'dead');
    return {
      size: this.#options.size,
      idle: this.#slots.filter((s) => s.state === 'idle').length,
      busy: this.#slots.filter((s) => s.state === 'busy').length,
      queued: this.#waiters.length,
      replaced: this.#replaced,
      setupMs: live.map((s) => s.setupMs),
    };
  }

  /** A free decoder, for one utterance; give it back with `release` (or `abort` on the slot). */
  acquire(signal: AbortSignal): Promise<Slot> {
    if (this.#closed) return Promise.reject(closedError());
    if (this.#broken !== null) return Promise.reject(brokenError(this.#broken));
    const free = this.#slots.find((s) => s.state === 'idle');
    if (free !== undefined && this.#waiters.length === 0) {
      free.state = 'busy';
      return Promise.resolve(free);
    }
    if (this.#waiters.length >= this.#options.maxQueue) {
      return Promise.reject(
        new ProviderError(PROVIDER, 'speech recognition busy: every decoder is in use', {
          retryable: true,
        }),
      );
    }
    return this.#waiters.wait(signal, this.#options.acquireTimeoutMs, () => {
      const ms = this.#options.acquireTimeoutMs;
      return new ProviderError(
        PROVIDER,
        `speech recognition busy: no decoder free within ${ms} ms`,
        {
          retryable: true,
        },
      );
    });
  }

  /** The utterance on `slot` is over (its final arrived or its abort was confirmed). */
  release(slot: Slot): void {
    slot.disarm();
    slot.listener = null;
    if (slot.state === 'busy' || slot.state === 'loading') slot.state = 'idle';
    this.#dispatch(slot);
  }

  /**
   * Loads `model` (interpolated with the generic one) into every decoder, each as soon as it is
   * free; `null` goes back to the generic model. Resolves when all have it. If a decoder cannot
   * load it, every decoder goes back to the generic model and this rejects.
   */
  setAdaptedModel(model: AdaptedModel | null): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    this.#model = model;
    this.#modelVersion += 1;
    const version = this.#modelVersion;
    const done = new Promise<void>((resolve, reject) => {
      this.#modelWaiters.push({ version, resolve, reject });
    });
    for (const slot of this.#slots) if (slot.state === 'idle') this.#dispatch(slot);
    this.#settleModelWaiters();
    return done;
  }

  #dispatch(slot: Slot): void {
    if (slot.state !== 'idle' || this.#closed) return;
    if (slot.modelVersion !== this.#modelVersion) {
      slot.loadModel(this.#model, this.#modelVersion, this.#options.answerTimeoutMs);
      return;
    }
    if (this.#waiters.length === 0) return;
    slot.state = 'busy';
    this.#waiters.serve(slot);
  }

  #spawn(): Slot {
    return new Slot({
      paths: this.#options.paths,
      partialIntervalMs: this.#options.partialIntervalMs,
      adapted: this.#model,
      modelVersion: this.#modelVersion,
      onMessage: (slot, message) => {
        this.#onMessage(slot, message);
      },
      onExit: (slot, error, wasReady) => {
        this.#onExit(slot, error, wasReady);
      },
    });
  }

  #onMessage(slot: Slot, message: FromThread): void {
    switch (message.type) {
      case 'ready':
        slot.setupMs = message.setupMs;
        slot.state = 'idle';
        if (message.adaptedError) this.#modelFailed(message.adaptedError, slot.modelVersion);
        if (this.#slots.every((s) => s.state !== 'starting')) this.#settleReady(null);
        this.#settleModelWaiters();
        this.#dispatch(slot);
        return;
      case 'init-error':
        this.#broken = message.message;
        this.#settleReady(brokenError(message.message));
        this.#failWaiters(brokenError(message.message));
        return;
      case 'model-loaded':
      case 'model-failed':
        if (message.id !== slot.currentId) return;
        if (message.type === 'model-failed') this.#modelFailed(message.message, slot.modelVersion);
        this.release(slot);
        this.#settleModelWaiters();
        return;
      case 'partial':
      case 'final':
      case 'failed':
      case 'aborted':
        if (message.id !== slot.currentId) return;
        this.#onUtterance(slot, message);
    }
  }

  #onUtterance(slot: Slot, message: Extract<FromThread, { id: number }>): void {
    const listener = slot.listener;
    if (message.type === 'partial') {
      listener?.({ type: 'partial', text: message.text });
      return;
    }
    this.release(slot);
    if (message.type === 'final') listener?.({ ...message, type: 'final' });
    if (message.type === 'failed') {
      listener?.({ type: 'failed', message: message.message, crashed: false });
    }
  }

  /**
   * A decoder could not load the model of `version`: all go back to the generic one. Only calls
   * for that model or an earlier one fail (a late report must not fail a newer request).
   */
  #modelFailed(reason: string, version: number): void {
    const error = new ProviderError(
      PROVIDER,
      `adapted language model not loaded, the generic model is in use: ${reason}`,
      { retryable: false },
    );
    for (const waiter of this.#modelWaiters.filter((w) => w.version <= version)) {
      this.#modelWaiters.splice(this.#modelWaiters.indexOf(waiter), 1);
      waiter.reject(error);
    }
    if (this.#model === null || version !== this.#modelVersion) return;
    this.#model = null;
    this.#modelVersion += 1;
    for (const slot of this.#slots) if (slot.state === 'idle') this.#dispatch(slot);
  }

  #settleModelWaiters(): void {
    for (const waiter of [...this.#modelWaiters]) {
      const behind = this.#slots.some(
        (s) => s.state === 'starting' || s.state === 'loading' || s.modelVersion < waiter.version,
      );
      if (behind) continue;
      this.#modelWaiters.splice(this.#modelWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  #onExit(slot: Slot, error: unknown, wasReady: boolean): void {
    const listener = slot.listener;
    slot.listener = null;
    const index = this.#slots.indexOf(slot);
    if (this.#closed || this.#broken !== null || index < 0) return;
    const detail = error instanceof Error ? `: ${error.message}` : '';
    if (!wasReady) {
      // It would fail the same way again: no endless respawning.
      this.#broken = `decoder thread ended before its decoder was built${detail}`;
      this.#settleReady(brokenError(this.#broken));
      this.#failWaiters(brokenError(this.#broken));
      return;
    }
    this.#replaced += 1;
    listener?.({ type: 'failed', message: `decoder thread ended${detail}`, crashed: true });
    // The replacement loads the current model at start; its version is the current one.
    this.#slots[index] = this.#spawn();
    this.#settleModelWaiters();
  }

  #settleReady(error: unknown): void {
    for (const waiter of this.#readyWaiters.splice(0)) {
      if (error === null) waiter.resolve();
      else waiter.reject(error);
    }
  }

  #failWaiters(error: Error): void {
    this.#waiters.failAll(error);
    for (const waiter of this.#modelWaiters.splice(0)) waiter.reject(error);
  }

  /** Ends every utterance (their streams fail), frees every decoder and ends every thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#failWaiters(closedError());
    this.#settleReady(closedError());
    for (const slot of this.#slots) {
      const listener = slot.listener;
      slot.listener = null;
      listener?.({ type: 'failed', message: 'speech recognition closed', crashed: false });
    }
    await Promise.all(this.#slots.map((slot) => slot.close(CLOSE_MS)));
  }

  /** Ends one decoder thread at once, as a crash would (for tests). */
  async crashForTest(index: number): Promise<void> {
    await this.#slots[index]?.kill();
  }
}

const closedError = () =>
  new ProviderError(PROVIDER, 'speech recognition is closed', { retryable: false });

const brokenError = (reason: string) =>
  new ProviderError(
    PROVIDER,
    `speech recognition unavailable: a decoder failed to start: ${reason}`,
    {
      retryable: false,
    },
  );
