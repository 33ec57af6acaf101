import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * Speech for the word-error-rate benchmark: Flite speaks a text with one of its voices, sox turns
 * the WAV into what the recognizer reads (16 kHz PCM16 mono, raw little-endian). Each clip is
 * kept in a cache directory named by voice and text, so runs after the first skip synthesis.
 */

const run = promisify(execFile);
const CACHE = path.join(os.tmpdir(), 'voice-wer-audio');

export const SAMPLE_RATE = 16_000;

export async function speak(text: string, voice: string): Promise<Buffer> {
  await mkdir(CACHE, { recursive: true });
  const key = createHash('sha256').update(`${voice}\n${text}`).digest('hex').slice(0, 24);
  const pcm = path.join(CACHE, `${key}.raw`);
  if (!existsSync(pcm)) {
    const wav = path.join(CACHE, `${key}.${process.pid}.wav`);
    await run('flite', ['-voice', voice, '-t', text, '-o', wav]);
    const partial = `${pcm}.${process.pid}`;
    await run('sox', [
      wav,
      '-r',
      '16000',
      '-c',
      '1',
      '-b',
      '16',
      '-e',
      'signed-integer',
      '-t',
      'raw',
      partial,
    ]);
    await rename(partial, pcm);
  }
  return readFile(pcm);
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

/** The Debian packages behind the voices and the recognizer, with their versions. */
export async function packageVersions(): Promise<string> {
  const names = ['flite', 'sox', 'libpocketsphinx3', 'pocketsphinx-en-us'];
  const { stdout } = await run('dpkg-query', ['-W', '-f', '${Package} ${Version}\\n', ...names]);
  return stdout.trim().split('\n').join(', ');
}
