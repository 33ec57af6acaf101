import type { Db } from '../../src/db/client.js';
import { auditLogs } from '../../src/db/schema/index.js';
import { GENESIS_HASH, entryHash, type HashedFields } from '../../src/modules/audit/hash.js';
import { auditRepo } from '../../src/modules/audit/repo.js';

/** An entry's own fields; the chain's (`seq`, `prevHash`) are filled in by `appendChain`. */
export type EntryFields = Omit<HashedFields, 'seq' | 'prevHash'>;

/**
 * `count` valid chained entries after the chain's current end, each from `entry(i)`, hashed as
 * the service hashes and inserted 1,000 a statement (tests and benchmarks that need many).
 */
export async function appendChain(
  db: Db,
  count: number,
  entry: (i: number) => EntryFields,
): Promise<void> {
  let last = await auditRepo.last(db);
  let batch: (HashedFields & { hash: string })[] = [];
  for (let i = 0; i < count; i += 1) {
    const fields: HashedFields = {
      ...entry(i),
      seq: (last?.seq ?? 0) + 1,
      prevHash: last?.hash ?? GENESIS_HASH,
    };
    const row = { ...fields, hash: entryHash(fields) };
    batch.push(row);
    last = row;
    if (batch.length === 1000 || i === count - 1) {
      await db.insert(auditLogs).values(batch);
      batch = [];
    }
  }
}
