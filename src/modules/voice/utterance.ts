import { randomUUID } from 'node:crypto';
import { AsyncQueue } from '../../platform/async-queue.js';
import type { SttProvider } from '../../providers/stt/types.js';

/** Bytes of one second of the socket's audio (PCM16 mono 16 kHz). */
export const BYTES_PER_SECOND = 32_000;

/**
 * One utterance on its way through the recognizer: audio goes in while it arrives, partial
 * transcripts come out as they change, and `final` settles with the transcript once the audio
 * ends (`finish`), or with null when it was abandoned or the recognizer failed (`error` says
 * which). Audio past `maxMs` is not taken: the caller ends the utterance there.
 */
export class Utterance {
  readonly id = randomUUID();
  readonly final: Promise<string | null>;
  error: unknown;
  /** `performance.now()` when the audio ended. */
  endedAt: number | undefined;
  private readonly audio = new AsyncQueue<Buffer>();
  private readonly controller = new AbortController();
  private bytes = 0;

  constructor(
    stt: SttProvider,
    language: string,
    private readonly maxMs: number,
    onPartial: (text: string) => void,
  ) {
    this.final = this.run(stt, language, onPartial);
  }

  /** Takes more audio; false once the utterance is as long as allowed (the caller ends it). */
  push(pcm: Buffer): boolean {
    if (this.endedAt !== undefined) return false;
    const room = (this.maxMs / 1000) * BYTES_PER_SECOND - this.bytes;
    const take = pcm.length <= room ? pcm : pcm.subarray(0, Math.max(0, room - (room % 2)));
    if (take.length > 0) this.audio.push(take);
    this.bytes += take.length;
    return take.length === pcm.length;
  }

  get durationMs(): number {
    return (this.bytes / BYTES_PER_SECOND) * 1000;
  }

  /** The audio is complete: the recognizer gives its final transcript. */
  finish(): void {
    this.endedAt ??= performance.now();
    this.audio.end();
  }

  /** Abandons the utterance: no transcript. */
  abandon(): void {
    this.endedAt ??= performance.now();
    this.controller.abort();
    this.audio.end();
  }

  private async run(
    stt: SttProvider,
    language: string,
    onPartial: (text: string) => void,
  ): Promise<string | null> {
    const { signal } = this.controller;
    try {
      let last = '';
      for await (const event of stt.transcribe(this.audio, { signal, language })) {
        if (event.type === 'final') return event.text.trim();
        if (event.text !== last) onPartial(event.text);
        last = event.text;
      }
      return null;
    } catch (err) {
      if (!signal.aborted) this.error = err;
      return null;
    }
  }
}
