import { describe, expect, it } from 'vitest';
import { mergeInstances, parseEntry, type InstanceEntry } from './socket-status.js';

const entry = (id: string, users: InstanceEntry['users']): InstanceEntry => ({
  id,
  hostname: `host-${id}`,
  pid: 100,
  updated_at: '2026-11-24T10:00:00.000Z',
  users,
});

const counts = (ws: number, wsAlias: number, voice: number, voiceAlias: number) => ({
  '/ws': ws,
  '/api/realtime/ws': wsAlias,
  '/api/voice/pipeline-ws': voice,
  '/api/realtime': voiceAlias,
});

describe('mergeInstances', () => {
  it('sums per endpoint, per user and per instance, with every endpoint present', () => {
    const status = mergeInstances(
      [
        entry('b', { u1: { '/ws': 2 }, u2: { '/api/realtime': 1 } }),
        entry('a', { u1: { '/api/voice/pipeline-ws': 1, '/api/realtime/ws': 1 } }),
      ],
      100,
    );
    expect(status.total).toBe(5);
    expect(status.by_endpoint).toEqual(counts(2, 1, 1, 1));
    expect(status.users_total).toBe(2);
    expect(status.by_user).toEqual([
      { user_id: 'u1', connections: 4, endpoints: counts(2, 1, 1, 0) },
      { user_id: 'u2', connections: 1, endpoints: counts(0, 0, 0, 1) },
    ]);
    expect(status.instances.map((i) => [i.id, i.connections, i.hostname])).toEqual([
      ['a', 2, 'host-a'],
      ['b', 3, 'host-b'],
    ]);
  });

  it('lists the busiest users first, ties by id, cut to the limit', () => {
    const status = mergeInstances(
      [entry('a', { c: { '/ws': 1 }, b: { '/ws': 1 }, a: { '/ws': 3 }, d: { '/ws': 2 } })],
      3,
    );
    expect(status.by_user.map((u) => u.user_id)).toEqual(['a', 'd', 'b']);
    expect(status.users_total).toBe(4);
    expect(status.total).toBe(7);
  });

  it('ignores counts that are not positive integers', () => {
    const status = mergeInstances(
      [entry('a', { u: { '/ws': 0, '/api/realtime': -2, '/api/realtime/ws': 1.5 } })],
      10,
    );
    expect(status).toMatchObject({ total: 0, users_total: 0, by_user: [] });
    expect(status.by_endpoint).toEqual(counts(0, 0, 0, 0));
  });

  it('answers zeroes for no instances', () => {
    expect(mergeInstances([], 10)).toEqual({
      total: 0,
      by_endpoint: counts(0, 0, 0, 0),
      users_total: 0,
      by_user: [],
      instances: [],
    });
  });
});

describe('parseEntry', () => {
  it('reads back an entry', () => {
    const e = entry('a', { u: { '/ws': 1 } });
    expect(parseEntry(JSON.stringify(e))).toEqual(e);
  });

  it('refuses what is not an entry', () => {
    for (const text of [null, '', 'not json', '42', 'null', '{}', '{"id":"a","users":{}}']) {
      expect(parseEntry(text)).toBeUndefined();
    }
    const noUsers = { ...entry('a', {}), users: null };
    expect(parseEntry(JSON.stringify(noUsers))).toBeUndefined();
  });
});
