import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../src/providers/llm/types.js';
import { checkArpa } from '../src/providers/stt/arpa-check.js';
import { PocketSphinxSttProvider } from '../src/providers/stt/pocketsphinx.js';
import { speak } from './helpers/speech-audio.js';
import { collect, finalText, frames } from './helpers/stt-contract.js';

/**
 * A knowledge-base language model interpolated with the generic one: a tiny ARPA model written
 * here by hand turns a sentence the generic model gets wrong ("start insulin AND ten units
 * daily") into the right one, in every decoder, loaded between utterances and removable.
 */

const SENTENCE = 'start insulin at ten units daily';

/** A bigram model that strongly expects SENTENCE (log10 probabilities, back-off weights). */
function arpa(sentence: string): string {
  const tokens = ['<s>', ...sentence.split(' '), '</s>'];
  const unigrams = tokens.map((w) => `-0.8451 ${w}${w === '</s>' ? '' : ' -0.3010'}`);
  const bigrams = tokens.slice(1).map((w, i) => `-0.0458 ${tokens[i]} ${w}`);
  return [
    '\\data\\',
    `ngram 1=${unigrams.length}`,
    `ngram 2=${bigrams.length}`,
    '',
    '\\1-grams:',
    ...unigrams,
    '',
    '\\2-grams:',
    ...bigrams,
    '',
    '\\end\\',
    '',
  ].join('\n');
}

let dir: string;
let arpaPath: string;
let speech: Buffer;
let provider: PocketSphinxSttProvider;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'stt-lm-'));
  arpaPath = path.join(dir, 'kb.arpa');
  await writeFile(arpaPath, arpa(SENTENCE));
  provider = new PocketSphinxSttProvider({ poolSize: 2 });
  [speech] = await Promise.all([speak(SENTENCE), provider.ready()]);
});
afterAll(async () => {
  await provider.close();
  await rm(dir, { recursive: true, force: true });
});

const transcribe = async (on = provider) =>
  finalText(await collect(on.transcribe(frames(speech), { signal: new AbortController().signal })));

/** Two at once, so that both decoders of the pool answer. */
const both = () => Promise.all([transcribe(), transcribe()]);

describe('PocketSphinx with a knowledge-base language model', () => {
  it('gets the sentence wrong with the generic model alone', async () => {
    for (const text of await both()) expect(text).not.toBe(SENTENCE);
  });

  it('gets it right in every decoder once the adapted model is interpolated', async () => {
    await provider.setAdaptedModel({ arpaPath, weight: 0.7 });
    expect(await both()).toEqual([SENTENCE, SENTENCE]);
  });

  it('goes back to the generic model with null', async () => {
    await provider.setAdaptedModel(null);
    for (const text of await both()) expect(text).not.toBe(SENTENCE);
  });

  it('loads the model given at construction', async () => {
    const adapted = new PocketSphinxSttProvider({
      poolSize: 1,
      adaptedModel: { arpaPath, weight: 0.7 },
    });
    try {
      await adapted.ready();
      expect(await transcribe(adapted)).toBe(SENTENCE);
    } finally {
      await adapted.close();
    }
  });

  it('a decoder replacing a crashed one starts with the adapted model', async () => {
    await provider.setAdaptedModel({ arpaPath, weight: 0.7 });
    await provider.crashForTest(0);
    // Both decoders idle again: the replacement is built (the test's deadline bounds the wait).
    while (provider.stats().idle < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await both()).toEqual([SENTENCE, SENTENCE]);
    expect(provider.stats().replaced).toBe(1);
    await provider.setAdaptedModel(null);
  });

  it('loads a new model between utterances, never in the middle of one', async () => {
    const events: string[] = [];
    const running = collect(
      provider.transcribe(frames(speech, { paceMs: 20 }), { signal: new AbortController().signal }),
    ).then((result) => {
      events.push('final');
      return result;
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await provider.setAdaptedModel({ arpaPath, weight: 0.7 });
    events.push('loaded');
    // The utterance under way kept the generic model; the load waited for its end.
    expect(events).toEqual(['final', 'loaded']);
    expect(finalText(await running)).not.toBe(SENTENCE);
    expect(await both()).toEqual([SENTENCE, SENTENCE]);
    await provider.setAdaptedModel(null);
  });

  it('refuses a model it cannot read, and every decoder keeps the generic model', async () => {
    await provider.setAdaptedModel({ arpaPath, weight: 0.7 });
    const missing = provider.setAdaptedModel({
      arpaPath: path.join(dir, 'missing.arpa'),
      weight: 0.5,
    });
    await expect(missing).rejects.toBeInstanceOf(ProviderError);
    await expect(missing).rejects.toMatchObject({ retryable: false });
    const garbage = path.join(dir, 'garbage.arpa');
    await writeFile(garbage, 'this is not an ARPA file\n');
    await expect(
      provider.setAdaptedModel({ arpaPath: garbage, weight: 0.5 }),
    ).rejects.toBeInstanceOf(ProviderError);
    // Truncated (a builder that died mid-write): sphinxbase's reader would crash the process.
    const truncated = path.join(dir, 'truncated.arpa');
    await writeFile(truncated, arpa(SENTENCE).slice(0, 200));
    await expect(
      provider.setAdaptedModel({ arpaPath: truncated, weight: 0.5 }),
    ).rejects.toMatchObject({ message: expect.stringMatching(/ARPA/) });
    for (const text of await both()) expect(text).not.toBe(SENTENCE);
    expect(provider.stats().replaced).toBe(1);
  });

  it('never lets the adapted model replace the generic one: 0 < weight < 1', () => {
    for (const weight of [0, 1, -0.5, 1.5, Number.NaN]) {
      expect(() => provider.setAdaptedModel({ arpaPath, weight })).toThrow(RangeError);
    }
    expect(() => provider.setAdaptedModel({ arpaPath: '', weight: 0.5 })).toThrow(RangeError);
  });
});

describe('checkArpa', () => {
  const good = arpa(SENTENCE);
  it('accepts a well-formed model', () => {
    expect(() => {
      checkArpa(good);
    }).not.toThrow();
  });

  it.each([
    ['no \\data\\', 'hello\n'],
    ['truncated', good.slice(0, good.indexOf('\\2-grams:') + 30)],
    ['no \\end\\', good.replace('\\end\\', '')],
    ['a count too high', good.replace('ngram 2=7', 'ngram 2=8')],
    ['a word that is not a unigram', good.replace('-0.0458 ten units', '-0.0458 ten hours')],
    ['a bad probability', good.replace('-0.0458 ten units', 'x ten units')],
    ['a duplicate', good.replace('-0.0458 ten units', '-0.0458 at ten')],
  ])('refuses a model with %s', (_, text) => {
    expect(() => {
      checkArpa(text);
    }).toThrow();
  });
});
