import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';

/**
 * `tsx script` as one process (`node --import tsx`), so a signal reaches the program itself:
 * `npx` does not pass SIGTERM on, and the tsx CLI's extra parent process would be orphaned by a
 * SIGKILL.
 */
const TSX_ARGS = ['--import', 'tsx'];

/** Settings the parent test process may carry that must not leak into a spawned service. */
const SERVICE_KEYS = [
  'DATABASE_URL',
  'REDIS_URL',
  'REDIS_PREFIX',
  'JWT_SECRET',
  'BOOTSTRAP_ADMIN_EMAIL',
  'BOOTSTRAP_ADMIN_PASSWORD',
  'DATA_DIR',
  'PORT',
  'HOST',
  'OPS_PORT',
  'OPS_HOST',
  'LOG_LEVEL',
  'NODE_ENV',
];

/** The parent's environment without service settings, plus `env`. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !SERVICE_KEYS.includes(key)),
  );
  // Services started side by side must not all claim the operator port (8001 by default).
  return { ...base, OPS_PORT: '0', ...env };
}

export interface Spawned {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `tsx <script> ...args`, collecting stdout and stderr together. */
export function spawnTsx(script: string, args: string[], env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, [...TSX_ARGS, script, ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      resolve({ code, signal });
    });
  });
  return { child, output: () => out, exited };
}

/** The exit of `s`, or null when it has not exited within `ms`. */
export function exitWithin(s: Spawned, ms: number): Promise<Awaited<Spawned['exited']> | null> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    s.exited,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        resolve(null);
      }, ms);
    }),
  ]).finally(() => {
    clearTimeout(timer);
  });
}

/** Runs a tsx script to completion; kills it when it runs longer than `timeoutMs`. */
export async function runTsx(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 45_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...TSX_ARGS, script, ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => {
    child.once('close', resolve);
  });
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** A port nobody listens on at the moment of asking. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface HttpAnswer {
  status: number;
  body: string;
}

/** One GET on a fresh connection (no keep-alive pool), so a refused connection shows as such. */
export function httpGet(port: number, urlPath: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** Polls until `GET urlPath` answers 200, or fails after `timeoutMs`. */
export async function waitForHttp(port: number, urlPath: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await httpGet(port, urlPath);
      if (res.status === 200) return res;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`nothing answered on port ${port} in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
