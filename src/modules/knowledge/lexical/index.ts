import { performance } from 'node:perf_hooks';
import type { Db } from '../../../db/client.js';
import type { Logger } from '../../../platform/logger.js';
import { ThreadCalls, type WithoutId } from '../../../platform/thread-calls.js';
import type { FromLexicalThread, LexicalState, ToLexicalThread } from './protocol.js';
import { lexicalRepo } from './repo.js';

export interface LexicalIndexOptions {
  /**
   * How long the index may go without checking the database for changes made elsewhere (one
   * primary-key read). Changes made through this instance are seen by its next search (`changed`).
   */
  maxStalenessMs?: number;
  /** Rows read per query while building. */
  pageSize?: number;
  /** Changes read per query while catching up. */
  changesPerPage?: number;
  log: Logger;
  /** Monotonic milliseconds (tests). */
  now?: () => number;
}

type Request = WithoutId<ToLexicalThread>;

/** The thread's heap: the index of 200,000 chunks holds about 150 MB, a build twice that. */
const THREAD_HEAP_MB = 2048;

/**
 * BM25 over the live chunks (ADR 0004): an inverted index with block-max MaxScore, held by a
 * worker thread of this instance, built from kb_chunks when first needed and kept in step with
 * every instance's changes through kb_search_changes, like the embedded vector store's copy.
 *
 * A search first catches up when the index is older than `maxStalenessMs` or this instance changed
 * the searchable set since: it applies the changes since the last one applied (a document's chunks
 * removed, a job's chunks added), or builds everything again when the changes it missed were
 * pruned or the index asks for it (a large delta or many removed chunks). Searches meanwhile use
 * the index as it is. Results are chunk ids; whether each is still live is checked by the caller
 * against the database.
 */
export class LexicalIndex {
  private readonly thread: ThreadCalls<ToLexicalThread, FromLexicalThread>;
  /** -1: nothing built yet. */
  private loadedSeq = -1;
  private checkedAt = -Infinity;
  /** This instance changed the searchable set after the last catch-up started. */
  private ownChange = false;
  private refreshing: Promise<void> | undefined;
  private lastState: LexicalState | undefined;
  private readonly maxStalenessMs: number;
  private readonly pageSize: number;
  private readonly changesPerPage: number;
  private readonly now: () => number;

  constructor(
    private readonly db: Db,
    private readonly options: LexicalIndexOptions,
  ) {
    this.maxStalenessMs = options.maxStalenessMs ?? 1000;
    this.pageSize = options.pageSize ?? 2000;
    this.changesPerPage = options.changesPerPage ?? 500;
    this.now = options.now ?? (() => performance.now());
    this.thread = new ThreadCalls({
      base: import.meta.url,
      entry: 'thread',
      label: 'lexical index',
      workerOptions: { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } },
      onEnded: (err, closing) => {
        // The index went with the thread: the next search starts another and builds it again.
        this.loadedSeq = -1;
        this.lastState = undefined;
        if (!closing) this.options.log.error({ err }, 'lexical index thread ended');
      },
    });
  }

  /** The best `k` chunk ids by BM25 for the question, best first. */
  async search(
    query: string,
    k: number,
    category: string | undefined,
    signal?: AbortSignal,
  ): Promise<string[]> {
    signal?.throwIfAborted();
    await this.refresh();
    const answer = await this.call(
      { type: 'search', query, k, category: category ?? null },
      signal,
    );
    return answer.type === 'found' ? answer.ids : [];
  }

  /**
   * The number of the last change the index holds, after catching up as a search would: results
   * computed at one number stay right until it moves (the search cache keys on it).
   */
  async version(): Promise<number> {
    await this.refresh();
    return this.loadedSeq;
  }

  /** This instance changed the searchable set: its next search catches up first. */
  changed(): void {
    this.ownChange = true;
  }

  /** Builds the index now rather than on the first search (an API instance at start). */
  async warm(): Promise<void> {
    await this.refresh();
  }

  /** What the index holds (undefined before it is built). */
  get state(): LexicalState | undefined {
    return this.lastState;
  }

  async close(): Promise<void> {
    await this.refreshing?.catch(() => undefined);
    await this.thread.close();
  }

  private async refresh(): Promise<void> {
    const built = this.loadedSeq >= 0;
    if (built && !this.ownChange && this.now() - this.checkedAt < this.maxStalenessMs) return;
    // Another search is catching up: answer from the index as it is, unless this instance's own
    // change must be in it.
    if (built && !this.ownChange && this.refreshing !== undefined) return;
    await this.refreshing?.catch(() => undefined);
    this.refreshing ??= this.catchUp().finally(() => {
      this.refreshing = undefined;
    });
    try {
      await this.refreshing;
    } catch (err) {
      // An index built before answers, a little stale, while the database is away.
      if (this.loadedSeq < 0) throw err;
      this.options.log.warn({ err }, 'lexical index not caught up; searching the one it has');
    }
  }

  private async catchUp(): Promise<void> {
    const startedAt = this.now();
    this.ownChange = false;
    const { seq, oldest } = await lexicalRepo.state(this.db);
    const missed = seq > this.loadedSeq && (oldest === null || oldest > this.loadedSeq + 1);
    if (this.loadedSeq < 0 || seq < this.loadedSeq || missed) {
      await this.build(seq);
    } else {
      while (this.loadedSeq < seq) {
        const changes = await lexicalRepo.changes(
          this.db,
          this.loadedSeq,
          seq,
          this.changesPerPage,
        );
        if (changes.length === 0) break;
        for (const change of changes) {
          await this.call({
            type: 'remove',
            documentId: change.documentId,
            keepJobId: change.keepJobId,
          });
          if (change.addJobId !== null) await this.load('add', change.addJobId);
          this.loadedSeq = change.seq;
        }
      }
      this.loadedSeq = seq;
      if (this.lastState?.needsRebuild === true) await this.build(seq);
    }
    this.checkedAt = startedAt;
  }

  /** Builds the index again from every live chunk; `seq` was read before the first row. */
  private async build(seq: number): Promise<void> {
    const started = performance.now();
    await this.call({ type: 'build-begin' });
    await this.load('build-rows', null);
    await this.call({ type: 'build-commit' });
    this.loadedSeq = seq;
    const chunks = this.lastState?.chunks ?? 0;
    const ms = Math.round(performance.now() - started);
    this.options.log.info({ chunks, ms }, 'lexical index built');
  }

  /** Sends the live chunks (all, or one job's) to the thread, a page at a time. */
  private async load(type: 'build-rows' | 'add', jobId: string | null): Promise<void> {
    for (let after: string | null = null; ;) {
      const rows = await lexicalRepo.livePage(this.db, jobId, after, this.pageSize);
      if (rows.length > 0) await this.call({ type, rows });
      const last = rows.at(-1);
      if (last === undefined || rows.length < this.pageSize) return;
      after = last.id;
    }
  }

  private async call(request: Request, signal?: AbortSignal) {
    const answer = await this.thread.call(request, signal);
    if (answer.type === 'done') this.lastState = answer.state;
    return answer;
  }
}
