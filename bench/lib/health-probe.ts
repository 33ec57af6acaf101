import { fork } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { stats, type Stats } from './chat-parts.js';

/**
 * `GET /health` every few milliseconds from a process of its own, as a load balancer probes: in
 * the load generator's process, each probe's answer also waited for that process's event loop,
 * busy with sixteen clients' responses or two hundred sockets' frames, and was counted as the
 * service's. Run as `node --import tsx bench/lib/health-probe.ts <base> <everyMs>`: it probes
 * once, says `ready`, then probes until told `stop` and answers with its timings (ms).
 */

async function probeOnce(agent: http.Agent, url: string): Promise<number> {
  const start = performance.now();
  await new Promise<void>((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.resume();
        res.once('end', resolve);
        res.once('error', reject);
      })
      .once('error', reject);
  });
  return performance.now() - start;
}

async function probe(base: string, everyMs: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = `${base}/health`;
  const state = { running: true };
  process.on('message', (message) => {
    if (message === 'stop') state.running = false;
  });
  process.once('disconnect', () => process.exit(0));
  await probeOnce(agent, url);
  process.send?.('ready');
  const times: number[] = [];
  while (state.running) {
    times.push(await probeOnce(agent, url));
    await sleep(everyMs);
  }
  process.send?.(times, () => process.exit(0));
}

/** Starts the probe process; resolves once its first probe answered. `stop()` gives the timings. */
export async function startHealthProbe(
  base: string,
  everyMs: number,
): Promise<{ stop(): Promise<Stats> }> {
  const child = fork(import.meta.filename, [base, String(everyMs)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // The next message from the probe; its exit before one is an error.
  const next = () =>
    Promise.race([
      once(child, 'message').then(([message]: unknown[]) => message),
      once(child, 'exit').then(([code]: unknown[]) => {
        throw new Error(`health probe exited (${String(code)})`);
      }),
    ]);
  if ((await next()) !== 'ready') throw new Error('health probe: expected ready');
  return {
    async stop() {
      child.send('stop');
      return stats((await next()) as number[]);
    },
  };
}

if (process.argv[1] === import.meta.filename) {
  const [base = '', everyMs = '20'] = process.argv.slice(2);
  await probe(base, Number(everyMs));
}
