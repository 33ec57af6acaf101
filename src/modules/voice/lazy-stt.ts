import { isAdaptable, type AdaptedModel } from '../../providers/stt/index.js';
import type { SttOptions, SttProvider, TranscriptEvent } from '../../providers/stt/types.js';

/**
 * The recognizer, created when the first utterance needs it: PocketSphinx's decoders take a third
 * of a second and ~100 MB each, which an instance nobody speaks to (or a test app) should not pay.
 * `onCreate` runs once, then (the knowledge-base model starts keeping it adapted).
 */
export class LazyStt implements SttProvider {
  private provider: SttProvider | undefined;

  constructor(
    readonly name: string,
    private readonly create: () => SttProvider,
    private readonly onCreate: (provider: SttProvider) => void = () => undefined,
  ) {}

  get created(): SttProvider | undefined {
    return this.provider;
  }

  /** Creates the recognizer now (a voice socket opened: its user may speak any moment). */
  warm(): SttProvider {
    if (this.provider === undefined) {
      this.provider = this.create();
      this.onCreate(this.provider);
    }
    return this.provider;
  }

  transcribe(audio: AsyncIterable<Buffer>, options: SttOptions): AsyncIterable<TranscriptEvent> {
    return this.warm().transcribe(audio, options);
  }

  /** Forwards to a created, adaptable recognizer; nothing to do before one exists. */
  async setAdaptedModel(model: AdaptedModel | null): Promise<void> {
    const p = this.provider;
    if (p !== undefined && isAdaptable(p)) await p.setAdaptedModel(model);
  }

  async close(): Promise<void> {
    await this.provider?.close();
  }
}
