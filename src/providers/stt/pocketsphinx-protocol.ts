import type { AdaptedModel, ModelPaths } from './pocketsphinx-binding.js';

/**
 * Messages between the provider and a decoder thread. One thread owns one decoder and decodes one
 * utterance at a time; `id` numbers the thread's utterances and model loads, so a message about
 * an earlier one is recognised and dropped.
 */

export interface ThreadData {
  paths: ModelPaths;
  adapted: AdaptedModel | null;
  partialIntervalMs: number;
  /** Int32Array over a SharedArrayBuffer: [0] is the latest cancelled utterance id. */
  cancelled: SharedArrayBuffer;
}

export type ToThread =
  | { type: 'start'; id: number }
  /** PCM16 mono 16 kHz samples, moved (not copied) to the thread. */
  | { type: 'audio'; id: number; samples: Int16Array }
  | { type: 'end'; id: number }
  | { type: 'abort'; id: number }
  | { type: 'model'; id: number; model: AdaptedModel | null }
  | { type: 'close' };

export type FromThread =
  | { type: 'ready'; setupMs: number; adaptedError?: string }
  | { type: 'init-error'; message: string }
  | { type: 'partial'; id: number; text: string }
  | { type: 'final'; id: number; text: string; decodeMs: number; endMs: number }
  | { type: 'aborted'; id: number }
  | { type: 'failed'; id: number; message: string }
  | { type: 'model-loaded'; id: number; ms: number }
  | { type: 'model-failed'; id: number; message: string };
