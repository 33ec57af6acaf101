import { beforeAll, describe, expect, it } from 'vitest';
import {
  createVoiceActivityDetector,
  DEFAULT_TURN_DETECTION,
} from '../src/modules/voice/vad/detector.js';
import type { TurnDetection, VadEvent } from '../src/modules/voice/vad/types.js';
import {
  msToBytes,
  noise,
  pieces,
  silence,
  soundBounds,
  speak,
  tone,
  trimSilence,
} from './helpers/speech-audio.js';

/**
 * Silero VAD on real audio: sentences spoken by Flite, noise and clicks made by sox. Onsets and
 * ends are compared with the truth read off the audio itself (first and last sample above an
 * amplitude floor).
 */

const TOLERANCE_MS = 150;
const FIRST = 'The patient reports chest pain radiating to the left arm since this morning.';
const SECOND = 'What is the recommended dose of amoxicillin for a child with otitis media?';

interface Utterance {
  onsetMs: number;
  endMs?: number;
  decidedMs?: number;
  /** Pre-roll, speech and the silence inside, up to the decision. */
  audio: Buffer;
}

/** Everything the detector reports for `audio`, pushed in pieces of `size` bytes. */
async function detect(
  audio: Buffer,
  size = 3200,
  settings: TurnDetection = DEFAULT_TURN_DETECTION,
): Promise<{ events: VadEvent[]; utterances: Utterance[] }> {
  const detector = createVoiceActivityDetector({ ...settings });
  const events: VadEvent[] = [];
  for (const piece of pieces(audio, size)) events.push(...(await detector.push(piece)));
  await detector.close();
  return { events, utterances: utterancesOf(events) };
}

function utterancesOf(events: VadEvent[]): Utterance[] {
  const out: (Utterance & { chunks: Buffer[] })[] = [];
  for (const event of events) {
    const current = out.at(-1);
    if (event.type === 'speech_start') {
      out.push({ onsetMs: event.onsetMs, audio: Buffer.alloc(0), chunks: [event.audio] });
    } else if (event.type === 'speech_audio') {
      current?.chunks.push(event.audio);
    } else if (current) {
      current.endMs = event.endMs;
      current.decidedMs = event.decidedMs;
    }
  }
  return out.map(({ chunks, ...u }) => ({ ...u, audio: Buffer.concat(chunks) }));
}

const types = (events: VadEvent[]): string[] =>
  events.filter((e) => e.type !== 'speech_audio').map((e) => e.type);

let first: Buffer;
let second: Buffer;

beforeAll(async () => {
  [first, second] = await Promise.all([speak(FIRST), speak(SECOND)]).then((all) =>
    all.map((pcm) => trimSilence(pcm)),
  );
});

describe('voice activity detection on real audio', () => {
  it('a sentence between 1 s silences is one utterance, onset and end within 150 ms of the truth', async () => {
    const audio = Buffer.concat([silence(1000), first, silence(1000)]);
    const truth = soundBounds(audio)!;
    const { events, utterances } = await detect(audio);
    expect(types(events)).toEqual(['speech_start', 'speech_end']);
    const [u] = utterances;
    expect(Math.abs(u!.onsetMs - truth.startMs)).toBeLessThanOrEqual(TOLERANCE_MS);
    expect(Math.abs(u!.endMs! - truth.endMs)).toBeLessThanOrEqual(TOLERANCE_MS);
    // The end is decided once silence_ms (500, i.e. 16 frames) of silence has passed.
    expect(u!.decidedMs! - u!.endMs!).toBe(512);
    // The utterance's audio is the input from 300 ms before the onset up to the decision.
    const from = msToBytes(u!.onsetMs - DEFAULT_TURN_DETECTION.prerollMs);
    expect(u!.audio.equals(audio.subarray(from, msToBytes(u!.decidedMs!)))).toBe(true);
  });

  it('pushes of odd sizes (137 bytes) give the same events and audio as whole frames', async () => {
    const audio = Buffer.concat([silence(1000), first, silence(1000)]);
    const framed = await detect(audio, 1024);
    const odd = await detect(audio, 137);
    expect(odd.utterances).toEqual(framed.utterances);
    expect(odd.utterances).toHaveLength(1);
  });

  it('10 s of white, pink and brown noise at several volumes start no turn', async () => {
    for (const kind of ['white', 'pink', 'brown'] as const) {
      for (const volume of [0.02, 0.1, 0.3, 0.8]) {
        const { events } = await detect(await noise(kind, 10, volume), 640);
        expect(events, `${kind} noise at ${volume}`).toEqual([]);
      }
    }
  });

  it('a 100 ms click, or 100 ms of speech, starts no turn; 250 ms of speech does', async () => {
    const click = Buffer.concat([silence(500), await tone(100, 1000, 0.9), silence(1000)]);
    expect((await detect(click)).events).toEqual([]);
    const snippet = (ms: number): Buffer =>
      Buffer.concat([silence(500), first.subarray(0, msToBytes(ms)), silence(1000)]);
    expect((await detect(snippet(100))).events).toEqual([]);
    // Silero does hear those 100 ms as speech: min_speech_ms is what keeps them from a turn.
    const noMinimum = { ...DEFAULT_TURN_DETECTION, minSpeechMs: 0 };
    expect(types((await detect(snippet(100), 3200, noMinimum)).events)).toEqual([
      'speech_start',
      'speech_end',
    ]);
    expect(types((await detect(snippet(250))).events)).toEqual(['speech_start', 'speech_end']);
  });

  it('two sentences 1.5 s apart are two utterances; 300 ms apart, one', async () => {
    const apart = Buffer.concat([silence(1000), first, silence(1500), second, silence(1000)]);
    const two = (await detect(apart)).utterances;
    expect(two).toHaveLength(2);
    const secondOnset = 1000 + first.length / 32 + 1500;
    expect(Math.abs(two[1]!.onsetMs - secondOnset)).toBeLessThanOrEqual(TOLERANCE_MS);

    const close = Buffer.concat([silence(1000), first, silence(300), second, silence(1000)]);
    const one = (await detect(close)).utterances;
    expect(one).toHaveLength(1);
    expect(Math.abs(one[0]!.endMs! - soundBounds(close)!.endMs)).toBeLessThanOrEqual(TOLERANCE_MS);
  });

  it('reset forgets the utterance in progress and restarts stream time', async () => {
    const detector = createVoiceActivityDetector({ ...DEFAULT_TURN_DETECTION });
    const started = await detector.push(
      Buffer.concat([silence(500), first.subarray(0, msToBytes(1500))]),
    );
    expect(types(started)).toEqual(['speech_start']);
    detector.reset();
    const events = await detector.push(Buffer.concat([silence(700), first, silence(1000)]));
    await detector.close();
    expect(types(events)).toEqual(['speech_start', 'speech_end']);
    const onset = events[0]?.type === 'speech_start' ? events[0].onsetMs : -1;
    expect(Math.abs(onset - 700)).toBeLessThanOrEqual(TOLERANCE_MS);
  });

  it('detectors on one shared model keep their own state, side by side, without blocking the loop', async () => {
    const audio = Buffer.concat([silence(1000), first, silence(1000)]);
    const alone = await detect(audio, 640);
    // Counts turns of the event loop: a check-phase callback that queues itself again runs once
    // per turn. (Wall-clock loop delay would also count time the OS gave other processes.)
    let turns = 0;
    let beating = true;
    const beat = (): void => {
      turns += 1;
      if (beating) setImmediate(beat);
    };
    setImmediate(beat);
    // Staggered starts, so each detector's frames arrive while the others are mid-utterance.
    const together = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        detect(Buffer.concat([silence(i * 96), audio]), 640).then((r) => r.utterances),
      ),
    );
    beating = false;
    together.forEach((utterances, i) => {
      expect(utterances.map((u) => u.onsetMs - i * 96)).toEqual(
        alone.utterances.map((u) => u.onsetMs),
      );
      expect(utterances.map((u) => u.endMs! - i * 96)).toEqual(
        alone.utterances.map((u) => u.endMs),
      );
    });
    // Inference runs a frame at a time with a turn of the loop before each, so other work (socket
    // reads, timers) gets in between frames: the loop turned about once per frame of a detector.
    const framesPerDetector = audio.length / 1024;
    expect(turns).toBeGreaterThan(framesPerDetector * 0.9);
  });

  it('a closed detector reads nothing', async () => {
    const detector = createVoiceActivityDetector({ ...DEFAULT_TURN_DETECTION });
    await detector.close();
    expect(await detector.push(Buffer.concat([silence(300), first]))).toEqual([]);
  });
});
