import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderError } from '../llm/types.js';
import { MAX_PIECE_BYTES, plainText, refusal, wavToPcm } from './local-engine.js';
import { synthesizeInPieces, type SpeakContext } from './pipeline.js';
import { runProcess } from './process.js';
import type { AudioChunk, TtsOptions, TtsProvider } from './types.js';

/**
 * Flite (CMU), English only, one child process per piece of text:
 * `flite -voice <voice> -f <dir>/in.txt -o <dir>/out.wav`.
 *
 * - The text goes through a file in a private temporary directory (mode 0700), not argv: nothing
 *   can turn it into an option, it is not visible in the process list, and no argument length
 *   limit applies. Flite cannot write WAV to a pipe (it leaves the data empty) nor read a text
 *   file from one, hence the output file too. The directory is removed after every run.
 * - The voice must be one of the voices built into Debian's flite: `-voice` also accepts a path
 *   or a URL, which must never come from a request.
 * - Flite speaks at 16 kHz (slt, rms, awb, kal16) or 8 kHz (kal); the audio is resampled to the
 *   rate asked.
 */

export const FLITE_VOICES = ['slt', 'rms', 'awb', 'kal', 'kal16', 'awb_time'] as const;
export type FliteVoice = (typeof FLITE_VOICES)[number];

export function isFliteVoice(voice: string | undefined): voice is FliteVoice {
  return (FLITE_VOICES as readonly (string | undefined)[]).includes(voice);
}

export interface FliteOptions {
  /** Default /usr/bin/flite. */
  binary?: string | undefined;
  /** Default `slt`. */
  voice?: FliteVoice | undefined;
  /** Time budget of one run (a piece of at most `maxPieceChars`); default 10 s. */
  timeoutMs?: number | undefined;
  /** Default 400 characters (about 25 s of speech). */
  maxPieceChars?: number | undefined;
  /** Where the per-run directories go; default the OS temporary directory. */
  tmpDir?: string | undefined;
}

export class FliteTtsProvider implements TtsProvider {
  readonly name = 'flite';
  readonly #binary: string;
  readonly #voice: FliteVoice;
  readonly #timeoutMs: number;
  readonly #maxPieceChars: number;
  readonly #tmpDir: string;

  constructor(options: FliteOptions = {}) {
    this.#binary = options.binary ?? '/usr/bin/flite';
    this.#voice = options.voice ?? 'slt';
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#maxPieceChars = options.maxPieceChars ?? 400;
    this.#tmpDir = options.tmpDir ?? tmpdir();
  }

  synthesize(sentences: AsyncIterable<string>, options: TtsOptions): AsyncIterable<AudioChunk> {
    const voice = options.voice ?? this.#voice;
    if (!isFliteVoice(voice)) {
      const known = FLITE_VOICES.join(', ');
      return refusal(
        new ProviderError(this.name, `unknown Flite voice (one of ${known})`, { retryable: false }),
      );
    }
    return synthesizeInPieces(
      sentences,
      { ...options, voice },
      (text, context) => this.#speak(text, voice, context),
      { maxPieceChars: this.#maxPieceChars },
    );
  }

  async *#speak(text: string, voice: FliteVoice, context: SpeakContext): AsyncIterable<Int16Array> {
    const dir = await mkdtemp(join(this.#tmpDir, 'tts-flite-'));
    try {
      const input = join(dir, 'in.txt');
      const output = join(dir, 'out.wav');
      await writeFile(input, plainText(text), { mode: 0o600 });
      await runProcess(this.#binary, ['-voice', voice, '-f', input, '-o', output], {
        provider: this.name,
        signal: context.signal,
        timeoutMs: this.#timeoutMs,
        maxOutputBytes: 64 * 1024,
      });
      const { size } = await stat(output);
      if (size > MAX_PIECE_BYTES) {
        throw new ProviderError(this.name, 'flite produced too much audio', { retryable: false });
      }
      const wav = await readFile(output);
      context.signal.throwIfAborted();
      yield wavToPcm(this.name, wav, context);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
