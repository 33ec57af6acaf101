import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { queryRows } from '../src/db/client.js';
import { auditLogs } from '../src/db/schema/index.js';
import { AUDIT_EXPORT_COLUMNS, AUDIT_EXPORT_PAGE_ROWS } from '../src/modules/audit/export.js';
import { entryHash } from '../src/modules/audit/hash.js';
import { auditRepo } from '../src/modules/audit/repo.js';
import type { AuditEntryDto } from '../src/modules/audit/schema.js';
import { VERIFY_BATCH, type AuditEvent } from '../src/modules/audit/service.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, errorOf, type TestUser } from './helpers/factories.js';
import { appendChain } from './helpers/audit-chain.js';
import { parseCsv } from './helpers/csv.js';

const LIST = '/api/admin/panel/audit-logs';
const HEADER = AUDIT_EXPORT_COLUMNS.join(',');
const CTX = { ip: '10.0.0.1', userAgent: 'audit-test', requestId: 'audit-test-request' };

interface Page {
  items: AuditEntryDto[];
  total: number;
  page: number;
  limit: number;
}
interface Verification {
  valid: boolean;
  checked: number;
  broken_at: { id: string; seq: number; reason: string } | null;
  duration_ms: number;
}

/** `count` valid chained entries appended after the chain's current end, inserted in bulk. */
function appendEntries(t: TestApp, count: number, action = 'bench.entry'): Promise<void> {
  return appendChain(t.deps.database.db, count, (i) => ({
    id: randomUUID(),
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000),
    action,
    actorId: null,
    actorEmail: `user${String(i % 50)}@example.test`,
    resourceType: 'user',
    resourceId: randomUUID(),
    success: i % 7 !== 0,
    ip: '10.1.2.3',
    userAgent: 'generator',
    requestId: `req-${String(i)}`,
    details: { n: i, tags: ['a', 'b'] },
  }));
}

describe('audit log endpoints (postgres)', () => {
  let t: TestApp;
  /** The service's clock: real time (tokens expire by it), set only while entries are stamped. */
  let fixed: number | null = null;
  let admin: TestUser;
  let alice: TestUser;
  beforeAll(async () => {
    t = await createTestApp({ now: () => new Date(fixed ?? Date.now()) });
    admin = await createUser(t.app, t.deps, { admin: true });
    alice = await createUser(t.app, t.deps);
  });
  afterAll(() => t.close());

  const get = (user: TestUser | null, url: string) =>
    t.app.inject({ method: 'GET', url, headers: user === null ? {} : bearer(user.access) });
  const list = async (query: string) => dataOf<Page>(await get(admin, `${LIST}?${query}`));
  /** Appends an entry stamped `at` on the service's clock. */
  const record = async (at: string, event: AuditEvent, ctx = CTX) => {
    fixed = Date.parse(at);
    try {
      await t.deps.audit.record(event, ctx);
    } finally {
      fixed = null;
    }
  };

  describe('filters', () => {
    // A namespace of its own per run, so the expected sets are exact.
    const ns = `t${randomUUID().replaceAll('-', '').slice(0, 8)}`;
    const ann = randomUUID();
    const bob = randomUUID();
    beforeAll(async () => {
      const e = (action: string, extra: Partial<AuditEvent> = {}): AuditEvent => ({
        action: `${ns}${action}`,
        success: true,
        ...extra,
      });
      await record('2026-11-02T10:00:00.000Z', e('.ehr.read', { actorId: ann }));
      await record('2026-11-03T10:00:00.000Z', e('.ehr.write_failed', { success: false }));
      await record('2026-11-04T10:00:00.000Z', e('.ehrx.read', { actorId: bob }));
      await record(
        '2026-11-05T10:00:00.000Z',
        e('.user.deactivated', { actorId: bob, resourceType: 'user', resourceId: ann }),
      );
      await record(
        '2026-11-06T10:00:00.000Z',
        e('.conv.deleted', { actorId: bob, resourceType: 'conversation', resourceId: ann }),
      );
      await record('2026-11-07T10:00:00.000Z', e('.a_b.x'));
      await record('2026-11-08T10:00:00.000Z', e('.axb.x'));
      await record('2026-11-09T10:00:00.000Z', e('.ehr', { actorId: ann }));
    });
    const actions = (p: Page) => p.items.map((i) => i.action.slice(ns.length));

    it('lists every field of an entry, newest first', async () => {
      const page = await list(`action=${ns}.*&limit=200`);
      expect(page.total).toBe(8);
      expect(actions(page)).toEqual([
        '.ehr',
        '.axb.x',
        '.a_b.x',
        '.conv.deleted',
        '.user.deactivated',
        '.ehrx.read',
        '.ehr.write_failed',
        '.ehr.read',
      ]);
      const seqs = page.items.map((i) => i.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
      const [row] = await queryRows<{ hash: string; prev_hash: string }>(
        t.deps.database.db,
        sql`select hash, prev_hash from audit_logs where id = ${page.items[3]?.id}`,
      );
      expect(page.items[3]).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
        seq: expect.any(Number) as number,
        timestamp: '2026-11-06T10:00:00.000Z',
        action: `${ns}.conv.deleted`,
        actor_id: bob,
        actor_email: null,
        resource_type: 'conversation',
        resource_id: ann,
        success: true,
        ip: CTX.ip,
        user_agent: CTX.userAgent,
        request_id: CTX.requestId,
        details: {},
        prev_hash: row?.prev_hash,
        hash: row?.hash,
      });
    });

    it('matches an action exactly', async () => {
      expect(actions(await list(`action=${ns}.ehr.read`))).toEqual(['.ehr.read']);
      expect(actions(await list(`action=${ns}.ehr`))).toEqual(['.ehr']);
      expect((await list(`action=${ns}.ehr.rea`)).total).toBe(0);
    });

    it('matches a prefix ending in .* on whole parts only', async () => {
      expect(actions(await list(`action=${ns}.ehr.*`))).toEqual(['.ehr.write_failed', '.ehr.read']);
      // `_` is a LIKE wildcard unless escaped: a_b.* must not match axb.x.
      expect(actions(await list(`action=${ns}.a_b.*`))).toEqual(['.a_b.x']);
    });

    it('matches user_id as actor or as the user the entry is about', async () => {
      expect(actions(await list(`user_id=${ann}`))).toEqual([
        '.ehr',
        '.user.deactivated',
        '.ehr.read',
      ]);
      // Upper-case ids are the same user.
      expect((await list(`user_id=${ann.toUpperCase()}`)).total).toBe(3);
      expect(actions(await list(`user_id=${bob}`))).toEqual([
        '.conv.deleted',
        '.user.deactivated',
        '.ehrx.read',
      ]);
      expect((await list(`user_id=${randomUUID()}`)).total).toBe(0);
    });

    it('bounds by since and until, both inclusive', async () => {
      const window = `action=${ns}.*&since=2026-11-03T10:00:00Z&until=2026-11-05T10:00:00.000Z`;
      expect(actions(await list(window))).toEqual([
        '.user.deactivated',
        '.ehrx.read',
        '.ehr.write_failed',
      ]);
      expect(actions(await list(`action=${ns}.*&since=2026-11-08T10:00:00.001Z`))).toEqual([
        '.ehr',
      ]);
      expect(actions(await list(`action=${ns}.*&until=2026-11-02T11:00:00%2B01:00`))).toEqual([
        '.ehr.read',
      ]);
    });

    it('combines filters', async () => {
      expect(actions(await list(`action=${ns}.ehr.*&user_id=${ann}`))).toEqual(['.ehr.read']);
      const q = `user_id=${bob}&since=2026-11-05T00:00:00Z&until=2026-11-05T23:59:59Z`;
      expect(actions(await list(q))).toEqual(['.user.deactivated']);
      expect((await list(`action=${ns}.ehrx.read&user_id=${ann}`)).total).toBe(0);
    });

    it('pages with page and limit, total counting every match', async () => {
      const all = await list(`action=${ns}.*&limit=200`);
      const pages = [];
      for (let page = 1; page <= 3; page += 1) {
        const p = await list(`action=${ns}.*&limit=3&page=${String(page)}`);
        expect(p).toMatchObject({ total: 8, page, limit: 3 });
        pages.push(...p.items);
      }
      expect(pages).toEqual(all.items);
      expect((await list(`action=${ns}.*&limit=3&page=4`)).items).toEqual([]);
    });

    it('answers page 1 with 50 entries by default and takes limit 200', async () => {
      const first = await list('');
      expect(first).toMatchObject({ page: 1, limit: 50 });
      expect(first.total).toBeGreaterThanOrEqual(8);
      expect((await list('limit=200')).limit).toBe(200);
    });
  });

  describe('bad input', () => {
    it.each([
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=1.5', 'page'],
      ['page=x', 'page'],
      ['page=1&page=2', 'page'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=x', 'limit'],
      ['action=', 'action'],
      ['action=EHR.read', 'action'],
      ['action=ehr.', 'action'],
      ['action=.*', 'action'],
      ['action=*', 'action'],
      ['action=ehr*', 'action'],
      ['action=ehr.**', 'action'],
      ['action=ehr.*.read', 'action'],
      ['action=ehr%25', 'action'],
      ['action=ehr_%25.*', 'action'],
      [`action=${'a'.repeat(101)}`, 'action'],
      ['user_id=x', 'user_id'],
      ['user_id=urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'user_id'],
      ['since=yesterday', 'since'],
      ['since=2026-11-01', 'since'],
      ['since=2026-11-01T10:00:00', 'since'],
      ['until=2026-13-01T00:00:00Z', 'until'],
      ['until=2026-12-31T23:59:60Z', 'until'],
      ['since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z', 'since'],
      ['offset=10', 'offset'],
    ])('refuses ?%s with 422 naming query.%s', async (query, field) => {
      for (const path of [LIST, `${LIST}/export`]) {
        // The export has no paging: page and limit are unknown fields there.
        const url = `${path}?${path === LIST ? '' : 'format=csv&'}${query}`;
        const error = errorOf(await get(admin, url), 422);
        expect(error.code).toBe('VALIDATION_ERROR');
        expect(error.details).toEqual([
          { field: `query.${field}`, message: expect.any(String) as string },
        ]);
      }
    });

    it.each(['format=json', 'format=CSV', 'format=', 'format=csv&format=csv', 'page=1'])(
      'refuses export ?%s with 422',
      async (query) => {
        const error = errorOf(await get(admin, `${LIST}/export?${query}`), 422);
        expect(error.code).toBe('VALIDATION_ERROR');
        expect((error.details as { field: string }[])[0]?.field).toMatch(/^query\./);
      },
    );

    it('is for administrators only', async () => {
      for (const path of [LIST, `${LIST}/verify`, `${LIST}/export?format=csv`]) {
        expect(errorOf(await get(null, path), 401).code).toBe('UNAUTHORIZED');
        expect(errorOf(await get(alice, path), 403).code).toBe('FORBIDDEN');
      }
    });
  });

  describe('export', () => {
    const exportCsv = async (query: string) => {
      const res = await get(admin, `${LIST}/export?format=csv&${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res;
    };

    it('neutralises cells that a spreadsheet would run as formulas', async () => {
      const details = { note: '=1+1' };
      await record('2026-11-10T10:00:00.000Z', {
        action: 'csv.injection',
        success: false,
        actorEmail: '=HYPERLINK("http://x","y")',
        resourceType: '+SUM(1,2)',
        resourceId: '-2+3',
        details,
      });
      await record(
        '2026-11-10T11:00:00.000Z',
        { action: 'csv.injection', success: true, resourceId: 'plain, "quoted"' },
        { ip: '\r=1', userAgent: '@cmd', requestId: '\tx' },
      );
      const res = await exportCsv('action=csv.injection');
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers['content-disposition']).toMatch(
        /^attachment; filename="audit-log-\d{4}-\d{2}-\d{2}\.csv"$/,
      );
      const [header, first, second, ...rest] = parseCsv(res.body);
      expect(header?.join(',')).toBe(HEADER);
      expect(rest).toEqual([]);
      const col = (row: string[] | undefined, name: (typeof AUDIT_EXPORT_COLUMNS)[number]) =>
        row?.[AUDIT_EXPORT_COLUMNS.indexOf(name)];
      expect(col(first, 'actor_email')).toBe(`'=HYPERLINK("http://x","y")`);
      expect(col(first, 'resource_type')).toBe(`'+SUM(1,2)`);
      expect(col(first, 'resource_id')).toBe(`'-2+3`);
      expect(col(first, 'success')).toBe('false');
      expect(col(first, 'details')).toBe(JSON.stringify(details));
      expect(col(first, 'timestamp')).toBe('2026-11-10T10:00:00.000Z');
      expect(col(second, 'ip')).toBe(`'\r=1`);
      expect(col(second, 'user_agent')).toBe(`'@cmd`);
      expect(col(second, 'request_id')).toBe(`'\tx`);
      expect(col(second, 'resource_id')).toBe('plain, "quoted"');
      // Oldest first.
      expect(Number(col(first, 'seq'))).toBeLessThan(Number(col(second, 'seq')));
    });

    it('audits the export with its filters before streaming', async () => {
      const userId = randomUUID();
      const res = await exportCsv(`action=auth.*&user_id=${userId}&since=2026-01-01T00:00:00Z`);
      const request = String(res.headers['x-request-id']);
      const [entry] = (await list(`action=audit.exported&user_id=${admin.id}&limit=1`)).items;
      expect(entry).toMatchObject({
        action: 'audit.exported',
        actor_id: admin.id,
        actor_email: admin.email,
        resource_type: 'audit_log',
        success: true,
        request_id: request,
        details: {
          format: 'csv',
          filters: { action: 'auth.*', user_id: userId, since: '2026-01-01T00:00:00Z' },
        },
      });
      // The file holds the matching entries up to its own record: here none match.
      expect(res.body).toBe(`${HEADER}\r\n`);
      const own = parseCsv((await exportCsv('action=audit.exported')).body);
      expect(own.at(-1)?.[0]).not.toBe(entry?.id); // a newer export is the last one now
      expect(own.map((r) => r[0])).toContain(entry?.id);
    });

    it('is the same set of entries as the list, oldest first', async () => {
      const all = await list('limit=200');
      const rows = parseCsv((await exportCsv('')).body).slice(1);
      // The export's own entry is one more than the list saw.
      expect(rows).toHaveLength(all.total + 1);
      expect(rows.slice(0, -1).map((r) => r[0])).toEqual(all.items.map((i) => i.id).reverse());
      expect(rows.at(-1)?.[3]).toBe('audit.exported');
    });
  });

  describe('100,000 rows', () => {
    let big: TestApp;
    let bigAdmin: TestUser;
    beforeAll(async () => {
      big = await createTestApp();
      bigAdmin = await createUser(big.app, big.deps, { admin: true });
      // Not a valid chain (the hashes are stand-ins): this is about the file, not verification.
      await big.deps.database.db.execute(sql`
        insert into audit_logs (id, seq, timestamp, action, actor_id, actor_email, resource_type,
          resource_id, success, ip, user_agent, request_id, details, prev_hash, hash)
        select gen_random_uuid(), m.seq + g, now() - make_interval(secs => 100001 - g),
          case when g % 2 = 0 then 'bulk.even' else 'bulk.odd' end, gen_random_uuid(),
          'user' || g || '@example.test', 'user', gen_random_uuid()::text, g % 3 <> 0,
          '10.0.0.' || (g % 250), 'Mozilla/5.0 (bulk, "quoted")', 'req-' || g,
          jsonb_build_object('n', g, 'text', '=formula ' || g), repeat('0', 64), md5(g::text)
        from generate_series(1, 100000) as g, (select max(seq) as seq from audit_logs) as m`);
    }, 120_000);
    afterAll(() => big.close());

    it('streams them all in keyset pages with a header row', async () => {
      const pages = vi.spyOn(auditRepo, 'exportPage');
      try {
        const res = await big.app.inject({
          method: 'GET',
          url: `${LIST}/export?format=csv&action=bulk.*`,
          headers: bearer(bigAdmin.access),
          payloadAsStream: true,
        });
        expect(res.statusCode).toBe(200);
        let [lines, head, chunks] = [0, '', 0];
        for await (const chunk of res.stream()) {
          const text = String(chunk);
          if (head.length < 400) head += text.slice(0, 400);
          lines += text.split('\r\n').length - 1;
          chunks += 1;
        }
        expect(head.startsWith(`${HEADER}\r\n`)).toBe(true);
        expect(lines).toBe(100_001);
        expect(chunks).toBeGreaterThan(1);
        // A page of 1,000 at a time: 100 full pages, then one that finds nothing more.
        expect(pages).toHaveBeenCalledTimes(100_000 / AUDIT_EXPORT_PAGE_ROWS + 1);
      } finally {
        pages.mockRestore();
      }
    }, 120_000);

    it('lists and counts them through the filters', async () => {
      const get = (query: string) =>
        big.app.inject({
          method: 'GET',
          url: `${LIST}?${query}`,
          headers: bearer(bigAdmin.access),
        });
      const even = dataOf<Page>(await get('action=bulk.even&limit=200&page=250'));
      expect(even.total).toBe(50_000);
      expect(even.items).toHaveLength(200);
      expect(even.items.every((i) => i.action === 'bulk.even')).toBe(true);
      expect(dataOf<Page>(await get('action=bulk.*&limit=1')).total).toBe(100_000);
    });
  });
});

describe('chain verification (postgres)', () => {
  let t: TestApp;
  let admin: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(() => t.close());

  const verify = async () =>
    dataOf<Verification>(
      await t.app.inject({
        method: 'GET',
        url: `${LIST}/verify`,
        headers: bearer(admin.access),
      }),
    );
  const entryAt = async (seq: number) => {
    const [row] = await queryRows<{ id: string }>(
      t.deps.database.db,
      sql`select id from audit_logs where seq = ${seq}`,
    );
    if (row === undefined) throw new Error(`no entry ${String(seq)}`);
    return row.id;
  };
  /** Changes an entry behind the append-only trigger's back, as an attacker with the table might. */
  const tamper = async (change: ReturnType<typeof sql>) => {
    const db = t.deps.database.db;
    await db.transaction(async (tx) => {
      await tx.execute(sql`alter table audit_logs disable trigger user`);
      await tx.execute(change);
      await tx.execute(sql`alter table audit_logs enable trigger user`);
    });
  };

  it('finds an intact chain valid across several pages', async () => {
    await appendEntries(t, VERIFY_BATCH * 2 + 17);
    const total = await auditRepo.count(t.deps.database.db, {});
    const result = await verify();
    expect(result).toEqual({
      valid: true,
      checked: total,
      broken_at: null,
      tombstones: 0,
      checkpoints: 0,
      latest_checkpoint: null,
      duration_ms: expect.any(Number) as number,
    });
    expect(total).toBeGreaterThan(VERIFY_BATCH * 2);
  }, 60_000);

  it('names the first entry whose content was changed', async () => {
    const seq = VERIFY_BATCH + 10;
    const id = await entryAt(seq);
    await tamper(sql`update audit_logs set details = '{"n": -1}' where seq = ${seq}`);
    expect(await verify()).toEqual({
      valid: false,
      checked: seq - 1,
      broken_at: { id, seq, reason: 'entry hash does not match its content' },
      tombstones: 0,
      checkpoints: 0,
      latest_checkpoint: null,
      duration_ms: expect.any(Number) as number,
    });
    // The append-only trigger is back: the table refuses changes again.
    await expect(
      t.deps.database.db.execute(sql`update audit_logs set details = '{}' where seq = ${seq}`),
    ).rejects.toThrow();
  }, 60_000);

  it('names an earlier entry whose link was rewritten with a matching hash', async () => {
    const seq = 3;
    const id = await entryAt(seq);
    // A forger who recomputes the entry's own hash still breaks the link to the entry before.
    const [row] = await t.deps.database.db
      .select()
      .from(auditLogs)
      .where(sql`${auditLogs.seq} = ${seq}`);
    if (row === undefined) throw new Error('no entry 3');
    const forged = { ...row, prevHash: 'f'.repeat(64) };
    const hash = entryHash(forged);
    await tamper(
      sql`update audit_logs set prev_hash = ${forged.prevHash}, hash = ${hash} where seq = ${seq}`,
    );
    expect((await verify()).broken_at).toEqual({
      id,
      seq,
      reason: 'previous hash does not match',
    });
  });
});

describe('audit log endpoints (pglite)', () => {
  let t: TestApp;
  let admin: TestUser;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
    admin = await createUser(t.app, t.deps, { admin: true });
    await appendEntries(t, 1200, 'gen.entry');
  }, 60_000);
  afterAll(() => t.close());

  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: bearer(admin.access) });

  it('lists, exports and verifies on the embedded database', async () => {
    const page = dataOf<Page>(await get(`${LIST}?action=gen.*&limit=200&page=2`));
    expect(page.total).toBe(1200);
    expect(page.items).toHaveLength(200);
    const byAdmin = dataOf<Page>(await get(`${LIST}?user_id=${admin.id}`));
    expect(byAdmin.items.map((i) => i.action)).toContain('auth.login');
    const res = await get(`${LIST}/export?format=csv&action=gen.entry`);
    expect(res.statusCode).toBe(200);
    expect(parseCsv(res.body)).toHaveLength(1201);
    const result = dataOf<Verification>(await get(`${LIST}/verify`));
    expect(result).toMatchObject({ valid: true, broken_at: null });
    // The chain: the admin's registration and login, the 1,200, and the export's own entry.
    expect(result.checked).toBe(await auditRepo.count(t.deps.database.db, {}));
  });
});
