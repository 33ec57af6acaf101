import { describe, expect, it } from 'vitest';
import {
  SnapshotRing,
  diffSnapshots,
  histogramQuantile,
  windowFigures,
  type Bucket,
  type HttpSnapshot,
} from './http-window.js';

/** Cumulative buckets from per-bucket counts: bounds [0.1, 0.2, 0.5, 1, +Inf]. */
function buckets(...perBucket: number[]): Bucket[] {
  const bounds = [0.1, 0.2, 0.5, 1, Infinity];
  let sum = 0;
  return bounds.map((le, i) => ({ le, count: (sum += perBucket[i] ?? 0) }));
}

const snapshot = (at: number, over: Partial<HttpSnapshot> = {}): HttpSnapshot => ({
  at,
  requests: 0,
  clientErrors: 0,
  serverErrors: 0,
  buckets: buckets(),
  ...over,
});

describe('histogramQuantile (as Prometheus histogram_quantile)', () => {
  it('interpolates linearly inside the bucket that holds the rank', () => {
    // 100 observations: 50 in (0, 0.1], 30 in (0.1, 0.2], 20 in (0.2, 0.5].
    const b = buckets(50, 30, 20);
    // rank 50 is the top of the first bucket.
    expect(histogramQuantile(0.5, b)).toBeCloseTo(0.1, 12);
    // rank 95: 15 of the 20 in (0.2, 0.5] -> 0.2 + 0.3 * 15/20.
    expect(histogramQuantile(0.95, b)).toBeCloseTo(0.425, 12);
    // rank 65: 15 of the 30 in (0.1, 0.2] -> 0.15.
    expect(histogramQuantile(0.65, b)).toBeCloseTo(0.15, 12);
  });

  it('starts the first bucket at zero', () => {
    // 10 observations, all in (0, 0.1]: the median is half-way, 0.05.
    expect(histogramQuantile(0.5, buckets(10))).toBeCloseTo(0.05, 12);
    expect(histogramQuantile(0.1, buckets(10))).toBeCloseTo(0.01, 12);
  });

  it('answers the highest finite bound when the rank falls in +Inf', () => {
    // 90 fast, 10 slower than every finite bound: p95 is in +Inf.
    expect(histogramQuantile(0.95, buckets(90, 0, 0, 0, 10))).toBe(1);
    expect(histogramQuantile(0.9, buckets(90, 0, 0, 0, 10))).toBeCloseTo(0.1, 12);
  });

  it('skips empty buckets below the rank', () => {
    // 4 observations, all in (0.5, 1]: p50 -> 0.5 + 0.5 * 2/4.
    expect(histogramQuantile(0.5, buckets(0, 0, 0, 4))).toBeCloseTo(0.75, 12);
  });

  it('is null without observations and for malformed input', () => {
    expect(histogramQuantile(0.95, buckets())).toBeNull();
    expect(histogramQuantile(0.95, [])).toBeNull();
    expect(histogramQuantile(0.95, [{ le: 1, count: 3 }])).toBeNull();
    expect(
      histogramQuantile(0.95, [
        { le: 0.1, count: 3 },
        { le: 1, count: 4 },
      ]),
    ).toBeNull();
    expect(histogramQuantile(Number.NaN, buckets(5))).toBeNull();
  });

  it('answers -Inf and +Inf outside 0..1, as Prometheus does', () => {
    expect(histogramQuantile(-0.1, buckets(5))).toBe(-Infinity);
    expect(histogramQuantile(1.1, buckets(5))).toBe(Infinity);
  });

  it('takes buckets in any order and mends counts that went down', () => {
    const shuffled = [...buckets(50, 30, 20)].reverse();
    expect(histogramQuantile(0.95, shuffled)).toBeCloseTo(0.425, 12);
    const dented: Bucket[] = [
      { le: 0.1, count: 10 },
      { le: 0.2, count: 9 },
      { le: Infinity, count: 10 },
    ];
    expect(histogramQuantile(0.5, dented)).toBeCloseTo(0.05, 12);
  });
});

describe('window figures', () => {
  it('diffs the newest snapshot against the baseline', () => {
    const older = snapshot(1_000, {
      requests: 100,
      clientErrors: 3,
      serverErrors: 1,
      buckets: buckets(100),
    });
    const newer = snapshot(61_000, {
      requests: 200,
      clientErrors: 13,
      serverErrors: 6,
      buckets: buckets(150, 30, 20),
    });
    const delta = diffSnapshots(older, newer);
    expect(delta.buckets.map((b) => b.count)).toEqual([50, 80, 100, 100, 100]);
    const f = windowFigures(older, newer);
    expect(f.window_seconds).toBe(60);
    expect(f.requests).toBe(100);
    expect(f.requests_per_second).toBeCloseTo(100 / 60, 12);
    expect(f.error_rate).toBeCloseTo(0.05, 12);
    expect(f.client_error_rate).toBeCloseTo(0.1, 12);
    // The same 50/30/20 split as above, in milliseconds.
    expect(f.latency_ms.p95).toBeCloseTo(425, 9);
    expect(f.latency_ms.p50).toBeCloseTo(100, 9);
  });

  it('has no rates and no quantiles without requests', () => {
    const f = windowFigures(snapshot(0), snapshot(0));
    expect(f).toEqual({
      window_seconds: 0,
      requests: 0,
      requests_per_second: 0,
      error_rate: null,
      client_error_rate: null,
      latency_ms: { p50: null, p95: null, p99: null },
    });
  });

  it('never reports a negative increase (a counter that was reset)', () => {
    const f = windowFigures(snapshot(0, { requests: 10 }), snapshot(1000, { requests: 4 }));
    expect(f.requests).toBe(0);
  });
});

describe('SnapshotRing', () => {
  it('keeps the snapshots within the window; the oldest of them is the baseline', () => {
    const ring = new SnapshotRing(300_000);
    for (let at = 0; at <= 600_000; at += 15_000) ring.add(snapshot(at));
    // Taken at 300 s to 600 s, both ends included: 21 snapshots.
    expect(ring.size).toBe(21);
    expect(ring.baseline(600_000)?.at).toBe(300_000);
    // Seven seconds later the 300 s snapshot is out of the window.
    expect(ring.baseline(607_000)?.at).toBe(315_000);
  });

  it('covers less than the window while the process is young', () => {
    const ring = new SnapshotRing(300_000);
    ring.add(snapshot(5_000));
    ring.add(snapshot(20_000));
    expect(ring.baseline(30_000)?.at).toBe(5_000);
  });

  it('keeps the newest snapshot even when it is older than the window', () => {
    const ring = new SnapshotRing(300_000);
    ring.add(snapshot(0));
    ring.add(snapshot(15_000));
    expect(ring.baseline(1_000_000)?.at).toBe(15_000);
    expect(ring.size).toBe(1);
  });
});
