/**
 * Int8 dot products of one query against every row of a matrix: the inner loop of the embedded
 * vector search. Plain JavaScript needs ~12 ms for 20,000 x 384 (memory traffic and no SIMD), so
 * the loop is a hand-assembled WebAssembly function using 128-bit SIMD; a scalar JavaScript loop
 * with identical results remains for runtimes without WebAssembly SIMD.
 *
 * Layout of the kernel's memory: [query: stride int16][scores: capacity int32][matrix: capacity
 * rows of `stride` int8]. `stride` is the dimension rounded up to 16 (one SIMD register of int8);
 * the padding stays zero, so it adds nothing to a dot product.
 */

/** The largest query component after quantisation: keeps int32 sums exact up to 8,192 dims. */
export const QUERY_SCALE = 2047;
/** The largest row component after quantisation. */
export const ROW_SCALE = 127;
export const MAX_DIMENSIONS = 8192;

export interface Int8Kernel {
  readonly stride: number;
  readonly capacity: number;
  readonly query: Int16Array;
  readonly scores: Int32Array;
  readonly matrix: Int8Array;
  /** Writes the dot product of `query` with rows 0..rows-1 to `scores`. */
  score(rows: number): void;
}

const SIMD = 0xfd;
const op = {
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Const: 0x41,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Shl: 0x74,
  i32LtU: 0x49,
  i32Eqz: 0x45,
  i32Store: 0x36,
  if: 0x04,
  loop: 0x03,
  brIf: 0x0d,
  return: 0x0f,
  end: 0x0b,
  voidBlock: 0x40,
} as const;
// SIMD opcodes (after the 0xfd prefix, LEB128-encoded).
const simd = {
  load: [SIMD, 0x00],
  const: [SIMD, 0x0c],
  extractLaneI32x4: [SIMD, 0x1b],
  extendLowI8: [SIMD, 0x87, 0x01],
  extendHighI8: [SIMD, 0x88, 0x01],
  addI32x4: [SIMD, 0xae, 0x01],
  dotI16x8: [SIMD, 0xba, 0x01],
} as const;

// Parameters and locals of `scores(query, matrix, rows, stride, out)`.
const Q = 0,
  M = 1,
  ROWS = 2,
  STRIDE = 3,
  OUT = 4,
  J = 5,
  ACC = 6,
  V = 7;

/** One half of a 16-byte block: acc += dot(extend(v), query[2j + offset .. +16]). */
function halfBlock(extend: readonly number[], offset: number): number[] {
  // prettier-ignore
  return [
    op.localGet, ACC,
    op.localGet, V, ...extend,
    op.localGet, Q, op.localGet, J, op.i32Const, 1, op.i32Shl, op.i32Add,
    ...simd.load, 0, offset,
    ...simd.dotI16x8, ...simd.addI32x4,
    op.localSet, ACC,
  ];
}

/**
 * for each row: acc = [0, 0, 0, 0] (i32x4)
 *   for j = 0; j < stride; j += 16: v = matrix[j .. j+16] (i8x16)
 *     acc += dot(i16x8(low half of v), query[j .. j+8]) + dot(i16x8(high half), query[j+8 .. j+16])
 *   out[row] = sum of acc's lanes; matrix += stride
 */
function functionBody(): number[] {
  // prettier-ignore
  const laneSum = [0, 1, 2, 3].flatMap((lane) => [
    op.localGet, ACC, ...simd.extractLaneI32x4, lane, ...(lane > 0 ? [op.i32Add] : []),
  ]);
  // prettier-ignore
  return [
    2, 1, 0x7f, 2, 0x7b, // locals: j i32; acc, v v128
    op.localGet, ROWS, op.i32Eqz, op.if, op.voidBlock, op.return, op.end,
    op.loop, op.voidBlock, // each row
    ...simd.const, ...new Array<number>(16).fill(0), op.localSet, ACC,
    op.i32Const, 0, op.localSet, J,
    op.loop, op.voidBlock, // each 16 components
    op.localGet, M, op.localGet, J, op.i32Add, ...simd.load, 0, 0, op.localSet, V,
    ...halfBlock(simd.extendLowI8, 0),
    ...halfBlock(simd.extendHighI8, 16),
    op.localGet, J, op.i32Const, 16, op.i32Add, op.localTee, J, op.localGet, STRIDE, op.i32LtU,
    op.brIf, 0, op.end,
    op.localGet, OUT, ...laneSum, op.i32Store, 2, 0,
    op.localGet, OUT, op.i32Const, 4, op.i32Add, op.localSet, OUT,
    op.localGet, M, op.localGet, STRIDE, op.i32Add, op.localSet, M,
    op.localGet, ROWS, op.i32Const, 1, op.i32Sub, op.localTee, ROWS,
    op.brIf, 0, op.end,
    op.end,
  ];
}

const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
const name = (text: string) => [text.length, ...Buffer.from(text, 'ascii')];

function leb(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    const byte = rest & 0x7f;
    rest >>>= 7;
    out.push(rest === 0 ? byte : byte | 0x80);
  } while (rest !== 0);
  return out;
}

/** The module: imports `env.memory`, exports `scores(query, matrix, rows, stride, out)`. */
export function kernelModuleBytes(): Uint8Array {
  const body = functionBody();
  // prettier-ignore
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 5, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0]),
    ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 1]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('scores'), 0x00, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}

/** The part of the WebAssembly API used here (the project's `lib` has no WebAssembly typings). */
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

const wasmApi = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

const strideFor = (dimensions: number) => Math.ceil(dimensions / 16) * 16;

/** A kernel for `capacity` rows of `dimensions`; WebAssembly SIMD when available. */
export function createInt8Kernel(
  dimensions: number,
  capacity: number,
  preferWasm = true,
): Int8Kernel {
  const stride = strideFor(dimensions);
  const bytes = kernelModuleBytes();
  if (preferWasm && wasmApi?.validate(bytes)) return wasmKernel(wasmApi, bytes, stride, capacity);
  return jsKernel(stride, capacity);
}

function wasmKernel(
  wasm: WasmApi,
  bytes: Uint8Array,
  stride: number,
  capacity: number,
): Int8Kernel {
  const queryBytes = stride * 2;
  const scoresAt = queryBytes;
  const matrixAt = scoresAt + capacity * 4;
  const total = matrixAt + capacity * stride;
  const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(total / 65536)) });
  const instance = new wasm.Instance(new wasm.Module(bytes), { env: { memory } });
  const scores = instance.exports.scores as (...args: number[]) => void;
  return {
    stride,
    capacity,
    query: new Int16Array(memory.buffer, 0, stride),
    scores: new Int32Array(memory.buffer, scoresAt, capacity),
    matrix: new Int8Array(memory.buffer, matrixAt, capacity * stride),
    score: (rows) => {
      scores(0, matrixAt, rows, stride, scoresAt);
    },
  };
}

function jsKernel(stride: number, capacity: number): Int8Kernel {
  const query = new Int16Array(stride);
  const scores = new Int32Array(capacity);
  const matrix = new Int8Array(capacity * stride);
  return {
    stride,
    capacity,
    query,
    scores,
    matrix,
    score: (rows) => {
      for (let r = 0, o = 0; r < rows; r++, o += stride) {
        let sum = 0;
        for (let j = 0; j < stride; j++) sum += (matrix[o + j] ?? 0) * (query[j] ?? 0);
        scores[r] = sum;
      }
    },
  };
}
