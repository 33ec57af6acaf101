/**
 * The text-to-speech boundary (ARCHITECTURE "Streaming and cancellation"). The pipeline hands a
 * provider the answer one sentence at a time, as the model writes it; the provider speaks each
 * as soon as it arrives and answers PCM16 mono chunks at the sample rate asked for. Each chunk
 * names the sentence it speaks, so that the pipeline can tell which text the listener has heard
 * when playback is cut short (barge-in). It stops as soon as its signal aborts.
 */

export interface AudioChunk {
  /** PCM16 mono little-endian at `sampleRate`; never empty. */
  pcm: Buffer;
  sampleRate: number;
  /** 0-based index of the input sentence this audio speaks. */
  sentence: number;
  /** Whether this is the last chunk of that sentence. */
  sentenceEnd: boolean;
}

export interface TtsOptions {
  signal: AbortSignal;
  /** The rate the chunks must have (resampled when the engine speaks at another). */
  sampleRate: number;
  /** Provider-specific voice name (`slt`, `rms`, `en-us`, `alloy`); the provider's default when absent. */
  voice?: string;
  /** BCP 47 tag; a provider picks an engine or voice that speaks it. */
  language?: string;
}

export interface TtsProvider {
  /** `flite`, `espeak-ng`, `local` (Flite with eSpeak NG for other languages) or `openai`. */
  readonly name: string;
  /**
   * Speaks each sentence of `sentences` (display text, with `[n]` citation markers and units as
   * written: the provider normalises it for the ear) in order.
   */
  synthesize(sentences: AsyncIterable<string>, options: TtsOptions): AsyncIterable<AudioChunk>;
  close(): Promise<void>;
}
