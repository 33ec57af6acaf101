/** PostgreSQL SQLSTATE of an error thrown by either driver (drizzle wraps it as `cause`). */
export function sqlState(err: unknown): string | undefined {
  for (
    let e: unknown = err;
    e !== null && typeof e === 'object';
    e = (e as { cause?: unknown }).cause
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

export const isUniqueViolation = (err: unknown): boolean => sqlState(err) === '23505';
