/** Vectors as stored in kb_vectors.embedding: float32, little-endian, no header. */

const hostIsLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function encodeVector(vector: Float32Array): Buffer {
  const out = Buffer.alloc(vector.length * 4);
  if (hostIsLittleEndian) {
    out.set(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength));
  } else {
    vector.forEach((x, i) => out.writeFloatLE(x, i * 4));
  }
  return out;
}

/** Decodes `bytes` into `target` (whose length gives the dimensions); false if sizes differ. */
export function decodeVectorInto(bytes: Uint8Array, target: Float32Array): boolean {
  if (bytes.byteLength !== target.length * 4) return false;
  if (hostIsLittleEndian) {
    // Copies bytes: the driver's buffer need not be 4-byte aligned for a Float32Array view.
    new Uint8Array(target.buffer, target.byteOffset, target.byteLength).set(bytes);
  } else {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < target.length; i++) target[i] = view.readFloatLE(i * 4);
  }
  return true;
}
