import { describe, expect, it } from 'vitest';
import { AudioFormatError } from './errors.js';
import { rms } from './pcm.js';
import { decodeWav, encodeWav, inspectWav } from './wav.js';

interface Build {
  format?: number;
  channels?: number;
  rate?: number;
  bits?: number;
  frames?: number;
  /** Overrides the data chunk's declared size. */
  declared?: number;
  blockAlign?: number;
  extraChunk?: boolean;
  /** sample value (-1..1) of channel c, frame f */
  value?: (f: number, c: number) => number;
}

const sine = (rate: number, hz: number) => (f: number) =>
  0.5 * Math.sin((2 * Math.PI * hz * f) / rate);

/** A WAV file written byte by byte, independently of the code under test. */
function build(b: Build = {}): Buffer {
  const { format = 1, channels = 1, rate = 16000, bits = 16, frames = 1600 } = b;
  const value = b.value ?? sine(rate, 440);
  const bytesPer = bits / 8;
  const data = Buffer.alloc(frames * channels * bytesPer);
  let o = 0;
  for (let f = 0; f < frames; f++) {
    for (let c = 0; c < channels; c++, o += bytesPer) {
      const v = value(f, c);
      if (format === 3 && bits === 32) data.writeFloatLE(v, o);
      else if (format === 3 && bits === 64) data.writeDoubleLE(v, o);
      else if (bits === 8) data.writeUInt8(Math.round(v * 127) + 128, o);
      else if (bits === 16) data.writeInt16LE(Math.round(v * 32767), o);
      else if (bits === 24) data.writeIntLE(Math.round(v * 8388607), o, 3);
      else data.writeInt32LE(Math.round(v * 2147483647), o);
    }
  }
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(format, 8);
  fmt.writeUInt16LE(channels, 10);
  fmt.writeUInt32LE(rate, 12);
  fmt.writeUInt32LE((rate * channels * bytesPer) % 2 ** 32, 16);
  fmt.writeUInt16LE(b.blockAlign ?? channels * bytesPer, 20);
  fmt.writeUInt16LE(bits, 22);
  const extra =
    b.extraChunk === true ? Buffer.from('LIST\x03\x00\x00\x00abc\x00', 'latin1') : Buffer.alloc(0);
  const dataHeader = Buffer.alloc(8);
  dataHeader.write('data', 0, 'ascii');
  dataHeader.writeUInt32LE(b.declared ?? data.length, 4);
  const body = Buffer.concat([Buffer.from('WAVE'), fmt, extra, dataHeader, data]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'ascii');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

const reason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AudioFormatError);
    expect((error as AudioFormatError).status).toBe(422);
    return (error as AudioFormatError).reason;
  }
  throw new Error('did not throw');
};

describe('decodeWav', () => {
  const formats: [string, Build][] = [
    ['PCM 8-bit', { bits: 8 }],
    ['PCM 16-bit', { bits: 16 }],
    ['PCM 24-bit', { bits: 24 }],
    ['PCM 32-bit', { bits: 32 }],
    ['float32', { format: 3, bits: 32 }],
    ['float64', { format: 3, bits: 64 }],
    ['stereo 16-bit', { channels: 2 }],
    ['stereo float32 at 44.1 kHz', { format: 3, bits: 32, channels: 2, rate: 44100, frames: 4410 }],
    ['with a LIST chunk before data', { extraChunk: true }],
  ];
  it.each(formats)('%s becomes PCM16 mono at the rate asked', (_name, b) => {
    const rate = b.rate ?? 16000;
    const frames = b.frames ?? 1600;
    const out = decodeWav(build(b), { sampleRate: 16000 });
    expect(Math.abs(out.length - Math.round((frames * 16000) / rate))).toBeLessThanOrEqual(1);
    // A 0.5 sine has an RMS of about 0.354 whatever the encoding.
    expect(rms(out)).toBeGreaterThan(0.3);
    expect(rms(out)).toBeLessThan(0.4);
  });

  it.each([8000, 22050, 24000, 48000])('resamples 16 kHz to %i Hz', (rate) => {
    const out = decodeWav(build({ frames: 16000 }), { sampleRate: rate });
    expect(Math.abs(out.length - rate)).toBeLessThanOrEqual(1);
    expect(rms(out)).toBeGreaterThan(0.3);
  });

  it('averages stereo channels', () => {
    const file = build({ channels: 2, value: (_f, c) => (c === 0 ? 0.5 : -0.5) });
    const out = decodeWav(file, { sampleRate: 16000 });
    expect(Math.max(...out.map(Math.abs))).toBeLessThanOrEqual(1);
  });

  it('reads an open-ended stream (data size placeholder) only when asked', () => {
    const file = build({ declared: 0x7ffff000 });
    expect(reason(() => decodeWav(file, { sampleRate: 16000 }))).toMatch(/past the end/);
    expect(decodeWav(file, { sampleRate: 16000, openEnded: true })).toHaveLength(1600);
  });

  it('drops a trailing partial frame', () => {
    const file = build({ channels: 2, frames: 10 });
    const cut = file.subarray(0, file.length - 1);
    cut.writeUInt32LE(0, 40);
    expect(decodeWav(cut, { sampleRate: 16000, openEnded: true })).toHaveLength(9);
  });
});

describe('hostile WAV input', () => {
  const good = build();
  const cases: [string, () => Buffer, RegExp][] = [
    ['empty', () => Buffer.alloc(0), /truncated header/],
    ['cut inside the RIFF header', () => good.subarray(0, 10), /truncated header/],
    ['cut inside the fmt chunk', () => good.subarray(0, 30), /truncated header: fmt/],
    ['cut before the data chunk', () => good.subarray(0, 36), /no data chunk/],
    ['not RIFF', () => Buffer.concat([Buffer.from('RIFX'), good.subarray(4)]), /not a RIFF/],
    [
      'an MP3',
      () => Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00', 'latin1'),
      /not a RIFF/,
    ],
    ['data longer than the file', () => build({ declared: 1_000_000 }), /past the end/],
    ['0 channels', () => build({ channels: 0, blockAlign: 0 }), /channel count 0/],
    ['40 channels', () => build({ channels: 40, frames: 1 }), /channel count 40/],
    ['rate 0', () => build({ rate: 0 }), /sample rate 0/],
    ['rate 4 GHz', () => build({ rate: 4_000_000_000 }), /sample rate/],
    ['rate 100 Hz', () => build({ rate: 100 }), /sample rate 100/],
    ['12-bit PCM', () => build({ bits: 12, blockAlign: 2, frames: 0 }), /unsupported encoding/],
    ['float16', () => build({ format: 3, bits: 16 }), /unsupported encoding/],
    ['A-law', () => build({ format: 6, bits: 8 }), /unsupported encoding/],
    ['lying block alignment', () => build({ blockAlign: 7 }), /block alignment/],
  ];
  it.each(cases)('%s is refused with a 422 error', (_name, file, message) => {
    expect(reason(() => decodeWav(file(), { sampleRate: 16000 }))).toMatch(message);
  });

  it('refuses audio longer than the limit', () => {
    const file = build({ rate: 8000, frames: 8000 * 3 });
    expect(reason(() => inspectWav(file, { maxSeconds: 2 }))).toMatch(/longer than 2 s/);
    expect(inspectWav(file, { maxSeconds: 3 }).durationSeconds).toBe(3);
  });

  it('refuses a huge placeholder stream that is really long', () => {
    const file = build({ rate: 8000, frames: 8000 * 3, declared: 0xffffffff });
    expect(reason(() => inspectWav(file, { maxSeconds: 2, openEnded: true }))).toMatch(/longer/);
  });
});

describe('encodeWav', () => {
  it('writes PCM16 mono that reads back unchanged', () => {
    const samples = Int16Array.from({ length: 500 }, (_, i) => (i * 131) % 30000);
    const file = encodeWav(samples, 22050);
    expect(file.length).toBe(44 + 1000);
    expect(inspectWav(file)).toMatchObject({
      channels: 1,
      sampleRate: 22050,
      bitsPerSample: 16,
      frames: 500,
    });
    expect(decodeWav(file, { sampleRate: 22050 })).toEqual(samples);
  });
});
