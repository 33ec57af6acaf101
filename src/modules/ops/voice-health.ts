import type { SttProvider } from '../../providers/stt/types.js';
import type { TtsProvider } from '../../providers/tts/types.js';

export type ProbeStatus = 'ok' | 'unavailable' | 'unknown';

export interface SpeechProbe {
  provider: string;
  status: ProbeStatus;
  detail?: string;
  latency_ms: number | null;
}

export interface VoiceProbes {
  stt: SpeechProbe;
  tts: SpeechProbe;
  checkedAt: Date;
}

/** A probe answers within this, or the engine counts as unavailable. */
const PROBE_TIMEOUT_MS = 5000;
/** Health checks within this reuse the last probe: a scraper cannot keep the engines busy. */
const PROBE_TTL_MS = 15_000;
/** A quarter of a second of silence at 16 kHz: what the recognizer is asked to transcribe. */
const SILENCE = Buffer.alloc(8000);
/** Remote engines are not probed: every probe would be a billed request to someone else. */
const REMOTE = new Set(['openai']);

async function timed(work: (signal: AbortSignal) => Promise<void>): Promise<SpeechProbeResult> {
  const started = performance.now();
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  try {
    await work(signal);
    return { status: 'ok', latency_ms: Math.round(performance.now() - started) };
  } catch {
    const detail = signal.aborted ? 'no answer within 5 s' : 'the probe failed';
    return { status: 'unavailable', detail, latency_ms: null };
  }
}

type SpeechProbeResult = Omit<SpeechProbe, 'provider'>;

async function* once<T>(item: T): AsyncIterable<T> {
  await Promise.resolve();
  yield item;
}

/** Speaks one word; ok once audio comes back. */
function probeTts(tts: TtsProvider): Promise<SpeechProbeResult> {
  if (REMOTE.has(tts.name)) {
    return Promise.resolve({
      status: 'unknown',
      detail: 'remote engine: not probed',
      latency_ms: null,
    });
  }
  return timed(async (signal) => {
    let audio = 0;
    for await (const chunk of tts.synthesize(once('Ready.'), { signal, sampleRate: 16_000 })) {
      audio += chunk.pcm.length;
    }
    if (audio === 0) throw new Error('no audio');
  });
}

/**
 * Transcribes a moment of silence; ok once the final transcript comes. A recognizer not created
 * yet (nobody has spoken to this instance) is not created for a health check: it is `unknown`.
 */
function probeStt(stt: SttProvider, loaded: boolean): Promise<SpeechProbeResult> {
  if (REMOTE.has(stt.name)) {
    return Promise.resolve({
      status: 'unknown',
      detail: 'remote engine: not probed',
      latency_ms: null,
    });
  }
  if (!loaded) {
    return Promise.resolve({ status: 'unknown', detail: 'not loaded yet', latency_ms: null });
  }
  return timed(async (signal) => {
    let final = false;
    for await (const event of stt.transcribe(once(SILENCE), { signal })) {
      if (event.type === 'final') final = true;
    }
    if (!final) throw new Error('no final transcript');
  });
}

/** Probes the voice pipeline's speech engines with real work, at most every 15 s. */
export class VoiceHealthProbe {
  private last: Promise<VoiceProbes> | undefined;
  private lastAt = 0;

  constructor(
    private readonly stt: SttProvider,
    private readonly tts: TtsProvider,
    private readonly sttLoaded: () => boolean,
  ) {}

  probe(): Promise<VoiceProbes> {
    const now = Date.now();
    if (this.last === undefined || now - this.lastAt > PROBE_TTL_MS) {
      this.lastAt = now;
      this.last = this.run();
    }
    return this.last;
  }

  private async run(): Promise<VoiceProbes> {
    const [stt, tts] = await Promise.all([
      probeStt(this.stt, this.sttLoaded()),
      probeTts(this.tts),
    ]);
    return {
      stt: { provider: this.stt.name, ...stt },
      tts: { provider: this.tts.name, ...tts },
      checkedAt: new Date(),
    };
  }
}
