import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  customType,
  index,
  pgTable,
  smallint,
  text,
  uuid,
} from 'drizzle-orm/pg-core';
import { kbChunks } from './knowledge.js';

/** Both drivers hand bytea over as a Uint8Array (node-postgres as a Buffer). */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
});

/**
 * Dense vectors of the embedded vector store, one per chunk. Every instance keeps an in-memory
 * copy and catches up on others' writes through `seq` (see kb_vector_state).
 */
export const kbVectors = pgTable(
  'kb_vectors',
  {
    chunkId: uuid('chunk_id')
      .primaryKey()
      .references(() => kbChunks.id, { onDelete: 'cascade' }),
    documentId: uuid('document_id').notNull(),
    docKey: text('doc_key').notNull(),
    category: text('category').notNull(),
    jobId: uuid('job_id').notNull(),
    /** Vectors of one model are never compared with another's. */
    model: text('model').notNull(),
    /** Float32 little-endian, `dimensions * 4` bytes. */
    embedding: bytea('embedding').notNull(),
    /** kb_vector_state.seq of the write that last stored this row. */
    seq: bigint('seq', { mode: 'number' }).notNull(),
  },
  (t) => [
    // Loading walks one model's rows in (seq, chunk_id) order, from the last position seen.
    index('kb_vectors_model_seq_idx').on(t.model, t.seq, t.chunkId),
    index('kb_vectors_document_idx').on(t.documentId),
    index('kb_vectors_job_idx').on(t.jobId),
  ],
);

/**
 * The one change counter row (id 1) of kb_vectors. Writers update it in their transaction, which
 * also serialises them: `seq` grows with every upsert (rows carry it), `epoch` with every delete
 * that removed rows. A reader that sees `seq = n` can load every row with `seq <= n`; a new
 * `epoch` means rows it holds may be gone.
 */
export const kbVectorState = pgTable(
  'kb_vector_state',
  {
    id: smallint('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).notNull().default(0),
    epoch: bigint('epoch', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('kb_vector_state_single_row', sql`${t.id} = 1`)],
);
