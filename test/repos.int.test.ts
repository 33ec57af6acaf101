import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/client.js';
import { isUniqueViolation } from '../src/db/errors.js';
import { auditLogs, refreshTokens, userLocks } from '../src/db/schema/index.js';
import { auditRepo } from '../src/modules/audit/repo.js';
import { AuditService, SYSTEM_CONTEXT } from '../src/modules/audit/service.js';
import { refreshTokensRepo } from '../src/modules/auth/repo.js';
import { usersRepo } from '../src/modules/users/repo.js';
import { openTestDatabase, type Backend } from './helpers/db.js';

const newUser = (email = `${randomUUID()}@example.test`) => ({
  id: randomUUID(),
  email,
  fullName: 'Repo Test',
  passwordHash: 'not-a-real-hash',
  adminRole: 'user' as const,
});

describe.each<Backend>(['postgres', 'pglite'])('repositories on %s', (backend) => {
  let opened: { database: Database; dispose(): Promise<void> };
  beforeAll(async () => {
    opened = await openTestDatabase(backend);
  });
  afterAll(() => opened.dispose());
  const db = () => opened.database.db;

  describe('users', () => {
    it('finds by email case-insensitively and refuses a duplicate in any case', async () => {
      const user = await usersRepo.insert(db(), newUser('Mixed.Case@Example.test'));
      expect((await usersRepo.findByEmail(db(), 'mixed.case@EXAMPLE.test'))?.id).toBe(user.id);
      const dup = await usersRepo
        .insert(db(), newUser('MIXED.CASE@example.test'))
        .catch((e: unknown) => e);
      expect(isUniqueViolation(dup)).toBe(true);
    });

    it('pages newest first and counts', async () => {
      const before = await usersRepo.count(db());
      const a = await usersRepo.insert(db(), newUser());
      const b = await usersRepo.insert(db(), newUser());
      expect(await usersRepo.count(db())).toBe(before + 2);
      const page = await usersRepo.page(db(), 0, 2);
      // Same created_at within a transaction-free burst is possible: ties fall back to id order.
      const expected = [a, b]
        .sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : -1))
        .map((u) => u.id);
      expect(page.map((u) => u.id)).toEqual(expected);
    });

    it('records locks and deletes them, and the tokens, with the user', async () => {
      const u = await usersRepo.insert(db(), newUser());
      const now = new Date();
      const until = new Date(now.getTime() + 900_000);
      await usersRepo.setLockedUntil(db(), u.id, until);
      await usersRepo.insertLock(db(), {
        id: randomUUID(),
        userId: u.id,
        reason: 'test',
        failedAttempts: 5,
        ip: '127.0.0.1',
        lockedAt: now,
        lockedUntil: until,
      });
      expect((await usersRepo.findById(db(), u.id))?.lockedUntil?.getTime()).toBe(until.getTime());
      expect(await usersRepo.locks(db(), u.id)).toHaveLength(1);
      await refreshTokensRepo.insert(db(), {
        jti: randomUUID(),
        userId: u.id,
        familyId: randomUUID(),
        issuedAt: now,
        expiresAt: until,
      });
      expect(await usersRepo.delete(db(), u.id)).toBe(true);
      expect(await usersRepo.delete(db(), u.id)).toBe(false);
      expect(
        await db()
          .select()
          .from(userLocks)
          .where(sql`${userLocks.userId} = ${u.id}`),
      ).toHaveLength(0);
      expect(
        await db()
          .select()
          .from(refreshTokens)
          .where(sql`${refreshTokens.userId} = ${u.id}`),
      ).toHaveLength(0);
    });
  });

  describe('refresh tokens', () => {
    it('consumes a token once, never after expiry or revocation, and revokes by family and user', async () => {
      const u = await usersRepo.insert(db(), newUser());
      const now = new Date();
      const later = new Date(now.getTime() + 3_600_000);
      const family = randomUUID();
      const [t1, t2, t3] = [randomUUID(), randomUUID(), randomUUID()];
      await refreshTokensRepo.insert(db(), {
        jti: t1,
        userId: u.id,
        familyId: family,
        issuedAt: now,
        expiresAt: later,
      });
      await refreshTokensRepo.insert(db(), {
        jti: t2,
        userId: u.id,
        familyId: family,
        issuedAt: now,
        expiresAt: later,
      });
      await refreshTokensRepo.insert(db(), {
        jti: t3,
        userId: u.id,
        familyId: randomUUID(),
        issuedAt: now,
        expiresAt: later,
      });
      expect((await refreshTokensRepo.consume(db(), t1, now))?.familyId).toBe(family);
      expect(await refreshTokensRepo.consume(db(), t1, now)).toBeUndefined();
      expect(
        await refreshTokensRepo.consume(db(), t2, new Date(later.getTime() + 1)),
      ).toBeUndefined();
      await refreshTokensRepo.revokeFamily(db(), family, now);
      expect(await refreshTokensRepo.consume(db(), t2, now)).toBeUndefined();
      const families = await refreshTokensRepo.revokeAllForUser(db(), u.id, now);
      expect(families).toHaveLength(1);
      expect(await refreshTokensRepo.consume(db(), t3, now)).toBeUndefined();
    });
  });

  describe('audit chain', () => {
    const audit = () => new AuditService(db());

    it('appends a contiguous chain under parallel writers and verifies it', async () => {
      await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          audit().record(
            { action: 'test.parallel', success: true, details: { i, nested: { b: 1, a: [1, 2] } } },
            SYSTEM_CONTEXT,
          ),
        ),
      );
      const seqs = (await db().select({ seq: auditLogs.seq }).from(auditLogs))
        .map((r) => r.seq)
        .sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
      expect(await audit().verify(7)).toEqual({
        valid: true,
        checked: seqs.length,
        broken_at: null,
        tombstones: 0,
        checkpoints: 0,
        latest_checkpoint: null,
      });
    });

    it('refuses updates, deletes and truncation, but allows redacting an email to its digest', async () => {
      const u = await usersRepo.insert(db(), newUser('Redact.Me@example.test'));
      await audit().record(
        { action: 'test.redact', success: true, actorId: u.id, actorEmail: u.email },
        SYSTEM_CONTEXT,
      );
      await expect(
        db().execute(sql`update audit_logs set action = 'x' where action = 'test.redact'`),
      ).rejects.toThrow();
      await expect(
        db().execute(
          sql`update audit_logs set actor_email = 'someone@else' where action = 'test.redact'`,
        ),
      ).rejects.toThrow();
      await expect(db().execute(sql`delete from audit_logs`)).rejects.toThrow();
      await expect(db().execute(sql`truncate audit_logs`)).rejects.toThrow();
      await db().transaction((tx) => auditRepo.redactEmail(tx, u.id, u.email));
      const [row] = await db()
        .select()
        .from(auditLogs)
        .where(sql`${auditLogs.action} = 'test.redact'`);
      expect(row?.actorEmail).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect((await audit().verify()).valid).toBe(true);
    });

    it('detects an entry altered behind the trigger', async () => {
      await audit().record(
        { action: 'test.tamper', success: true, details: { amount: 1 } },
        SYSTEM_CONTEXT,
      );
      await db().execute(sql`alter table audit_logs disable trigger audit_logs_append_only`);
      try {
        await db().execute(
          sql`update audit_logs set details = '{"amount": 2}' where action = 'test.tamper'`,
        );
        const result = await audit().verify();
        expect(result.valid).toBe(false);
        expect(result.broken_at?.reason).toBe('entry hash does not match its content');
        await db().execute(
          sql`update audit_logs set details = '{"amount": 1}' where action = 'test.tamper'`,
        );
        expect((await audit().verify()).valid).toBe(true);
        await db().execute(sql`delete from audit_logs where seq = 2`);
        expect((await audit().verify()).broken_at?.reason).toBe('sequence gap');
      } finally {
        await db().execute(sql`alter table audit_logs enable trigger audit_logs_append_only`);
      }
    });
  });
});
