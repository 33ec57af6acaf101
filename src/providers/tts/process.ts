import { spawn, type ChildProcess } from 'node:child_process';
import { ProviderError } from '../llm/types.js';

/**
 * One run of a speech engine as a child process: never through a shell (arguments go to the
 * program as they are), with an empty environment, a time budget and an output cap. Settles only
 * once the process has exited and been reaped, so an abort leaves no zombie behind. Error
 * messages never contain the text spoken nor the engine's stderr (which may echo it).
 */

export interface RunOptions {
  provider: string;
  /** Written to the child's stdin, then closed; stdin is /dev/null when absent. */
  input?: string | undefined;
  signal: AbortSignal;
  timeoutMs: number;
  /** Stdout beyond this kills the child and fails the run. */
  maxOutputBytes: number;
}

export function runProcess(command: string, args: string[], options: RunOptions): Promise<Buffer> {
  if (options.signal.aborted) return Promise.reject(options.signal.reason as Error);
  const child = spawn(command, args, {
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'ignore'],
    shell: false,
    env: {},
  });
  const run = new Run(child, command, options);
  if (options.input !== undefined && child.stdin !== null) {
    // EPIPE when the engine exits before reading everything: its exit code tells what happened.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input);
  }
  return run.result;
}

class Run {
  readonly result: Promise<Buffer>;
  readonly #child: ChildProcess;
  readonly #command: string;
  readonly #options: RunOptions;
  readonly #output: Buffer[] = [];
  readonly #timer: NodeJS.Timeout;
  readonly #onAbort = (): void => {
    this.#stop(undefined);
  };
  #size = 0;
  #failure: ProviderError | undefined;

  constructor(child: ChildProcess, command: string, options: RunOptions) {
    this.#child = child;
    this.#command = command;
    this.#options = options;
    this.#timer = setTimeout(() => {
      this.#stop(this.#fail(`timed out after ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    options.signal.addEventListener('abort', this.#onAbort, { once: true });
    this.result = new Promise<Buffer>((resolve, reject) => {
      child.stdout?.on('data', (data: Buffer) => {
        this.#collect(data);
      });
      child.on('error', (error: NodeJS.ErrnoException) => {
        const cause = this.#fail(`could not run (${error.code ?? 'error'})`);
        this.#failure ??= cause;
        // A process that never started emits no 'close'.
        if (child.pid === undefined) {
          this.#dispose();
          reject(cause);
        }
      });
      child.on('close', (code, killedBy) => {
        this.#dispose();
        const error = this.#error(code, killedBy);
        if (error === undefined) resolve(Buffer.concat(this.#output));
        else reject(error);
      });
    });
  }

  #collect(data: Buffer): void {
    this.#size += data.length;
    if (this.#size > this.#options.maxOutputBytes) {
      this.#stop(this.#fail(`produced more than ${this.#options.maxOutputBytes} bytes`));
    } else this.#output.push(data);
  }

  /** Why the run failed, if it did. */
  #error(code: number | null, killedBy: NodeJS.Signals | null): Error | undefined {
    const { signal } = this.#options;
    if (signal.aborted) return signal.reason as Error;
    if (this.#failure !== undefined) return this.#failure;
    if (code !== 0) {
      return this.#fail(
        `exited with ${code === null ? `signal ${killedBy ?? '?'}` : `code ${code}`}`,
      );
    }
    return undefined;
  }

  #stop(reason: ProviderError | undefined): void {
    this.#failure ??= reason;
    this.#child.kill('SIGKILL');
  }

  #dispose(): void {
    clearTimeout(this.#timer);
    this.#options.signal.removeEventListener('abort', this.#onAbort);
  }

  #fail(what: string): ProviderError {
    return new ProviderError(this.#options.provider, `${this.#command} ${what}`, {
      retryable: false,
    });
  }
}
