import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, canonicalJson, emailDigest, entryHash, type HashedFields } from './hash.js';

const entry: HashedFields = {
  id: '4b0f8e0e-8a4a-4e0b-9a65-0c3f6d2a1b7c',
  seq: 1,
  timestamp: new Date('2026-11-22T10:00:00.000Z'),
  action: 'auth.login',
  actorId: null,
  actorEmail: 'Ann@Example.test',
  resourceType: 'user',
  resourceId: null,
  success: true,
  ip: '127.0.0.1',
  userAgent: null,
  requestId: 'r1',
  details: { b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } },
  prevHash: GENESIS_HASH,
};

describe('audit hashing', () => {
  it('writes JSON with sorted keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null }, u: undefined })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
  });

  it('does not depend on key order, and changes with any field', () => {
    const reordered = { ...entry, details: { a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 } };
    expect(entryHash(reordered)).toBe(entryHash(entry));
    for (const change of [
      { seq: 2 },
      { action: 'auth.logout' },
      { success: false },
      { prevHash: 'f'.repeat(64) },
      { details: { b: 2 } },
    ]) {
      expect(entryHash({ ...entry, ...change })).not.toBe(entryHash(entry));
    }
  });

  it('covers the email only as its digest, so redaction keeps the hash', () => {
    const digest = emailDigest('Ann@Example.test');
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(emailDigest(digest)).toBe(digest);
    expect(entryHash({ ...entry, actorEmail: digest })).toBe(entryHash(entry));
    expect(entryHash({ ...entry, actorEmail: 'other@example.test' })).not.toBe(entryHash(entry));
  });
});
