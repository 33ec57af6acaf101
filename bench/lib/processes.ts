import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export interface Server {
  name: string;
  pid: number;
  url: string;
  logFile: string;
  stop(): Promise<void>;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A port the OS reports free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      srv.close(() => {
        resolve(port);
      });
    });
  });
}

/**
 * Starts `node <args>` with exactly `env` (no inherited settings), its output to `logFile`, and
 * waits until GET `readyPath` answers 200.
 */
export async function startServer(opts: {
  name: string;
  args: string[];
  env: Record<string, string>;
  port: number;
  logFile: string;
  readyPath: string;
}): Promise<Server> {
  // stdout and stderr go through a pipe, as under a container runtime or systemd, to the log file.
  const child = spawn(process.execPath, opts.args, {
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = createWriteStream(opts.logFile);
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  child.once('close', () => out.end());
  const url = `http://127.0.0.1:${opts.port}`;
  const exited = () => child.exitCode ?? child.signalCode;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = exited();
    if (status !== null) {
      throw new Error(`${opts.name} exited (${status}) at start-up:\n${tail(opts.logFile)}`);
    }
    if (Date.now() > deadline) {
      await stop(child);
      throw new Error(`${opts.name} not ready within 30 s:\n${tail(opts.logFile)}`);
    }
    try {
      const res = await fetch(url + opts.readyPath);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  if (child.pid === undefined) throw new Error(`${opts.name} has no pid`);
  return { name: opts.name, pid: child.pid, url, logFile: opts.logFile, stop: () => stop(child) };
}

/** SIGTERM (graceful shutdown), then SIGKILL after 10 s. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Resident set size now and at its peak, in MiB, from /proc/<pid>/status. */
export function memory(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (m?.[1] === undefined) throw new Error(`${field} missing from /proc/${pid}/status`);
    return Number(m[1]) / 1024;
  };
  return { rssMiB: kib('VmRSS'), peakMiB: kib('VmHWM') };
}

/** USER_HZ: 100 on every Linux architecture Node supports. */
const CLOCK_TICKS = 100;

/** CPU time (user + system) the process has used so far, in seconds, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / CLOCK_TICKS;
}
