import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './process.js';

/**
 * A redis-server of the test's own, on a free port, without persistence: a test may stop or
 * restart it (a restart comes back empty, as a Redis without persistence does) without touching
 * the shared server everyone else uses.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(): Promise<PrivateRedis> {
    const dir = await mkdtemp(path.join(tmpdir(), 'mas-redis-'));
    const redis = new PrivateRedis(await freePort(), dir);
    await redis.up();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${String(this.port)}`;
  }

  /** A client of its own (no key prefix), for the test to look inside. */
  client(): Redis {
    return new Redis(this.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  }

  /** Kills the server (SIGKILL: no goodbye to its clients) and starts it again, empty. */
  async restart(downMs = 0): Promise<void> {
    await this.kill();
    if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.up();
  }

  async stop(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async up(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`redis-server did not start: ${out}`));
      }, 10_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited: ${out}`));
      });
    });
  }

  /** Kills the server (SIGKILL: no goodbye to its clients) until `restart`. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child?.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
