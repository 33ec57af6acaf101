import { WebSocket } from 'ws';

/**
 * The voice benchmark's client side (bench/voice.ts): a WebSocket client that stamps every frame
 * it receives with `performance.now()`, and a microphone that streams 100 ms `audio.input` frames
 * at real time (frame k, audio [100k, 100k + 100) ms, leaves when its last sample has been
 * "captured", at start + 100 (k + 1) ms), filling with silence or noise when nobody speaks.
 */

export type Frame = Record<string, unknown> & { type: string };
export interface Received {
  f: Frame;
  at: number;
}

/** 100 ms of PCM16 mono 16 kHz. */
export const FRAME_BYTES = 3200;
export const FRAME_MS = 100;

export class VoiceClient {
  readonly frames: Received[] = [];
  readonly closed: Promise<void>;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.frames.push({ f: JSON.parse(data.toString('utf8')) as Frame, at: performance.now() });
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', () => {
        resolve();
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    ws.on('error', () => undefined);
  }

  static async connect(port: number, token: string, path = '/api/voice/pipeline-ws') {
    const ws = new WebSocket(
      `ws://127.0.0.1:${String(port)}${path}?token=${encodeURIComponent(token)}`,
    );
    const client = new VoiceClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => {
        resolve();
      });
      ws.once('error', reject);
    });
    await client.next((f) => f.type === 'connected');
    return client;
  }

  send(frame: unknown): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  /** The first frame from index `from` on that matches, waiting up to `timeoutMs`. */
  async next(match: (f: Frame) => boolean, timeoutMs = 10_000, from = 0): Promise<Received> {
    const deadline = performance.now() + timeoutMs;
    for (let i = from; ;) {
      for (; i < this.frames.length; i++) if (match(this.frames[i]!.f)) return this.frames[i]!;
      const left = deadline - performance.now();
      if (left <= 0 || this.ws.readyState === WebSocket.CLOSED) {
        const types = this.frames.slice(from).map((r) => r.f.type);
        throw new Error(`no matching frame within ${String(timeoutMs)} ms; got ${types.join(',')}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): Promise<void> {
    this.ws.close();
    return this.closed;
  }
}

/** A microphone on a client: real-time 100 ms frames, `say` queues audio at the next frame. */
export class Mic {
  private t0 = 0;
  private k = 0;
  private running = false;
  private queue: Buffer[] = [];
  /** `performance.now()` at which each frame was sent. */
  readonly sentAt: number[] = [];
  private sentWaiters = new Map<number, (() => void)[]>();
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly send: (pcm: Buffer) => void,
    private readonly filler: () => Buffer = () => Buffer.alloc(FRAME_BYTES),
  ) {}

  start(): void {
    this.running = true;
    this.t0 = performance.now();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Wall-clock time (performance.now) at which stream time `ms` was "spoken". */
  wallOf(streamMs: number): number {
    return this.t0 + streamMs;
  }

  /**
   * Queues `pcm` to start at the next frame not yet queued; returns its stream time (ms) and a
   * promise of when its last frame has been sent.
   */
  say(pcm: Buffer): { startMs: number; lastFrame: number; sent: Promise<number> } {
    const startFrame = this.k + this.queue.length;
    const frames = Math.ceil(pcm.length / FRAME_BYTES);
    for (let i = 0; i < frames; i++) {
      const piece = pcm.subarray(i * FRAME_BYTES, (i + 1) * FRAME_BYTES);
      if (piece.length === FRAME_BYTES) this.queue.push(piece);
      else {
        const full = this.filler();
        piece.copy(full);
        this.queue.push(full);
      }
    }
    const lastFrame = startFrame + frames - 1;
    return { startMs: startFrame * FRAME_MS, lastFrame, sent: this.whenSent(lastFrame) };
  }

  /** When frame `k` was (or will be) sent. */
  whenSent(k: number): Promise<number> {
    const at = this.sentAt[k];
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve) => {
      const list = this.sentWaiters.get(k) ?? [];
      list.push(() => {
        resolve(this.sentAt[k]!);
      });
      this.sentWaiters.set(k, list);
    });
  }

  private async run(): Promise<void> {
    while (this.running) {
      const target = this.t0 + FRAME_MS * (this.k + 1);
      const wait = target - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- stop() may come during the wait
      if (!this.running) break;
      const pcm = this.queue.shift() ?? this.filler();
      this.send(pcm);
      this.sentAt[this.k] = performance.now();
      for (const wake of this.sentWaiters.get(this.k) ?? []) wake();
      this.sentWaiters.delete(this.k);
      this.k += 1;
    }
  }
}

/** A microphone streaming into a voice socket as `audio.input`. */
export function socketMic(client: VoiceClient, filler?: () => Buffer): Mic {
  return new Mic((pcm) => {
    client.send({ type: 'audio.input', audio: pcm.toString('base64') });
  }, filler);
}

/** Duration (ms) of base64 PCM16 at 16 kHz. */
export const b64Ms = (audio: unknown, sampleRate = 16_000) =>
  (Buffer.from(String(audio), 'base64').length / 2 / sampleRate) * 1000;

/**
 * How far ahead of playback a response's audio arrived: playback starts at the first audio frame's
 * arrival; each later frame must arrive before the audio received until then has played. The
 * smallest margin (ms; negative: a gap the listener hears) and the audio's total duration.
 */
export function realTimeMargin(frames: Received[]): { minMarginMs: number; audioMs: number } {
  const audio = frames.filter((r) => typeof r.f.audio === 'string' && r.f.audio !== '');
  if (audio.length === 0) return { minMarginMs: Number.NaN, audioMs: 0 };
  const start = audio[0]!.at;
  let received = 0;
  let min = Number.POSITIVE_INFINITY;
  for (const [i, r] of audio.entries()) {
    if (i > 0) min = Math.min(min, start + received - r.at);
    received += b64Ms(r.f.audio, Number(r.f.sample_rate));
  }
  return { minMarginMs: min, audioMs: received };
}
