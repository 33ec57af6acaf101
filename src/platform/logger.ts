import { writeSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import { pino, type DestinationStream } from 'pino';
import type { Config } from '../config.js';
import { isoNow } from './clock.js';
import { serializeError } from './log-errors.js';

/** pino, typed as Fastify's logger so one instance serves the app and the services. */
export type Logger = FastifyBaseLogger;

/**
 * Paths that must never reach a log line: credentials, message content, transcripts, prompts,
 * tool arguments and patient data. Log call sites should not pass these at all; this is the net.
 */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'password',
  '*.password',
  '*.old_password',
  '*.new_password',
  '*.password_hash',
  '*.passwordHash',
  '*.access_token',
  '*.refresh_token',
  '*.token',
  '*.content',
  '*.transcript',
  '*.prompt',
  '*.arguments',
  '*.patient',
  '*.email',
];

/**
 * The lines of one event-loop turn, written to stdout together at its end through process.stdout,
 * which writes a pipe (as under a container runtime or systemd) without blocking: one write from
 * the event loop per turn, queued by libuv while the pipe is full. pino's own asynchronous
 * destination (sonic-boom) was given one line at a time, measured its whole pending buffer again
 * for each, and wrote through the thread pool: about 3 µs more per logged request under load.
 */
class StdoutLines implements DestinationStream {
  private pending = '';
  private scheduled = false;
  private broken = false;

  private readonly out = process.stdout;

  constructor() {
    // The reader is gone (EPIPE): stop writing rather than crash on an unhandled 'error'.
    this.out.on('error', () => {
      this.broken = true;
    });
    process.once('exit', () => {
      this.flushSync();
    });
  }

  write(line: string): void {
    this.pending += line;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const lines = this.pending;
    this.pending = '';
    if (lines !== '' && !this.broken) this.out.write(lines);
  };

  /**
   * Writes the lines not yet handed over at once: pino calls this after a fatal line (whose caller
   * then exits), and so does the exit hook. Behind lines the stream still queues they are queued
   * too, and lost if the process exits before the pipe drains, as with any asynchronous logger.
   */
  flushSync(): void {
    const lines = this.pending;
    this.pending = '';
    if (lines === '' || this.broken) return;
    if (this.out.writableLength > 0) {
      this.out.write(lines);
      return;
    }
    try {
      writeSync(1, lines);
    } catch {
      // The pipe is full (EAGAIN) or gone (EPIPE): nothing more can be done while exiting.
    }
  }
}

/** One writer per process, as there is one stdout (and one exit hook for it, however many loggers). */
let sharedStdout: StdoutLines | undefined;
const stdoutLines = (): StdoutLines => (sharedStdout ??= new StdoutLines());

/**
 * JSON lines to stdout, or to `destination` (tests read what was logged). Stdout is written
 * asynchronously: a synchronous write is a system call per line (~10 µs of a request); this way the
 * lines logged in one event-loop turn go out together at its end (see StdoutLines), and an idle
 * service still writes each line at once. Pending lines are written at exit.
 */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
  destination?: DestinationStream,
): Logger {
  const options = {
    level: config.logLevel,
    base: { service: 'medical-assistant' },
    // pino's isoTime, formatted once per millisecond.
    timestamp: () => `,"time":"${isoNow()}"`,
    redact: { paths: REDACT, censor: '[redacted]' },
    // Every `err` (and `error`) logged anywhere: class, codes and a redacted message, never the
    // values a failed query was given.
    serializers: { err: serializeError, error: serializeError },
  };
  return pino(options, destination ?? stdoutLines());
}
