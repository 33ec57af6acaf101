import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bucketOf, isOnFor } from './bucket.js';

/** A user id of the usual shape, different for each `i`. */
const userId = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const USERS = Array.from({ length: 1000 }, (_, i) => userId(i));

const flag = (rolloutPercentage: number, enabled = true, name = 'new_ui') => ({
  name,
  enabled,
  rolloutPercentage,
});

describe('bucketOf (DECISIONS 7)', () => {
  it('is uint32_be(sha256(flag_name + ":" + user_id)[0..4]) % 100', () => {
    const pairs = [
      ['ehr.read', userId(1)],
      ['ehr.write', userId(1)],
      ['new_ui', '3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c'],
      ['voice-beta', 'u'],
      ['a1', ''],
    ] as const;
    for (const [name, id] of pairs) {
      const digest = createHash('sha256').update(`${name}:${id}`).digest();
      const expected =
        (digest[0]! * 2 ** 24 + digest[1]! * 2 ** 16 + digest[2]! * 2 ** 8 + digest[3]!) % 100;
      expect(bucketOf(name, id), `${name}:${id}`).toBe(expected);
    }
    // The same five, computed apart from Node (Python's hashlib).
    expect(pairs.map(([name, id]) => bucketOf(name, id))).toEqual([86, 24, 78, 44, 21]);
  });

  it('buckets each flag on its own: the same user lands differently under other names', () => {
    const names = ['ehr.read', 'ehr.write', 'new_ui', 'voice-beta'];
    const differing = USERS.filter((u) => new Set(names.map((n) => bucketOf(n, u))).size > 1);
    expect(differing.length).toBeGreaterThan(950);
  });

  it('spreads users evenly over the 100 buckets', () => {
    const counts = new Array<number>(100).fill(0);
    const n = 20_000;
    for (let i = 0; i < n; i++) counts[bucketOf('new_ui', userId(i))]! += 1;
    const expected = n / 100;
    const chiSquare = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    // 99 degrees of freedom: 148.2 is the 0.999 quantile.
    expect(chiSquare).toBeLessThan(148.2);
    expect(Math.min(...counts)).toBeGreaterThan(expected * 0.7);
    expect(Math.max(...counts)).toBeLessThan(expected * 1.3);
  });
});

describe('isOnFor', () => {
  it('is off for nobody at 100% and on for nobody at 0%', () => {
    expect(USERS.every((u) => isOnFor(flag(100), u))).toBe(true);
    expect(USERS.some((u) => isOnFor(flag(0), u))).toBe(false);
  });

  it('is off for everyone while the flag is disabled, whatever the percentage', () => {
    for (const pct of [0, 1, 50, 99, 100]) {
      expect(USERS.some((u) => isOnFor(flag(pct, false), u))).toBe(false);
    }
  });

  it('is on exactly for the users whose bucket is below the percentage', () => {
    for (const pct of [1, 10, 33, 50, 99]) {
      for (const u of USERS.slice(0, 200)) {
        expect(isOnFor(flag(pct), u)).toBe(bucketOf('new_ui', u) < pct);
      }
    }
  });

  it('never removes a user when the percentage rises, one step at a time from 0 to 100', () => {
    let previous = new Set<string>();
    for (let pct = 0; pct <= 100; pct++) {
      const current = new Set(USERS.filter((u) => isOnFor(flag(pct), u)));
      const removed = [...previous].filter((u) => !current.has(u));
      expect(removed, `raised to ${String(pct)}%`).toEqual([]);
      // Roughly the percentage of users: within 5 points of it over 1,000 users.
      expect(Math.abs(current.size / USERS.length - pct / 100)).toBeLessThan(0.05);
      previous = current;
    }
    expect(previous.size).toBe(USERS.length);
  });

  it('never removes a user when the percentage jumps up by any amount', () => {
    for (let from = 0; from <= 100; from += 7) {
      for (let to = from; to <= 100; to += 13) {
        const lost = USERS.filter((u) => isOnFor(flag(from), u) && !isOnFor(flag(to), u));
        expect(lost, `${String(from)}% -> ${String(to)}%`).toEqual([]);
      }
    }
  });
});
