import { BYTES_PER_SECOND } from './utterance.js';

/**
 * The last `windowMs` of the socket's audio while nobody is heard speaking: what `audio.commit`
 * sends to the recognizer when the detector found no speech in it (a quiet push-to-talk user).
 * Bounded whatever arrives.
 */
export class RecentAudio {
  private parts: Buffer[] = [];
  private bytes = 0;
  private readonly max: number;

  constructor(windowMs: number) {
    this.max = Math.floor((windowMs / 1000) * BYTES_PER_SECOND);
  }

  push(pcm: Buffer): void {
    this.parts.push(pcm);
    this.bytes += pcm.length;
    while (this.bytes > this.max && this.parts.length > 0) {
      const first = this.parts[0] ?? Buffer.alloc(0);
      const over = this.bytes - this.max;
      if (first.length <= over) {
        this.parts.shift();
        this.bytes -= first.length;
      } else {
        // Keep whole samples: drop an even number of bytes.
        const drop = over + (over % 2);
        this.parts[0] = first.subarray(drop);
        this.bytes -= drop;
      }
    }
  }

  get ms(): number {
    return (this.bytes / BYTES_PER_SECOND) * 1000;
  }

  /** All of it, oldest first; the window is empty afterwards. */
  take(): Buffer {
    const all = Buffer.concat(this.parts);
    this.clear();
    return all;
  }

  clear(): void {
    this.parts = [];
    this.bytes = 0;
  }
}
