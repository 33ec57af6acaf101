import { createInflate } from 'node:zlib';

/**
 * The PDF stream filters that expand data (ISO 32000-1, 7.4), decoding into a sink that can stop
 * them: the decoded-size budget counts what pdf.js would produce without ever holding more than
 * the budget. Lenient like pdf.js: corrupt data ends the output where it breaks, not in an error.
 */

export interface Sink {
  /** Takes the next decoded bytes; false means "enough", and the decoder stops. */
  write(chunk: Uint8Array): boolean;
}

export type Decoder = (input: Uint8Array, sink: Sink) => Promise<void>;

/** Zlib through node:zlib, a chunk at a time; stops as soon as the sink has had enough. */
const flate: Decoder = (input, sink) =>
  new Promise((resolve) => {
    const inflate = createInflate();
    inflate.on('data', (chunk: Buffer) => {
      if (!sink.write(chunk)) inflate.destroy();
    });
    inflate.once('error', () => {
      resolve();
    });
    inflate.once('close', () => {
      resolve();
    });
    inflate.end(input);
  });

/** Buffers output in blocks, so per-byte decoders do not call the sink per byte. */
class BlockWriter {
  private block = new Uint8Array(64 * 1024);
  private length = 0;
  private halted = false;

  constructor(private readonly sink: Sink) {}

  push(byte: number): void {
    this.block[this.length++] = byte;
    if (this.length === this.block.length) this.flush();
  }

  /** The sink has had enough: decoding can stop. */
  get stopped(): boolean {
    return this.halted;
  }

  flush(): void {
    if (this.length > 0 && !this.halted) {
      this.halted = !this.sink.write(this.block.subarray(0, this.length));
      this.block = new Uint8Array(this.block.length);
    }
    this.length = 0;
  }
}

/** LZW with 9- to 12-bit codes and EarlyChange 1 (the default), as pdf.js decodes it. */
const lzw: Decoder = (input, sink) => {
  const out = new BlockWriter(sink);
  const prefix = new Int32Array(4096);
  const last = new Uint8Array(4096);
  const length = new Int32Array(4096);
  for (let i = 0; i < 256; i++) [prefix[i], last[i], length[i]] = [-1, i, 1];
  let [next, width, previous, bits, buffer] = [258, 9, -1, 0, 0];
  const scratch = new Uint8Array(4096);
  for (let i = 0; i < input.length && !out.stopped; i++) {
    buffer = ((buffer << 8) | (input[i] ?? 0)) & 0xffffff;
    bits += 8;
    while (bits >= width) {
      const code = (buffer >> (bits - width)) & ((1 << width) - 1);
      bits -= width;
      if (code === 257) return finish(out);
      if (code === 256) {
        [next, width, previous] = [258, 9, -1];
        continue;
      }
      if (code > next || (code === next && previous < 0)) return finish(out); // corrupt
      // The entry for `next` is the previous string plus the first byte of this one.
      const known = code < next;
      const head = known ? code : previous;
      let [n, c] = [length[head] ?? 0, head];
      for (let k = n - 1; k >= 0; k--) [scratch[k], c] = [last[c] ?? 0, prefix[c] ?? 0];
      if (!known) scratch[n++] = scratch[0] ?? 0;
      if (previous >= 0 && next < 4096) {
        [prefix[next], last[next], length[next]] = [
          previous,
          scratch[0] ?? 0,
          (length[previous] ?? 0) + 1,
        ];
        next++;
      }
      for (let k = 0; k < n; k++) out.push(scratch[k] ?? 0);
      previous = code;
      if (next + 1 >= 1 << width && width < 12) width++;
    }
  }
  return finish(out);
};

function finish(out: BlockWriter): Promise<void> {
  out.flush();
  return Promise.resolve();
}

const hexValue = (byte: number): number => {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
};

const asciiHex: Decoder = (input, sink) => {
  const out = new BlockWriter(sink);
  let high = -1;
  for (let i = 0; i < input.length && !out.stopped; i++) {
    const byte = input[i] ?? 0;
    if (byte === 0x3e) break;
    const value = hexValue(byte);
    if (value < 0) continue; // white space, or garbage pdf.js skips too
    if (high < 0) {
      high = value;
    } else {
      out.push((high << 4) | value);
      high = -1;
    }
  }
  if (high >= 0) out.push(high << 4);
  return finish(out);
};

const ascii85: Decoder = (input, sink) => {
  const out = new BlockWriter(sink);
  const group: number[] = [];
  const emit = (count: number) => {
    let value = 0;
    for (let k = 0; k < 5; k++) value = value * 85 + (group[k] ?? 84);
    for (let k = 0; k < count; k++) out.push((value >>> (24 - 8 * k)) & 0xff);
    group.length = 0;
  };
  for (let i = 0; i < input.length && !out.stopped; i++) {
    const byte = input[i] ?? 0;
    if (byte === 0x7e) break; // ~> ends the data
    if (byte === 0x7a && group.length === 0) {
      for (let k = 0; k < 4; k++) out.push(0);
    } else if (byte >= 0x21 && byte <= 0x75) {
      group.push(byte - 0x21);
      if (group.length === 5) emit(4);
    }
  }
  if (group.length > 1) emit(group.length - 1);
  return finish(out);
};

const runLength: Decoder = (input, sink) => {
  const out = new BlockWriter(sink);
  let i = 0;
  while (i < input.length && !out.stopped) {
    const n = input[i++] ?? 128;
    if (n === 128) break;
    if (n < 128) {
      for (let k = 0; k <= n && i < input.length; k++) out.push(input[i++] ?? 0);
    } else {
      const byte = input[i++] ?? 0;
      for (let k = 0; k < 257 - n; k++) out.push(byte);
    }
  }
  return finish(out);
};

/**
 * The filters that expand data, under their full and abbreviated names. Image codecs (DCT, JPX,
 * JBIG2, CCITT) are absent: extracting text never decodes images.
 */
export const DECODERS: ReadonlyMap<string, Decoder> = new Map([
  ['FlateDecode', flate],
  ['Fl', flate],
  ['LZWDecode', lzw],
  ['LZW', lzw],
  ['ASCIIHexDecode', asciiHex],
  ['AHx', asciiHex],
  ['ASCII85Decode', ascii85],
  ['A85', ascii85],
  ['RunLengthDecode', runLength],
  ['RL', runLength],
]);

export const decodeFlate = flate;
export const decodeLzw = lzw;
