import {
  parentPort,
  type Transferable,
  type Worker,
  type WorkerOptions,
} from 'node:worker_threads';
import { startThread } from './threads.js';

/** Every answer names the request it answers; `failed` carries the thread's error message. */
export type ThreadAnswer = { id: number; type: string } | ThreadFailure;
export interface ThreadFailure {
  id: number;
  type: 'failed';
  message: string;
}

/** Distributes a request union over its variants, so that `id` can be left out of each. */
export type WithoutId<M> = M extends { id: number } ? Omit<M, 'id'> : never;

export interface ThreadCallsOptions {
  /** The thread's module (`import.meta.url` of the owner) and entry name, as `startThread` takes. */
  base: string;
  entry: string;
  /** Names the thread in errors. */
  label: string;
  workerOptions?: WorkerOptions;
  /**
   * The thread ended (crashed, ran out of memory, or was closed): whatever it held is gone. Every
   * pending call has been rejected; the next call starts another thread.
   */
  onEnded(error: Error, closing: boolean): void;
}

/**
 * Calls into a worker thread that answers each request once (see `serveThread`): the thread is
 * started on first use and again after it ended; a call rejects when the thread answers
 * `failed`, when it ends first, or when the caller's signal aborts (the thread's answer is then
 * dropped: the work is short and not worth a way to stop it).
 */
export class ThreadCalls<Request extends { type: string }, Answer extends ThreadAnswer> {
  private worker: Worker | undefined;
  private readonly pending = new Map<
    number,
    { resolve: (answer: Answer) => void; reject: (error: Error) => void }
  >();
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: ThreadCallsOptions) {}

  call(
    request: WithoutId<Request>,
    signal?: AbortSignal,
    transfer: readonly Transferable[] = [],
  ): Promise<Exclude<Answer, ThreadFailure>> {
    const worker = this.thread();
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(id);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        resolve: (answer) => {
          settle();
          if (answer.type === 'failed') {
            reject(new Error(`${this.options.label}: ${(answer as ThreadFailure).message}`));
          } else {
            resolve(answer as Exclude<Answer, ThreadFailure>);
          }
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      worker.postMessage({ ...request, id }, transfer);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    await worker?.terminate();
  }

  private thread(): Worker {
    if (this.closed) throw new Error(`${this.options.label} closed`);
    if (this.worker !== undefined) return this.worker;
    const { base, entry, workerOptions } = this.options;
    const worker = startThread(base, entry, workerOptions);
    worker.unref();
    worker.on('message', (answer: Answer) => {
      const call = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      call?.resolve(answer);
    });
    const ended = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const call of this.pending.values()) call.reject(error);
      this.pending.clear();
      this.options.onEnded(error, this.closed);
    };
    worker.on('error', ended);
    worker.on('exit', (code) => {
      ended(new Error(`${this.options.label} thread exited with ${String(code)}`));
    });
    this.worker = worker;
    return worker;
  }
}

/**
 * The thread's side: answers every request with what `handle` returns, or `failed` with the
 * error's message when it throws.
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- names the thread's own requests
export function serveThread<Request extends { id: number }>(
  name: string,
  handle: (request: Request) => ThreadAnswer,
): void {
  if (parentPort === null) throw new Error(`${name} runs only as a worker thread`);
  const port = parentPort;
  port.on('message', (request: Request) => {
    let answer: ThreadAnswer;
    try {
      answer = handle(request);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      answer = { id: request.id, type: 'failed', message };
    }
    port.postMessage(answer);
  });
}
