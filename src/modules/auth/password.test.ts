import { describe, expect, it } from 'vitest';
import { hashPassword, passwordProblems, verifyPassword } from './password.js';

const problem = (password: string, email = 'someone@example.test') =>
  passwordProblems(password, email, 'body.password')[0]?.message ?? null;

describe('password policy', () => {
  it.each([
    ['seven c', 'must be at least 8 characters'],
    ['x'.repeat(129), 'must be at most 128 characters'],
    ['\t \n        ', 'must not be only whitespace'],
    ['Someone@Example.test', 'must not be the same as the email address'],
    ['password', 'is too common; choose a less guessable password'],
    ['PassWord1', 'is too common; choose a less guessable password'],
    ['qwertyuiop', 'is too common; choose a less guessable password'],
  ])('rejects %j', (password, message) => {
    expect(problem(password)).toBe(message);
  });

  it.each([
    'correct horse battery staple',
    'x'.repeat(128),
    '🙂🙂🙂🙂🙂🙂🙂🙂',
    'ärzte-küche-2026',
  ])('accepts %j (length counted in characters, no composition rules)', (password) => {
    expect(problem(password)).toBeNull();
  });

  it('counts code points, so seven emoji are too short', () => {
    expect(problem('🙂'.repeat(7))).toBe('must be at least 8 characters');
  });
});

describe('argon2id hashing', () => {
  it('hashes with argon2id at the OWASP parameters and verifies', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(hash, 'correct horse battery staple')).toBe(true);
    expect(await verifyPassword(hash, 'Correct horse battery staple')).toBe(false);
    expect(await verifyPassword('not a hash', 'anything')).toBe(false);
  });
});
