import { describe, expect, it } from 'vitest';
import { CheckpointSigner, TombstoneDigest, type CheckpointFields } from './checkpoint.js';

const SECRET = 'a-secret-that-is-long-enough-for-the-test-0123';

const fields = (signer: CheckpointSigner): CheckpointFields => ({
  id: '6f1c1d0e-8a3b-4c55-9d2e-0b8f7a6c5d4e',
  createdAt: new Date('2030-01-01T00:00:00.000Z'),
  throughSeq: 42,
  throughHash: 'a'.repeat(64),
  purged: { ehr: 1, session: 2, error: 3 },
  cutoffs: { ehr: '2024-01-01T00:00:00.000Z', session: '2029-01-01T00:00:00.000Z' },
  tombstoneCount: 6,
  tombstonesDigest: 'b'.repeat(64),
  keyId: signer.keyId,
});

describe('CheckpointSigner', () => {
  const signer = new CheckpointSigner(SECRET);
  const signed = () => {
    const f = fields(signer);
    return { ...f, signature: signer.sign(f) };
  };

  it('accepts what it signed, whatever the order of object keys', () => {
    const row = signed();
    expect(signer.problem(row)).toBeNull();
    expect(signer.problem({ ...row, purged: { error: 3, session: 2, ehr: 1 } })).toBeNull();
  });

  it('refuses a checkpoint with any signed field changed', () => {
    const row = signed();
    const changes: Partial<typeof row>[] = [
      { throughSeq: 43 },
      { throughHash: 'c'.repeat(64) },
      { purged: { ehr: 0, session: 2, error: 3 } },
      { cutoffs: { ehr: '2025-01-01T00:00:00.000Z' } },
      { tombstoneCount: 5 },
      { tombstonesDigest: 'd'.repeat(64) },
      { createdAt: new Date('2030-01-01T00:00:00.001Z') },
      { signature: 'e'.repeat(64) },
      { signature: 'not hex' },
    ];
    for (const change of changes) {
      expect(signer.problem({ ...row, ...change })).toBe('checkpoint signature does not match');
    }
  });

  it('tells a checkpoint of another key from a forged one', () => {
    const other = new CheckpointSigner(`${SECRET}-rotated`);
    expect(other.keyId).not.toBe(signer.keyId);
    expect(other.problem(signed())).toBe('checkpoint signed with another key');
  });
});

describe('TombstoneDigest', () => {
  const tomb = (seq: number) => ({
    seq,
    id: '6f1c1d0e-8a3b-4c55-9d2e-0b8f7a6c5d4e',
    timestamp: new Date(0),
    action: 'auth.login',
    prevHash: '0'.repeat(64),
    hash: '1'.repeat(64),
  });

  it('depends on every tombstone and their order', () => {
    const of = (...seqs: number[]) => {
      const d = new TombstoneDigest();
      for (const s of seqs) d.add(tomb(s));
      return d.digest();
    };
    expect(of(1, 2)).toBe(of(1, 2));
    expect(of(1, 2)).not.toBe(of(2, 1));
    expect(of(1, 2)).not.toBe(of(1));
  });
});
