import type { FastifyBaseLogger } from 'fastify';
import { pino, type DestinationStream } from 'pino';
import type { Config } from '../config.js';

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
 * JSON lines to stdout, or to `destination` (tests read what was logged). Stdout is written
 * asynchronously: a synchronous write is a system call per line (~10 µs of a request); this way
 * lines logged while a write is in flight go out together with the next one, and an idle service
 * still writes each line at once. pino flushes what is pending when the process exits.
 */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
  destination?: DestinationStream,
): Logger {
  const options = {
    level: config.logLevel,
    base: { service: 'medical-assistant' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT, censor: '[redacted]' },
  };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
