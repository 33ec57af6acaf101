import { describe, expect, it } from 'vitest';
import { redactMessage, serializeError } from './log-errors.js';

describe('redactMessage', () => {
  it.each([
    [
      'Failed query: select "id" from "users" where "email" = $1\nparams: a@b.example',
      'Failed query: select "id" from "users" where "email" = $1',
    ],
    [
      'invalid input syntax for type integer: "a@b.example"',
      'invalid input syntax for type integer: "[redacted]"',
    ],
    ['Key (email)=(a@b.example) already exists.', 'Key (email)=([redacted]) already exists.'],
    [
      "invalid input value for enum role: 'secret'",
      "invalid input value for enum role: '[redacted]'",
    ],
    ['relation "kb_chunks" does not exist', 'relation "kb_chunks" does not exist'],
  ])('takes the values out of %j', (message, redacted) => {
    expect(redactMessage(message)).toBe(redacted);
  });

  it('cuts a long message', () => {
    expect(redactMessage('x'.repeat(2000))).toHaveLength(501);
  });
});

describe('serializeError', () => {
  it('keeps class, codes, names and frames, drops the first stack line and unknown properties', () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "k"'), {
      code: '23505',
      constraint: 'users_email_lower_key',
      table: 'users',
      detail: 'Key (lower(email))=(a@b.example) already exists.',
    });
    const err = Object.assign(new Error('Failed query: insert\nparams: a@b.example', { cause }), {
      params: ['a@b.example'],
    });
    const out = serializeError(err);
    expect(JSON.stringify(out)).not.toContain('a@b.example');
    expect(out).toMatchObject({
      type: 'Error',
      message: 'Failed query: insert',
      cause: { code: '23505', constraint: 'users_email_lower_key', table: 'users' },
    });
    expect(out.stack?.split('\n').every((line) => /^\s+at /.test(line))).toBe(true);
  });

  it('describes a thrown value that is not an Error by its type only', () => {
    expect(serializeError('a@b.example')).toEqual({ type: 'string', message: '(not an Error)' });
  });
});
