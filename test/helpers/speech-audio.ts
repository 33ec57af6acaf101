import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * Test audio made on the spot with Debian's `flite` and `sox`: PCM16 mono 16 kHz little-endian,
 * the format of the voice socket's `audio.input`.
 */

const run = promisify(execFile);
export const SAMPLE_RATE = 16_000;
const BYTES_PER_MS = (SAMPLE_RATE / 1000) * 2;
const RAW_PCM16 = ['-r', String(SAMPLE_RATE), '-b', '16', '-c', '1', '-e', 'signed', '-t', 'raw'];

export type FliteVoice = 'slt' | 'kal' | 'kal16' | 'awb' | 'rms';

/** `text` spoken by Flite (default voice `slt`), resampled to PCM16 16 kHz mono. */
export async function speak(text: string, options: { voice?: FliteVoice } = {}): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'speech-audio-'));
  try {
    const wav = path.join(dir, 'speech.wav');
    const raw = path.join(dir, 'speech.raw');
    await run('flite', ['-voice', options.voice ?? 'slt', '-t', text, '-o', wav]);
    await run('sox', [wav, ...RAW_PCM16, raw]);
    return await readFile(raw);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Sox's synthesized noise: `seconds` of it at `volume` (0..1 of full scale). */
export async function noise(
  kind: 'white' | 'pink' | 'brown',
  seconds: number,
  volume: number,
): Promise<Buffer> {
  return synth(seconds, [`${kind}noise`], volume);
}

/** A sine tone (for a click: a few ms of a loud one). */
export async function tone(ms: number, frequency: number, volume: number): Promise<Buffer> {
  return synth(ms / 1000, ['sine', String(frequency)], volume);
}

async function synth(seconds: number, what: string[], volume: number): Promise<Buffer> {
  const { stdout } = await run(
    'sox',
    // -R: the same noise every run, so a test on noise passes or fails the same way each time
    // (CI once got a brown noise the detector heard as speech).
    ['-R', '-n', ...RAW_PCM16, '-', 'synth', String(seconds), ...what, 'vol', String(volume)],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** `ms` of digital silence. */
export function silence(ms: number): Buffer {
  return Buffer.alloc(Math.round(ms * (SAMPLE_RATE / 1000)) * 2);
}

/** The duration of PCM16 16 kHz audio in ms. */
export function durationMs(pcm: Buffer): number {
  return pcm.length / BYTES_PER_MS;
}

/**
 * Where the sound in `pcm` begins and ends (ms): the first and the last sample whose magnitude
 * reaches `floor` (of 32768). Null for audio that never does.
 */
export function soundBounds(pcm: Buffer, floor = 500): { startMs: number; endMs: number } | null {
  const samples = pcm.length >> 1;
  let first = -1;
  let last = -1;
  for (let i = 0; i < samples; i++) {
    if (Math.abs(pcm.readInt16LE(i * 2)) >= floor) {
      if (first < 0) first = i;
      last = i;
    }
  }
  if (first < 0) return null;
  const msPerSample = 1000 / SAMPLE_RATE;
  return { startMs: first * msPerSample, endMs: (last + 1) * msPerSample };
}

/** `pcm` cut into pieces of `size` bytes (the last may be shorter). */
export function pieces(pcm: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let offset = 0; offset < pcm.length; offset += size) {
    out.push(pcm.subarray(offset, offset + size));
  }
  return out;
}

/** `pcm` without the quiet before and after its sound (see soundBounds); empty when all quiet. */
export function trimSilence(pcm: Buffer, floor = 500): Buffer {
  const bounds = soundBounds(pcm, floor);
  if (!bounds) return Buffer.alloc(0);
  return pcm.subarray(msToBytes(bounds.startMs), msToBytes(bounds.endMs));
}

/** The byte offset of stream time `ms` (whole samples). */
export function msToBytes(ms: number): number {
  return Math.round(ms * (SAMPLE_RATE / 1000)) * 2;
}
