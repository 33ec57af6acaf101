import { getHeapStatistics } from 'node:v8';
import { analyse, queryTerms, truncationCandidates } from './analysis.js';
import { serveThread } from '../../../platform/thread-calls.js';
import type { FromLexicalThread, LexicalState, ToLexicalThread } from './protocol.js';
import type { LexicalRow } from './repo.js';
import { LexicalSegments, type LexicalChunk } from './segments.js';

/**
 * The lexical index's thread: holds the index, builds it from the rows the service's thread reads
 * from the database, applies changes, and answers searches (a question is analysed here too), so
 * that none of it runs on the thread that answers HTTP and the sockets.
 */

let index = new LexicalSegments([]);
let building: LexicalChunk[] | null = null;
/** One string per distinct term: chunks' terms arrays share them. */
const words = new Map<string, string>();

function chunkOf(row: LexicalRow): LexicalChunk {
  const terms = row.terms === null ? analyse(row.searchText ?? '') : row.terms.split(' ');
  for (let i = 0; i < terms.length; i += 1) {
    const term = terms[i] ?? '';
    const held = words.get(term);
    if (held === undefined) words.set(term, term);
    else terms[i] = held;
  }
  return {
    id: row.id,
    documentId: row.documentId,
    jobId: row.jobId,
    category: row.category,
    terms: terms.filter((t) => t !== ''),
  };
}

/** A question's terms, with the index's longer terms for the words it holds only truncated. */
function termsOf(question: string): string[] {
  const terms = queryTerms(question);
  for (const { word, stem } of truncationCandidates(question)) {
    if (index.df(stem) === 0) terms.push(...index.truncations(word));
  }
  return [...new Set(terms)];
}

function state(): LexicalState {
  return {
    ...index.stats(),
    needsRebuild: index.needsRebuild(),
    heapBytes: getHeapStatistics().used_heap_size,
  };
}

function handle(message: ToLexicalThread): FromLexicalThread {
  const { id } = message;
  switch (message.type) {
    case 'build-begin':
      building = [];
      return { id, type: 'done', state: state() };
    case 'build-rows':
      if (building === null) throw new Error('rows without a build');
      for (const row of message.rows) building.push(chunkOf(row));
      return { id, type: 'done', state: state() };
    case 'build-commit':
      if (building === null) throw new Error('commit without a build');
      index = new LexicalSegments(building);
      building = null;
      // Terms of removed chunks go with the old index; the next build starts a new table.
      if (words.size > 4 * index.stats().terms + 10_000) words.clear();
      return { id, type: 'done', state: state() };
    case 'add':
      index.add(message.rows.map(chunkOf));
      return { id, type: 'done', state: state() };
    case 'remove':
      index.removeDocument(message.documentId, message.keepJobId);
      return { id, type: 'done', state: state() };
    case 'search':
      return {
        id,
        type: 'found',
        ids: index.search(termsOf(message.query), message.k, message.category ?? undefined),
      };
    case 'stats':
      return { id, type: 'done', state: state() };
  }
}

serveThread('the lexical index', handle);
