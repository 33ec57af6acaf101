import { PGlite, type QueryOptions, type Results, type Transaction } from '@electric-sql/pglite';
import { parentPort } from 'node:worker_threads';
import type { FromPgliteThread, ToPgliteThread, WireError, WireResults } from './pglite-remote.js';
import { PreparedStatements } from './pglite-statements.js';

/**
 * PGlite's thread: holds the process's embedded databases (the service has one) and runs every
 * statement the service's thread sends (pglite-remote.ts), so that PostgreSQL's work, synchronous
 * WebAssembly, never holds the thread that answers HTTP and the sockets. Calls are handed to their
 * database in the order they arrive: PGlite's own locks then order them as they would in-process
 * (a statement outside a transaction waits for the open one to end).
 */

if (parentPort === null) throw new Error('PGlite runs here only as a worker thread');
const port = parentPort;
/** The open databases, by the number the service's thread gave each, with their kept statements. */
const databases = new Map<number, { pg: PGlite; statements: PreparedStatements }>();

interface OpenTransaction {
  tx: Transaction;
  /** Ends the transaction: true commits, false rolls back. */
  decide(commit: boolean): void;
  /** Settles once PGlite has committed or rolled back. */
  outcome: Promise<void>;
}

/** Thrown inside PGlite's transaction callback to have it roll back; not an error to report. */
const ROLLED_BACK = new Error('rolled back');

const transactions = new Map<number, OpenTransaction>();

const asText = (value: string): string => value;

function wireError(error: unknown): WireError {
  if (!(error instanceof Error)) {
    return { name: 'Error', message: String(error), stack: null, properties: {} };
  }
  // Plain values only: a PostgreSQL error's fields are strings. PGlite also attaches the query's
  // `params` and `queryOptions` (functions among them), which stay here.
  const properties: WireError['properties'] = {};
  for (const [key, value] of Object.entries(error as unknown as Record<string, unknown>)) {
    if (key === 'name' || key === 'message' || key === 'stack') continue;
    if (
      value === null ||
      typeof value === 'string' ||
      typeof value === 'number' ||
      typeof value === 'boolean' ||
      typeof value === 'bigint'
    ) {
      properties[key] = value;
    }
  }
  return { name: error.name, message: error.message, stack: error.stack ?? null, properties };
}

function wireResults(result: Results<unknown>): WireResults {
  const { blob, ...rest } = result;
  // Only a `COPY … TO '/dev/blob'` writes one, and the client refuses the option that asks for it.
  if (blob !== undefined) throw new Error('PGlite thread: a query wrote a blob');
  return rest;
}

/**
 * Transactions whose BEGIN is under way, by id: their first statements are sent right behind the
 * BEGIN, without waiting for its answer, and wait here for it.
 */
const beginning = new Map<number, Promise<void>>();

/** The transaction `id`, once its BEGIN (if still under way) is done. */
async function begun(id: number): Promise<OpenTransaction> {
  await beginning.get(id)?.catch(() => undefined);
  return openTransaction(id);
}

function openTransaction(id: number): OpenTransaction {
  const open = transactions.get(id);
  if (open === undefined) throw new Error(`PGlite thread: transaction ${id} is not open`);
  return open;
}

/**
 * Opens a transaction and holds it until told how to end it: PGlite's `transaction` runs its
 * callback between BEGIN and COMMIT (ROLLBACK when it throws) and keeps other statements out
 * meanwhile. Resolves once inside.
 */
function begin(pg: PGlite, id: number): Promise<void> {
  let decide: (commit: boolean) => void = () => undefined;
  const decision = new Promise<boolean>((resolve) => {
    decide = resolve;
  });
  let entered: (tx: Transaction) => void = () => undefined;
  const inside = new Promise<Transaction>((resolve) => {
    entered = resolve;
  });
  const outcome = pg.transaction(async (tx) => {
    entered(tx);
    if (!(await decision)) throw ROLLED_BACK;
  });
  return new Promise<void>((resolve, reject) => {
    // BEGIN failing settles `outcome` without the callback having run.
    outcome.then(() => {
      reject(new Error('PGlite thread: the transaction ended before it began'));
    }, reject);
    void inside.then((tx) => {
      transactions.set(id, { tx, decide, outcome });
      resolve();
    });
  });
}

function database(db: number): { pg: PGlite; statements: PreparedStatements } {
  const open = databases.get(db);
  if (open === undefined) throw new Error(`PGlite thread: database ${db} is not open`);
  return open;
}

/**
 * One statement, in transaction `tx` (null: none). Reads and writes of rows run as kept prepared
 * statements (pglite-statements.ts) under the locks PGlite's `query` takes: outside a transaction
 * its transaction lock (so it waits for an open one to end) and its query lock; inside, the query
 * lock only (the transaction holds the other). Anything else runs through PGlite's `query`.
 */
async function statement(
  db: number,
  tx: number | null,
  sql: string,
  params: unknown[],
  options: QueryOptions,
): Promise<Results<unknown>> {
  const { pg, statements } = database(db);
  if (tx !== null) {
    const open = await begun(tx);
    if (!PreparedStatements.reusable(sql)) return open.tx.query<unknown>(sql, params, options);
    return pg.runExclusive(() => statements.run(sql, params, options, true));
  }
  if (!PreparedStatements.reusable(sql)) return pg.query<unknown>(sql, params, options);
  return pg._runExclusiveTransaction(() =>
    pg.runExclusive(() => statements.run(sql, params, options, false)),
  );
}

async function handle(message: ToPgliteThread): Promise<WireResults | null> {
  switch (message.type) {
    case 'open': {
      if (databases.has(message.db))
        throw new Error(`PGlite thread: database ${message.db} is open`);
      const pg = message.dir === null ? new PGlite() : new PGlite(message.dir);
      await pg.waitReady;
      databases.set(message.db, { pg, statements: new PreparedStatements(pg) });
      return null;
    }
    case 'query': {
      const parsers = Object.fromEntries(message.textTypes.map((oid) => [oid, asText]));
      const options =
        message.rowMode === null ? { parsers } : { parsers, rowMode: message.rowMode };
      return wireResults(
        await statement(message.db, message.tx, message.sql, message.params, options),
      );
    }
    case 'begin': {
      const started = begin(database(message.db).pg, message.id);
      beginning.set(message.id, started);
      try {
        await started;
      } finally {
        beginning.delete(message.id);
      }
      return null;
    }
    case 'commit': {
      const open = await begun(message.tx);
      transactions.delete(message.tx);
      open.decide(true);
      await open.outcome;
      return null;
    }
    case 'rollback': {
      const open = await begun(message.tx);
      transactions.delete(message.tx);
      open.decide(false);
      await open.outcome.catch((err: unknown) => {
        if (err !== ROLLED_BACK) throw err;
      });
      return null;
    }
    case 'close': {
      const { pg } = database(message.db);
      databases.delete(message.db);
      await pg.close();
      return null;
    }
  }
}

function reply(answer: FromPgliteThread): void {
  try {
    port.postMessage(answer);
  } catch (err) {
    // A value in the rows that cannot be cloned: the caller gets an error rather than no answer.
    port.postMessage({ id: answer.id, type: 'failed', error: wireError(err) });
  }
}

port.on('message', (message: ToPgliteThread) => {
  handle(message).then(
    (result) => {
      reply({ id: message.id, type: 'done', result });
    },
    (err: unknown) => {
      reply({ id: message.id, type: 'failed', error: wireError(err) });
    },
  );
});
