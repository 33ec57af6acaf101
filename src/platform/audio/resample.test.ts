import { describe, expect, it } from 'vitest';
import { Rechunker, bufferToInt16, int16ToBuffer, rms } from './pcm.js';
import { StreamingResampler, resample } from './resample.js';

const tone = (rate: number, hz: number, seconds: number, amplitude = 16000) =>
  Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)),
  );

/** The amplitude of `hz` in `samples` (a single-bin DFT), 0..1 of full scale. */
function level(samples: Int16Array, rate: number, hz: number): number {
  let re = 0;
  let im = 0;
  samples.forEach((s, i) => {
    re += s * Math.cos((2 * Math.PI * hz * i) / rate);
    im += s * Math.sin((2 * Math.PI * hz * i) / rate);
  });
  return (2 * Math.hypot(re, im)) / samples.length / 32768;
}

describe('resample', () => {
  it.each([
    [16000, 8000],
    [22050, 16000],
    [24000, 16000],
    [8000, 16000],
    [16000, 48000],
    [44100, 24000],
  ])('%i Hz -> %i Hz keeps a 440 Hz tone and the duration', (from, to) => {
    const out = resample(tone(from, 440, 1), from, to);
    expect(Math.abs(out.length - to)).toBeLessThanOrEqual(1);
    expect(level(out.subarray(200, -200), to, 440)).toBeCloseTo(16000 / 32768, 1);
  });

  it('filters out what the lower rate cannot carry (no aliasing)', () => {
    // 7 kHz at 24 kHz would alias to 1 kHz at 8 kHz.
    const out = resample(tone(24000, 7000, 1), 24000, 8000);
    expect(level(out, 8000, 1000)).toBeLessThan(0.01);
    expect(rms(out)).toBeLessThan(0.01);
  });

  it('is the identity at equal rates', () => {
    const input = tone(16000, 300, 0.1);
    expect(resample(input, 16000, 16000)).toEqual(input);
  });

  it('gives the same output whatever the block boundaries', () => {
    const input = tone(24000, 523, 0.5);
    const whole = resample(input, 24000, 16000);
    const streaming = new StreamingResampler(24000, 16000);
    const parts: number[] = [];
    for (let i = 0; i < input.length;) {
      const size = 1 + ((i * 7919) % 977);
      parts.push(...streaming.push(input.subarray(i, i + size)));
      i += size;
    }
    parts.push(...streaming.flush());
    expect(Int16Array.from(parts)).toEqual(whole);
  });

  it('refuses absurd rates', () => {
    expect(() => new StreamingResampler(0, 16000)).toThrow(RangeError);
    expect(() => new StreamingResampler(16000, 1e9)).toThrow(RangeError);
    expect(() => new StreamingResampler(16000.5, 8000)).toThrow(RangeError);
  });

  it('handles empty input and clipping', () => {
    expect(resample(new Int16Array(0), 24000, 16000)).toHaveLength(0);
    const square = Int16Array.from({ length: 2400 }, (_, i) => (i % 48 < 24 ? 32767 : -32768));
    const out = resample(square, 24000, 16000);
    expect(Math.max(...out)).toBeLessThanOrEqual(32767);
    expect(Math.min(...out)).toBeGreaterThanOrEqual(-32768);
  });
});

describe('pcm helpers', () => {
  it('round-trips bytes', () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768, 1234]);
    const bytes = int16ToBuffer(samples);
    expect(bytes.readInt16LE(6)).toBe(32767);
    expect(bufferToInt16(bytes)).toEqual(samples);
    expect(bufferToInt16(Buffer.concat([bytes, Buffer.from([7])]))).toEqual(samples);
  });

  it('rechunks blocks of any size into even blocks', () => {
    const rechunker = new Rechunker(100);
    const sizes: number[] = [];
    for (const n of [30, 50, 250, 1, 0, 69]) {
      for (const block of rechunker.push(new Int16Array(n))) sizes.push(block.length);
    }
    expect(sizes).toEqual([100, 100, 100, 100]);
    expect(rechunker.flush()).toBeUndefined();
    rechunker.push(new Int16Array(5));
    expect(rechunker.flush()).toHaveLength(5);
    expect(() => new Rechunker(0)).toThrow(RangeError);
  });
});
