import { dictionary } from '@zxcvbn-ts/language-common';
import { describe, expect, it } from 'vitest';
import { hashPassword, passwordProblems, verifyPassword } from './password.js';

const TOO_COMMON = 'is too common; choose a less guessable password';

const problem = (password: string, email = 'someone@example.test') =>
  passwordProblems(password, email, 'body.password')[0]?.message ?? null;

/** The ranked list the rule uses, most common first (rank = index + 1). */
const ranked = dictionary['passwords-common'];
/** Entries the length rule lets through, so only the common-password rule can refuse them. */
const longEnough = (entry: string) => Array.from(entry).length >= 8;

/** Every long-enough entry among the first 1,000, then the first long-enough entry at or after
 * every 250th rank from 1,000 to the end of the list. */
function sampleOfTheList(): string[] {
  const top = ranked.slice(0, 1_000).filter(longEnough);
  const spread: string[] = [];
  for (let from = 1_000; from < ranked.length; from += 250) {
    const entry = ranked.slice(from).find(longEnough);
    if (entry !== undefined && !spread.includes(entry)) spread.push(entry);
  }
  return [...top, ...spread];
}

const capitalised = (entry: string) => entry.charAt(0).toUpperCase() + entry.slice(1);

describe('password policy', () => {
  it.each([
    ['seven c', 'must be at least 8 characters'],
    ['x'.repeat(129), 'must be at most 128 characters'],
    ['\t \n        ', 'must not be only whitespace'],
    ['Someone@Example.test', 'must not be the same as the email address'],
    ['password', TOO_COMMON],
    ['PassWord1', TOO_COMMON],
    ['qwertyuiop', TOO_COMMON],
    ['password123', TOO_COMMON],
    ['Password123', TOO_COMMON],
    ['PASSWORD123', TOO_COMMON],
    ['  password123\t', TOO_COMMON],
    [' 123456 ', TOO_COMMON],
  ])('rejects %j', (password, message) => {
    expect(problem(password)).toBe(message);
  });

  it.each([
    'correct horse battery staple',
    'a different passphrase 42',
    'a brand new passphrase',
    'a long admin passphrase',
    'password123 is not my password',
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

describe('the common-password list', () => {
  it('is the whole ranked list, lower-case and trimmed as the lookup assumes', () => {
    expect(ranked.length).toBeGreaterThanOrEqual(49_000);
    expect(ranked.indexOf('password123')).toBe(795);
    expect(ranked.filter((entry) => entry !== entry.trim().toLowerCase())).toEqual([]);
  });

  const sample = sampleOfTheList();

  it('samples the top 1,000 and ranks spread through the whole list', () => {
    expect(sample.length).toBeGreaterThan(400);
    expect(sample).toContain('password123');
    expect(ranked.indexOf(sample.at(-1)!)).toBeGreaterThan(49_000);
  });

  it.each([
    ['as listed', (entry: string) => entry],
    ['upper-case', (entry: string) => entry.toUpperCase()],
    ['capitalised', capitalised],
  ])('refuses every sampled entry %s', (_form, variant) => {
    const accepted = sample.map(variant).filter((candidate) => problem(candidate) !== TOO_COMMON);
    expect(accepted).toEqual([]);
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
