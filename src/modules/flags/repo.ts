import { asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { featureFlags, type FeatureFlagRow } from '../../db/schema/index.js';

export type FlagPatch = Partial<
  Pick<FeatureFlagRow, 'enabled' | 'description' | 'rolloutPercentage' | 'updatedAt'>
>;

export const flagsRepo = {
  /** Every flag, by name. */
  async list(db: Db): Promise<FeatureFlagRow[]> {
    return db.select().from(featureFlags).orderBy(asc(featureFlags.name));
  },

  async find(db: Db, name: string): Promise<FeatureFlagRow | undefined> {
    const [row] = await db.select().from(featureFlags).where(eq(featureFlags.name, name)).limit(1);
    return row;
  },

  /** The flag, its row locked until the transaction ends (a concurrent change waits). */
  async lock(tx: Db, name: string): Promise<FeatureFlagRow | undefined> {
    const [row] = await tx
      .select()
      .from(featureFlags)
      .where(eq(featureFlags.name, name))
      .for('update');
    return row;
  },

  /** The new flag, or undefined when the name is taken (the transaction stays usable). */
  async insert(tx: Db, row: FeatureFlagRow): Promise<FeatureFlagRow | undefined> {
    const [created] = await tx.insert(featureFlags).values(row).onConflictDoNothing().returning();
    return created;
  },

  async update(tx: Db, name: string, patch: FlagPatch): Promise<FeatureFlagRow | undefined> {
    const [row] = await tx
      .update(featureFlags)
      .set(patch)
      .where(eq(featureFlags.name, name))
      .returning();
    return row;
  },

  async delete(tx: Db, name: string): Promise<FeatureFlagRow | undefined> {
    const [row] = await tx.delete(featureFlags).where(eq(featureFlags.name, name)).returning();
    return row;
  },
};
