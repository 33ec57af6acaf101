import { afterEach, describe, expect, it, vi } from 'vitest';
import { isoNow } from './clock.js';

describe('isoNow', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is the ISO 8601 form of the current millisecond, also when the clock moves', () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 0, 1, 12, 0, 0, 5) });
    expect(isoNow()).toBe('2026-01-01T12:00:00.005Z');
    expect(isoNow()).toBe('2026-01-01T12:00:00.005Z');
    vi.advanceTimersByTime(1);
    expect(isoNow()).toBe('2026-01-01T12:00:00.006Z');
    vi.setSystemTime(Date.UTC(2025, 11, 31));
    expect(isoNow()).toBe('2025-12-31T00:00:00.000Z');
  });
});
