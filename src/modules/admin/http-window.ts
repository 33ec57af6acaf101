/**
 * Request rates, error shares and latency quantiles over a recent window, from cumulative
 * snapshots of the service's own `http_requests_total` counter and
 * `http_request_duration_seconds` histogram. Pure: snapshots come in, numbers come out.
 */

/** One histogram bucket: observations at or below `le` seconds (cumulative; `le` may be Infinity). */
export interface Bucket {
  le: number;
  count: number;
}

/** The cumulative totals at one moment, summed over every label set. */
export interface HttpSnapshot {
  /** Epoch milliseconds. */
  at: number;
  requests: number;
  clientErrors: number;
  serverErrors: number;
  /** Sorted by `le`, ending with the `+Inf` bucket. */
  buckets: Bucket[];
}

export interface HttpWindowFigures {
  window_seconds: number;
  requests: number;
  requests_per_second: number;
  /** Share of answers with a 5xx status (0..1); null without requests. */
  error_rate: number | null;
  /** Share of answers with a 4xx status (0..1); null without requests. */
  client_error_rate: number | null;
  latency_ms: { p50: number | null; p95: number | null; p99: number | null };
}

/**
 * The `q`-quantile of a cumulative histogram, as Prometheus's `histogram_quantile` estimates it:
 * find the bucket holding the rank `q * total`, then interpolate linearly between its lower and
 * upper bound (the first bucket starts at 0 when its bound is positive). A rank in the `+Inf`
 * bucket answers the highest finite bound. Null when the histogram holds no observations.
 */
export function histogramQuantile(q: number, buckets: readonly Bucket[]): number | null {
  if (buckets.length < 2 || !Number.isFinite(q)) return null;
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const last = sorted[sorted.length - 1];
  if (last?.le !== Infinity) return null;
  // Cumulative counts never decrease; a sample taken between two increments could say otherwise.
  let highest = 0;
  const counts = sorted.map((b) => (highest = Math.max(highest, b.count)));
  const total = counts[counts.length - 1] ?? 0;
  if (total <= 0) return null;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const rank = q * total;
  const finite = sorted.length - 1;
  let i = counts.findIndex((c, index) => index < finite && c >= rank);
  if (i === -1) i = finite;
  if (i === finite) return sorted[finite - 1]?.le ?? null;
  const upper = sorted[i]?.le ?? 0;
  if (i === 0 && upper <= 0) return upper;
  const lower = i === 0 ? 0 : (sorted[i - 1]?.le ?? 0);
  const below = i === 0 ? 0 : (counts[i - 1] ?? 0);
  const inBucket = (counts[i] ?? 0) - below;
  if (inBucket <= 0) return upper;
  return lower + ((upper - lower) * (rank - below)) / inBucket;
}

/** The increase of every cumulative total from `older` to `newer` (never negative). */
export function diffSnapshots(older: HttpSnapshot, newer: HttpSnapshot): HttpSnapshot {
  const before = new Map(older.buckets.map((b) => [b.le, b.count]));
  return {
    at: newer.at,
    requests: Math.max(0, newer.requests - older.requests),
    clientErrors: Math.max(0, newer.clientErrors - older.clientErrors),
    serverErrors: Math.max(0, newer.serverErrors - older.serverErrors),
    buckets: newer.buckets.map((b) => ({
      le: b.le,
      count: Math.max(0, b.count - (before.get(b.le) ?? 0)),
    })),
  };
}

const toMs = (seconds: number | null) =>
  seconds === null || !Number.isFinite(seconds) ? null : Math.round(seconds * 1e6) / 1e3;

/** The figures between a baseline snapshot and the current one. */
export function windowFigures(oldest: HttpSnapshot, newest: HttpSnapshot): HttpWindowFigures {
  const delta = diffSnapshots(oldest, newest);
  const seconds = Math.max(0, (newest.at - oldest.at) / 1000);
  const share = (n: number) => (delta.requests === 0 ? null : n / delta.requests);
  return {
    window_seconds: Math.round(seconds * 1000) / 1000,
    requests: delta.requests,
    requests_per_second: seconds === 0 ? 0 : delta.requests / seconds,
    error_rate: share(delta.serverErrors),
    client_error_rate: share(delta.clientErrors),
    latency_ms: {
      p50: toMs(histogramQuantile(0.5, delta.buckets)),
      p95: toMs(histogramQuantile(0.95, delta.buckets)),
      p99: toMs(histogramQuantile(0.99, delta.buckets)),
    },
  };
}

/**
 * The last `windowMs` of snapshots, oldest first. `add` keeps every snapshot taken within the
 * window of the newest; `baseline` is the oldest of them (the window actually covered).
 */
export class SnapshotRing {
  private readonly ring: HttpSnapshot[] = [];

  constructor(private readonly windowMs: number) {}

  add(snapshot: HttpSnapshot): void {
    this.ring.push(snapshot);
    this.prune(snapshot.at);
  }

  /** The oldest snapshot no older than the window before `now`. */
  baseline(now: number): HttpSnapshot | undefined {
    this.prune(now);
    return this.ring[0];
  }

  get size(): number {
    return this.ring.length;
  }

  private prune(now: number): void {
    // The newest snapshot stays even when old: a stalled timer leaves a longer window, not none.
    while (this.ring.length > 1 && (this.ring[0]?.at ?? now) < now - this.windowMs) {
      this.ring.shift();
    }
  }
}
