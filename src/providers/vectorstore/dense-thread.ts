import { serveThread } from '../../platform/thread-calls.js';
import { DenseIndex } from './dense-index.js';
import type { DenseRemoval, DenseRow, FromDenseThread, ToDenseThread } from './dense-protocol.js';
import { decodeVectorInto } from './vector-codec.js';

/**
 * The embedded vector store's thread: holds the in-memory copy (DenseIndex), decodes the rows the
 * service's thread reads from the database into it, and answers searches, so that neither the
 * scan of every vector nor the decoding runs on the thread that answers HTTP and the sockets.
 */

let live: DenseIndex | undefined;
let aside: DenseIndex | undefined;

function addRows(index: DenseIndex, rows: readonly DenseRow[]): void {
  const scratch = new Float32Array(index.dimensions);
  for (const { embeddingBase64, id, documentId, jobId, category } of rows) {
    // PostgreSQL wraps base64 lines; Node's decoder skips the line breaks. A row of another size
    // (an earlier model's, same name) is left out.
    if (!decodeVectorInto(Buffer.from(embeddingBase64, 'base64'), scratch)) continue;
    index.set({ id, documentId, jobId, category }, scratch);
  }
}

const dropsRow = (removal: DenseRemoval) =>
  'jobId' in removal
    ? (e: { jobId: string }) => e.jobId === removal.jobId
    : (e: { documentId: string; jobId: string }) =>
        e.documentId === removal.documentId && e.jobId !== removal.exceptJobId;

function handle(message: ToDenseThread): FromDenseThread {
  const { id } = message;
  const done = (): FromDenseThread => ({ id, type: 'done', size: live?.size ?? 0 });
  switch (message.type) {
    case 'build-begin':
      aside = new DenseIndex(message.dimensions, {
        approximateFrom: message.approximateFrom ?? undefined,
      });
      return done();
    case 'rows': {
      const target = message.aside ? aside : live;
      if (target === undefined) throw new Error('rows for an index that is not there');
      addRows(target, message.rows);
      return done();
    }
    case 'build-commit':
      if (aside === undefined) throw new Error('commit without a build');
      live = aside;
      aside = undefined;
      return done();
    case 'drop':
      live = undefined;
      aside = undefined;
      return done();
    case 'remove':
      live?.removeWhere(dropsRow(message.removal));
      return done();
    case 'search': {
      const { query, limit, category } = message;
      const hits = live?.search(query, limit, category ?? undefined) ?? [];
      return { id, type: 'found', hits };
    }
    case 'status':
      return {
        id,
        type: 'status',
        rows: live?.size ?? 0,
        waitingRows: live?.graphWaiting ?? 0,
        ranking: live?.ranking ?? 'exact',
      };
  }
}

/**
 * Rows linked into an approximate graph per turn of this thread's loop: about 35 ms at 200,000
 * rows on two cores, the longest a search waits behind a load's linking.
 */
const GRAPH_SLICE = 256;
let linking = false;

/** Links waiting rows into the copies' graphs between messages, the live copy's first. */
function linkSoon(): void {
  if (linking || (live?.graphWaiting ?? 0) + (aside?.graphWaiting ?? 0) === 0) return;
  linking = true;
  setImmediate(function step() {
    const index = (live?.graphWaiting ?? 0) > 0 ? live : aside;
    index?.drainGraph(GRAPH_SLICE);
    linking = false;
    linkSoon();
  });
}

serveThread('the dense index', (message: ToDenseThread) => {
  const answer = handle(message);
  linkSoon();
  return answer;
});
