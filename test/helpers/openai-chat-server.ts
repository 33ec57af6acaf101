import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ScriptedServer } from './scripted-server.js';

/**
 * A local HTTP server that replays recorded OpenAI chat-completions traffic from
 * test/fixtures/openai-chat/: `*.sse` files hold a streamed body exactly as OpenAI sends it
 * (`data: {chunk}\n\n` lines ending with `data: [DONE]`), `*.json` files a whole answer
 * (`{ status, headers, body }`: an error, or the model list of `GET /models`). Each request takes
 * the next scripted reply; every request is recorded, with a promise that settles when its
 * connection closes.
 */

const FIXTURES = new URL('../fixtures/openai-chat/', import.meta.url);

export interface RecordedRequest {
  method: string | undefined;
  path: string | undefined;
  authorization: string | undefined;
  body: Record<string, unknown>;
  /** Resolves when the client's connection for this request has closed. */
  closed: Promise<void>;
}

export type Reply =
  /** The whole recorded stream; `events` of them only, then `then`: hang or reset. */
  | {
      kind: 'sse';
      fixture: string;
      events?: number;
      then?: 'hang' | 'reset';
      /** Pause between events (default 2 ms): a slow model, for cancel and resume. */
      delayMs?: number;
    }
  | { kind: 'error'; fixture: string }
  /** A recorded JSON answer (e.g. `models.json`), after `delayMs` (default none). */
  | { kind: 'json'; fixture: string; delayMs?: number }
  /** Accept the request, then never answer. */
  | { kind: 'silent' }
  /** Reset the connection before any answer. */
  | { kind: 'reset' };

/** The events of a recorded stream, each with its trailing blank line. */
export function sseEvents(fixture: string): string[] {
  const text = readFileSync(new URL(fixture, FIXTURES), 'utf8');
  return text
    .split('\n\n')
    .filter((event) => event.trim() !== '')
    .map((event) => `${event}\n\n`);
}

interface RecordedAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export class OpenAiChatServer extends ScriptedServer<Reply, RecordedRequest> {
  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      res.on('close', () => {
        resolve();
      });
    });
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    this.requests.push({
      method: req.method,
      path: req.url,
      authorization: req.headers.authorization,
      // GET /models has no body.
      body: raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>),
      closed,
    });
    const reply = this.replies.shift() ?? { kind: 'error', fixture: 'server-error.json' };
    await answer(reply, req, res);
  }
}

async function answer(reply: Reply, req: IncomingMessage, res: ServerResponse): Promise<void> {
  switch (reply.kind) {
    case 'silent':
      return;
    case 'reset':
      req.socket.resetAndDestroy();
      return;
    case 'json':
      await new Promise((resolve) => setTimeout(resolve, reply.delayMs ?? 0));
      if (!res.destroyed) recorded(reply.fixture, res);
      return;
    case 'error':
      recorded(reply.fixture, res);
      return;
    case 'sse':
      await stream(reply, req, res);
  }
}

function recorded(fixture: string, res: ServerResponse): void {
  const answer = JSON.parse(readFileSync(new URL(fixture, FIXTURES), 'utf8')) as RecordedAnswer;
  res.writeHead(answer.status, answer.headers);
  res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
}

async function stream(
  reply: Extract<Reply, { kind: 'sse' }>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-request-id': 'req_3b8d0f2a6c4e41d9b7a5e3c1f0d2b4a6',
  });
  const events = sseEvents(reply.fixture);
  const count = reply.events ?? events.length;
  for (const event of events.slice(0, count)) {
    if (res.destroyed) return;
    res.write(event);
    // One event per write and turn of the loop, as a real server flushes them.
    await new Promise((resolve) => setTimeout(resolve, reply.delayMs ?? 2));
  }
  if (reply.then === 'reset') req.socket.resetAndDestroy();
  else if (reply.then !== 'hang') res.end();
}
