import type { IncomingMessage, ServerResponse } from 'node:http';
import { ScriptedServer } from './scripted-server.js';

/**
 * A local HTTP server answering `POST /v1/audio/speech` as OpenAI does: `response_format: pcm`
 * is raw PCM16 mono at 24 kHz sent in blocks as it is generated (chunked transfer encoding,
 * content-type audio/pcm); `wav` the same audio with a WAV header; errors are JSON
 * `{ error: { message, type, code } }` with OpenAI's headers. The audio is speech-shaped (a
 * voiced tone whose pitch and loudness vary like a sentence's, with short pauses), about 60 ms
 * per character of input. Each request takes the next scripted reply (`audio` once the script is
 * used up); every request is recorded, with a promise that settles when its connection closes.
 */

export interface RecordedSpeechRequest {
  path: string | undefined;
  authorization: string | undefined;
  body: Record<string, unknown>;
  closed: Promise<void>;
}

export type SpeechReply =
  /** Speech-shaped audio; `stallAfterBlocks`: send that many blocks, then nothing more. */
  | { kind: 'audio'; blockMs?: number; delayMs?: number; stallAfterBlocks?: number }
  | { kind: 'error'; status: number; headers?: Record<string, string>; message?: string }
  /** Accept the request, then never answer. */
  | { kind: 'silent' }
  /** Reset the connection before any answer. */
  | { kind: 'reset' };

export const PCM_RATE = 24_000;

export class OpenAiSpeechServer extends ScriptedServer<SpeechReply, RecordedSpeechRequest> {
  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const closed = new Promise<void>((resolve) => res.on('close', resolve));
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const body = JSON.parse(raw) as Record<string, unknown>;
    this.requests.push({ path: req.url, authorization: req.headers.authorization, body, closed });
    const reply = this.replies.shift() ?? { kind: 'audio' };
    if (req.url !== '/v1/audio/speech' || req.method !== 'POST') {
      errorReply(res, { kind: 'error', status: 404, message: 'Not found' });
      return;
    }
    switch (reply.kind) {
      case 'silent':
        return;
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'error':
        errorReply(res, reply);
        return;
      case 'audio':
        await audioReply(res, reply, body);
    }
  }
}

function errorReply(res: ServerResponse, reply: Extract<SpeechReply, { kind: 'error' }>): void {
  const type =
    reply.status === 429
      ? 'requests'
      : reply.status >= 500
        ? 'server_error'
        : 'invalid_request_error';
  res.writeHead(reply.status, {
    'content-type': 'application/json',
    'x-request-id': 'req_5c1e9a7b3d2f40e8a6b4c2d0e9f7a1b3',
    ...reply.headers,
  });
  res.end(
    JSON.stringify({
      error: { message: reply.message ?? `HTTP ${reply.status}`, type, param: null, code: null },
    }),
  );
}

async function audioReply(
  res: ServerResponse,
  reply: Extract<SpeechReply, { kind: 'audio' }>,
  body: Record<string, unknown>,
): Promise<void> {
  const input = typeof body.input === 'string' ? body.input : '';
  const pcm = speechShaped(Math.min(3, Math.max(0.2, input.length * 0.06)));
  const wav = body.response_format === 'wav';
  res.writeHead(200, {
    'content-type': wav ? 'audio/wav' : 'audio/pcm',
    'transfer-encoding': 'chunked',
    'x-request-id': 'req_0d4b8e2a6c1f49e7b3a5d9c8e7f6a2b1',
  });
  if (wav) res.write(wavHeader(pcm.length));
  const blockBytes = Math.round((PCM_RATE * (reply.blockMs ?? 50)) / 1000) * 2 + 1; // odd on purpose
  let blocks = 0;
  for (let offset = 0; offset < pcm.length; offset += blockBytes) {
    if (res.destroyed) return;
    if (reply.stallAfterBlocks !== undefined && blocks >= reply.stallAfterBlocks) return;
    res.write(pcm.subarray(offset, offset + blockBytes));
    blocks++;
    await new Promise((resolve) => setTimeout(resolve, reply.delayMs ?? 2));
  }
  res.end();
}

/** `seconds` of a voiced, sentence-like signal at 24 kHz. */
export function speechShaped(seconds: number): Buffer {
  const n = Math.round(PCM_RATE * seconds);
  const out = Buffer.alloc(n * 2);
  let phase = 0;
  for (let i = 0; i < n; i++) {
    const t = i / PCM_RATE;
    const pitch = 120 + 30 * Math.sin(2 * Math.PI * 0.7 * t);
    phase += (2 * Math.PI * pitch) / PCM_RATE;
    const syllable = Math.max(0, Math.sin(2 * Math.PI * 3.5 * t));
    const voiced = Math.sin(phase) + 0.5 * Math.sin(2 * phase) + 0.25 * Math.sin(3 * phase);
    out.writeInt16LE(Math.round(9000 * syllable * voiced), i * 2);
  }
  return out;
}

function wavHeader(dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(PCM_RATE, 24);
  h.writeUInt32LE(PCM_RATE * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}
