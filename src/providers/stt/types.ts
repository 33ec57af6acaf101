/**
 * The speech-to-text boundary (ARCHITECTURE "Streaming and cancellation"). A provider reads one
 * utterance as PCM16 mono 16 kHz little-endian buffers, of any length, while they arrive, and
 * answers partial transcripts while it can and exactly one `final` when the audio ends. It stops,
 * without a final, as soon as its signal aborts.
 */

export type TranscriptEvent =
  /** The best hypothesis so far: it may change, it is never stored. */
  | { type: 'partial'; text: string }
  /** The transcript of the whole utterance ('' when nothing was recognised). */
  | { type: 'final'; text: string };

export interface SttOptions {
  signal: AbortSignal;
  /** BCP 47 tag such as `en` or `en-US`; a provider without the language throws ProviderError. */
  language?: string;
}

export interface SttProvider {
  /** `pocketsphinx` or `openai`: for logs, metrics and turn records. */
  readonly name: string;
  transcribe(audio: AsyncIterable<Buffer>, options: SttOptions): AsyncIterable<TranscriptEvent>;
  /** Releases decoders, workers and sockets. */
  close(): Promise<void>;
}

/** The sample format every provider reads and the voice socket carries. */
export const STT_SAMPLE_RATE = 16_000;
