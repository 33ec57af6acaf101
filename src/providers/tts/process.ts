import { spawn } from 'node:child_process';
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
  const { provider, signal } = options;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<Buffer>((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'ignore'],
      shell: false,
      env: {},
    });
    const output: Buffer[] = [];
    let size = 0;
    let failure: ProviderError | undefined;
    const stop = (reason: ProviderError | undefined): void => {
      failure ??= reason;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => {
      stop(fail(provider, `${command} timed out after ${options.timeoutMs} ms`, false));
    }, options.timeoutMs);
    const onAbort = (): void => {
      stop(undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (outcome: () => void): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      outcome();
    };
    child.stdout?.on('data', (data: Buffer) => {
      size += data.length;
      if (size > options.maxOutputBytes) {
        stop(
          fail(provider, `${command} produced more than ${options.maxOutputBytes} bytes`, false),
        );
      } else output.push(data);
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      const cause = fail(provider, `${command} could not run (${error.code ?? 'error'})`, false);
      failure ??= cause;
      // A process that never started emits no 'close'.
      if (child.pid === undefined) {
        settle(() => {
          reject(cause);
        });
      }
    });
    child.on('close', (code, killedBy) => {
      settle(() => {
        if (signal.aborted) reject(signal.reason as Error);
        else if (failure !== undefined) reject(failure);
        else if (code !== 0) {
          const how = code === null ? `signal ${killedBy ?? 'unknown'}` : `code ${code}`;
          reject(fail(provider, `${command} exited with ${how}`, false));
        } else resolve(Buffer.concat(output));
      });
    });
    if (options.input !== undefined && child.stdin !== null) {
      // EPIPE when the engine exits before reading everything: its exit code tells what happened.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
  });
}

function fail(provider: string, message: string, retryable: boolean): ProviderError {
  return new ProviderError(provider, message, { retryable });
}
