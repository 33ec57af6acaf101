import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bufferToInt16, rms } from '../../src/platform/audio/pcm.js';
import type { AudioChunk, TtsOptions, TtsProvider } from '../../src/providers/tts/types.js';

/**
 * The contract every TtsProvider keeps (ARCHITECTURE "Streaming and cancellation"), run against
 * each implementation: Flite, eSpeak NG and `local` as child processes, `openai` against a local
 * speech server.
 */

export interface TtsTarget {
  label: string;
  make(): TtsProvider;
  name: string;
  language?: string;
  /** Programs the provider spawns: none may be left behind (running or zombie). */
  processNames: string[];
  /** A directory of the provider's temporary files that must be empty after every run. */
  tmpDir?: string;
}

export async function* from(...sentences: string[]): AsyncIterable<string> {
  for (const sentence of sentences) {
    await Promise.resolve();
    yield sentence;
  }
}

export interface Heard {
  chunks: AudioChunk[];
  error: unknown;
}

export async function hear(
  tts: TtsProvider,
  sentences: AsyncIterable<string>,
  options: Partial<TtsOptions> = {},
  onChunk?: (chunk: AudioChunk) => void,
): Promise<Heard> {
  const chunks: AudioChunk[] = [];
  try {
    const all = { signal: new AbortController().signal, sampleRate: 16000, ...options };
    for await (const chunk of tts.synthesize(sentences, all)) {
      chunks.push(chunk);
      onChunk?.(chunk);
    }
    return { chunks, error: undefined };
  } catch (error) {
    return { chunks, error };
  }
}

export const pcmOf = (chunks: AudioChunk[], sentence?: number): Int16Array =>
  bufferToInt16(
    Buffer.concat(
      chunks.filter((c) => sentence === undefined || c.sentence === sentence).map((c) => c.pcm),
    ),
  );

/** Children of this process (zombies included) running one of `names`. */
export function childProcesses(names: string[]): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === process.pid && names.includes(comm))
        found.push(`${entry} ${comm} ${state}`);
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Checks the order, rate and end marks of a run, and that each sentence is audible. */
export function expectWellFormed(
  chunks: AudioChunk[],
  sentences: number[],
  sampleRate: number,
): void {
  expect([...new Set(chunks.map((c) => c.sentence))]).toEqual(sentences);
  for (const [i, chunk] of chunks.entries()) {
    expect(chunk.sampleRate).toBe(sampleRate);
    expect(chunk.pcm.length).toBeGreaterThan(0);
    expect(chunk.pcm.length % 2).toBe(0);
    // ~100 ms chunks, never much longer.
    expect(chunk.pcm.length / 2).toBeLessThanOrEqual(Math.ceil(sampleRate * 0.1));
    const next = chunks[i + 1];
    expect(chunk.sentenceEnd).toBe(next?.sentence !== chunk.sentence);
  }
  for (const sentence of sentences) {
    const pcm = pcmOf(chunks, sentence);
    expect(pcm.length / sampleRate).toBeGreaterThan(0.3);
    expect(rms(pcm)).toBeGreaterThan(0.01);
  }
}

const LONG =
  'Metformin is the first choice for most adults with type 2 diabetes, started at a low dose ' +
  'and increased slowly over several weeks to reduce stomach upset, with kidney function ' +
  'checked before starting and at least once a year afterwards. ';

export function ttsContract(target: TtsTarget): void {
  const leftovers = (): string[] => [
    ...childProcesses(target.processNames),
    ...(target.tmpDir === undefined ? [] : readdirSync(target.tmpDir)),
  ];
  const lang = target.language === undefined ? {} : { language: target.language };

  describe(`TtsProvider contract: ${target.label}`, () => {
    it('has its name', async () => {
      const tts = target.make();
      expect(tts.name).toBe(target.name);
      await tts.close();
    });

    it.each([16000, 8000, 24000])('speaks the sentences in order at %i Hz', async (rate) => {
      const tts = target.make();
      const { chunks, error } = await hear(
        tts,
        from('Take 500 mg of metformin twice daily [1].', 'Check the eGFR every year.'),
        { sampleRate: rate, ...lang },
      );
      expect(error).toBeUndefined();
      expectWellFormed(chunks, [0, 1], rate);
      expect(leftovers()).toEqual([]);
    });

    it('streams: the first chunk arrives before the input has ended', async () => {
      const tts = target.make();
      let heard!: () => void;
      const firstChunk = new Promise<void>((resolve) => (heard = resolve));
      let inputEnded = false;
      let firstBeforeEnd: boolean | undefined;
      async function* slowly(): AsyncIterable<string> {
        yield 'The first sentence is spoken at once.';
        await firstChunk;
        yield 'The second one comes later.';
        inputEnded = true;
      }
      const { chunks, error } = await hear(tts, slowly(), lang, () => {
        firstBeforeEnd ??= !inputEnded;
        heard();
      });
      expect(error).toBeUndefined();
      expect(firstBeforeEnd).toBe(true);
      expectWellFormed(chunks, [0, 1], 16000);
    });

    it('stops quickly when aborted mid-sentence, leaving no process or file behind', async () => {
      const tts = target.make();
      const controller = new AbortController();
      let abortedAt = 0;
      const { chunks, error } = await hear(
        tts,
        from('A short first sentence.', LONG.repeat(3), LONG),
        { signal: controller.signal, ...lang },
        () => {
          if (abortedAt === 0) {
            abortedAt = performance.now();
            controller.abort();
          }
        },
      );
      const stoppedAfter = performance.now() - abortedAt;
      expect((error as Error).name).toBe('AbortError');
      expect(chunks).toHaveLength(1);
      expect(stoppedAfter).toBeLessThan(500);
      expect(leftovers()).toEqual([]);
    });

    it('refuses to start with an aborted signal', async () => {
      const tts = target.make();
      const { chunks, error } = await hear(tts, from('Hello.'), {
        signal: AbortSignal.abort(),
        ...lang,
      });
      expect(chunks).toEqual([]);
      expect((error as Error).name).toBe('AbortError');
    });

    it('stops and cleans up when the caller stops reading', async () => {
      const tts = target.make();
      const options = { signal: new AbortController().signal, sampleRate: 16000, ...lang };
      for await (const chunk of tts.synthesize(from('One.', LONG, LONG), options)) {
        expect(chunk.sentence).toBe(0);
        break;
      }
      expect(leftovers()).toEqual([]);
    });

    it('says nothing, without error, for empty or whitespace-only sentences', async () => {
      const tts = target.make();
      const { chunks, error } = await hear(
        tts,
        from('', '   ', 'Hello there.', '\n\t', '[1]'),
        lang,
      );
      expect(error).toBeUndefined();
      expectWellFormed(chunks, [2], 16000);
      expect(await hear(tts, from('', ' '), lang)).toEqual({ chunks: [], error: undefined });
    });

    it('passes on an error of the input after speaking what came before', async () => {
      const tts = target.make();
      async function* failing(): AsyncIterable<string> {
        yield 'Before the failure.';
        await Promise.resolve();
        throw new Error('the model failed');
      }
      const { chunks, error } = await hear(tts, failing(), lang);
      expect((error as Error).message).toBe('the model failed');
      expect(new Set(chunks.map((c) => c.sentence))).toEqual(new Set([0]));
      expect(leftovers()).toEqual([]);
    });

    it('speaks a 5,000-character sentence in bounded pieces', { timeout: 120_000 }, async () => {
      const tts = target.make();
      const text = LONG.repeat(Math.ceil(5000 / LONG.length)).slice(0, 5000);
      const { chunks, error } = await hear(tts, from(text), { sampleRate: 8000, ...lang });
      expect(error).toBeUndefined();
      expectWellFormed(chunks, [0], 8000);
      expect(chunks.filter((c) => c.sentenceEnd)).toHaveLength(1);
      expect(leftovers()).toEqual([]);
    });
  });
}
