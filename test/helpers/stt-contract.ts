import { describe, expect, it } from 'vitest';
import type { SttProvider, TranscriptEvent } from '../../src/providers/stt/types.js';

/**
 * The contract every SttProvider keeps (src/providers/stt/types.ts), run against each
 * implementation: one final, last; partials (where the provider makes them) while audio still
 * arrives; '' for no audio; abort and early stop end the utterance without a final and leave the
 * provider usable; input errors come through; utterances one after another and side by side.
 */

export interface SttContractOptions {
  /** The provider under test (built by the caller's beforeAll). */
  provider: () => SttProvider;
  /** PCM16 16 kHz mono speech (built by the caller's beforeAll). */
  speech: () => Buffer;
  /** Words of the spoken sentence, at least `minWords` of which the transcript must hold. */
  keyWords: string[];
  minWords: number;
  /** Whether the provider sends partial transcripts while the audio arrives. */
  partials: boolean;
}

/** 100 ms of PCM16 at 16 kHz. */
export const FRAME_BYTES = 3200;

/** `pcm` in `size`-byte pieces, one every `paceMs` (0: as fast as they are read). */
export async function* frames(
  pcm: Buffer,
  options: { size?: number; paceMs?: number; onEnd?: () => void } = {},
): AsyncGenerator<Buffer> {
  const size = options.size ?? FRAME_BYTES;
  for (let offset = 0; offset < pcm.length; offset += size) {
    if ((options.paceMs ?? 0) > 0) await sleep(options.paceMs ?? 0);
    yield pcm.subarray(offset, offset + size);
  }
  options.onEnd?.();
}

/** Audio that never ends (the caller aborts or stops). */
export async function* endless(pcm: Buffer, paceMs = 20): AsyncGenerator<Buffer> {
  for (;;) {
    for (let offset = 0; offset < pcm.length; offset += FRAME_BYTES) {
      await sleep(paceMs);
      yield pcm.subarray(offset, offset + FRAME_BYTES);
    }
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Collected {
  events: (TranscriptEvent & { at: number })[];
  error: unknown;
}

export async function collect(stream: AsyncIterable<TranscriptEvent>): Promise<Collected> {
  const events: Collected['events'] = [];
  try {
    for await (const event of stream) events.push({ ...event, at: performance.now() });
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

export const words = (text: string) => text.toLowerCase().match(/[a-z']+/g) ?? [];

export function finalText(collected: Collected): string {
  expect(collected.error).toBeUndefined();
  const finals = collected.events.filter((e) => e.type === 'final');
  expect(finals).toHaveLength(1);
  expect(collected.events.at(-1)?.type).toBe('final');
  return finals[0]!.text;
}

export function sttContract(name: string, o: SttContractOptions): void {
  const signal = () => new AbortController().signal;
  const transcribe = (audio: AsyncIterable<Buffer>, s = signal()) =>
    collect(o.provider().transcribe(audio, { signal: s }));
  const expectSpeech = (text: string) => {
    const heard = new Set(words(text));
    expect(o.keyWords.filter((w) => heard.has(w)).length).toBeGreaterThanOrEqual(o.minWords);
  };

  describe(`SttProvider contract: ${name}`, () => {
    it('answers one final, last, with the words spoken; partials only before it', async () => {
      const result = await transcribe(frames(o.speech()));
      expectSpeech(finalText(result));
      expect(result.events.slice(0, -1).every((e) => e.type === 'partial')).toBe(true);
    });

    it(
      o.partials
        ? 'sends partials while the audio still arrives (100 ms frames)'
        : 'sends no partials, only the final once the audio has ended',
      async () => {
        let endedAt = Number.POSITIVE_INFINITY;
        const audio = frames(o.speech(), {
          paceMs: 50,
          onEnd: () => (endedAt = performance.now()),
        });
        const result = await transcribe(audio);
        expectSpeech(finalText(result));
        const early = result.events.filter((e) => e.type === 'partial' && e.at < endedAt);
        if (!o.partials) {
          expect(result.events.map((e) => e.type)).toEqual(['final']);
          expect(result.events[0]?.at ?? 0).toBeGreaterThanOrEqual(endedAt);
          return;
        }
        expect(early.length).toBeGreaterThan(0);
        expect(early.some((e) => e.text !== '')).toBe(true);
      },
    );

    it("answers a final '' for no audio at all", async () => {
      const result = await transcribe(frames(Buffer.alloc(0)));
      expect(result.events.map(({ type, text }) => ({ type, text }))).toEqual([
        { type: 'final', text: '' },
      ]);
    });

    it('reads buffers of any length, odd ones included', async () => {
      expectSpeech(finalText(await transcribe(frames(o.speech(), { size: 333 }))));
    });

    it('stops without a final when aborted mid-utterance, and throws the reason', async () => {
      const controller = new AbortController();
      const reason = new Error('barge-in');
      setTimeout(() => {
        controller.abort(reason);
      }, 300);
      const started = performance.now();
      const result = await transcribe(endless(o.speech()), controller.signal);
      expect(result.error).toBe(reason);
      expect(performance.now() - started).toBeLessThan(1500);
      expect(result.events.some((e) => e.type === 'final')).toBe(false);
      expectSpeech(finalText(await transcribe(frames(o.speech()))));
    });

    it('does not read the audio when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort(new Error('gone'));
      let read = false;
      async function* audio() {
        read = true;
        await sleep(0);
        yield Buffer.alloc(FRAME_BYTES);
      }
      const result = await transcribe(audio(), controller.signal);
      expect((result.error as Error).message).toBe('gone');
      expect(read).toBe(false);
    });

    it('passes on an error of the audio source, without a final', async () => {
      const pcm = o.speech();
      async function* failing() {
        yield pcm.subarray(0, FRAME_BYTES * 5);
        await sleep(20);
        throw new Error('microphone unplugged');
      }
      const result = await transcribe(failing());
      expect((result.error as Error).message).toBe('microphone unplugged');
      expect(result.events.some((e) => e.type === 'final')).toBe(false);
    });

    it('stays usable after the caller stops reading early', async () => {
      const controller = new AbortController();
      // A provider without partials answers only once the audio ends: give it an end.
      const audio = o.partials ? endless(o.speech(), 10) : frames(o.speech());
      for await (const event of o.provider().transcribe(audio, { signal: controller.signal })) {
        expect(event.type).toBe(o.partials ? 'partial' : 'final');
        break;
      }
      expectSpeech(finalText(await transcribe(frames(o.speech()))));
    });

    it('transcribes five utterances one after another', async () => {
      for (let i = 0; i < 5; i += 1) expectSpeech(finalText(await transcribe(frames(o.speech()))));
    });

    it('transcribes two utterances at once', async () => {
      const [a, b] = await Promise.all([
        transcribe(frames(o.speech(), { paceMs: 5 })),
        transcribe(frames(o.speech(), { paceMs: 5 })),
      ]);
      expectSpeech(finalText(a));
      expectSpeech(finalText(b));
    });
  });
}
