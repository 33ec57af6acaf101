import koffi from 'koffi';

/**
 * G.722 (64 kbit/s, 16 kHz wideband) to PCM16 through spandsp's decoder (Debian `libspandsp2`,
 * bound with koffi as the recognizer's library is): the Asterisk sounds' wideband recordings.
 *
 *   g722_decode_state_t *g722_decode_init(g722_decode_state_t *s, int rate, int options)
 *   int g722_decode(g722_decode_state_t *s, int16_t amp[], const uint8_t g722_data[], int len)
 *   int g722_decode_free(g722_decode_state_t *s)
 */

type Ptr = object | null;

interface Api {
  init: (state: Ptr, rate: number, options: number) => Ptr;
  decode: (state: Ptr, amp: Int16Array, data: Buffer, len: number) => number;
  free: (state: Ptr) => number;
}

let api: Api | undefined;

function load(): Api {
  if (api) return api;
  const lib = koffi.load('libspandsp.so.2');
  api = {
    init: lib.func('void *g722_decode_init(void *s, int rate, int options)') as Api['init'],
    decode: lib.func(
      'int g722_decode(void *s, _Out_ int16_t *amp, const uint8_t *data, int len)',
    ) as Api['decode'],
    free: lib.func('int g722_decode_free(void *s)') as Api['free'],
  };
  return api;
}

/** The samples (16 kHz, mono, little-endian PCM16) of a raw 64 kbit/s G.722 stream. */
export function decodeG722(data: Buffer): Buffer {
  const { init, decode, free } = load();
  const state = init(null, 64_000, 0);
  if (state === null) throw new Error('g722_decode_init failed');
  try {
    // Two samples per byte at 64 kbit/s.
    const samples = new Int16Array(data.length * 2);
    const n = decode(state, samples, data, data.length);
    return Buffer.from(samples.buffer, 0, n * 2);
  } finally {
    free(state);
  }
}
