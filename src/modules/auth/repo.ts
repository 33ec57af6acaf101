import { and, eq, gt, isNull, max, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { refreshTokens, type RefreshTokenRow } from '../../db/schema/index.js';

export const refreshTokensRepo = {
  async insert(db: Db, row: Omit<RefreshTokenRow, 'usedAt' | 'revokedAt'>): Promise<void> {
    await db.insert(refreshTokens).values(row);
  },

  /** Marks the token used if it is still usable; returns it, or nothing when it was not. */
  async consume(db: Db, jti: string, at: Date): Promise<RefreshTokenRow | undefined> {
    const [row] = await db
      .update(refreshTokens)
      .set({ usedAt: at })
      .where(
        and(
          eq(refreshTokens.jti, jti),
          isNull(refreshTokens.usedAt),
          isNull(refreshTokens.revokedAt),
          gt(refreshTokens.expiresAt, at),
        ),
      )
      .returning();
    return row;
  },

  async find(db: Db, jti: string): Promise<RefreshTokenRow | undefined> {
    const [row] = await db.select().from(refreshTokens).where(eq(refreshTokens.jti, jti)).limit(1);
    return row;
  },

  async revokeFamily(db: Db, familyId: string, at: Date): Promise<void> {
    await db
      .update(refreshTokens)
      .set({ revokedAt: at })
      .where(and(eq(refreshTokens.familyId, familyId), isNull(refreshTokens.revokedAt)));
  },

  /** Families with a token revoked after `since`, each with its latest revocation. */
  async familiesRevokedSince(
    db: Db,
    since: Date,
  ): Promise<{ familyId: string; revokedAt: Date }[]> {
    const rows = await db
      .select({ familyId: refreshTokens.familyId, revokedAt: max(refreshTokens.revokedAt) })
      .from(refreshTokens)
      .where(gt(refreshTokens.revokedAt, since))
      .groupBy(refreshTokens.familyId);
    return rows.flatMap(({ familyId, revokedAt }) =>
      revokedAt === null ? [] : [{ familyId, revokedAt }],
    );
  },

  /** Revokes every live token of the user; returns the families they belonged to. */
  async revokeAllForUser(db: Db, userId: string, at: Date): Promise<string[]> {
    const rows = await db
      .update(refreshTokens)
      .set({ revokedAt: at })
      .where(
        and(
          eq(refreshTokens.userId, userId),
          isNull(refreshTokens.revokedAt),
          gt(refreshTokens.expiresAt, sql`${at}::timestamptz - interval '1 hour'`),
        ),
      )
      .returning({ familyId: refreshTokens.familyId });
    return [...new Set(rows.map((r) => r.familyId))];
  },
};
