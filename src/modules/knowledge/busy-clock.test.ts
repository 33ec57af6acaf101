import { describe, expect, it } from 'vitest';
import { BusyClock, type Clock } from './busy-clock.js';

/** A clock the test moves by hand, so the stopwatch's arithmetic is checked without waiting. */
function manualClock() {
  let now = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  let ids = 0;
  const clock: Clock = {
    now: () => now,
    setTimeout: (fn, ms) => {
      timers.set(++ids, { at: now + ms, fn });
      return ids;
    },
    clearTimeout: (id) => timers.delete(id as number),
  };
  const advance = (ms: number) => {
    now += ms;
    for (const [id, timer] of [...timers]) {
      if (timer.at <= now) {
        timers.delete(id);
        timer.fn();
      }
    }
  };
  return { clock, advance, pending: () => timers.size };
}

describe('BusyClock', () => {
  it('counts only the time nothing holds it, and expires once the budget is used', () => {
    const { clock, advance } = manualClock();
    let expired = 0;
    const busy = new BusyClock(1000, () => (expired += 1), 2, clock);
    advance(5000); // queued and reading the original: not counted
    busy.release();
    advance(5000);
    expect(busy.used).toBe(0);
    busy.release();
    advance(600);
    busy.hold(); // a batch is written to the database
    advance(60_000);
    expect(busy.used).toBe(600);
    expect(expired).toBe(0);
    busy.release();
    advance(399);
    expect(expired).toBe(0);
    advance(1);
    expect(expired).toBe(1);
    advance(10_000);
    expect(expired).toBe(1);
  });

  it('never fires after stop, and nested holds need as many releases', () => {
    const { clock, advance, pending } = manualClock();
    let expired = false;
    const busy = new BusyClock(100, () => (expired = true), 0, clock);
    busy.hold();
    busy.hold();
    busy.release();
    advance(1000);
    expect(busy.used).toBe(0);
    busy.release();
    advance(50);
    busy.stop();
    expect(pending()).toBe(0);
    advance(1000);
    expect(expired).toBe(false);
    expect(busy.used).toBe(50);
  });
});
