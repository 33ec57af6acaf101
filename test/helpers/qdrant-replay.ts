import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';

/**
 * A local stand-in for Qdrant's REST API in contract tests: it answers the exchanges of a fixture
 * (test/fixtures/qdrant/<name>.json) in order and records anything the adapter sends that the
 * fixture does not hold (method, path, query, headers given, or JSON body). Each fixture's
 * `description` says where its exchanges come from.
 */
export interface Exchange {
  request: {
    method: string;
    path: string;
    query?: Record<string, string>;
    headers?: Record<string, string>;
    body?: unknown;
  };
  response: { status: number; body?: unknown; text?: string; contentType?: string };
}

export const QDRANT_FIXTURES = path.resolve(import.meta.dirname, '../fixtures/qdrant');

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
};

function mismatches(expected: Exchange['request'], req: IncomingMessage, body: unknown): string[] {
  const url = new URL(req.url ?? '/', 'http://replay');
  const problems: string[] = [];
  const actual = `${req.method ?? ''} ${url.pathname}`;
  if (actual !== `${expected.method} ${expected.path}`) problems.push(`sent ${actual}`);
  const query = Object.fromEntries(url.searchParams);
  if (!isDeepStrictEqual(query, expected.query ?? {})) problems.push(`query ${url.search}`);
  for (const [name, value] of Object.entries(expected.headers ?? {})) {
    if (req.headers[name] !== value) problems.push(`header ${name}: ${String(req.headers[name])}`);
  }
  if (!isDeepStrictEqual(body, expected.body)) problems.push(`body ${JSON.stringify(body)}`);
  return problems;
}

export class Replay {
  readonly failures: string[] = [];
  private next = 0;
  private constructor(
    private readonly exchanges: Exchange[],
    private readonly server: Server,
  ) {}

  static async start(fixture: string): Promise<Replay> {
    const file = path.join(QDRANT_FIXTURES, `${fixture}.json`);
    const { exchanges } = JSON.parse(readFileSync(file, 'utf8')) as { exchanges: Exchange[] };
    const server = createServer();
    const replay = new Replay(exchanges, server);
    server.on('request', (req, res) => {
      void readBody(req).then((body) => {
        const exchange = replay.exchanges[replay.next++];
        const problems = exchange ? mismatches(exchange.request, req, body) : ['unexpected'];
        if (!exchange || problems.length > 0) {
          const failure = `#${replay.next} ${req.method ?? ''} ${req.url ?? ''}: ${problems.join('; ')}`;
          replay.failures.push(failure);
          // Shown in the adapter's error too, so the failing test says what differed.
          res.writeHead(599, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ status: { error: `replay mismatch ${failure}` } }));
          return;
        }
        const { status, body: json, text, contentType } = exchange.response;
        res.writeHead(status, { 'content-type': contentType ?? 'application/json' });
        res.end(text ?? JSON.stringify(json));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return replay;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Every exchange of the fixture happened, and nothing else. */
  verify(): void {
    expect(this.failures).toEqual([]);
    expect(this.next).toBe(this.exchanges.length);
  }

  close(): Promise<void> {
    return new Promise((resolve) =>
      this.server.close(() => {
        resolve();
      }),
    );
  }
}
