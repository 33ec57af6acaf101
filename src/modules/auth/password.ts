import { createRequire } from 'node:module';
import { hash, verify } from '@node-rs/argon2';
import type { dictionary as ZxcvbnDictionary } from '@zxcvbn-ts/language-common';
import type { FieldError } from '../../errors.js';

/** argon2id with the OWASP parameters: 19 MiB, two passes, one lane (Algorithm.Argon2id = 2). */
const ARGON2 = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => hash(password, ARGON2);

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;
/** Spends the time of a real verification, so unknown emails cannot be told apart by timing. */
export async function verifyAgainstDummy(password: string): Promise<void> {
  dummyHash ??= hashPassword('timing-equaliser-not-a-real-password');
  await verifyPassword(await dummyHash, password);
}

/**
 * The ranked list of common passwords of `@zxcvbn-ts/language-common` (49,233 entries, all
 * lower-case, none with surrounding spaces). The package decompresses its lists when its module is
 * evaluated (about 40 ms and 6 MB of heap, measured), so it is required on the first check instead
 * of imported at start-up; Node's module cache and the Set below make that a one-off (later checks
 * take about a microsecond). A candidate is compared lower-cased and trimmed: `Password123` and
 * ` password123 ` are as guessable as `password123`.
 */
let commonPasswords: ReadonlySet<string> | undefined;
function isCommonPassword(password: string): boolean {
  commonPasswords ??= loadCommonPasswords();
  return commonPasswords.has(password.trim().toLowerCase());
}

function loadCommonPasswords(): ReadonlySet<string> {
  const require = createRequire(import.meta.url);
  const { dictionary } = require('@zxcvbn-ts/language-common') as {
    dictionary: typeof ZxcvbnDictionary;
  };
  return new Set(dictionary['passwords-common']);
}

/**
 * NIST 800-63B style rules: 8 to 128 characters, not only whitespace, not the email, not a common
 * password. No composition rules. Length bounds are also in the request schema; checked here too
 * so the bootstrap and CLI paths get the same rules.
 */
export function passwordProblems(password: string, email: string, field: string): FieldError[] {
  const length = Array.from(password).length; // code points, as the schema counts
  const problem =
    length < 8
      ? 'must be at least 8 characters'
      : length > 128
        ? 'must be at most 128 characters'
        : password.trim() === ''
          ? 'must not be only whitespace'
          : password.trim().toLowerCase() === email.trim().toLowerCase()
            ? 'must not be the same as the email address'
            : isCommonPassword(password)
              ? 'is too common; choose a less guessable password'
              : null;
  return problem === null ? [] : [{ field, message: problem }];
}
