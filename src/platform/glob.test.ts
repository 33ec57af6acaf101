import { describe, expect, it } from 'vitest';
import { GlobError, escapeGlob, globToRegExp } from './glob.js';

const matches = (pattern: string, key: string) => globToRegExp(pattern).test(key);

describe('globToRegExp (Redis glob semantics)', () => {
  it.each([
    ['*', 'anything:at/all', true],
    ['user:*', 'user:42', true],
    ['user:*', 'user:', true],
    ['user:*', 'users:42', false],
    ['*:42', 'user:42', true],
    ['u?er:1', 'user:1', true],
    ['u?er:1', 'uer:1', false],
    ['user:[0-9]', 'user:7', true],
    ['user:[0-9]', 'user:a', false],
    ['user:[^0-9]', 'user:a', true],
    ['user:[^0-9]', 'user:7', false],
    ['user:[9-0]', 'user:5', true],
    ['user:[abc]', 'user:b', true],
    ['user:[a\\]]', 'user:]', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['a.b', 'a.b', true],
    ['a.b', 'axb', false],
    ['(x)+', '(x)+', true],
    ['kb-search:*', 'kb-search:ab12', true],
    ['kb-search:*', 'kbxsearch:ab12', false],
    ['**', '', true],
    ['flags:all', 'flags:all', true],
    ['flags:all', 'flags:all2', false],
  ])('%s against %s is %s', (pattern, key, expected) => {
    expect(matches(pattern, key)).toBe(expected);
  });

  it('refuses an unclosed class', () => {
    expect(() => globToRegExp('user:[abc')).toThrow(GlobError);
  });

  it('escapes a prefix so that it matches only itself', () => {
    const prefix = 'a*b?[c]\\d:';
    expect(matches(escapeGlob(prefix) + '*', `${prefix}user:1`)).toBe(true);
    expect(matches(escapeGlob(prefix) + '*', 'aXbYc\\d:user:1')).toBe(false);
  });
});
