import http from 'node:http';
import { percentile } from './sections.js';

/**
 * Open-loop load: requests go out on a fixed schedule whatever the answers do, and each latency
 * runs from the request's scheduled time to its answer. A server that stalls for a second shows
 * a second of latency on every request due in that second, not on the few that were in flight
 * (closed-loop tools such as autocannon would hide it: coordinated omission).
 */

export interface PacedSpec {
  url: string;
  headers?: Record<string, string>;
  /** Requests per second. */
  rate: number;
}

export interface PacedResult {
  requests: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  max: number;
}

export interface PacedLoad {
  /** Stops sending, waits for the answers still due; fails on any error or non-2xx answer. */
  stop(): Promise<PacedResult>;
}

/** How often the schedule is checked; requests due meanwhile go out together. */
const TICK_MS = 1;

export function startPaced(spec: PacedSpec): PacedLoad {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const latencies: number[] = [];
  const failures: string[] = [];
  const pending = new Set<Promise<void>>();
  const started = performance.now();
  let sent = 0;
  const send = (scheduled: number) => {
    const done = request(spec, agent).then(
      (status) => {
        if (status >= 200 && status < 300) latencies.push(performance.now() - scheduled);
        else failures.push(`status ${status}`);
      },
      (err: unknown) => {
        failures.push(err instanceof Error ? err.message : String(err));
      },
    );
    pending.add(done);
    void done.finally(() => pending.delete(done));
  };
  const timer = setInterval(() => {
    // Request n is due at n / rate seconds: n = 0 at once.
    const due = Math.floor(((performance.now() - started) / 1000) * spec.rate) + 1;
    for (; sent < due; sent++) send(started + (sent * 1000) / spec.rate);
  }, TICK_MS);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      agent.destroy();
      if (failures.length > 0) {
        throw new Error(`${spec.url}: ${failures.length} failed requests (${failures[0] ?? ''})`);
      }
      const sorted = Float64Array.from(latencies).sort();
      return {
        requests: sorted.length,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        max: sorted.at(-1) ?? Number.NaN,
      };
    },
  };
}

function request(spec: PacedSpec, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(spec.url, { agent, headers: spec.headers ?? {} }, (res) => {
      res.resume();
      res.once('end', () => {
        resolve(res.statusCode ?? 0);
      });
      res.once('error', reject);
    });
    req.once('error', reject);
  });
}
