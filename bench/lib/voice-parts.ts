import { randomUUID } from 'node:crypto';
import { AsyncQueue } from '../../src/platform/async-queue.js';
import type { Deps } from '../../src/deps.js';
import { MAIN_BRANCH } from '../../src/modules/conversations/messages.js';
import { speechSplitter } from '../../src/modules/voice/sentences.js';
import {
  createVoiceActivityDetector,
  DEFAULT_TURN_DETECTION,
} from '../../src/modules/voice/vad/detector.js';
import { silence, soundBounds } from '../../test/helpers/speech-audio.js';
import type { Mic } from './voice-client.js';
import {
  FRAME_BYTES,
  FRAME_MS,
  realTimeMargin,
  socketMic,
  VoiceClient,
  type Frame,
} from './voice-client.js';

/** The measuring parts of bench/voice.ts (the service runs in this process: createTestApp). */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface PipelineTurn {
  question: string;
  /** End of speech (mic time) to the first audio.output received. */
  clientMs: number;
  /** voice.state PROCESSING received to the first audio.output received. */
  afterDecisionClientMs: number;
  metrics: Record<string, number | null>;
  transcript: string;
}

/** Truncates every new response at its first audio until the session is IDLE again. */
async function settle(client: VoiceClient, from: number, timeoutMs = 30_000): Promise<void> {
  const truncated = new Set<string>();
  const deadline = performance.now() + timeoutMs;
  for (let i = from; ;) {
    for (; i < client.frames.length; i++) {
      const f = client.frames[i]!.f;
      if (f.type === 'audio.output' && !truncated.has(String(f.response_id))) {
        truncated.add(String(f.response_id));
        client.send({ type: 'response.truncate', response_id: f.response_id, audio_end_ms: 0 });
      }
      if (f.type === 'voice.state' && f.state === 'IDLE') return;
    }
    if (performance.now() > deadline) throw new Error('session did not settle');
    await client.next(() => true, deadline - performance.now(), i).catch(() => undefined);
  }
}

/** One spoken turn through the socket, cut at its first audio (its metrics are complete then). */
export async function pipelineTurn(
  client: VoiceClient,
  mic: Mic,
  question: { text: string; pcm: Buffer },
): Promise<PipelineTurn> {
  const from = client.frames.length;
  const bounds = soundBounds(question.pcm)!;
  const said = mic.say(Buffer.concat([question.pcm, silence(1200)]));
  const speechEnd = mic.wallOf(said.startMs + bounds.endMs);
  const processing = await client.next(
    (f) => f.type === 'voice.state' && f.state === 'PROCESSING',
    30_000,
    from,
  );
  const first = await client.next((f) => f.type === 'audio.output', 30_000, from);
  const rid = first.f.response_id;
  client.send({ type: 'response.truncate', response_id: rid, audio_end_ms: 0 });
  const metrics = await client.next(
    (f) => f.type === 'turn.metrics' && f.response_id === rid,
    30_000,
    from,
  );
  const transcript = await client.next((f) => f.type === 'transcript.complete', 1000, from);
  await settle(client, from);
  await said.sent;
  const m = metrics.f;
  const pick = (k: string) => (typeof m[k] === 'number' ? m[k] : null);
  return {
    question: question.text,
    clientMs: first.at - speechEnd,
    afterDecisionClientMs: first.at - processing.at,
    metrics: Object.fromEntries(
      ['eou_delay_ms', 'stt_ms', 'llm_first_token_ms', 'tts_first_audio_ms', 'end_to_end_ms'].map(
        (k) => [k, pick(k)],
      ),
    ),
    transcript: String(transcript.f.text),
  };
}

export interface DirectTurn {
  transcript: string;
  sttMs: number;
  storeMs: number;
  firstTokenMs: number;
  firstAudioMs: number;
  /** Decision to first audio without the store: the providers alone. */
  totalMs: number;
}

/**
 * The same question through the providers chained in this process, no socket: the audio pushed
 * in real-time 100 ms frames into a Silero detector; the utterance's audio fed to the recognizer
 * while it arrives; from the end-of-utterance decision: the final transcript, the question stored
 * (timed apart), the chat engine's answer (`ChatService.generate`: history, retrieval, extractive
 * model) up to its first sentence, and the first audio chunk of that sentence from the TTS.
 */
export async function directTurn(
  deps: Deps,
  userId: string,
  conversationId: string,
  pcm: Buffer,
): Promise<DirectTurn> {
  const voice = deps.voice.deps;
  const vad = createVoiceActivityDetector({ ...DEFAULT_TURN_DETECTION });
  const audio = Buffer.concat([silence(600), pcm, silence(1200)]);
  const controller = new AbortController();
  let transcribing: Promise<string> | undefined;
  let queue: AsyncQueue<Buffer> | undefined;
  let decidedAt: number | undefined;
  const t0 = performance.now();
  for (let k = 0; k * FRAME_BYTES < audio.length && decidedAt === undefined; k++) {
    const wait = t0 + FRAME_MS * (k + 1) - performance.now();
    if (wait > 0) await sleep(wait);
    const events = await vad.push(audio.subarray(k * FRAME_BYTES, (k + 1) * FRAME_BYTES));
    for (const e of events) {
      if (e.type === 'speech_start' && queue === undefined) {
        const q = new AsyncQueue<Buffer>();
        queue = q;
        q.push(e.audio);
        transcribing = (async () => {
          for await (const ev of voice.stt.transcribe(q, {
            signal: controller.signal,
            language: 'en',
          })) {
            if (ev.type === 'final') return ev.text.trim();
          }
          return '';
        })();
      } else if (e.type === 'speech_audio') queue?.push(e.audio);
      else if (e.type === 'speech_end' && queue !== undefined) {
        decidedAt = performance.now();
        queue.end();
        break;
      }
    }
  }
  await vad.close();
  if (decidedAt === undefined || transcribing === undefined) throw new Error('no utterance');
  const text = await transcribing;
  const sttDone = performance.now();
  const stored = await deps.messages.append(userId, conversationId, {
    branchId: MAIN_BRANCH,
    role: 'user',
    content: text === '' ? 'metformin' : text,
  });
  const stored2 = performance.now();
  const splitter = speechSplitter();
  let firstToken: number | undefined;
  const sentence = new Promise<string>((resolve) => {
    void deps.chat.service
      .generate(userId, stored.message, randomUUID(), controller.signal, (frame) => {
        if (frame.type !== 'chunk') return;
        firstToken ??= performance.now();
        const s = splitter.push(frame.delta);
        if (s.length > 0) resolve(s[0]!);
      })
      .then(() => {
        resolve(splitter.flush()[0] ?? '');
      });
  });
  const first = await sentence;
  const sentences = new AsyncQueue<string>();
  sentences.push(first);
  sentences.end();
  let firstAudio: number | undefined;
  for await (const chunk of voice.tts.synthesize(sentences, {
    signal: controller.signal,
    sampleRate: voice.limits.outputSampleRate,
    language: 'en',
  })) {
    if (chunk.pcm.length > 0) {
      firstAudio = performance.now();
      break;
    }
  }
  controller.abort();
  const storeMs = stored2 - sttDone;
  const end = firstAudio ?? performance.now();
  return {
    transcript: text,
    sttMs: sttDone - decidedAt,
    storeMs,
    firstTokenMs: (firstToken ?? end) - stored2,
    firstAudioMs: end - stored2,
    totalMs: end - decidedAt - storeMs,
  };
}

export interface BargeTrial {
  valid: boolean;
  /** Speech onset (the frame holding it was sent) to the last audio.output received. */
  stopMs: number;
  /** Speech onset to voice.state CANCELLED received. */
  cancelledMs: number;
  /** Audio frames of the interrupted response received after the onset frame was sent. */
  framesAfterOnset: number;
}

/** Barge-in: a typed question, then speech over its spoken answer. */
export async function bargeTrial(
  client: VoiceClient,
  mic: Mic,
  question: string,
  interruption: Buffer,
  delayMs: number,
): Promise<BargeTrial> {
  const from = client.frames.length;
  client.send({ type: 'text.input', text: question });
  const first = await client.next((f) => f.type === 'audio.output', 30_000, from);
  const rid = first.f.response_id;
  await sleep(delayMs);
  const onset = soundBounds(interruption)!.startMs;
  const said = mic.say(interruption);
  const onsetFrame = Math.floor((said.startMs + onset) / FRAME_MS);
  const onsetSent = await mic.whenSent(onsetFrame);
  const end = await client.next(
    (f) =>
      (f.type === 'voice.state' && f.state === 'CANCELLED') ||
      (f.type === 'response.complete' && f.response_id === rid),
    30_000,
    from,
  );
  if (end.f.type !== 'voice.state') {
    await settle(client, from);
    await said.sent;
    return { valid: false, stopMs: Number.NaN, cancelledMs: Number.NaN, framesAfterOnset: 0 };
  }
  const mine = (r: { f: Frame }) => r.f.type === 'audio.output' && r.f.response_id === rid;
  const heard = client.frames.filter(mine).reduce((ms, r) => ms + String(r.f.audio).length, 0);
  client.send({
    type: 'response.truncate',
    response_id: rid,
    audio_end_ms: Math.round(Math.min((heard * 3) / 4 / 32, end.at - first.at)),
  });
  const complete = await client.next(
    (f) => f.type === 'response.complete' && f.response_id === rid,
    30_000,
    from,
  );
  const audio = client.frames.slice(from, client.frames.indexOf(complete)).filter(mine);
  const last = audio.at(-1)!;
  await settle(client, client.frames.indexOf(complete));
  await said.sent;
  return {
    valid: complete.f.interrupted === true,
    stopMs: last.at - onsetSent,
    cancelledMs: end.at - onsetSent,
    framesAfterOnset: audio.filter((r) => r.at > onsetSent).length,
  };
}

export interface ConcurrentSession {
  ok: boolean;
  realTime: boolean;
  minMarginMs: number;
  audioMs: number;
  /** End of speech (or the typed question sent) to the first audio.output. */
  firstAudioMs: number;
  errors: string[];
  sttMs: number | null;
}

/** N sessions at once, each asking (spoken or typed) and receiving its whole answer's audio. */
export async function concurrentRound(
  port: number,
  tokens: string[],
  questions: { text: string; pcm: Buffer }[],
  spoken: boolean,
): Promise<ConcurrentSession[]> {
  const clients = await Promise.all(tokens.map((t) => VoiceClient.connect(port, t)));
  const mics = clients.map((c) => socketMic(c));
  for (const m of mics) m.start();
  await sleep(500);
  try {
    return await Promise.all(
      clients.map(async (client, i) => {
        const q = questions[i % questions.length]!;
        const from = client.frames.length;
        let askedAt: number;
        if (spoken) {
          const said = mics[i]!.say(Buffer.concat([q.pcm, silence(1200)]));
          askedAt = mics[i]!.wallOf(said.startMs + soundBounds(q.pcm)!.endMs);
        } else {
          client.send({ type: 'text.input', text: q.text });
          askedAt = performance.now();
        }
        const errors: string[] = [];
        const done = await client
          .next(
            (f) =>
              f.type === 'response.complete' ||
              (f.type === 'voice.state' && f.state === 'IDLE' && f.previous !== 'SPEAKING'),
            90_000,
            from,
          )
          .catch(() => undefined);
        const after = client.frames.slice(from);
        for (const r of after) if (r.f.type === 'error') errors.push(String(r.f.code));
        const audio = after.filter((r) => r.f.type === 'audio.output');
        const metrics = after.find((r) => r.f.type === 'turn.metrics');
        await client
          .next((f) => f.type === 'voice.state' && f.state === 'IDLE', 30_000, from)
          .catch(() => undefined);
        const { minMarginMs, audioMs } = realTimeMargin(audio);
        const ok = done?.f.type === 'response.complete' && audio.length > 1;
        const stt = metrics?.f.stt_ms;
        return {
          ok,
          realTime: ok && (Number.isNaN(minMarginMs) ? false : minMarginMs >= 0),
          minMarginMs,
          audioMs,
          firstAudioMs: audio.length > 0 ? audio[0]!.at - askedAt : Number.NaN,
          errors,
          sttMs: typeof stt === 'number' ? stt : null,
        };
      }),
    );
  } finally {
    await Promise.all(mics.map((m) => m.stop()));
    await Promise.all(clients.map((c) => c.close()));
  }
}

/**
 * Where the detector confirms speech in `speech` (the barge-in's stage floor): the audio pushed in
 * 100 ms frames after `lead` ms of silence, for several phases of the 32 ms detector frames against
 * the 100 ms socket frames; ms from the amplitude onset (first sample above 500/32768) to the end of
 * the frame in which `speech_start` came out, and to the detector's own onset.
 */
export async function detectorOnset(
  speech: Buffer,
): Promise<{ decidedMs: number[]; onsetMs: number[] }> {
  const onset = soundBounds(speech)!.startMs;
  const decidedMs: number[] = [];
  const onsetMs: number[] = [];
  for (let shift = 0; shift < 100; shift += 10) {
    const vad = createVoiceActivityDetector({ ...DEFAULT_TURN_DETECTION });
    const lead = 1000 + shift;
    const audio = Buffer.concat([silence(lead), speech, silence(600)]);
    for (let k = 0; k * FRAME_BYTES < audio.length; k++) {
      const events = await vad.push(audio.subarray(k * FRAME_BYTES, (k + 1) * FRAME_BYTES));
      const start = events.find((e) => e.type === 'speech_start');
      if (start?.type === 'speech_start') {
        decidedMs.push((k + 1) * FRAME_MS - (lead + onset));
        onsetMs.push(start.onsetMs - (lead + onset));
        break;
      }
    }
    await vad.close();
  }
  return { decidedMs, onsetMs };
}
