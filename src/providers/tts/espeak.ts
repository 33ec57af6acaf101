import { ProviderError } from '../llm/types.js';
import { MAX_PIECE_BYTES, SAFE_NAME, plainText, refusal, wavToPcm } from './local-engine.js';
import { synthesizeInPieces, type SpeakContext } from './pipeline.js';
import { runProcess } from './process.js';
import type { AudioChunk, TtsOptions, TtsProvider } from './types.js';

/**
 * eSpeak NG, for the languages Flite lacks: one child process per piece of text,
 * `espeak-ng --stdout -b 1 -v <voice> --stdin` with the text on stdin (never in argv: it cannot
 * become an option, is not visible in the process list, has no length limit). eSpeak NG writes a
 * streamed WAV (placeholder sizes) at 22,050 Hz, resampled to the rate asked.
 *
 * The voice is `options.voice` or, from `options.language` (BCP 47), the eSpeak NG voice for that
 * tag or its primary language (`de-AT` -> `de`), looked up once in `espeak-ng --voices`.
 */

export interface EspeakOptions {
  /** Default /usr/bin/espeak-ng. */
  binary?: string | undefined;
  /** Voice when neither `options.voice` nor `options.language` says otherwise; default `en-us`. */
  voice?: string | undefined;
  /** Time budget of one run; default 10 s. */
  timeoutMs?: number | undefined;
  /** Default 1000 characters. */
  maxPieceChars?: number | undefined;
}

export class EspeakTtsProvider implements TtsProvider {
  readonly name = 'espeak-ng';
  readonly #binary: string;
  readonly #voice: string;
  readonly #timeoutMs: number;
  readonly #maxPieceChars: number;
  #languages: Promise<Set<string>> | undefined;

  constructor(options: EspeakOptions = {}) {
    this.#binary = options.binary ?? '/usr/bin/espeak-ng';
    this.#voice = options.voice ?? 'en-us';
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#maxPieceChars = options.maxPieceChars ?? 1000;
    if (!SAFE_NAME.test(this.#voice)) throw this.#error('invalid eSpeak NG voice name');
  }

  synthesize(sentences: AsyncIterable<string>, options: TtsOptions): AsyncIterable<AudioChunk> {
    if (options.voice !== undefined && !SAFE_NAME.test(options.voice)) {
      return refusal(this.#error('invalid eSpeak NG voice name'));
    }
    let voice: Promise<string> | undefined;
    return synthesizeInPieces(
      sentences,
      options,
      (text, context) => {
        voice ??= this.#voiceFor(options);
        return this.#speak(text, voice, context);
      },
      { maxPieceChars: this.#maxPieceChars },
    );
  }

  async *#speak(
    text: string,
    voice: Promise<string>,
    context: SpeakContext,
  ): AsyncIterable<Int16Array> {
    const wav = await runProcess(
      this.#binary,
      ['--stdout', '-b', '1', '-v', await voice, '--stdin'],
      {
        provider: this.name,
        input: plainText(text),
        signal: context.signal,
        timeoutMs: this.#timeoutMs,
        maxOutputBytes: MAX_PIECE_BYTES,
      },
    );
    yield wavToPcm(this.name, wav, context);
  }

  async #voiceFor(options: TtsOptions): Promise<string> {
    if (options.voice !== undefined) return options.voice;
    if (options.language === undefined) return this.#voice;
    const tag = options.language.toLowerCase();
    const known = await this.#knownLanguages(options.signal);
    const primary = tag.split('-')[0] ?? tag;
    const found = [tag, primary].find((name) => known.has(name) && SAFE_NAME.test(name));
    if (found === undefined) throw this.#error('no eSpeak NG voice for the language asked');
    return found;
  }

  /** The language names `espeak-ng --voices` lists, read once per provider. */
  #knownLanguages(signal: AbortSignal): Promise<Set<string>> {
    this.#languages ??= runProcess(this.#binary, ['--voices'], {
      provider: this.name,
      signal,
      timeoutMs: this.#timeoutMs,
      maxOutputBytes: 1024 * 1024,
    }).then(parseVoiceList);
    this.#languages.catch(() => {
      this.#languages = undefined;
    });
    return this.#languages;
  }

  #error(message: string): ProviderError {
    return new ProviderError(this.name, message, { retryable: false });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** `Pty Language Age/Gender VoiceName File Other Languages` lines -> the language names. */
export function parseVoiceList(output: Buffer): Set<string> {
  const names = new Set<string>();
  for (const line of output.toString('utf8').split('\n').slice(1)) {
    const columns = line.trim().split(/\s+/);
    const language = columns[1];
    if (language !== undefined && language !== '') names.add(language.toLowerCase());
    for (const match of line.matchAll(/\(([a-z][\w-]*)\s+\d+\)/gi)) {
      names.add((match[1] ?? '').toLowerCase());
    }
  }
  return names;
}
