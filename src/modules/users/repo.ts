import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { userLocks, users, type UserLockRow, type UserRow } from '../../db/schema/index.js';

export type NewUser = Pick<UserRow, 'id' | 'email' | 'fullName' | 'passwordHash' | 'adminRole'>;
export type UserPatch = Partial<
  Pick<UserRow, 'email' | 'fullName' | 'passwordHash' | 'isActive' | 'adminRole'>
>;

export const usersRepo = {
  async insert(db: Db, user: NewUser): Promise<UserRow> {
    const [row] = await db.insert(users).values(user).returning();
    if (row === undefined) throw new Error('insert returned no row');
    return row;
  },

  async findById(db: Db, id: string): Promise<UserRow | undefined> {
    const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
    return row;
  },

  async findByEmail(db: Db, email: string): Promise<UserRow | undefined> {
    const [row] = await db
      .select()
      .from(users)
      .where(sql`lower(${users.email}) = lower(${email})`)
      .limit(1);
    return row;
  },

  async page(db: Db, offset: number, limit: number): Promise<UserRow[]> {
    return db
      .select()
      .from(users)
      .orderBy(desc(users.createdAt), desc(users.id))
      .offset(offset)
      .limit(limit);
  },

  /** Locks the rows of every active administrator until the transaction ends; returns their ids. */
  async lockActiveAdmins(tx: Db): Promise<string[]> {
    const rows = await tx
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.adminRole, 'admin'), eq(users.isActive, true)))
      .orderBy(users.id)
      .for('update');
    return rows.map((r) => r.id);
  },

  /**
   * Locks the user's row until the transaction ends, before any token is touched, by every refresh
   * and every revocation of the user's tokens: a refresh either commits before a revocation starts
   * (which then sees the token it issued) or waits for the revocation and sees its result. One
   * exclusive mode, not a shared one for refreshes: a queue of shared lockers can keep a waiting
   * revocation out for seconds, while one user's refreshes rarely overlap.
   */
  async lockForTokens(tx: Db, id: string): Promise<Pick<UserRow, 'id' | 'isActive'> | undefined> {
    const [row] = await tx
      .select({ id: users.id, isActive: users.isActive })
      .from(users)
      .where(eq(users.id, id))
      .for('no key update');
    return row;
  },

  async count(db: Db): Promise<number> {
    const [row] = await db.select({ n: count() }).from(users);
    return row?.n ?? 0;
  },

  async update(db: Db, id: string, patch: UserPatch): Promise<UserRow | undefined> {
    const [row] = await db
      .update(users)
      .set({ ...patch, updatedAt: sql`now()` })
      .where(eq(users.id, id))
      .returning();
    return row;
  },

  async delete(db: Db, id: string): Promise<boolean> {
    const rows = await db.delete(users).where(eq(users.id, id)).returning({ id: users.id });
    return rows.length > 0;
  },

  /**
   * Records a login checked against `passwordHash`, unless the account changed since: its password
   * (a password change committed meanwhile) or its activation. False when it did. Locks the row,
   * like every change to the user's sessions (see lockForTokens).
   */
  async recordLogin(db: Db, id: string, passwordHash: string, at: Date): Promise<boolean> {
    const rows = await db
      .update(users)
      .set({ lastLogin: at, failedLoginCount: 0, failedLoginWindowStart: null, lockedUntil: null })
      .where(and(eq(users.id, id), eq(users.passwordHash, passwordHash), eq(users.isActive, true)))
      .returning({ id: users.id });
    return rows.length > 0;
  },

  async setLockedUntil(db: Db, id: string, until: Date): Promise<void> {
    await db
      .update(users)
      .set({ lockedUntil: until, failedLoginCount: 0, failedLoginWindowStart: null })
      .where(eq(users.id, id));
  },

  async insertLock(db: Db, lock: UserLockRow): Promise<void> {
    await db.insert(userLocks).values(lock);
  },

  async locks(db: Db, userId: string): Promise<UserLockRow[]> {
    return db
      .select()
      .from(userLocks)
      .where(eq(userLocks.userId, userId))
      .orderBy(desc(userLocks.lockedAt));
  },
};
