import { describe, expect, it } from 'vitest';
import { Chaos } from '../platform/chaos.js';
import { ChaosEhrProvider, chaosEhr, chaosLlm } from './chaos.js';
import { countsAsFailure } from './ehr/breaker.js';
import { EhrError } from './ehr/errors.js';
import { FhirEhrProvider } from './ehr/fhir.js';
import { ExtractiveProvider, NO_ANSWER } from './llm/extractive.js';
import { streamWithRetry } from './llm/retry.js';
import { ProviderError, type LlmEvent, type LlmRequest } from './llm/types.js';

/**
 * The wrappers' failures have their providers' own shapes. No I/O: an injected failure is thrown
 * before the wrapped provider is called (the FHIR address below is never contacted).
 */

const fhir = () =>
  new FhirEhrProvider({ baseUrl: 'http://127.0.0.1:9/fhir', auth: { kind: 'bearer', token: 't' } });
const failing = () => {
  const chaos = new Chaos({ enabled: true, random: () => 0 });
  for (const d of ['ehr', 'llm'] as const) chaos.set(d, { latency_ms: 0, error_rate: 1 });
  return chaos;
};
const request: LlmRequest = {
  messages: [{ role: 'user', content: 'What is the dose?' }],
  passages: [],
  tools: [],
};

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

async function collect(events: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const all: LlmEvent[] = [];
  for await (const e of events) all.push(e);
  return all;
}

describe('chaos wrappers', () => {
  it('wraps nothing while chaos is disabled', () => {
    const off = new Chaos({ enabled: false });
    const ehr = fhir();
    const llm = new ExtractiveProvider();
    expect(chaosEhr(ehr, off)).toBe(ehr);
    expect(chaosLlm(llm, off)).toBe(llm);
  });

  it('fails EHR reads as a retryable 503 and writes as a non-retryable one', async () => {
    const ehr = chaosEhr(fhir(), failing());
    expect(ehr).toBeInstanceOf(ChaosEhrProvider);
    const read = await errorOf(ehr.getPatient('p1'));
    expect(read).toBeInstanceOf(EhrError);
    expect(read).toMatchObject({ kind: 'unavailable', status: 503, retryable: true });
    expect((read as Error).message).toBe('read Patient failed with HTTP 503 (chaos)');
    expect(countsAsFailure(read)).toBe(true);
    const write = await errorOf(
      ehr.createObservation({
        idempotencyKey: 'k',
        patientId: 'p1',
        code: { system: 'http://loinc.org', code: '8867-4' },
      }),
    );
    expect(write).toMatchObject({ kind: 'unavailable', status: 503, retryable: false });
    expect(countsAsFailure(write)).toBe(true);
  });

  it('fails the model before its first event as a retryable ProviderError', async () => {
    const chaos = failing();
    const llm = chaosLlm(new ExtractiveProvider(), chaos);
    expect(llm).toMatchObject({ name: 'extractive' });
    const signal = new AbortController().signal;
    const error = await errorOf(collect(llm.stream(request, { signal })));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: 'extractive', retryable: true, status: 503 });
    // The one retry helper tries again, as for a real outage, then gives up.
    const retried = await errorOf(
      collect(streamWithRetry(llm, request, { signal, attempts: 3, backoffMs: 1 })),
    );
    expect(retried).toBeInstanceOf(ProviderError);
    expect(chaos.status().dependencies.llm).toMatchObject({ calls: 4, injected_errors: 4 });
  });

  it('passes calls through unchanged while the fault is zero', async () => {
    const chaos = new Chaos({ enabled: true });
    const llm = chaosLlm(new ExtractiveProvider(), chaos);
    const events = await collect(llm.stream(request, { signal: new AbortController().signal }));
    const text = events.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');
    expect(text).toBe(NO_ANSWER);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(chaos.status().dependencies.llm).toMatchObject({ calls: 1, injected_errors: 0 });
  });
});
