import type { IncomingMessage, ServerResponse } from 'node:http';
import { ScriptedServer } from './scripted-server.js';

/**
 * A local stand-in for an OpenAI-compatible transcription endpoint: POST /v1/audio/transcriptions
 * with a multipart form (`file`, `model`, optional `language`, `response_format`). It checks the
 * request as the real endpoint does (400 for a missing file or model, a file that is not a WAV)
 * and answers `{ text }`, or what the test scripted: an error status, silence, a reset. Every
 * request is recorded with its parsed form.
 */

export interface RecordedTranscription {
  method: string | undefined;
  path: string | undefined;
  authorization: string | undefined;
  contentType: string | undefined;
  fields: Record<string, string>;
  file: { name: string; type: string; bytes: Buffer } | null;
  /** Resolves when the client's connection for this request has closed. */
  closed: Promise<void>;
}

export type TranscriptionReply =
  | { kind: 'text'; text: string; delayMs?: number }
  | { kind: 'error'; status: number; body: unknown; headers?: Record<string, string> }
  /** Accept the request, then never answer. */
  | { kind: 'silent' }
  /** Reset the connection before any answer. */
  | { kind: 'reset' };

export class OpenAiTranscriptionServer extends ScriptedServer<
  TranscriptionReply,
  RecordedTranscription
> {
  /** The answer when nothing is scripted. */
  defaultText = 'What is the dose of metformin?';

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      res.on('close', () => {
        resolve();
      });
    });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const contentType = req.headers['content-type'];
    const form = parseForm(Buffer.concat(chunks), contentType);
    const recorded: RecordedTranscription = {
      method: req.method,
      path: req.url,
      authorization: req.headers.authorization,
      contentType,
      fields: form?.fields ?? {},
      file: form?.file ?? null,
      closed,
    };
    this.requests.push(recorded);
    const problem = check(req, recorded, form !== null);
    if (problem !== null) {
      send(res, 400, { error: { message: problem, type: 'invalid_request_error', code: null } });
      return;
    }
    await this.#answer(this.replies.shift() ?? { kind: 'text', text: this.defaultText }, req, res);
  }

  async #answer(reply: TranscriptionReply, req: IncomingMessage, res: ServerResponse) {
    switch (reply.kind) {
      case 'silent':
        return;
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'error':
        send(res, reply.status, reply.body, reply.headers);
        return;
      case 'text':
        if (reply.delayMs !== undefined) await new Promise((r) => setTimeout(r, reply.delayMs));
        if (!res.destroyed) send(res, 200, { text: reply.text });
    }
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** What the real endpoint would refuse with a 400, or null. */
function check(req: IncomingMessage, r: RecordedTranscription, parsed: boolean): string | null {
  if (req.method !== 'POST' || r.path !== '/v1/audio/transcriptions') return 'unknown route';
  if (!parsed) return 'expected a multipart/form-data body';
  if (r.fields.model === undefined || r.fields.model === '') return 'model is required';
  if (r.file === null) return 'file is required';
  const b = r.file.bytes;
  const isWav = b.length >= 44 && b.toString('ascii', 0, 4) === 'RIFF';
  if (!isWav || b.toString('ascii', 8, 12) !== 'WAVE') return 'file is not a WAV file';
  return null;
}

/**
 * A multipart/form-data body as fields and the `file` part (a small parser: the parts' headers,
 * `name` and `filename` from Content-Disposition, the part's bytes). Null when it is not one.
 */
function parseForm(
  body: Buffer,
  contentType: string | undefined,
): Pick<RecordedTranscription, 'fields' | 'file'> | null {
  const boundary = /^multipart\/form-data;.*boundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1];
  if (boundary === undefined) return null;
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The first delimiter has no CRLF before it: add one so that every part starts alike.
  const data = Buffer.concat([Buffer.from('\r\n'), body]);
  const fields: Record<string, string> = {};
  let file: RecordedTranscription['file'] = null;
  let start = data.indexOf(delimiter);
  if (start < 0) return null;
  for (;;) {
    start += delimiter.length;
    if (data.subarray(start, start + 2).toString() === '--') return { fields, file };
    const next = data.indexOf(delimiter, start);
    if (next < 0) return null;
    const part = data.subarray(start + 2, next);
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) return null;
    const headers = part.subarray(0, split).toString('utf8');
    const content = part.subarray(split + 4);
    const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
    const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
    if (filename === undefined) fields[name] = content.toString('utf8');
    else if (name === 'file') {
      const type = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim() ?? '';
      file = { name: filename, type, bytes: Buffer.from(content) };
    }
    start = next;
  }
}
