import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodeG722 } from './g722.js';

/**
 * Audio for the word-error-rate benchmark, every source turned by sox into what the recognizer
 * reads (16 kHz PCM16 mono, raw little-endian) with the same command: Flite's and eSpeak NG's
 * voices speaking a text, and recordings a Debian package installs (WAV, or G.722 decoded by
 * spandsp first). Each clip is kept in a cache directory named by its source, so runs after the
 * first skip synthesis and conversion.
 */

const run = promisify(execFile);
const CACHE = path.join(os.tmpdir(), 'voice-wer-audio');

export const SAMPLE_RATE = 16_000;

/** The speech engines of the benchmark, and how each writes `text` spoken by `voice` to `wav`. */
const ENGINES = {
  flite: (text: string, voice: string, wav: string) => [
    'flite',
    ['-voice', voice, '-t', text, '-o', wav],
  ],
  'espeak-ng': (text: string, voice: string, wav: string) => [
    'espeak-ng',
    ['-v', voice, '-w', wav, text],
  ],
} as const satisfies Record<
  string,
  (text: string, voice: string, wav: string) => [string, string[]]
>;

export type Engine = keyof typeof ENGINES;

/** sox's arguments that make the recognizer's input of whatever comes before them. */
const TO_RECOGNIZER = ['-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw'];
/** sox's description of decoded G.722 (what decodeG722 returns). */
const RAW_16K = ['-t', 'raw', '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer'];

/**
 * The cached clip named by `key`; when absent, `make(tmp)` gives sox's input arguments (and the
 * file it wrote for them, named from `tmp`, removed after the conversion).
 */
async function cached(
  key: string,
  make: (tmp: string) => Promise<{ input: string[]; written?: string }>,
): Promise<Buffer> {
  await mkdir(CACHE, { recursive: true });
  const name = createHash('sha256').update(key).digest('hex').slice(0, 24);
  const pcm = path.join(CACHE, `${name}.raw`);
  if (!existsSync(pcm)) {
    const { input, written } = await make(path.join(CACHE, `${name}.${process.pid}`));
    const partial = `${pcm}.${process.pid}`;
    try {
      await run('sox', [...input, ...TO_RECOGNIZER, partial]);
    } finally {
      if (written) await rm(written, { force: true });
    }
    await rename(partial, pcm);
  }
  return readFile(pcm);
}

/** `text` spoken by `voice` of `engine`, as the recognizer reads it. */
export async function speak(
  text: string,
  voice: string,
  engine: Engine = 'flite',
): Promise<Buffer> {
  // Flite's clips keep the cache key they had before other engines came.
  const key = engine === 'flite' ? `${voice}\n${text}` : `${engine}\n${voice}\n${text}`;
  return cached(key, async (tmp) => {
    const wav = `${tmp}.wav`;
    const [command, args] = ENGINES[engine](text, voice, wav);
    await run(command, args);
    return { input: [wav], written: wav };
  });
}

/** A recording (`.wav`, any rate sox reads, or raw 64 kbit/s `.g722`), as the recognizer reads it. */
export async function recording(file: string): Promise<Buffer> {
  const { size, mtimeMs } = await stat(file);
  return cached(`recording\n${file}\n${size}\n${mtimeMs}`, async (tmp) => {
    if (!file.endsWith('.g722')) return { input: [file] };
    const raw = `${tmp}.s16`;
    await writeFile(raw, decodeG722(await readFile(file)));
    return { input: [...RAW_16K, raw], written: raw };
  });
}

/** Audio seconds in a PCM16 mono buffer. */
export const seconds = (pcm: Buffer) => pcm.length / 2 / SAMPLE_RATE;

/** The buffer in 100 ms pieces, as a socket would deliver it (but without waiting). */
export async function* frames(pcm: Buffer): AsyncIterable<Buffer> {
  const step = SAMPLE_RATE / 10;
  for (let at = 0; at < pcm.length; at += step * 2) {
    yield pcm.subarray(at, Math.min(pcm.length, at + step * 2));
    await Promise.resolve();
  }
}

/** The Debian packages behind the voices, the recordings and the recognizer, with their versions. */
export async function packageVersions(): Promise<string> {
  const names = [
    'flite',
    'espeak-ng',
    'asterisk-core-sounds-en',
    'asterisk-core-sounds-en-g722',
    'asterisk-core-sounds-en-wav',
    'libspandsp2',
    'sox',
    'libpocketsphinx3',
    'pocketsphinx-en-us',
  ];
  const versions: string[] = [];
  for (const name of names) {
    try {
      const { stdout } = await run('dpkg-query', ['-W', '-f', '${Version}', name]);
      versions.push(`${name} ${stdout.trim()}`);
    } catch {
      versions.push(`${name} not installed`);
    }
  }
  return versions.join(', ');
}
