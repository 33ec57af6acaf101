import type { LexicalRow } from './repo.js';
import type { LexicalStats } from './segments.js';

/** From the service's thread to the lexical index's thread. Every message has an answer. */
export type ToLexicalThread = { id: number } & (
  | { type: 'build-begin' }
  | { type: 'build-rows'; rows: LexicalRow[] }
  | { type: 'build-commit' }
  | { type: 'add'; rows: LexicalRow[] }
  | { type: 'remove'; documentId: string; keepJobId: string | null }
  | { type: 'search'; query: string; k: number; category: string | null }
  | { type: 'stats' }
);

/** What the index holds after a change, and whether it asks to be built again. */
export interface LexicalState extends LexicalStats {
  needsRebuild: boolean;
  /** The thread's JavaScript heap in use (the index, its ids and dictionary, garbage not yet collected). */
  heapBytes: number;
}

export type FromLexicalThread =
  | { id: number; type: 'done'; state: LexicalState }
  | { id: number; type: 'found'; ids: string[] }
  | { id: number; type: 'failed'; message: string };
