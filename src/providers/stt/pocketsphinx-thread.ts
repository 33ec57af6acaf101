import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { Decoder } from './pocketsphinx-binding.js';
import type { FromThread, ThreadData, ToThread } from './pocketsphinx-protocol.js';

/**
 * A decoder thread: builds one PocketSphinx decoder when it starts (~0.3 s) and decodes the
 * utterances the provider sends it, one after another. Audio is decoded as it arrives; the best
 * hypothesis is sent back whenever it changed, at most every `partialIntervalMs`.
 */

if (parentPort === null) throw new Error('pocketsphinx-thread runs only as a worker thread');
const port = parentPort;
const data = workerData as ThreadData;
const cancelled = new Int32Array(data.cancelled);
const post = (message: FromThread) => {
  port.postMessage(message);
};
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

let decoder: Decoder;
const setupStart = performance.now();
try {
  decoder = new Decoder(data.paths);
} catch (error) {
  post({ type: 'init-error', message: message(error) });
  process.exit(1);
}
let adaptedError: string | undefined;
try {
  if (data.adapted !== null) decoder.setAdaptedModel(data.adapted);
} catch (error) {
  adaptedError = message(error);
}
post({
  type: 'ready',
  setupMs: performance.now() - setupStart,
  ...(adaptedError === undefined ? {} : { adaptedError }),
});

/** The utterance being decoded. */
let current: { id: number; lastPartialAt: number; lastPartial: string; busyMs: number } | null =
  null;

port.on('message', (msg: ToThread) => {
  try {
    handle(msg);
  } catch (error) {
    const id = 'id' in msg ? msg.id : 0;
    if (decoder.inUtterance) endQuietly();
    current = null;
    post(
      msg.type === 'model'
        ? { type: 'model-failed', id, message: message(error) }
        : { type: 'failed', id, message: message(error) },
    );
  }
});

function handle(msg: ToThread): void {
  switch (msg.type) {
    case 'start':
      if (decoder.inUtterance) endQuietly();
      decoder.start();
      current = { id: msg.id, lastPartialAt: performance.now(), lastPartial: '', busyMs: 0 };
      return;
    case 'audio':
      audio(msg.id, msg.samples);
      return;
    case 'end':
      end(msg.id);
      return;
    case 'abort':
      if (current?.id === msg.id) {
        endQuietly();
        current = null;
      }
      post({ type: 'aborted', id: msg.id });
      return;
    case 'model': {
      const started = performance.now();
      decoder.setAdaptedModel(msg.model);
      post({ type: 'model-loaded', id: msg.id, ms: performance.now() - started });
      return;
    }
    case 'close':
      if (decoder.inUtterance) endQuietly();
      decoder.free();
      port.close();
  }
}

function audio(id: number, samples: Int16Array): void {
  // Skips what is queued behind an abort the thread has not read yet.
  if (current?.id !== id || Atomics.load(cancelled, 0) >= id) return;
  const started = performance.now();
  decoder.process(samples);
  const now = performance.now();
  current.busyMs += now - started;
  if (now - current.lastPartialAt < data.partialIntervalMs) return;
  const text = decoder.hypothesis();
  if (text === current.lastPartial) return;
  current.lastPartial = text;
  current.lastPartialAt = now;
  post({ type: 'partial', id, text });
}

function end(id: number): void {
  if (current?.id !== id) return;
  const started = performance.now();
  const text = decoder.end();
  const endMs = performance.now() - started;
  post({ type: 'final', id, text, decodeMs: current.busyMs + endMs, endMs });
  current = null;
}

function endQuietly(): void {
  try {
    decoder.end();
  } catch {
    // The utterance is being dropped: nothing of it is wanted.
  }
}
