let cachedMs = Number.NaN;
let cachedIso = '';

/**
 * The current time as an ISO 8601 string, formatted once per millisecond: `toISOString` costs about
 * 0.4 µs, and at tens of thousands of requests per second most requests (their envelope `meta` and
 * their access line) fall in a millisecond already formatted.
 */
export function isoNow(): string {
  const now = Date.now();
  if (now !== cachedMs) {
    cachedIso = new Date(now).toISOString();
    cachedMs = now;
  }
  return cachedIso;
}
