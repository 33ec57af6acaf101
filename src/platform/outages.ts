import { DrizzleQueryError } from 'drizzle-orm';
import type { Gauge, Counter } from 'prom-client';
import { AppError } from '../errors.js';
import type { Logger } from './logger.js';

/**
 * A lost dependency, told apart from a fault of the service: the one place that reads the
 * drivers' errors (pg through Drizzle, ioredis) and decides that a request failed because
 * PostgreSQL or Redis is unreachable. Such a request answers 503 `SERVICE_UNAVAILABLE` with
 * `Retry-After` (HTTP) or an `error` frame of that code (sockets), and the log says once that the
 * dependency is down and once that it is back, with the number of requests refused between. Any
 * other failure stays a 500 logged with its stack.
 */

export type Dependency = 'postgres' | 'redis';

/**
 * Seconds a refused client is told to wait. The pool opens a new connection on the next query and
 * ioredis reconnects every 2 s at most, so a request 5 s later finds a dependency that came back;
 * sooner, retrying clients would only add to the load of one that is still coming up.
 */
export const RETRY_AFTER_SECONDS = 5;

const LOST = Symbol('lost dependency');

type Marked = Error & { [LOST]?: Dependency };

/**
 * Marks `err` as the loss of `dependency`, for failures only their source can tell apart (the pool
 * failing to open a connection: a refused or timed-out connection, a server refusing new ones).
 */
export function markLost(err: Error, dependency: Dependency): Error {
  (err as Marked)[LOST] = dependency;
  return err;
}

/** SQLSTATE of a lost connection: class 08, and the server shutting down or starting up. */
const PG_LOST_STATE = /^(08...|57P0[123])$/;
/** Socket errors: the server refused, reset or never answered the connection. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** node-postgres's own words for a connection that went away. */
const PG_LOST_MESSAGES = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
]);
/** ioredis's words for a command refused or lost with its connection, and a server not serving. */
const REDIS_LOST_MESSAGES = [
  /^Stream isn't writeable and enableOfflineQueue options is false$/,
  /^Connection is closed\.$/,
  /^Command aborted due to connection close$/,
  /^Reached the max retries per request limit/,
  /^(LOADING|MASTERDOWN) /,
];

export interface Loss {
  dependency: Dependency;
  /** What said so, for the log: a code (SQLSTATE, errno) or the driver's fixed words; never a query or its values. */
  reason: string;
}

/**
 * The dependency whose loss `err` reports, or undefined for any other failure. `source`: the
 * dependency whose own client raised it (a connection's error event), so that a bare socket error
 * (refused, reset) is that dependency's.
 */
export function lossOf(err: unknown, source?: Dependency): Loss | undefined {
  if (!(err instanceof Error)) return undefined;
  const marked = (err as Marked)[LOST];
  if (marked !== undefined) return { dependency: marked, reason: reasonOf(err) };
  const code = (err as { code?: unknown }).code;
  if (source !== undefined && typeof code === 'string' && NETWORK_CODES.has(code)) {
    return { dependency: source, reason: code };
  }
  if (REDIS_LOST_MESSAGES.some((re) => re.test(err.message))) {
    return { dependency: 'redis', reason: err.message };
  }
  // A query's failure: Drizzle wraps what the driver threw (and quotes the query: never logged).
  if (err instanceof DrizzleQueryError) {
    for (let e: unknown = err.cause, depth = 0; e instanceof Error && depth < 4; depth += 1) {
      if (isPostgresLoss(e)) return { dependency: 'postgres', reason: reasonOf(e) };
      e = e.cause;
    }
  }
  return undefined;
}

function isPostgresLoss(e: Error): boolean {
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (PG_LOST_STATE.test(code) || NETWORK_CODES.has(code))) {
    return true;
  }
  return (e as Marked)[LOST] === 'postgres' || PG_LOST_MESSAGES.has(e.message);
}

function reasonOf(e: Error): string {
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return PG_LOST_MESSAGES.has(e.message) ? e.message : e.name;
}

/** What background work needs of Outages: to report a failure that may be an outage. */
export type OutageNotice = Pick<Outages, 'noticed'>;

interface Outage {
  since: number;
  refused: number;
  probe: NodeJS.Timeout;
}

export interface OutageMetrics {
  dependencyUp: Gauge<'dependency'>;
  dependencyRefused: Counter<'dependency'>;
}

/** How often a dependency marked down is probed, so that its return is noticed without traffic. */
const PROBE_MS = 1000;

/**
 * Which dependencies are down, per instance. A request refused for a lost dependency marks it
 * down (one warn line: the dependency and what said so, no stack) and is counted; the first sign
 * that it is back (a reconnection, or its probe answering) marks it up (one info line: how long,
 * how many requests were refused). It never refuses anything itself: each request still tries.
 */
export class Outages {
  private readonly down = new Map<Dependency, Outage>();

  constructor(
    private readonly log: Logger,
    /** The dependencies this instance has (PGlite and the in-process store cannot be lost). */
    private readonly probes: Partial<Record<Dependency, () => Promise<void>>>,
    private readonly metrics: OutageMetrics,
    private readonly now: () => number = Date.now,
  ) {
    for (const dependency of Object.keys(probes) as Dependency[]) {
      metrics.dependencyUp.set({ dependency }, 1);
      metrics.dependencyRefused.inc({ dependency }, 0);
    }
  }

  /**
   * The answer to a request that failed with `err`: SERVICE_UNAVAILABLE with Retry-After when it
   * reports a lost dependency (the request is counted as refused), else undefined.
   */
  refusal(err: unknown): AppError | undefined {
    const loss = lossOf(err);
    if (loss === undefined) return undefined;
    const outage = this.lost(loss);
    outage.refused += 1;
    this.metrics.dependencyRefused.inc({ dependency: loss.dependency });
    return unavailable(loss.dependency);
  }

  /**
   * What a socket tells the client of a request that failed with `err`: an AppError as it is,
   * SERVICE_UNAVAILABLE for a lost dependency (counted as refused), else INTERNAL_ERROR with
   * `message`, the error logged with its stack as `what`.
   */
  failure(err: unknown, log: Logger, what: string, message: string): AppError {
    if (err instanceof AppError) return err;
    const refused = this.refusal(err);
    if (refused !== undefined) return refused;
    log.error({ err }, what);
    return new AppError('INTERNAL_ERROR', message);
  }

  /**
   * A failure of work that refuses no request (a limit that fails open, a cache read that falls
   * back to the database, a background sweep): when it reports a lost dependency, marks it down
   * and returns true, and the caller logs nothing more. `source` as for lossOf.
   */
  noticed(err: unknown, source?: Dependency): boolean {
    const loss = lossOf(err, source);
    if (loss === undefined) return false;
    this.lost(loss);
    return true;
  }

  /** The dependency answered again. */
  restored(dependency: Dependency): void {
    const outage = this.down.get(dependency);
    if (outage === undefined) return;
    clearInterval(outage.probe);
    this.down.delete(dependency);
    this.metrics.dependencyUp.set({ dependency }, 1);
    const downMs = this.now() - outage.since;
    this.log.info({ dependency, refused: outage.refused, downMs }, 'dependency available again');
  }

  isDown(dependency: Dependency): boolean {
    return this.down.has(dependency);
  }

  close(): void {
    for (const outage of this.down.values()) clearInterval(outage.probe);
    this.down.clear();
  }

  private lost({ dependency, reason }: Loss): Outage {
    const known = this.down.get(dependency);
    if (known !== undefined) return known;
    const check = this.probes[dependency] ?? (() => Promise.resolve());
    const probe = setInterval(() => {
      check().then(
        () => {
          this.restored(dependency);
        },
        () => undefined,
      );
    }, PROBE_MS);
    probe.unref();
    const outage = { since: this.now(), refused: 0, probe };
    this.down.set(dependency, outage);
    this.metrics.dependencyUp.set({ dependency }, 0);
    this.log.warn({ dependency, reason }, 'dependency unavailable');
    return outage;
  }
}

const LABELS: Record<Dependency, string> = { postgres: 'database', redis: 'shared store' };

/** 503 for a lost dependency, with the wait in Retry-After. */
export function unavailable(dependency: Dependency): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `The ${LABELS[dependency]} is unavailable; try again shortly`,
    null,
    { 'retry-after': String(RETRY_AFTER_SECONDS) },
  );
}
