/** PCM16 mono little-endian helpers shared by the audio code and the speech providers. */

/** A copy of `samples` as little-endian bytes (the wire format of AudioChunk). */
export function int16ToBuffer(samples: Int16Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i] ?? 0, i * 2);
  return out;
}

/** The samples of little-endian PCM16 bytes; an odd trailing byte is ignored. */
export function bufferToInt16(bytes: Uint8Array): Int16Array {
  const count = Math.floor(bytes.length / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  const out = new Int16Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** Root mean square of the samples on a 0..1 scale (0 for silence or no samples). */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const s of samples) sum += (s / 32768) ** 2;
  return Math.sqrt(sum / samples.length);
}

/** Clamps and rounds a float sample to the PCM16 range. */
export function toInt16(value: number): number {
  const rounded = Math.round(value);
  return rounded > 32767 ? 32767 : rounded < -32768 ? -32768 : rounded;
}

/**
 * Collects PCM16 samples of any block size and hands them out in blocks of `size` samples
 * (e.g. 100 ms), so a socket can send audio progressively in even pieces.
 */
export class Rechunker {
  readonly #size: number;
  #pending: Int16Array[] = [];
  #count = 0;

  constructor(size: number) {
    if (!Number.isInteger(size) || size <= 0) throw new RangeError('chunk size must be positive');
    this.#size = size;
  }

  /** The whole blocks now available. */
  push(samples: Int16Array): Int16Array[] {
    if (samples.length === 0) return [];
    this.#pending.push(samples);
    this.#count += samples.length;
    const blocks: Int16Array[] = [];
    if (this.#count < this.#size) return blocks;
    const all = this.#take();
    let offset = 0;
    for (; offset + this.#size <= all.length; offset += this.#size) {
      blocks.push(all.subarray(offset, offset + this.#size));
    }
    if (offset < all.length) {
      this.#pending = [all.slice(offset)];
      this.#count = all.length - offset;
    }
    return blocks;
  }

  /** What is left (shorter than a block), or nothing. */
  flush(): Int16Array | undefined {
    if (this.#count === 0) return undefined;
    return this.#take();
  }

  #take(): Int16Array {
    const all = new Int16Array(this.#count);
    let offset = 0;
    for (const part of this.#pending) {
      all.set(part, offset);
      offset += part.length;
    }
    this.#pending = [];
    this.#count = 0;
    return all;
  }
}
