import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { passwordProblems } from './password.js';

// Alone in its file (vitest runs each file in a fresh process), so nothing else has loaded the
// package before these tests look at Node's module cache.
const require = createRequire(import.meta.url);
const packageEntry = require.resolve('@zxcvbn-ts/language-common');
const loaded = () => Object.keys(require.cache).filter((path) => path.includes('@zxcvbn-ts'));

describe('loading the common-password list', () => {
  it('waits for the first check, then loads (and decompresses) the list once', () => {
    expect(loaded()).toEqual([]);

    expect(passwordProblems('password123', 'a@example.test', 'password')).toHaveLength(1);
    expect(require.cache[packageEntry]).toBeDefined();

    // Forget the package: a check that required (and so decompressed) it again would bring it back.
    for (const path of loaded()) Reflect.deleteProperty(require.cache, path);
    expect(passwordProblems('letmein123', 'a@example.test', 'password')).toHaveLength(1);
    expect(passwordProblems('a long passphrase', 'a@example.test', 'password')).toEqual([]);
    expect(loaded()).toEqual([]);
  });
});
