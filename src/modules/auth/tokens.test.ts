import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import { TokenSigner } from './tokens.js';

const USER = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const SECRET = 'unit-test-secret-that-is-long-enough-0123456789';

async function rejection(work: Promise<unknown>): Promise<string> {
  const err = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe('UNAUTHORIZED');
  return (err as AppError).message;
}

describe('TokenSigner', () => {
  it('issues a pair whose tokens verify as their own type only, also once remembered', async () => {
    const signer = new TokenSigner(SECRET, 900, 604_800);
    const pair = await signer.issuePair(USER);
    for (let i = 0; i < 2; i++) {
      const access = await signer.verify(pair.access_token, 'access');
      expect(access).toMatchObject({ sub: USER, type: 'access', fam: pair.refresh.familyId });
      expect(access.exp - access.iat).toBe(900);
      expect(await rejection(signer.verify(pair.access_token, 'refresh'))).toBe(
        'Invalid refresh token',
      );
      expect(await rejection(signer.verify(pair.refresh_token, 'access'))).toBe(
        'Invalid access token',
      );
    }
  });

  it('refuses an expired token even after it was verified and remembered', async () => {
    let now = Date.now();
    const signer = new TokenSigner(SECRET, 900, 604_800, () => now);
    const { access_token } = await signer.issuePair(USER);
    await signer.verify(access_token, 'access');
    now += 901_000;
    expect(await rejection(signer.verify(access_token, 'access'))).toBe('Token has expired');
  });

  it('refuses tampered tokens and tokens of another key', async () => {
    const signer = new TokenSigner(SECRET, 900, 604_800);
    const other = new TokenSigner(`${SECRET}-other`, 900, 604_800);
    const { access_token } = await signer.issuePair(USER);
    await signer.verify(access_token, 'access');
    const [h, p, s] = access_token.split('.') as [string, string, string];
    const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(await rejection(signer.verify(flipped, 'access'))).toBe('Invalid token');
    expect(await rejection(other.verify(access_token, 'access'))).toBe('Invalid token');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`;
    expect(await rejection(signer.verify(none, 'access'))).toBe('Invalid token');
  });
});
