import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../src/providers/llm/types.js';
import { PocketSphinxSttProvider } from '../src/providers/stt/pocketsphinx.js';
import { speak } from './helpers/speech-audio.js';
import { collect, endless, finalText, frames, sleep, words } from './helpers/stt-contract.js';

/**
 * PocketSphinx's decoder pool: the bounded wait for a decoder, a crashed thread replaced,
 * languages, the utterance bound, close. One decoder, so the waits are easy to arrange.
 */

const SENTENCE = 'what is the dose of ibuprofen for children';
let provider: PocketSphinxSttProvider;
let impatient: PocketSphinxSttProvider;
let speech: Buffer;

beforeAll(async () => {
  provider = new PocketSphinxSttProvider({ poolSize: 1, maxQueue: 1, maxUtteranceMs: 5_000 });
  // A second one, to run out of patience quickly.
  impatient = new PocketSphinxSttProvider({ poolSize: 1, maxQueue: 1, acquireTimeoutMs: 400 });
  [speech] = await Promise.all([speak(SENTENCE), provider.ready(), impatient.ready()]);
});
afterAll(() => Promise.all([provider.close(), impatient.close()]));

const run = (
  audio: AsyncIterable<Buffer>,
  signal = new AbortController().signal,
  language?: string,
  on = provider,
) => collect(on.transcribe(audio, { signal, ...(language === undefined ? {} : { language }) }));

const recognised = (text: string) => words(text).filter((w) => SENTENCE.split(' ').includes(w));

describe('PocketSphinx decoder pool', () => {
  it('builds its decoders once, at start-up', () => {
    const stats = provider.stats();
    expect(stats).toMatchObject({ size: 1, idle: 1, busy: 0, queued: 0, replaced: 0 });
    expect(stats.setupMs).toHaveLength(1);
    expect(stats.setupMs[0]).toBeGreaterThan(0);
  });

  it('queues an utterance while the decoder is busy, up to a bound and a time limit', async () => {
    const hold = new AbortController();
    const first = run(endless(speech), hold.signal, undefined, impatient);
    await sleep(100);
    expect(impatient.stats().busy).toBe(1);
    // Waits its turn and fails after acquireTimeoutMs; the queue is now full.
    const started = performance.now();
    const second = run(endless(speech), undefined, undefined, impatient);
    await sleep(50);
    expect(impatient.stats().queued).toBe(1);
    const third = await run(endless(speech), undefined, undefined, impatient);
    expect(third.error).toBeInstanceOf(ProviderError);
    expect(third.error).toMatchObject({ retryable: true, provider: 'pocketsphinx' });
    expect((third.error as Error).message).toMatch(/busy/);
    const waited = await second;
    expect(waited.error).toMatchObject({
      retryable: true,
      message: expect.stringMatching(/400 ms/),
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    hold.abort(new Error('done'));
    expect(((await first).error as Error).message).toBe('done');
  });

  it('hands the decoder to a waiting utterance as soon as the previous one ends', async () => {
    const [a, b] = await Promise.all([run(frames(speech)), run(frames(speech))]);
    expect(recognised(finalText(a)).length).toBeGreaterThanOrEqual(5);
    expect(recognised(finalText(b)).length).toBeGreaterThanOrEqual(5);
  });

  it('leaves the queue when the waiting utterance is aborted', async () => {
    const hold = new AbortController();
    const first = run(endless(speech), hold.signal);
    await sleep(100);
    const waiting = new AbortController();
    const second = run(endless(speech), waiting.signal);
    await sleep(50);
    waiting.abort(new Error('caller left'));
    expect(((await second).error as Error).message).toBe('caller left');
    expect(provider.stats().queued).toBe(0);
    hold.abort();
    await first;
  });

  it('fails the utterance of a crashed decoder thread (retryable) and replaces the thread', async () => {
    const pending = run(endless(speech));
    await sleep(300);
    await provider.crashForTest(0);
    const { error, events } = await pending;
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: true, provider: 'pocketsphinx' });
    expect(events.some((e) => e.type === 'final')).toBe(false);
    expect(provider.stats().replaced).toBe(1);
    // The next utterance waits for the new decoder, then is recognised.
    const next = await run(frames(speech));
    expect(recognised(finalText(next)).length).toBeGreaterThanOrEqual(5);
    expect(provider.stats()).toMatchObject({ idle: 1, replaced: 1 });
  });

  it('takes English (any region) and refuses other languages', async () => {
    expect(finalText(await run(frames(speech), undefined, 'en-GB'))).not.toBe('');
    const { error } = await run(frames(speech), undefined, 'fr-FR');
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: false });
  });

  it('fails an utterance longer than maxUtteranceMs, without a final', async () => {
    const { error, events } = await run(endless(speech, 0));
    expect(error).toMatchObject({
      retryable: false,
      message: expect.stringMatching(/longer than 5 s/),
    });
    expect(events.some((e) => e.type === 'final')).toBe(false);
    expect(finalText(await run(frames(speech)))).not.toBe('');
  });

  it('refuses new utterances once closed, and fails the ones running', async () => {
    const closing = new PocketSphinxSttProvider({ poolSize: 1 });
    await closing.ready();
    const running = collect(
      closing.transcribe(endless(speech), { signal: new AbortController().signal }),
    );
    await sleep(200);
    await closing.close();
    expect((await running).error).toMatchObject({
      retryable: false,
      message: expect.stringMatching(/closed/),
    });
    const after = await collect(
      closing.transcribe(frames(speech), { signal: new AbortController().signal }),
    );
    expect(after.error).toMatchObject({
      retryable: false,
      message: expect.stringMatching(/closed/),
    });
  });

  it('breaks with a clear error when its models cannot be loaded', async () => {
    const broken = new PocketSphinxSttProvider({ poolSize: 1, modelDir: '/nonexistent' });
    await expect(broken.ready()).rejects.toMatchObject({ retryable: false });
    const { error } = await collect(
      broken.transcribe(frames(speech), { signal: new AbortController().signal }),
    );
    expect(error).toMatchObject({ message: expect.stringMatching(/failed to start/) });
    await broken.close();
  });
});
