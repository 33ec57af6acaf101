import wavefile from 'wavefile';
import { AudioFormatError } from './errors.js';
import { resample } from './resample.js';

/**
 * WAV in and out. The RIFF structure is checked here first, chunk by chunk, because `wavefile`
 * trusts what a header says (it accepts 0 channels and a data chunk longer than the file); once
 * the file is known to be sound, `wavefile` does the decoding and bit-depth conversion it does
 * well (8-bit unsigned, 16/24/32-bit integer, 32/64-bit float, WAVE_FORMAT_EXTENSIBLE).
 */

const { WaveFile } = wavefile;

export const WAV_LIMITS = {
  minSampleRate: 4000,
  maxSampleRate: 192_000,
  maxChannels: 8,
  /** Default for `maxSeconds`. */
  maxSeconds: 600,
} as const;

/** A data-chunk size that means "until the end of the stream" (eSpeak NG writes 0x7ffff000). */
const OPEN_ENDED_SIZE = 0x7f000000;
const FORMAT_PCM = 1;
const FORMAT_FLOAT = 3;
const FORMAT_EXTENSIBLE = 0xfffe;

export interface WavInfo {
  encoding: 'pcm' | 'float';
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  /** Byte offset and length of the sample data (whole frames only). */
  dataOffset: number;
  dataLength: number;
  frames: number;
  durationSeconds: number;
}

export interface WavReadOptions {
  /** Longest audio accepted; default WAV_LIMITS.maxSeconds. */
  maxSeconds?: number;
  /**
   * Accept a data chunk whose size is a streaming placeholder (>= 0x7f000000, or 0) and take the
   * bytes present: what a program writing WAV to a pipe produces. Off for uploads.
   */
  openEnded?: boolean;
}

const fail = (message: string): never => {
  throw new AudioFormatError(message);
};

/** The format and extent of a WAV file; throws AudioFormatError for anything unsound. */
export function inspectWav(bytes: Uint8Array, options: WavReadOptions = {}): WavInfo {
  if (bytes.length < 12) fail('truncated header: shorter than a RIFF header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (fourCc(view, 0) !== 'RIFF' || fourCc(view, 8) !== 'WAVE') fail('not a RIFF/WAVE file');
  let fmt: Omit<WavInfo, 'dataOffset' | 'dataLength' | 'frames' | 'durationSeconds'> | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = fourCc(view, offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + size > bytes.length) fail('truncated header: fmt chunk');
      fmt = readFmt(view, body, size);
    } else if (id === 'data') {
      if (fmt === undefined) return fail('data chunk before the fmt chunk');
      return withData(fmt, body, dataLength(size, bytes.length - body, options), options);
    } else if (body + size > bytes.length) {
      fail(`truncated header: ${JSON.stringify(id)} chunk runs past the end of the file`);
    }
    offset = body + size + (size % 2);
  }
  return fail(fmt === undefined ? 'truncated header: no fmt chunk' : 'no data chunk');
}

function fourCc(view: DataView, offset: number): string {
  let text = '';
  for (let i = 0; i < 4; i++) text += String.fromCharCode(view.getUint8(offset + i));
  return text;
}

function readFmt(view: DataView, body: number, size: number) {
  let format = view.getUint16(body, true);
  const channels = view.getUint16(body + 2, true);
  const sampleRate = view.getUint32(body + 4, true);
  const blockAlign = view.getUint16(body + 12, true);
  const bitsPerSample = view.getUint16(body + 14, true);
  if (format === FORMAT_EXTENSIBLE) {
    if (size < 40) fail('truncated header: extensible fmt chunk');
    format = view.getUint16(body + 24, true);
  }
  if (channels === 0 || channels > WAV_LIMITS.maxChannels)
    fail(`unsupported channel count ${channels}`);
  if (sampleRate < WAV_LIMITS.minSampleRate || sampleRate > WAV_LIMITS.maxSampleRate) {
    fail(`unsupported sample rate ${sampleRate}`);
  }
  const pcm = format === FORMAT_PCM && [8, 16, 24, 32].includes(bitsPerSample);
  const float = format === FORMAT_FLOAT && [32, 64].includes(bitsPerSample);
  if (!pcm && !float) fail(`unsupported encoding: format ${format}, ${bitsPerSample} bits`);
  if (blockAlign !== (channels * bitsPerSample) / 8) fail('inconsistent block alignment');
  return {
    encoding: pcm ? ('pcm' as const) : ('float' as const),
    channels,
    sampleRate,
    bitsPerSample,
  };
}

function dataLength(declared: number, present: number, options: WavReadOptions): number {
  const placeholder = declared >= OPEN_ENDED_SIZE || declared === 0;
  if (options.openEnded === true && placeholder) return present;
  if (declared <= present) return declared;
  return fail('data chunk runs past the end of the file');
}

function withData(
  fmt: Omit<WavInfo, 'dataOffset' | 'dataLength' | 'frames' | 'durationSeconds'>,
  dataOffset: number,
  length: number,
  options: WavReadOptions,
): WavInfo {
  const frameBytes = (fmt.channels * fmt.bitsPerSample) / 8;
  const frames = Math.floor(length / frameBytes);
  const durationSeconds = frames / fmt.sampleRate;
  const maxSeconds = options.maxSeconds ?? WAV_LIMITS.maxSeconds;
  if (durationSeconds > maxSeconds) fail(`longer than ${maxSeconds} s`);
  return { ...fmt, dataOffset, dataLength: frames * frameBytes, frames, durationSeconds };
}

export interface DecodeWavOptions extends WavReadOptions {
  /** The rate wanted: the audio is resampled to it. */
  sampleRate: number;
}

/** A WAV file as PCM16 mono at `options.sampleRate` (channels averaged). */
export function decodeWav(bytes: Uint8Array, options: DecodeWavOptions): Int16Array {
  const info = inspectWav(bytes, options);
  const mono = downmix(samplesOf(bytes, info), info.channels);
  return resample(mono, info.sampleRate, options.sampleRate);
}

/** Interleaved PCM16 of a checked file, converted by wavefile. */
function samplesOf(bytes: Uint8Array, info: WavInfo): Int16Array {
  // A canonical file with the checked format and only the whole frames present, so wavefile reads
  // exactly what inspectWav measured (no placeholder sizes, no odd chunks, no partial frame).
  const data = bytes.subarray(info.dataOffset, info.dataOffset + info.dataLength);
  const file = new Uint8Array(44 + data.length);
  file.set(canonicalHeader(info), 0);
  file.set(data, 44);
  const wav = new WaveFile(file);
  if (wav.bitDepth !== '16') wav.toBitDepth('16');
  return wav.getSamples(true, Int16Array) as unknown as Int16Array;
}

function canonicalHeader(info: WavInfo): Uint8Array {
  const header = new Uint8Array(44);
  const view = new DataView(header.buffer);
  const ascii = (offset: number, text: string): void => {
    for (let i = 0; i < 4; i++) view.setUint8(offset + i, text.charCodeAt(i));
  };
  const blockAlign = (info.channels * info.bitsPerSample) / 8;
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + info.dataLength, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, info.encoding === 'float' ? FORMAT_FLOAT : FORMAT_PCM, true);
  view.setUint16(22, info.channels, true);
  view.setUint32(24, info.sampleRate, true);
  view.setUint32(28, info.sampleRate * blockAlign, true);
  view.setUint16(32, blockAlign, true);
  view.setUint16(34, info.bitsPerSample, true);
  ascii(36, 'data');
  view.setUint32(40, info.dataLength, true);
  return header;
}

function downmix(interleaved: Int16Array, channels: number): Int16Array {
  if (channels === 1) return interleaved;
  const frames = Math.floor(interleaved.length / channels);
  const out = new Int16Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += interleaved[f * channels + c] ?? 0;
    out[f] = Math.round(sum / channels);
  }
  return out;
}

/** A WAV file (PCM16 mono) of `samples`. */
export function encodeWav(samples: Int16Array, sampleRate: number): Buffer {
  if (!Number.isInteger(sampleRate) || sampleRate < 1 || sampleRate > WAV_LIMITS.maxSampleRate) {
    throw new RangeError('sample rate out of range');
  }
  const wav = new WaveFile();
  wav.fromScratch(1, sampleRate, '16', samples);
  return Buffer.from(wav.toBuffer());
}
