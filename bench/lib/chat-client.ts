import type { LexicalState } from '../../src/modules/knowledge/lexical/protocol.js';
import type { DenseStatus } from '../../src/providers/vectorstore/dense-protocol.js';
import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import type { LoopDelay, MemoryReport, Request, Span } from './chat-server.js';
import type { GeneratedDocument } from './chat-corpus.js';
import { sleep } from './processes.js';

/**
 * The benchmark's side of bench/chat.ts: the service child (bench/lib/chat-server.ts) and its
 * IPC, the HTTP calls that set a run up (login, conversations, uploads), and a lean chat socket
 * that timestamps frames as they arrive.
 */

type Command = Request['cmd'];
type Reply = { id: number; result?: unknown; error?: string } | { ready: number };

export interface ServerChild {
  pid: number;
  port: number;
  base: string;
  call(
    cmd: 'search',
    extra: { query: string; limit: number },
  ): Promise<{ ms: number; hits: number }>;
  call(cmd: 'memory'): Promise<MemoryReport>;
  call(cmd: 'spans'): Promise<Span[]>;
  call(cmd: 'inflight'): Promise<number>;
  call(cmd: 'loop'): Promise<LoopDelay>;
  call(cmd: 'lexical'): Promise<LexicalState | null>;
  call(cmd: 'dense'): Promise<DenseStatus | null>;
  stop(): Promise<void>;
}

const SERVER = path.join(import.meta.dirname, 'chat-server.ts');

function whatIf(): Record<string, string> {
  const pairs = (process.env.BENCH_SERVICE_ENV ?? '').split(/\s+/).filter((p) => p.includes('='));
  return Object.fromEntries(
    pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]),
  );
}

/**
 * Starts the service child with exactly `env` (plus PATH and HOME); resolves once it listens.
 * BENCH_CPU_PROF=<dir> profiles the child's main thread (V8 .cpuprofile files, written at exit).
 * BENCH_SERVICE_ENV="NAME=value NAME=value" adds settings to the child's environment, for a
 * what-if run (the report does not say so: record it with the figures).
 */
export async function startServer(
  env: Record<string, string>,
  logFile: string,
): Promise<ServerChild> {
  const profileDir = process.env.BENCH_CPU_PROF;
  const child: ChildProcess = fork(SERVER, [], {
    execArgv: [
      '--import',
      'tsx',
      ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]),
    ],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, ...whatIf() },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const out = createWriteStream(logFile);
  child.stdout?.pipe(out, { end: false });
  child.stderr?.pipe(out, { end: false });
  child.once('close', () => out.end());
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  const port = await new Promise<number>((resolve, reject) => {
    child.on('message', (msg: Reply) => {
      if ('ready' in msg) {
        resolve(msg.ready);
        return;
      }
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error !== undefined) p?.reject(new Error(msg.error));
      else p?.resolve(msg.result);
    });
    child.once('exit', (code) => {
      reject(new Error(`bench server exited (${String(code)}); see ${logFile}`));
      for (const p of pending.values()) p.reject(new Error('bench server exited'));
    });
  });
  const call = (cmd: Command, extra: object = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ id, cmd, ...extra });
    });
  return {
    pid: child.pid ?? 0,
    port,
    base: `http://127.0.0.1:${String(port)}`,
    call: call as ServerChild['call'],
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await call('stop').catch(() => undefined);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP

async function api<T>(base: string, method: string, url: string, token?: string, body?: unknown) {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  let payload: string | FormData | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(base + url, { method, headers, body: payload ?? null });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${String(res.status)} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { data: T }).data;
}

export async function login(base: string, email: string, password: string): Promise<string> {
  const data = await api<{ access_token: string }>(base, 'POST', '/api/auth/login', undefined, {
    email,
    password,
  });
  return data.access_token;
}

/** Registers an account and signs it in; returns its access token. */
export async function newUser(base: string, email: string, password: string): Promise<string> {
  await api(base, 'POST', '/api/auth/register', undefined, {
    email,
    password,
    full_name: 'Chat Bench User',
  });
  return login(base, email, password);
}

export async function newConversation(base: string, token: string): Promise<string> {
  return (await api<{ id: string }>(base, 'POST', '/conversations', token, {})).id;
}

/** A text upload through the admin route; returns its indexing job's id. */
export async function uploadText(
  base: string,
  token: string,
  title: string,
  text: string,
  docKey?: string,
) {
  const form = new FormData();
  form.append('title', title);
  form.append('category', 'guidelines');
  if (docKey !== undefined) form.append('doc_key', docKey);
  form.append('file', new Blob([text], { type: 'text/plain' }), `${docKey ?? 'guideline'}.txt`);
  const doc = await api<{ job: { id: string } | null }>(
    base,
    'POST',
    '/api/admin/kb/documents',
    token,
    form,
  );
  return doc.job?.id ?? '';
}

/** How many indexing jobs are in `state`. */
export async function jobCount(base: string, token: string, state: string): Promise<number> {
  const url = `/api/admin/kb/jobs?state=${state}&limit=1`;
  return (await api<{ total: number }>(base, 'GET', url, token)).total;
}

// ---------------------------------------------------------------------------------------------
// Sockets

export interface TurnResult {
  /** Milliseconds from the send to the first chunk, or to message_done when none came. */
  firstChunkMs: number;
  doneMs: number;
  chunks: number;
  /** Codes of the error frames of the turn (KB_TIMEOUT, RATE_LIMITED, ...). */
  errors: string[];
  completed: boolean;
  sentAt: number;
  /** The answer as streamed. */
  text: string;
  /** The stored answer of message_done (content, citations, tool calls). */
  message?: Record<string, unknown>;
}

type Frame = Record<string, unknown> & { type: string };
/** Errors that end a send before any answer exists (the turn gets no message_done). */
const FATAL = new Set([
  'UNAUTHORIZED',
  'RATE_LIMITED',
  'VALIDATION_ERROR',
  'NOT_FOUND',
  // A turn the knowledge base could not serve in time is refused before it starts.
  'SERVICE_UNAVAILABLE',
]);

/** One chat socket: `connected` awaited on open; one turn at a time; pings by number. */
export class BenchSocket {
  private onFrame: ((f: Frame, at: number) => void) | undefined;
  private readonly pongs = new Map<number, (at: number) => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const at = performance.now();
      const frame = JSON.parse(data.toString('utf8')) as Frame;
      if (frame.type === 'pong' && typeof frame.ts === 'number') {
        const done = this.pongs.get(frame.ts);
        this.pongs.delete(frame.ts);
        done?.(at);
        return;
      }
      this.onFrame?.(frame, at);
    });
    ws.on('error', () => undefined);
  }

  static open(port: number, token: string): Promise<BenchSocket> {
    const ws = new WebSocket(
      `ws://127.0.0.1:${String(port)}/ws?token=${encodeURIComponent(token)}`,
      {
        perMessageDeflate: false,
      },
    );
    const socket = new BenchSocket(ws);
    return new Promise((resolve, reject) => {
      socket.onFrame = (f) => {
        socket.onFrame = undefined;
        if (f.type === 'connected') resolve(socket);
        else reject(new Error(`expected connected, got ${JSON.stringify(f)}`));
      };
      ws.once('error', reject);
      ws.once('close', (code) => {
        reject(new Error(`closed ${String(code)} before connected`));
      });
    });
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends a ping numbered `n`; resolves with the round trip in ms. */
  ping(n: number): Promise<number> {
    const sent = performance.now();
    return new Promise((resolve) => {
      this.pongs.set(n, (at) => {
        resolve(at - sent);
      });
      this.ws.send(JSON.stringify({ type: 'ping', ts: n }));
    });
  }

  /** One question; resolves at its message_done (or a fatal error, or after `timeoutMs`). */
  turn(conversationId: string, content: string, timeoutMs = 120_000): Promise<TurnResult> {
    const sentAt = performance.now();
    const result: TurnResult = {
      firstChunkMs: Number.NaN,
      doneMs: Number.NaN,
      chunks: 0,
      errors: [],
      completed: false,
      sentAt,
      text: '',
    };
    return new Promise((resolve) => {
      const finish = (at: number) => {
        clearTimeout(timer);
        this.onFrame = undefined;
        result.doneMs = at - sentAt;
        if (Number.isNaN(result.firstChunkMs)) result.firstChunkMs = result.doneMs;
        resolve(result);
      };
      const timer = setTimeout(() => {
        result.errors.push('TIMEOUT');
        finish(performance.now());
      }, timeoutMs);
      this.onFrame = (f, at) => {
        // The user's other sockets' answers are announced here too: only this conversation's count.
        if (f.type === 'chunk' && f.conversation_id === conversationId) {
          if (result.chunks++ === 0) result.firstChunkMs = at - sentAt;
          result.text += String(f.delta);
        } else if (f.type === 'message_done' && f.conversation_id === conversationId) {
          result.completed = true;
          result.message = f.message as Record<string, unknown>;
          finish(at);
        } else if (f.type === 'error') {
          result.errors.push(String(f.code));
          if (FATAL.has(String(f.code))) finish(at);
        }
      };
      this.ws.send(
        JSON.stringify({ type: 'message_send', conversation_id: conversationId, content }),
      );
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** Uploads in flight while seeding. */
const UPLOADS_AT_ONCE = 4;

/** Uploads every document through the admin route and waits for their jobs; answers the seconds. */
export async function seedDocuments(
  server: ServerChild,
  token: string,
  docs: GeneratedDocument[],
): Promise<number> {
  const started = performance.now();
  let next = 0;
  const uploader = async () => {
    while (next < docs.length) {
      const doc = docs[next++]!;
      await uploadText(server.base, token, doc.title, doc.text);
    }
  };
  await Promise.all(Array.from({ length: UPLOADS_AT_ONCE }, uploader));
  for (let last = 0; ;) {
    const done = await jobCount(server.base, token, 'completed');
    const failed = await jobCount(server.base, token, 'failed');
    if (failed > 0) throw new Error(`${String(failed)} indexing jobs failed`);
    if (done >= docs.length) break;
    if (performance.now() - last > 10_000) {
      console.log(`seeding: ${String(done)}/${String(docs.length)} documents indexed`);
      last = performance.now();
    }
    await sleep(500);
  }
  return (performance.now() - started) / 1000;
}

/** The service's settings: the defaults, except what a benchmark of this size needs. */
export const SERVICE_ENV = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'info',
  RATE_LIMIT_REGISTER_PER_HOUR: '100000',
  RATE_LIMIT_LOGIN_PER_MINUTE: '100000',
  RATE_LIMIT_REFRESH_PER_MINUTE: '100000',
  RATE_LIMIT_HEALTH_PER_MINUTE: '100000',
  RATE_LIMIT_READY_PER_MINUTE: '100000',
  CHAT_SENDS_PER_MINUTE: '100000',
  CHAT_MAX_ACTIVE_ANSWERS: '1000',
  WS_MAX_SOCKETS_PER_USER: '20000',
  WS_IDLE_TIMEOUT_MS: '3600000',
  ACCESS_TOKEN_TTL_SECONDS: '3600',
};
