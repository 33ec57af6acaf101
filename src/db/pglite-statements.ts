import {
  parse,
  protocol,
  type PGlite,
  type QueryOptions,
  type Results,
} from '@electric-sql/pglite';

const { serialize } = protocol;

/** Statements worth keeping prepared: the service's reads and writes, not its DDL. */
const REUSABLE = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * PostgreSQL's answers when a kept statement can no longer run as it was prepared: it was dropped
 * (26000), or a change of the schema changed its result's columns (0A000, "cached plan must not
 * change result type"). Prepared again, it runs.
 */
const STALE = new Set(['26000', '0A000']);

/** Statement names are unique in the process, so no two owners of one database can collide. */
let named = 0;

interface Prepared {
  name: string;
  /** The parameters' type OIDs, as PostgreSQL inferred them: how each value is written. */
  paramTypes: number[];
}

/**
 * The statements of one PGlite database, kept prepared by their SQL text (at most `max`, the least
 * recently run closed first).
 *
 * PGlite's `query` parses, describes, binds and executes a statement in six calls into its
 * WebAssembly and plans it every time. Here a statement is parsed and described once, under a
 * name; each run is then one call (bind, describe, execute, sync), and PostgreSQL's plan cache may
 * settle on a generic plan for it after five runs, as it does for any prepared statement. On a
 * 20,000-row table an indexed read went from 1.2 to 0.5 ms (a data directory on disk; measured in
 * the issue 24 session of 2026-11-28). Results are PGlite's own (`parse.parseResults`), and
 * parameters are written with its serializers, exactly as `query` does.
 *
 * Only statements reading or writing rows are kept; anything else (DDL, SET, VACUUM) runs through
 * `query` as before. Callers hold PGlite's locks as `query` would (see pglite-thread.ts).
 */
export class PreparedStatements {
  private readonly byText = new Map<string, Prepared>();
  /** Names evicted and not yet closed: closed at the head of the next call. */
  private closing: string[] = [];

  constructor(
    private readonly pg: PGlite,
    private readonly max = 256,
  ) {}

  static reusable(sql: string): boolean {
    return REUSABLE.test(sql);
  }

  get size(): number {
    return this.byText.size;
  }

  /**
   * Runs `sql` with `params`. `inTransaction`: the statement runs inside an open transaction, so
   * nothing is synced to disk after it and a stale statement is not retried (the error aborted the
   * transaction).
   */
  async run(
    sql: string,
    params: unknown[],
    options: QueryOptions,
    inTransaction: boolean,
  ): Promise<Results<unknown>> {
    try {
      return await this.once(sql, params, options, inTransaction);
    } catch (err) {
      if (!STALE.has(codeOf(err))) throw err;
      this.forget(sql);
      if (inTransaction) throw err;
      return this.once(sql, params, options, inTransaction);
    }
  }

  private async once(
    sql: string,
    params: unknown[],
    options: QueryOptions,
    inTransaction: boolean,
  ): Promise<Results<unknown>> {
    const statement = this.byText.get(sql) ?? (await this.prepare(sql, inTransaction));
    // Most recently run last: the first entry is the one to evict.
    this.byText.delete(sql);
    this.byText.set(sql, statement);
    const values = params.map((param, i) => {
      if (param === null || param === undefined) return null;
      const oid = statement.paramTypes[i] ?? 0;
      const write = options.serializers?.[oid] ?? this.pg.serializers[oid];
      return write === undefined ? textOf(param) : write(param);
    });
    const { messages } = await this.pg.execProtocol(
      concat([
        ...this.closes(inTransaction),
        serialize.bind({ statement: statement.name, values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
        serialize.sync(),
      ]),
      { syncToFs: false },
    );
    if (!inTransaction) await this.pg.syncToFs();
    const [result] = parse.parseResults(messages, this.pg.parsers, options);
    if (result === undefined) throw new Error('PGlite: a statement answered without a result');
    return result;
  }

  private async prepare(sql: string, inTransaction: boolean): Promise<Prepared> {
    const name = `mas_${String(++named)}`;
    const { messages } = await this.pg.execProtocol(
      concat([
        ...this.closes(inTransaction),
        serialize.parse({ name, text: sql }),
        serialize.describe({ type: 'S', name }),
        serialize.sync(),
      ]),
      { syncToFs: false },
    );
    const prepared = { name, paramTypes: parse.parseDescribeStatementResults(messages) };
    this.byText.set(sql, prepared);
    if (this.byText.size > this.max) {
      const [oldest] = this.byText;
      if (oldest !== undefined) this.forget(oldest[0]);
    }
    return prepared;
  }

  private forget(sql: string): void {
    const statement = this.byText.get(sql);
    if (statement === undefined) return;
    this.byText.delete(sql);
    this.closing.push(statement.name);
  }

  /**
   * Close messages for the evicted statements, outside a transaction only: in one that has failed
   * they would fail too, and the names be lost.
   */
  private closes(inTransaction: boolean): Uint8Array[] {
    if (inTransaction) return [];
    const names = this.closing;
    this.closing = [];
    return names.map((name) => serialize.close({ type: 'S', name }));
  }
}

/** A value of a type PGlite has no serializer for, written as PGlite's `query` writes it. */
function textOf(value: unknown): string {
  return (value as { toString(): string }).toString();
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
