import { toInt16 } from './pcm.js';

/**
 * Band-limited sample-rate conversion of PCM16 mono, usable on a stream of blocks.
 *
 * Written here rather than taken from `wavefile` (whose `toSampleRate` is used nowhere in this
 * service): wavefile converts a whole file at once and keeps no state between calls, so feeding it
 * the blocks of a stream (an HTTP body, 100 ms socket frames) would put a discontinuity at every
 * block boundary. This resampler keeps the tail of the previous block as history, so the output
 * of a stream cut anywhere is the same as that of the whole signal.
 *
 * Method: each output sample is the input convolved with a Blackman-windowed sinc low-pass
 * centred on its (fractional) position in the input; the cut-off sits just below the Nyquist
 * frequency of the lower of the two rates, so downsampling does not alias. The kernel is sampled
 * once into a table (256 steps per input sample, linearly interpolated).
 */

const PHASES = 256;
/** Zero crossings of the sinc on each side, at the lower rate. */
const ZERO_CROSSINGS = 12;
const MIN_RATE = 1000;
const MAX_RATE = 384_000;

export class StreamingResampler {
  readonly from: number;
  readonly to: number;
  /** Input samples per output sample. */
  readonly #step: number;
  /** Half-width of the kernel in input samples. */
  readonly #half: number;
  readonly #table: Float64Array;
  /** Input history; #buffer[0] is input sample number #start (negative: leading zeros). */
  #buffer: Float64Array;
  #start: number;
  #length: number;
  /** Output samples produced so far. */
  #produced = 0;
  /** Input samples received so far. */
  #received = 0;
  #flushed = false;

  constructor(from: number, to: number) {
    for (const rate of [from, to]) {
      if (!Number.isInteger(rate) || rate < MIN_RATE || rate > MAX_RATE) {
        throw new RangeError(`sample rate must be an integer from ${MIN_RATE} to ${MAX_RATE}`);
      }
    }
    this.from = from;
    this.to = to;
    this.#step = from / to;
    const scale = Math.min(1, to / from);
    this.#half = Math.ceil(ZERO_CROSSINGS / scale);
    this.#table = kernelTable(this.#half, scale * 0.5 * 0.94);
    this.#buffer = new Float64Array(this.#half * 4 + 1024);
    this.#start = -this.#half;
    this.#length = this.#half;
  }

  /** The output samples that `samples` (the next block of input) completes. */
  push(samples: Int16Array): Int16Array {
    if (this.#flushed) throw new Error('resampler already flushed');
    if (this.from === this.to) return samples.slice();
    this.#append(samples);
    this.#received += samples.length;
    const out = this.#produce(Number.POSITIVE_INFINITY);
    this.#trim();
    return out;
  }

  /** The rest of the output, once the input has ended. */
  flush(): Int16Array {
    if (this.#flushed) return new Int16Array(0);
    this.#flushed = true;
    if (this.from === this.to) return new Int16Array(0);
    this.#append(new Int16Array(this.#half + 1));
    return this.#produce(this.#received);
  }

  #append(samples: Int16Array): void {
    const needed = this.#length + samples.length;
    if (needed > this.#buffer.length) {
      const grown = new Float64Array(Math.max(needed, this.#buffer.length * 2));
      grown.set(this.#buffer.subarray(0, this.#length));
      this.#buffer = grown;
    }
    for (let i = 0; i < samples.length; i++) this.#buffer[this.#length + i] = samples[i] ?? 0;
    this.#length = needed;
  }

  /** Output samples whose kernel lies inside the buffer and whose position is before `limit`. */
  #produce(limit: number): Int16Array {
    const out: number[] = [];
    const half = this.#half;
    const end = this.#start + this.#length;
    for (;;) {
      const t = this.#produced * this.#step;
      const centre = Math.floor(t);
      if (t >= limit || centre + half >= end) break;
      let sum = 0;
      for (let k = centre - half + 1; k <= centre + half; k++) {
        sum += (this.#buffer[k - this.#start] ?? 0) * this.#kernel(t - k);
      }
      out.push(toInt16(sum));
      this.#produced++;
    }
    return Int16Array.from(out);
  }

  #kernel(distance: number): number {
    const position = Math.abs(distance) * PHASES;
    const index = Math.floor(position);
    const a = this.#table[index] ?? 0;
    const b = this.#table[index + 1] ?? 0;
    return a + (b - a) * (position - index);
  }

  /** Drops history the next output sample no longer needs. */
  #trim(): void {
    const keepFrom = Math.floor(this.#produced * this.#step) - this.#half + 1;
    const drop = keepFrom - this.#start;
    if (drop <= 0) return;
    this.#buffer.copyWithin(0, drop, this.#length);
    this.#length -= drop;
    this.#start = keepFrom;
  }
}

/** The kernel at 0, 1/PHASES, ... `half` input samples from its centre. */
function kernelTable(half: number, cutoff: number): Float64Array {
  const table = new Float64Array(half * PHASES + 2);
  for (let i = 0; i < table.length; i++) {
    const x = i / PHASES;
    if (x >= half) continue;
    const sinc = x === 0 ? 1 : Math.sin(2 * Math.PI * cutoff * x) / (2 * Math.PI * cutoff * x);
    const w =
      0.42 + 0.5 * Math.cos((Math.PI * x) / half) + 0.08 * Math.cos((2 * Math.PI * x) / half);
    table[i] = 2 * cutoff * sinc * w;
  }
  return table;
}

/** `samples` at `from` Hz converted to `to` Hz, in one go. */
export function resample(samples: Int16Array, from: number, to: number): Int16Array {
  const resampler = new StreamingResampler(from, to);
  const head = resampler.push(samples);
  const tail = resampler.flush();
  if (tail.length === 0) return head;
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}
