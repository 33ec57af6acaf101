/**
 * How an error appears in a log line. pino's default serializer copies every property of an
 * error, and a database error carries what it was given: a Drizzle query error has the query's
 * `params` (emails, password hashes, message text) in its message and its properties, and a
 * PostgreSQL error's `detail` quotes the offending value (`Key (email)=(…) already exists`). Logged
 * instead: the error's class, its codes, the names of what it concerns (table, column,
 * constraint), a message with parameters and quoted values taken out, the stack frames, and the
 * same of its causes.
 */

export interface LoggedError {
  type: string;
  message: string;
  code?: string;
  statusCode?: number;
  table?: string;
  column?: string;
  constraint?: string;
  stack?: string;
  cause?: LoggedError;
}

const MAX_MESSAGE = 500;
const MAX_FRAMES = 12;
const MAX_CAUSES = 3;

/**
 * The message without anything a caller supplied: Drizzle's `params:` list, the value PostgreSQL
 * quotes after a colon (`invalid input syntax for type integer: "…"`), a key's value
 * (`Key (email)=(…)`). Identifiers stay: the query text holds `$1` placeholders, not values.
 */
export function redactMessage(message: string): string {
  const withoutParams = message.split(/\n?\s*params:/)[0] ?? '';
  const unquoted = withoutParams
    .replace(/: "(?:[^"\\]|\\.)*"/g, ': "[redacted]"')
    .replace(/: '(?:[^'\\]|\\.)*'/g, ": '[redacted]'")
    .replace(/\(([^()]*)\)=\(([^()]*)\)/g, '($1)=([redacted])');
  return unquoted.length > MAX_MESSAGE ? `${unquoted.slice(0, MAX_MESSAGE)}…` : unquoted;
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The frames of a stack, without its first line (which repeats the unredacted message). */
function framesOf(stack: unknown): string | undefined {
  if (typeof stack !== 'string') return undefined;
  const frames = stack
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, MAX_FRAMES);
  return frames.length > 0 ? frames.join('\n') : undefined;
}

export function serializeError(err: unknown, depth = 0): LoggedError {
  if (!(err instanceof Error)) return { type: typeof err, message: '(not an Error)' };
  const e = err as Error & Record<string, unknown>;
  const out: LoggedError = { type: e.constructor.name, message: redactMessage(e.message) };
  const code = e.code;
  if (typeof code === 'string' || typeof code === 'number') out.code = String(code);
  if (typeof e.statusCode === 'number') out.statusCode = e.statusCode;
  for (const key of ['table', 'column', 'constraint'] as const) {
    const value = text(e[key]);
    if (value !== undefined) out[key] = value;
  }
  const stack = framesOf(e.stack);
  if (stack !== undefined) out.stack = stack;
  if (e.cause !== undefined && depth < MAX_CAUSES) out.cause = serializeError(e.cause, depth + 1);
  return out;
}
