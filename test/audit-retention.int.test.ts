import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq, sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { queryRows } from '../src/db/client.js';
import { auditCheckpoints, auditLogs, auditTombstones } from '../src/db/schema/index.js';
import { CheckpointSigner } from '../src/modules/audit/checkpoint.js';
import { familyOf } from '../src/modules/audit/families.js';
import { PurgeScheduler } from '../src/modules/audit/purge-scheduler.js';
import { auditRepo } from '../src/modules/audit/repo.js';
import { AuditRetention } from '../src/modules/audit/retention.js';
import { retentionRepo } from '../src/modules/audit/retention-repo.js';
import type { ChainVerification } from '../src/modules/audit/service.js';
import { TEST_JWT_SECRET, createTestApp, type TestApp } from './helpers/app.js';
import { appendChain } from './helpers/audit-chain.js';
import { parseCsv } from './helpers/csv.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { runTsx } from './helpers/process.js';

const LIST = '/api/admin/panel/audit-logs';
const DAY = 86_400_000;
const DAYS = { ehr: 2190, session: 365, error: 90 };

/** One old entry: action, outcome, age in days, and whether the default retention expires it. */
interface Old {
  action: string;
  success: boolean;
  age: number;
  expired: boolean;
}

/** Each family just inside and just past its retention, plus entries that never expire. */
const OLD: Old[] = [
  { action: 'ehr.read', success: true, age: 2191, expired: true },
  { action: 'degradation.activated', success: true, age: 2200, expired: true },
  { action: 'ehr.write', success: true, age: 2189, expired: false },
  { action: 'ehr.write_failed', success: false, age: 400, expired: false },
  { action: 'auth.login', success: true, age: 366, expired: true },
  { action: 'auth.login_failed', success: false, age: 400, expired: true },
  { action: 'auth.logout', success: true, age: 364, expired: false },
  { action: 'user.password_changed', success: false, age: 91, expired: true },
  { action: 'kb.job.failed', success: true, age: 120, expired: true },
  { action: 'user.promoted', success: false, age: 89, expired: false },
  { action: 'auth.register', success: true, age: 3000, expired: false },
  { action: 'user.promoted', success: true, age: 5000, expired: false },
  { action: 'flag.updated', success: true, age: 4000, expired: false },
];
const EXPECTED = { ehr: 2, session: 2, error: 2 };
const LOGOUT: Old = { action: 'auth.logout', success: true, age: 700, expired: true };
const RECENT: Old = { action: 'flag.updated', success: true, age: 0, expired: false };

/** The OLD entries appended to the chain, with personal data in every field that can hold it. */
async function appendOld(t: TestApp, entries: Old[] = OLD): Promise<string[]> {
  const ids = entries.map(() => randomUUID());
  const now = Date.now();
  await appendChain(t.deps.database.db, entries.length, (i) => {
    const e = entries[i]!;
    return {
      id: ids[i] as string,
      timestamp: new Date(now - e.age * DAY),
      action: e.action,
      actorId: randomUUID(),
      actorEmail: `patient.doctor${String(i)}@example.test`,
      resourceType: 'patient',
      resourceId: `patient-${String(i)}`,
      success: e.success,
      ip: '10.9.8.7',
      userAgent: 'retention-test',
      requestId: `req-${String(i)}`,
      details: { note: 'personal' },
    };
  });
  return ids;
}

/** Changes rows behind the guards' back, as someone with the tables might, then restores them. */
async function tamper(t: TestApp, table: string, change: SQL): Promise<void> {
  await t.deps.database.db.transaction(async (tx) => {
    await tx.execute(sql.raw(`alter table ${table} disable trigger user`));
    await tx.execute(change);
    await tx.execute(sql.raw(`alter table ${table} enable trigger user`));
  });
}

/** The database's own message for a statement it refused (the driver wraps it in its cause). */
async function refusal(statement: Promise<unknown>): Promise<string> {
  try {
    await statement;
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? cause.message : String(err);
  }
  throw new Error('the statement was accepted');
}

const count = async (t: TestApp, table: string) => {
  const [row] = await queryRows<{ n: number }>(
    t.deps.database.db,
    sql.raw(`select count(*)::int as n from ${table}`),
  );
  return row?.n ?? 0;
};

describe.each(['postgres', 'pglite'] as const)('audit retention (%s)', (backend) => {
  let t: TestApp;
  let admin: TestUser;
  let ids: string[];
  beforeAll(async () => {
    t = await createTestApp({ backend });
    admin = await createUser(t.app, t.deps, { admin: true });
    ids = await appendOld(t);
  }, 60_000);
  afterAll(() => t.close());

  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: bearer(admin.access) });
  const verify = async () => dataOf<ChainVerification>(await get(`${LIST}/verify`));
  const db = () => t.deps.database.db;
  const expiredIds = () => ids.filter((_, i) => OLD[i]?.expired === true);

  it('applies the same families in SQL (the purge) as in code', async () => {
    const actions = [...new Set([...OLD.map((e) => e.action), 'auth.refresh', 'llm.error'])];
    for (const action of actions) {
      for (const success of [true, false]) {
        const [row] = await queryRows<{ family: string }>(
          db(),
          sql`select audit_family(${action}, ${success}) as family`,
        );
        expect({ action, success, family: row?.family }).toEqual({
          action,
          success,
          family: familyOf(action, success),
        });
      }
    }
  });

  it('refuses to purge a chain that does not verify, and removes nothing', async () => {
    const [victim] = ids;
    await tamper(t, 'audit_logs', sql`update audit_logs set ip = '1.1.1.1' where id = ${victim}`);
    const result = await t.deps.auditRetention.purge();
    expect(result).toMatchObject({ status: 'refused', checkpoints: [] });
    expect(result.broken_at).toMatchObject({ id: victim });
    expect(await count(t, 'audit_tombstones')).toBe(0);
    await tamper(t, 'audit_logs', sql`update audit_logs set ip = '10.9.8.7' where id = ${victim}`);
  });

  it('replaces exactly the expired entries of each family by tombstones', async () => {
    const before = await auditRepo.count(db(), {});
    const result = await t.deps.auditRetention.purge();
    expect(result).toMatchObject({ status: 'purged', purged: EXPECTED, broken_at: null });
    expect(result.checkpoints).toHaveLength(1);
    const left = new Set(
      (await db().select({ id: auditLogs.id }).from(auditLogs)).map((r) => r.id),
    );
    for (const [i, id] of ids.entries()) expect(left.has(id)).toBe(OLD[i]?.expired !== true);
    // Six fewer, one more: the purge's own entry.
    expect(await auditRepo.count(db(), {})).toBe(before - 6 + 1);
    const tombs = await db().select().from(auditTombstones);
    expect(tombs.map((r) => r.id).sort()).toEqual(expiredIds().sort());
    // What a tombstone keeps: its place in the chain, never the actor, address or details.
    expect(Object.keys(tombs[0] ?? {}).sort()).toEqual(
      ['action', 'checkpointId', 'hash', 'id', 'prevHash', 'seq', 'timestamp'].sort(),
    );
  });

  it('audits the purge with counts and cutoffs only', async () => {
    const [entry] = await db().select().from(auditLogs).where(eq(auditLogs.action, 'audit.purged'));
    const [checkpoint] = await db().select().from(auditCheckpoints);
    expect(entry).toMatchObject({
      success: true,
      actorId: null,
      actorEmail: null,
      ip: null,
      userAgent: null,
      resourceType: 'audit_checkpoint',
      resourceId: checkpoint?.id,
      details: {
        purged: EXPECTED,
        through_seq: checkpoint?.throughSeq,
        cutoffs: checkpoint?.cutoffs,
      },
    });
    expect(Object.keys(entry?.details ?? {}).sort()).toEqual(['cutoffs', 'purged', 'through_seq']);
  });

  it('verifies the chain across the purged entries and names the checkpoint', async () => {
    const [checkpoint] = await db().select().from(auditCheckpoints);
    expect(await verify()).toMatchObject({
      valid: true,
      broken_at: null,
      checked: await auditRepo.count(db(), {}),
      tombstones: 6,
      checkpoints: 1,
      latest_checkpoint: {
        id: checkpoint?.id,
        through_seq: checkpoint?.throughSeq,
        created_at: checkpoint?.createdAt.toISOString(),
        purged: EXPECTED,
      },
    });
  });

  it('lists and exports the remaining entries only', async () => {
    const total = await auditRepo.count(db(), {});
    const page = dataOf<{ total: number; items: { id: string }[] }>(await get(`${LIST}?limit=200`));
    expect(page.total).toBe(total);
    expect(page.items.map((i) => i.id)).not.toContain(expiredIds()[0]);
    const res = await get(`${LIST}/export?format=csv`);
    expect(res.statusCode).toBe(200);
    // Header, the entries, and the export's own entry.
    expect(parseCsv(res.body)).toHaveLength(1 + total + 1);
  });

  it('writes nothing when nothing has expired: no checkpoint, no entry', async () => {
    const entries = await auditRepo.count(db(), {});
    expect(await t.deps.auditRetention.purge()).toEqual({
      status: 'nothing_expired',
      purged: { ehr: 0, session: 0, error: 0 },
      checkpoints: [],
      broken_at: null,
    });
    expect(await count(t, 'audit_checkpoints')).toBe(1);
    expect(await auditRepo.count(db(), {})).toBe(entries);
  });

  it('still refuses every ordinary DELETE, UPDATE and TRUNCATE', async () => {
    const kept = ids.find((_, i) => OLD[i]?.expired === false)!;
    const refused = [
      sql`delete from audit_logs where id = ${kept}`,
      sql`update audit_logs set success = true where id = ${kept}`,
      sql`truncate audit_logs`,
      sql`delete from audit_tombstones`,
      sql`update audit_tombstones set action = 'x'`,
      sql`truncate audit_tombstones`,
      sql`delete from audit_checkpoints`,
      sql`update audit_checkpoints set tombstone_count = 0`,
    ];
    for (const statement of refused) {
      expect(await refusal(db().execute(statement))).toMatch(/is append-only/);
    }
    // The purge's switch alone does not open the table: the entry needs its tombstone.
    const alone = db().transaction(async (tx) => {
      await tx.execute(sql`select set_config('audit.purge', 'on', true)`);
      await tx.execute(sql`delete from audit_logs where id = ${kept}`);
    });
    expect(await refusal(alone)).toMatch(/audit_logs is append-only/);
  });

  describe('finds tampering', () => {
    const brokenAfter = async (table: string, change: SQL, undo: SQL) => {
      await tamper(t, table, change);
      try {
        return await verify();
      } finally {
        await tamper(t, table, undo);
        expect((await verify()).valid).toBe(true);
      }
    };
    const firstTomb = async () => {
      const [tomb] = await db().select().from(auditTombstones).orderBy(auditTombstones.seq);
      if (tomb === undefined) throw new Error('no tombstone');
      return tomb;
    };

    it('with a remaining entry', async () => {
      const kept = ids.find((_, i) => OLD[i]?.expired === false)!;
      const result = await brokenAfter(
        'audit_logs',
        sql`update audit_logs set details = '{}' where id = ${kept}`,
        sql`update audit_logs set details = '{"note": "personal"}' where id = ${kept}`,
      );
      expect(result).toMatchObject({
        valid: false,
        broken_at: { id: kept, reason: 'entry hash does not match its content' },
      });
    });

    it("with a tombstone's hash", async () => {
      const tomb = await firstTomb();
      const result = await brokenAfter(
        'audit_tombstones',
        sql`update audit_tombstones set hash = ${'f'.repeat(64)} where seq = ${tomb.seq}`,
        sql`update audit_tombstones set hash = ${tomb.hash} where seq = ${tomb.seq}`,
      );
      expect(result).toMatchObject({
        valid: false,
        broken_at: { seq: tomb.seq + 1, reason: 'previous hash does not match' },
      });
    });

    it('with what a tombstone says (its action), which no link covers', async () => {
      const tomb = await firstTomb();
      const [checkpoint] = await db().select().from(auditCheckpoints);
      const result = await brokenAfter(
        'audit_tombstones',
        sql`update audit_tombstones set action = 'flag.updated' where seq = ${tomb.seq}`,
        sql`update audit_tombstones set action = ${tomb.action} where seq = ${tomb.seq}`,
      );
      expect(result.broken_at).toEqual({
        id: checkpoint?.id,
        seq: checkpoint?.throughSeq,
        reason: 'tombstones do not match their checkpoint',
      });
    });

    it("with a checkpoint's counts or signature", async () => {
      const [checkpoint] = await db().select().from(auditCheckpoints);
      if (checkpoint === undefined) throw new Error('no checkpoint');
      const broken = {
        id: checkpoint.id,
        seq: checkpoint.throughSeq,
        reason: 'checkpoint signature does not match',
      };
      const counts = await brokenAfter(
        'audit_checkpoints',
        sql`update audit_checkpoints set purged = '{"ehr": 0, "session": 2, "error": 2}'`,
        sql`update audit_checkpoints set purged = ${JSON.stringify(checkpoint.purged)}::jsonb`,
      );
      expect(counts.broken_at).toEqual(broken);
      const signature = await brokenAfter(
        'audit_checkpoints',
        sql`update audit_checkpoints set signature = ${'0'.repeat(64)}`,
        sql`update audit_checkpoints set signature = ${checkpoint.signature}`,
      );
      expect(signature.broken_at).toEqual(broken);
    });

    it('with an entry passed off as purged', async () => {
      const kept = ids.find((_, i) => OLD[i]?.expired === false)!;
      const [checkpoint] = await db().select().from(auditCheckpoints);
      const [row] = await db().select().from(auditLogs).where(eq(auditLogs.id, kept));
      if (row === undefined || checkpoint === undefined) throw new Error('missing rows');
      await tamper(
        t,
        'audit_tombstones',
        sql`insert into audit_tombstones select seq, id, timestamp, action, prev_hash, hash,
              ${checkpoint.id}::uuid from audit_logs where id = ${kept}`,
      );
      await tamper(t, 'audit_logs', sql`delete from audit_logs where id = ${kept}`);
      expect((await verify()).broken_at).toEqual({
        id: checkpoint.id,
        seq: checkpoint.throughSeq,
        reason: 'tombstones do not match their checkpoint',
      });
      await db().insert(auditLogs).values(row);
      await tamper(t, 'audit_tombstones', sql`delete from audit_tombstones where id = ${kept}`);
      expect((await verify()).valid).toBe(true);
    });
  });

  it('purges in batches of its own size, one checkpoint each, and the chain verifies', async () => {
    const logins = Array.from({ length: 5 }, () => ({ ...LOGOUT, action: 'auth.login' }));
    await appendOld(t, [...logins, RECENT]);
    const small = new AuditRetention(
      db(),
      t.deps.audit,
      new CheckpointSigner(TEST_JWT_SECRET),
      { days: DAYS, batch: 2 },
      () => new Date(),
    );
    const result = await small.purge();
    expect(result).toMatchObject({ status: 'purged', purged: { ehr: 0, session: 5, error: 0 } });
    expect(result.checkpoints).toHaveLength(3);
    expect(await verify()).toMatchObject({ valid: true, tombstones: 11, checkpoints: 4 });
  });

  it('keeps the newest entry, expired or not, until another follows it', async () => {
    await appendOld(t, [LOGOUT]);
    expect(await t.deps.auditRetention.purge()).toMatchObject({ status: 'nothing_expired' });
  });

  it('runs on its schedule and stops with close()', async () => {
    await appendOld(t, [RECENT]);
    const scheduler = new PurgeScheduler(t.deps.auditRetention, 10, t.deps.log);
    scheduler.start();
    await vi.waitFor(
      async () => {
        expect(await count(t, 'audit_checkpoints')).toBe(5);
      },
      {
        timeout: 10_000,
      },
    );
    await scheduler.close();
    await appendOld(t, [LOGOUT, RECENT]);
    // Closed: nothing runs any more (the next purge here is the test's own).
    expect(await count(t, 'audit_checkpoints')).toBe(5);
    const last = await t.deps.auditRetention.purge();
    expect(last).toMatchObject({ purged: { session: 1 } });
  });
});

describe('two instances purging at once (postgres)', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp();
    const databaseUrl = a.deps.config.databaseUrl!;
    b = await createTestApp({ shared: { databaseUrl, redisPrefix: a.deps.config.redisPrefix } });
    await appendOld(a);
  }, 60_000);
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('purge each expired entry once and leave a chain that verifies', async () => {
    const results = await Promise.all([
      a.deps.auditRetention.purge(),
      b.deps.auditRetention.purge(),
      a.deps.auditRetention.purge(),
      b.deps.auditRetention.purge(),
    ]);
    const purged = results.filter((r) => r.status === 'purged');
    expect(purged).toHaveLength(1);
    expect(purged[0]?.purged).toEqual(EXPECTED);
    for (const r of results.filter((x) => x.status !== 'purged')) {
      expect(['busy', 'nothing_expired']).toContain(r.status);
    }
    expect(await count(a, 'audit_tombstones')).toBe(6);
    expect(await count(a, 'audit_checkpoints')).toBe(1);
    expect(await b.deps.audit.verify()).toMatchObject({ valid: true, tombstones: 6 });
  });

  it('skips a round while another instance holds the purge lock', async () => {
    await appendOld(a);
    await a.deps.database.db.transaction(async (tx) => {
      expect(await retentionRepo.tryLock(tx)).toBe(true);
      expect(await b.deps.auditRetention.purge()).toMatchObject({
        status: 'busy',
        checkpoints: [],
      });
    });
    expect(await b.deps.auditRetention.purge()).toMatchObject({
      status: 'purged',
      purged: EXPECTED,
    });
  });

  it('is run by operators with `npm run admin -- purge-audit`', async () => {
    const env = {
      NODE_ENV: 'test',
      DATA_DIR: await mkdtemp(path.join(tmpdir(), 'mas-purge-')),
      DATABASE_URL: a.deps.config.databaseUrl!,
      JWT_SECRET: TEST_JWT_SECRET,
    };
    try {
      await appendOld(a);
      const purged = await runTsx('src/cli/admin.ts', ['purge-audit'], env);
      expect(purged.stdout).toBe('audit purge: removed ehr 2, session 2, error 2 (1 checkpoint)\n');
      expect(purged.code).toBe(0);
      const again = await runTsx('src/cli/admin.ts', ['purge-audit'], env);
      expect(again).toMatchObject({ code: 0, stdout: 'audit purge: nothing has expired\n' });
      expect(await a.deps.audit.verify()).toMatchObject({ valid: true, checkpoints: 3 });
    } finally {
      await rm(env.DATA_DIR, { recursive: true, force: true });
    }
  }, 60_000);
});
