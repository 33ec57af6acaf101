import { Segmenter } from './segmenter.js';
import {
  loadSharedSileroModel,
  SILERO_FRAME_SAMPLES,
  SileroStream,
  type SileroModel,
} from './silero.js';
import type { TurnDetection, VadEvent, VoiceActivityDetector } from './types.js';

export { DEFAULT_TURN_DETECTION } from './segmenter.js';

const FRAME_BYTES = SILERO_FRAME_SAMPLES * 2;

export interface DetectorOptions {
  /** Where the model comes from (default: the process-wide Silero session, loaded on first use). */
  loadModel?: () => Promise<SileroModel>;
}

/**
 * A voice activity detector for one audio stream (PCM16 mono 16 kHz little-endian): pushes of any
 * length (odd byte counts included) are cut into 32 ms frames, each frame is scored by Silero and
 * the scores drive a Segmenter. Throws a RangeError for settings out of range.
 */
export function createVoiceActivityDetector(
  settings: TurnDetection,
  options: DetectorOptions = {},
): VoiceActivityDetector {
  return new SileroDetector(new Segmenter(settings), options.loadModel ?? loadSharedSileroModel);
}

class SileroDetector implements VoiceActivityDetector {
  private stream: SileroStream | undefined;
  /** The frame being assembled, `filled` bytes of it so far. */
  private readonly frame = Buffer.alloc(FRAME_BYTES);
  private filled = 0;
  /** Pushes run one after another: each frame depends on the model state the last one left. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Changes on reset and close; a push that sees it change stops and reports nothing. */
  private generation = 0;
  private closed = false;

  constructor(
    private readonly segmenter: Segmenter,
    private readonly loadModel: () => Promise<SileroModel>,
  ) {}

  push(pcm: Buffer): Promise<VadEvent[]> {
    const generation = this.generation;
    const run = this.queue.then(() => this.read(pcm, generation));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Also makes a push in flight return no events and drop the rest of its audio. */
  reset(): void {
    this.generation += 1;
    this.filled = 0;
    this.segmenter.reset();
    this.stream?.reset();
  }

  get hearing(): boolean {
    return this.segmenter.hearing;
  }

  /** After close, pushes read nothing. The shared model stays loaded for other streams. */
  async close(): Promise<void> {
    this.closed = true;
    this.reset();
    await this.queue;
  }

  private async read(pcm: Buffer, generation: number): Promise<VadEvent[]> {
    if (this.closed || generation !== this.generation) return [];
    this.stream ??= new SileroStream(await this.loadModel());
    const stream = this.stream;
    const events = new EventList();
    let offset = 0;
    while (offset < pcm.length && generation === this.generation) {
      const copied = pcm.copy(this.frame, this.filled, offset, offset + FRAME_BYTES - this.filled);
      offset += copied;
      this.filled += copied;
      if (this.filled < FRAME_BYTES) break;
      this.filled = 0;
      const audio = Buffer.from(this.frame);
      const probability = await stream.probability(toSamples(audio));
      if (generation !== this.generation) break;
      events.add(this.segmenter.frame(audio, probability));
    }
    return generation === this.generation ? events.list() : [];
  }
}

function toSamples(pcm: Buffer): Float32Array {
  const samples = new Float32Array(pcm.length >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2) / 32768;
  return samples;
}

/** Events in order, with adjacent `speech_audio` events joined into one. */
class EventList {
  private readonly events: VadEvent[] = [];
  private audio: Buffer[] = [];

  add(events: VadEvent[]): void {
    for (const event of events) {
      if (event.type === 'speech_audio') {
        this.audio.push(event.audio);
      } else {
        this.flush();
        this.events.push(event);
      }
    }
  }

  list(): VadEvent[] {
    this.flush();
    return this.events;
  }

  private flush(): void {
    if (this.audio.length === 0) return;
    this.events.push({ type: 'speech_audio', audio: Buffer.concat(this.audio) });
    this.audio = [];
  }
}
