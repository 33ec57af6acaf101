import type {
  AllergyIntolerance,
  Condition,
  Encounter,
  MedicationRequest,
  Observation,
  Patient,
} from '@medplum/fhirtypes';
import { ChaosError, type Chaos, type ChaosDependency } from '../platform/chaos.js';
import { EhrError } from './ehr/errors.js';
import type {
  CallOptions,
  EhrProvider,
  ObservationInput,
  ObservationQuery,
  SummaryNoteInput,
  WriteResult,
} from './ehr/types.js';
import {
  ProviderError,
  type LlmProvider,
  type LlmRequest,
  type LlmStreamOptions,
} from './llm/types.js';
import type { SttOptions, SttProvider } from './stt/types.js';
import type { TtsOptions, TtsProvider } from './tts/types.js';

/**
 * The providers under fault injection (src/platform/chaos.ts). Each wrapper asks `chaos.inject`
 * before every call and turns an injected failure into its provider's own failure, so the layers
 * above (the EHR breaker and fallback, the chat engine's retries, the voice pipeline's error
 * frames) treat it exactly as a real outage. The wiring wraps only when chaos is enabled.
 */

/** Calls `inject`, mapping ChaosError through `toError`; an abort's reason passes through. */
async function injected(
  chaos: Chaos,
  dependency: ChaosDependency,
  signal: AbortSignal | undefined,
  toError: () => Error,
): Promise<void> {
  try {
    await chaos.inject(dependency, signal);
  } catch (error) {
    throw error instanceof ChaosError ? toError() : error;
  }
}

/**
 * The EHR as if the FHIR server answered 503: an `unavailable` EhrError, retryable on reads only
 * (as FhirHttp marks them), which the breaker counts as a failure.
 */
export class ChaosEhrProvider implements EhrProvider {
  constructor(
    private readonly inner: EhrProvider,
    private readonly chaos: Chaos,
  ) {}

  async getPatient(id: string, options?: CallOptions): Promise<Patient> {
    await this.before('read Patient', true, options);
    return this.inner.getPatient(id, options);
  }

  async searchObservations(query: ObservationQuery, options?: CallOptions): Promise<Observation[]> {
    await this.before('search Observation', true, options);
    return this.inner.searchObservations(query, options);
  }

  async conditions(patientId: string, options?: CallOptions): Promise<Condition[]> {
    await this.before('search Condition', true, options);
    return this.inner.conditions(patientId, options);
  }

  async medicationRequests(
    patientId: string,
    filter: { activeOnly: boolean },
    options?: CallOptions,
  ): Promise<MedicationRequest[]> {
    await this.before('search MedicationRequest', true, options);
    return this.inner.medicationRequests(patientId, filter, options);
  }

  async allergies(patientId: string, options?: CallOptions): Promise<AllergyIntolerance[]> {
    await this.before('search AllergyIntolerance', true, options);
    return this.inner.allergies(patientId, options);
  }

  async encounters(patientId: string, limit: number, options?: CallOptions): Promise<Encounter[]> {
    await this.before('search Encounter', true, options);
    return this.inner.encounters(patientId, limit, options);
  }

  async createObservation(input: ObservationInput, options?: CallOptions): Promise<WriteResult> {
    await this.before('create Observation', false, options);
    return this.inner.createObservation(input, options);
  }

  async createDocumentReference(
    note: SummaryNoteInput,
    options?: CallOptions,
  ): Promise<WriteResult> {
    await this.before('create DocumentReference', false, options);
    return this.inner.createDocumentReference(note, options);
  }

  async probe(options?: CallOptions): Promise<void> {
    await this.before('read metadata', true, options);
    return this.inner.probe(options);
  }

  private before(what: string, idempotent: boolean, options: CallOptions | undefined) {
    return injected(
      this.chaos,
      'ehr',
      options?.signal,
      () =>
        new EhrError('unavailable', `${what} failed with HTTP 503 (chaos)`, {
          status: 503,
          retryable: idempotent,
        }),
    );
  }
}

/** The EHR under fault injection, or `inner` itself while chaos is disabled. */
export const chaosEhr = (inner: EhrProvider, chaos: Chaos): EhrProvider =>
  chaos.enabled ? new ChaosEhrProvider(inner, chaos) : inner;

/**
 * The model as if its backend answered 503 before the first event (a retryable ProviderError);
 * `inner` itself while chaos is disabled.
 */
export function chaosLlm(inner: LlmProvider, chaos: Chaos): LlmProvider {
  if (!chaos.enabled) return inner;
  const before = (signal: AbortSignal) =>
    injected(
      chaos,
      'llm',
      signal,
      () =>
        new ProviderError(inner.name, 'language model unavailable: HTTP 503 (chaos)', {
          retryable: true,
          status: 503,
        }),
    );
  const probe = inner.probe?.bind(inner);
  return {
    name: inner.name,
    model: inner.model,
    async *stream(request: LlmRequest, options) {
      await before(options.signal);
      yield* inner.stream(request, options);
    },
    // The health probe sees the injected faults too: an operator trying chaos sees it reported.
    ...(probe === undefined
      ? {}
      : {
          async probe(options: LlmStreamOptions) {
            await before(options.signal);
            return probe(options);
          },
        }),
  };
}

/** Speech recognition failing before its first transcript, as the providers' ProviderError. */
export function chaosStt(inner: SttProvider, chaos: Chaos): SttProvider {
  if (!chaos.enabled) return inner;
  return {
    name: inner.name,
    async *transcribe(audio: AsyncIterable<Buffer>, options: SttOptions) {
      await injected(
        chaos,
        'stt',
        options.signal,
        () =>
          new ProviderError(inner.name, 'speech recognition failed: HTTP 503 (chaos)', {
            retryable: true,
            status: 503,
          }),
      );
      yield* inner.transcribe(audio, options);
    },
    close: () => inner.close(),
  };
}

/** Speech synthesis failing before its first audio, as the providers' ProviderError. */
export function chaosTts(inner: TtsProvider, chaos: Chaos): TtsProvider {
  if (!chaos.enabled) return inner;
  return {
    name: inner.name,
    async *synthesize(sentences: AsyncIterable<string>, options: TtsOptions) {
      await injected(
        chaos,
        'tts',
        options.signal,
        () =>
          new ProviderError(inner.name, 'speech synthesis failed: HTTP 503 (chaos)', {
            retryable: true,
            status: 503,
          }),
      );
      yield* inner.synthesize(sentences, options);
    },
    close: () => inner.close(),
  };
}
