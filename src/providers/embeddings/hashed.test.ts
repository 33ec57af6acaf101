import { describe, expect, it } from 'vitest';
import { HashedEmbeddings } from './hashed.js';

const dot = (a: Float32Array, b: Float32Array): number =>
  a.reduce((sum, v, i) => sum + v * b[i]!, 0);
const norm = (a: Float32Array): number => Math.sqrt(dot(a, a));

async function similarity(provider: HashedEmbeddings, a: string, b: string): Promise<number> {
  const [x, y] = await provider.embed([a, b]);
  return dot(x!, y!);
}

describe('HashedEmbeddings', () => {
  const provider = new HashedEmbeddings();

  it('names the model with its version and size', () => {
    expect(provider.model).toBe('hashed-ngrams-v3-768');
    expect(provider.dimensions).toBe(768);
    expect(new HashedEmbeddings({ dimensions: 512 }).model).toBe('hashed-ngrams-v3-512');
  });

  it('rejects unusable sizes', () => {
    expect(() => new HashedEmbeddings({ dimensions: 3 })).toThrow(RangeError);
    expect(() => new HashedEmbeddings({ dimensions: 100.5 })).toThrow(RangeError);
  });

  it('is deterministic across instances and calls', async () => {
    const text = 'Start a statin in adults with type 2 diabetes over 40.';
    const [a] = await provider.embed([text]);
    const [b] = await new HashedEmbeddings().embed([text]);
    expect(Array.from(a!)).toEqual(Array.from(b!));
  });

  it('returns one unit vector per text, in order', async () => {
    const texts = ['asthma inhaler technique', 'sepsis lactate', 'asthma inhaler technique'];
    const vectors = await provider.embed(texts);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toHaveLength(768);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(dot(vectors[0]!, vectors[2]!)).toBeCloseTo(1, 5);
    expect(dot(vectors[0]!, vectors[1]!)).toBeLessThan(0.3);
  });

  it('puts related texts closer than unrelated ones', async () => {
    const query = 'target blood pressure for older adults with hypertension';
    const related = 'In adults over 80 years, aim for a clinic blood pressure below 150/90 mmHg.';
    const unrelated = 'Give amoxicillin for five days in community-acquired pneumonia.';
    expect(await similarity(provider, query, related)).toBeGreaterThan(
      await similarity(provider, query, unrelated),
    );
  });

  it('relates word forms through character n-grams and stems', async () => {
    const close = await similarity(provider, 'hypertensive patients', 'patients with hypertension');
    const far = await similarity(provider, 'hypertensive patients', 'patients with pneumonia');
    expect(close).toBeGreaterThan(0.6);
    expect(close).toBeGreaterThan(far + 0.3);
  });

  it('relates lay terms to clinical terms', async () => {
    const pairs: [string, string, string][] = [
      ['high blood pressure', 'hypertension', 'pneumonia'],
      ['water infection', 'urinary tract infection', 'atrial fibrillation'],
      ['heart attack', 'myocardial infarction', 'urinary tract infection'],
      ['blood thinner', 'anticoagulant', 'antibiotic'],
    ];
    for (const [short, long, other] of pairs) {
      expect(await similarity(provider, short, long)).toBeGreaterThan(
        (await similarity(provider, short, other)) + 0.3,
      );
    }
  });

  it('folds case and accents', async () => {
    expect(await similarity(provider, 'Œdème PULMONAIRE', 'oedeme pulmonaire')).toBeCloseTo(1, 5);
  });

  it('gives texts without words one fixed unit vector', async () => {
    const [empty, punctuation, stopwords, text] = await provider.embed([
      '',
      ' ... !? ',
      'the and of',
      'renal function',
    ]);
    expect(norm(empty!)).toBeCloseTo(1, 5);
    expect(Array.from(punctuation!)).toEqual(Array.from(empty!));
    expect(Array.from(stopwords!)).toEqual(Array.from(empty!));
    expect(Math.abs(dot(empty!, text!))).toBeLessThan(0.3);
    expect(await provider.embed([])).toEqual([]);
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(provider.embed(['x'], { signal: controller.signal })).rejects.toThrow('cancelled');
  });
});
