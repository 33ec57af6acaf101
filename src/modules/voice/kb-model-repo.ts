import { and, asc, count, eq, gt, isNull, max, sum } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { kbChunks, kbDocuments } from '../../db/schema/index.js';

/** What the recognizer's knowledge-base model is built from: the searchable chunks. */
export const kbModelRepo = {
  /** Changes whenever a document is indexed, replaced or deleted. */
  async fingerprint(db: Db): Promise<string> {
    const [row] = await db
      .select({ n: count(), chunks: sum(kbDocuments.chunkCount), at: max(kbDocuments.updatedAt) })
      .from(kbDocuments)
      .where(and(eq(kbDocuments.status, 'indexed'), isNull(kbDocuments.supersededBy)));
    return `${String(row?.n ?? 0)}:${String(row?.chunks ?? 0)}:${row?.at?.toISOString() ?? '-'}`;
  },

  /** A page of current chunk texts after chunk `afterId`, in id order. */
  async texts(db: Db, afterId: string | null, limit: number) {
    return db
      .select({ id: kbChunks.id, text: kbChunks.text })
      .from(kbChunks)
      .innerJoin(kbDocuments, eq(kbDocuments.id, kbChunks.documentId))
      .where(
        and(
          eq(kbDocuments.status, 'indexed'),
          isNull(kbDocuments.supersededBy),
          eq(kbChunks.superseded, false),
          afterId === null ? undefined : gt(kbChunks.id, afterId),
        ),
      )
      .orderBy(asc(kbChunks.id))
      .limit(limit);
  },
};
