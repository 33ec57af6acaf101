import type { QueryOptions, Results, RowMode } from '@electric-sql/pglite';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../platform/threads.js';

/**
 * The embedded PGlite, run in a worker thread (pglite-thread.ts). PGlite executes each statement
 * synchronously in WebAssembly on the thread that calls it, and runs queued statements back to
 * back in microtasks: in-process it held the thread that answers HTTP and the sockets for as long
 * as the database was busy. This client offers the part of PGlite's interface that drizzle's
 * pglite driver uses (`query`, `transaction` and the transaction's `query`) and sends every call to
 * the thread, so that no statement runs on the service's thread.
 */

/**
 * From the service's thread to PGlite's. Every message has an answer with its `id` (unique in the
 * process) and names its database (`db`): one thread holds every PGlite of the process.
 */
export type ToPgliteThread = { id: number; db: number } &
  /** Opens database `db` on `dir` (null: in memory). */
  (
    | { type: 'open'; dir: string | null }
    | {
        type: 'query';
        /** The `id` of the `begin` that opened the transaction it runs in, or null for none. */
        tx: number | null;
        sql: string;
        params: unknown[];
        rowMode: RowMode | null;
        /** Type OIDs whose values come back as PostgreSQL's text (identity parsers). */
        textTypes: number[];
      }
    /** Opens a transaction, identified from then on by this message's `id`. */
    | { type: 'begin' }
    | { type: 'commit'; tx: number }
    | { type: 'rollback'; tx: number }
    | { type: 'close' }
  );

/** A query's result as it crosses the threads: PGlite's, without a blob (never asked for). */
export type WireResults = Omit<Results<unknown>, 'blob'>;

/**
 * An error as it crosses the threads: its name, message and stack, and its own properties that
 * are plain values (a PostgreSQL error's `code`, `detail`, `constraint`, `table`, `severity`…).
 */
export interface WireError {
  name: string;
  message: string;
  stack: string | null;
  properties: Record<string, string | number | boolean | bigint | null>;
}

export type FromPgliteThread =
  | { id: number; type: 'done'; result: WireResults | null }
  | { id: number; type: 'failed'; error: WireError };

/** A message without what the host adds (its `id`, and the client's `db`). */
type Request = ToPgliteThread extends infer M
  ? M extends { id: number; db: number }
    ? Omit<M, 'id' | 'db'>
    : never
  : never;

type Done = Extract<FromPgliteThread, { type: 'done' }>;

/** What drizzle calls on a client and on a transaction alike. */
export interface RemoteQueryable {
  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
}

/** The error that came from the thread, as an Error of this thread with the same properties. */
export function rebuildError(wire: WireError): Error {
  const error = new Error(wire.message);
  Object.assign(error, wire.properties);
  error.name = wire.name;
  // The thread's stack: where PGlite raised it, as an in-process error's stack would show.
  if (wire.stack !== null) error.stack = wire.stack;
  return error;
}

/** A value no parser but the identity returns unchanged (see `wireOptions`). */
const PROBE = '\u0000pglite-remote identity probe\u0000';

/**
 * The query options as the thread can reproduce them. Parsers are functions, which cannot cross
 * the threads: drizzle passes only identity parsers (timestamps, dates, intervals and some arrays
 * kept as PostgreSQL's text), so their type OIDs are sent and the thread applies the identity to
 * those. A parser that does not give a probe value back unchanged cannot be reproduced and is
 * refused, as is every other option.
 */
function wireOptions(options: QueryOptions): { rowMode: RowMode | null; textTypes: number[] } {
  const { rowMode, parsers, ...rest } = options;
  for (const [name, value] of Object.entries(rest as Record<string, unknown>)) {
    if (value !== undefined) {
      throw new Error(`PGlite thread: the query option "${name}" is not supported`);
    }
  }
  const textTypes: number[] = [];
  for (const [oid, parser] of Object.entries(parsers ?? {})) {
    const parsed = (parser as (value: string) => unknown)(PROBE);
    if (parsed !== PROBE) {
      throw new Error(`PGlite thread: only identity parsers are supported (type ${oid})`);
    }
    textTypes.push(Number(oid));
  }
  return { rowMode: rowMode ?? null, textTypes };
}

/**
 * The thread that holds the process's PGlite databases (the service has one; tests open many). One
 * thread for all: a new thread pays for loading PGlite's code and for V8 warming it up again
 * (opening an in-memory database took about 7 s in a new thread against 4 s in a warm one).
 * Idle, it does not keep the process alive; while a call waits for it, it does.
 */
export class PgliteHost {
  private static current: PgliteHost | undefined;
  private readonly worker: Worker;
  private readonly calls = new Map<
    number,
    { resolve: (answer: Done) => void; reject: (error: Error) => void }
  >();
  private nextId = 0;
  private nextDb = 0;
  /** Why no call can be made any more (the thread ended), once that is so. */
  refusal: { message: string; cause: unknown } | undefined;

  /** The process's host, started on first use and again after one ended. */
  static shared(): PgliteHost {
    if (PgliteHost.current === undefined || PgliteHost.current.refusal !== undefined) {
      PgliteHost.current = new PgliteHost();
    }
    return PgliteHost.current;
  }

  constructor() {
    this.worker = startThread(import.meta.url, 'pglite-thread');
    this.worker.unref();
    this.worker.on('message', (answer: FromPgliteThread) => {
      this.answer(answer);
    });
    this.worker.on('error', (error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      this.ended(`PGlite thread failed: ${reason}`, error);
    });
    this.worker.on('exit', (code) => {
      this.ended(`PGlite thread exited (code ${code})`, undefined);
    });
    // An answer that cannot be read leaves a caller waiting on an id it will never see: end it all
    // rather than let calls hang.
    this.worker.on('messageerror', (error) => {
      this.ended('PGlite thread: an answer could not be read', error);
      void this.worker.terminate();
    });
  }

  /** A number for a new database of this host. */
  newDb(): number {
    return ++this.nextDb;
  }

  /** Ends the thread and every database in it (tests; the service closes its database instead). */
  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  call(db: number, request: Request): Promise<Done> {
    return this.send(db, request).answer;
  }

  /** Sends `request` now; its id (a transaction's, for `begin`) is known before its answer. */
  send(db: number, request: Request): { id: number; answer: Promise<Done> } {
    if (this.refusal !== undefined) {
      const { message, cause } = this.refusal;
      return { id: 0, answer: Promise.reject(new Error(message, { cause })) };
    }
    const id = ++this.nextId;
    const answer = new Promise<Done>((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      // A caller awaiting the database keeps the process alive, as it would with PGlite in-process
      // (whose work is all on this thread).
      if (this.calls.size === 1) this.worker.ref();
      try {
        this.worker.postMessage({ ...request, id, db });
      } catch (err) {
        // A parameter that cannot be cloned (a function, a symbol).
        this.settled(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    return { id, answer };
  }

  private answer(answer: FromPgliteThread): void {
    const call = this.calls.get(answer.id);
    if (call === undefined) return;
    this.settled(answer.id);
    if (answer.type === 'failed') call.reject(rebuildError(answer.error));
    else call.resolve(answer);
  }

  private settled(id: number): void {
    this.calls.delete(id);
    if (this.calls.size === 0) this.worker.unref();
  }

  /** The thread ended: every waiting call fails with why, and so does every later one. */
  private ended(message: string, cause: unknown): void {
    this.refusal ??= { message, cause };
    for (const call of this.calls.values()) call.reject(new Error(message, { cause }));
    this.calls.clear();
  }
}

/** PGlite on `dir` (undefined: in memory) in the process's PGlite thread, once it has opened. */
export async function openRemotePglite(
  dir: string | undefined,
  host: PgliteHost = PgliteHost.shared(),
): Promise<RemotePglite> {
  const db = host.newDb();
  await host.call(db, { type: 'open', dir: dir ?? null });
  return new RemotePglite(host, db);
}

export class RemotePglite implements RemoteQueryable {
  /** Why no call can be made any more (closed), once that is so. */
  private refusal: string | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly host: PgliteHost,
    private readonly db: number,
  ) {}

  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.statement<T>(null, sql, params, options);
  }

  /**
   * Runs `callback` in a transaction held open in the thread: committed when it resolves, rolled
   * back (and its error thrown again) when it rejects. As with PGlite in-process, statements sent
   * outside it meanwhile wait in the thread until it ends.
   */
  async transaction<T>(callback: (tx: RemoteQueryable) => Promise<T>): Promise<T> {
    // The first statement goes right behind the BEGIN (the thread runs it once inside), rather
    // than after BEGIN's answer came back: the transaction, which keeps every other statement
    // out, is not held open across one more turn of this thread's event loop.
    const { id, answer } =
      this.refusal === undefined
        ? this.host.send(this.db, { type: 'begin' })
        : { id: 0, answer: Promise.reject(new Error(this.refusal)) };
    const begun = answer.then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
    let open = true;
    const tx: RemoteQueryable = {
      query: <R>(sql: string, params?: unknown[], options?: QueryOptions) =>
        open
          ? this.statement<R>(id, sql, params, options)
          : Promise.reject(new Error('PGlite: the transaction is closed')),
    };
    let result: T;
    try {
      result = await callback(tx);
    } catch (err) {
      open = false;
      // A BEGIN that failed failed the statements behind it: its error is the cause.
      const failedToBegin = await begun;
      if (failedToBegin !== undefined) throw failedToBegin;
      // The callback's error is the one that matters; a rollback that fails too means the thread
      // is gone or PGlite is broken, which the next call reports.
      await this.call({ type: 'rollback', tx: id }).catch(() => undefined);
      throw err;
    }
    open = false;
    const failedToBegin = await begun;
    if (failedToBegin !== undefined) throw failedToBegin;
    await this.call({ type: 'commit', tx: id });
    return result;
  }

  /** Closes this database in the thread (after the calls it is running); the thread stays. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    // The thread already ended: there is nothing left to close.
    if (this.host.refusal !== undefined) return;
    const closed = this.call({ type: 'close' });
    // Calls made from now on fail at once; those already sent are answered first (PGlite closes
    // after them), or fail with the thread if it ends meanwhile.
    this.refusal = 'PGlite is closed';
    await closed;
  }

  private async statement<T>(
    tx: number | null,
    sql: string,
    params: unknown[] = [],
    options: QueryOptions = {},
  ): Promise<Results<T>> {
    const { rowMode, textTypes } = wireOptions(options);
    const { result } = await this.call({ type: 'query', tx, sql, params, rowMode, textTypes });
    if (result === null) throw new Error('PGlite thread: a query answered without a result');
    // PGlite's own `query<T>` takes the caller's word for the rows' type in the same way.
    return result as Results<T>;
  }

  private call(request: Request): Promise<Done> {
    if (this.refusal !== undefined) return Promise.reject(new Error(this.refusal));
    return this.host.call(this.db, request);
  }
}
