import { hostname } from 'node:os';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Database } from '../../db/client.js';
import type { Metrics } from '../../platform/metrics.js';
import {
  SnapshotRing,
  windowFigures,
  type Bucket,
  type HttpSnapshot,
  type HttpWindowFigures,
} from './http-window.js';

export interface SystemMetricsOptions {
  /** How often the counters are sampled (default 15 s). */
  sampleMs?: number;
  /** How far back the request figures reach (default 5 minutes). */
  windowMs?: number;
  now?: () => number;
}

interface CpuMark {
  at: number;
  usage: NodeJS.CpuUsage;
}

interface LoopFigures {
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  mean_ms: number | null;
  interval_seconds: number;
}

export type PoolFigures =
  | { kind: 'postgresql'; total: number; idle: number; waiting: number; max: number }
  | { kind: 'pglite' };

/** The event-loop monitor's timer period: its samples include it, the figures do not. */
const LOOP_RESOLUTION_MS = 10;
const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
/** A delay sample (ns, timer period included) as lag in ms beyond the period. */
const lagMs = (ns: number) =>
  Number.isFinite(ns) && ns > 0 ? round(Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS)) : null;

/**
 * This process's figures for the admin panel: CPU over the last sampling interval, memory,
 * event-loop delay, the database pool, and request rate, error shares and latency quantiles over
 * the last five minutes from the service's own `http_requests_total` and
 * `http_request_duration_seconds`. A timer (unref'd) samples every `sampleMs` into a ring.
 */
export class SystemMetrics {
  private readonly sampleMs: number;
  private readonly now: () => number;
  private readonly ring: SnapshotRing;
  private readonly loop: IntervalHistogram = monitorEventLoopDelay({
    resolution: LOOP_RESOLUTION_MS,
  });
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt: number;
  /** The last two CPU marks: CPU % is over the interval between them (or since the first one). */
  private cpu: CpuMark[] = [];
  private loopInterval: LoopFigures | undefined;
  private loopSince: number;

  constructor(
    private readonly metrics: Metrics,
    private readonly database: Database,
    options: SystemMetricsOptions = {},
  ) {
    this.sampleMs = options.sampleMs ?? 15_000;
    this.now = options.now ?? Date.now;
    this.ring = new SnapshotRing(options.windowMs ?? 300_000);
    this.startedAt = this.now();
    this.loopSince = this.startedAt;
  }

  async start(): Promise<void> {
    this.loop.enable();
    this.cpu = [{ at: this.now(), usage: process.cpuUsage() }];
    this.ring.add(await this.snapshot());
    this.timer = setInterval(() => {
      void this.sample();
    }, this.sampleMs);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.loop.disable();
  }

  /** Everything the panel shows, as of now. */
  async read() {
    const now = this.now();
    const current = await this.snapshot();
    const baseline = this.ring.baseline(now) ?? current;
    const usage = process.cpuUsage();
    const memory = process.memoryUsage();
    return {
      process: {
        hostname: hostname(),
        pid: process.pid,
        node_version: process.version,
        uptime_seconds: Math.floor(process.uptime()),
        sampling_interval_seconds: this.sampleMs / 1000,
      },
      cpu: {
        ...this.cpuPercent(now, usage),
        user_seconds: round(usage.user / 1e6),
        system_seconds: round(usage.system / 1e6),
      },
      memory: {
        rss_bytes: memory.rss,
        heap_used_bytes: memory.heapUsed,
        heap_total_bytes: memory.heapTotal,
        external_bytes: memory.external,
        array_buffers_bytes: memory.arrayBuffers,
      },
      event_loop_lag: this.loopInterval ?? this.loopFigures(now),
      database_pool: this.poolFigures(),
      http: windowFigures(baseline, current) satisfies HttpWindowFigures,
    };
  }

  private async sample(): Promise<void> {
    const now = this.now();
    this.cpu = [...this.cpu.slice(-1), { at: now, usage: process.cpuUsage() }];
    this.loopInterval = this.loopFigures(now);
    this.loop.reset();
    this.loopSince = now;
    this.ring.add(await this.snapshot());
  }

  private cpuPercent(now: number, usage: NodeJS.CpuUsage) {
    // Two marks: the last completed interval; one (a young process): from it until now.
    const [from, second] = this.cpu;
    const to = second ?? { at: now, usage };
    if (from === undefined || to.at <= from.at) return { percent: null, interval_seconds: 0 };
    const busyMicros = to.usage.user - from.usage.user + to.usage.system - from.usage.system;
    const wallMicros = (to.at - from.at) * 1000;
    return {
      percent: round((busyMicros / wallMicros) * 100, 2),
      interval_seconds: round((to.at - from.at) / 1000),
    };
  }

  private loopFigures(now: number): LoopFigures {
    const h = this.loop;
    const empty = h.count === 0;
    return {
      p50_ms: empty ? null : lagMs(h.percentile(50)),
      p99_ms: empty ? null : lagMs(h.percentile(99)),
      max_ms: empty ? null : lagMs(h.max),
      mean_ms: empty ? null : lagMs(h.mean),
      interval_seconds: round((now - this.loopSince) / 1000),
    };
  }

  private poolFigures(): PoolFigures {
    const pool = this.database.pool?.();
    return pool === undefined ? { kind: 'pglite' } : { kind: 'postgresql', ...pool };
  }

  /** The cumulative totals of the two HTTP metrics, summed over routes and methods. */
  private async snapshot(): Promise<HttpSnapshot> {
    const [requests, duration] = await Promise.all([
      this.metrics.httpRequests.get(),
      this.metrics.httpDuration.get(),
    ]);
    const snap: HttpSnapshot = {
      at: this.now(),
      requests: 0,
      clientErrors: 0,
      serverErrors: 0,
      buckets: [],
    };
    for (const { value, labels } of requests.values) {
      const status = Number(labels.status);
      snap.requests += value;
      if (status >= 500) snap.serverErrors += value;
      else if (status >= 400) snap.clientErrors += value;
    }
    const byBound = new Map<number, number>();
    for (const { value, labels, metricName } of duration.values) {
      if (metricName !== 'http_request_duration_seconds_bucket') continue;
      // prom-client adds `le` to the declared labels of bucket samples.
      const bound = (labels as { le?: string | number }).le;
      const le = bound === '+Inf' ? Infinity : Number(bound);
      if (Number.isNaN(le)) continue;
      byBound.set(le, (byBound.get(le) ?? 0) + value);
    }
    snap.buckets = [...byBound].map(([le, count]): Bucket => ({ le, count }));
    snap.buckets.sort((a, b) => a.le - b.le);
    return snap;
  }
}
