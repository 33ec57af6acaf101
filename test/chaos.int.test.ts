import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EhrCaller } from '../src/modules/ehr/service.js';
import type { ChaosDependency } from '../src/platform/chaos.js';
import type { TestApp } from './helpers/app.js';
import { bearer, dataOf, type TestUser } from './helpers/factories.js';
import { startEhrApp, type EhrTestApp } from './helpers/ehr-app.js';
import type { FhirTestServer } from './helpers/fhir-server.js';
import { silence, speak } from './helpers/speech-audio.js';
import { ChatClient, listenLocal, type Frame } from './helpers/ws-client.js';

/**
 * Fault injection (CHAOS_ENABLED=true) through the real wiring: an EHR fault opens the breaker in
 * front of a real FHIR server and clearing it lets the breaker close again; a model fault becomes
 * the chat engine's LLM_ERROR over a real chat socket; speech faults become the voice pipeline's
 * STT_ERROR and TTS_ERROR over a real voice socket (Silero VAD, PocketSphinx, Flite).
 */

/** 100 ms of PCM16 at 16 kHz. */
const FRAME = 3200;

describe('chaos (fault injection)', () => {
  let ehr: EhrTestApp;
  let server: FhirTestServer;
  let t: TestApp;
  let user: TestUser;
  let clinician: EhrCaller;
  let patient: string;
  let port: number;
  let question: Buffer;
  const clients: ChatClient[] = [];

  const fail = (dependency: ChaosDependency) => {
    t.deps.chaos.set(dependency, { latency_ms: 0, error_rate: 1 });
  };
  const conversation = async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/conversations',
      headers: bearer(user.access),
      payload: {},
    });
    expect(res.statusCode, res.body).toBe(201);
    return dataOf<{ id: string }>(res).id;
  };
  const connect = async (path: string) => {
    const client = await ChatClient.connect(port, user.access, path);
    clients.push(client);
    return client;
  };
  /** Opens a voice session and speaks the question into it; frames from then on. */
  const speakQuestion = async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/voice/session',
      headers: bearer(user.access),
      payload: {},
    });
    expect(res.statusCode, res.body).toBe(201);
    const client = await connect(dataOf<{ socket_url: string }>(res).socket_url);
    const audio = Buffer.concat([silence(600), question, silence(1500)]);
    for (let at = 0; at < audio.length; at += FRAME) {
      const frame = audio.subarray(at, at + FRAME).toString('base64');
      client.send({ type: 'audio.input', audio: frame });
    }
    return client;
  };
  const errorCode = (client: ChatClient, timeoutMs = 60_000) =>
    client.next((f) => f.type === 'error', timeoutMs).then((f: Frame) => f.code);

  beforeAll(async () => {
    ehr = await startEhrApp({
      env: {
        CHAOS_ENABLED: 'true',
        EHR_BREAKER_HALF_OPEN_AFTER_MS: '200',
        EHR_BREAKER_PROBE_INTERVAL_MS: '100',
        EHR_TIMEOUT_MS: '2000',
      },
      flags: ['ehr.read'],
    });
    ({ server, t, patient } = ehr);
    user = ehr.clinician;
    clinician = { id: user.id, email: user.email };
    port = await listenLocal(t.app);
    question = await speak('what is the first drug treatment for type two diabetes');
  });
  afterEach(async () => {
    t.deps.chaos.reset();
    const open = clients.splice(0);
    for (const c of open) c.close();
    await Promise.all(open.map((c) => c.closed));
  });
  afterAll(async () => {
    await ehr.close();
  });

  it('is enabled from CHAOS_ENABLED, with every fault zero', () => {
    const status = t.deps.chaos.status();
    expect(status.enabled).toBe(true);
    expect(Object.keys(status.dependencies).sort()).toEqual(['ehr', 'llm', 'stt', 'tts']);
    expect(status.dependencies.ehr).toMatchObject({ latency_ms: 0, error_rate: 0 });
  });

  it('opens the EHR breaker under an injected error rate of 1, and closes after reset', async () => {
    const fresh = await t.deps.ehr.patientSummary(clinician, patient);
    expect(fresh.stale).toBe(false);
    expect(t.deps.ehr.status().circuit_breaker.state).toBe('CLOSED');
    const sent = server.requests.length;
    fail('ehr');
    let answer = fresh;
    for (let i = 0; i < 10 && t.deps.ehr.status().circuit_breaker.state !== 'OPEN'; i++) {
      answer = await t.deps.ehr.patientSummary(clinician, patient);
    }
    expect(t.deps.ehr.status()).toMatchObject({
      status: 'degraded',
      fallback_active: true,
      circuit_breaker: { state: 'OPEN' },
    });
    // Served from the last good answer, labelled with when it was fetched.
    expect(answer).toMatchObject({ stale: true, fetchedAt: fresh.fetchedAt });
    // The faults were the wrapper's: nothing reached the FHIR server.
    expect(server.requests.length).toBe(sent);
    expect(t.deps.chaos.status().dependencies.ehr.injected_errors).toBeGreaterThanOrEqual(5);

    // The breaker's probes go through the same fault injection: after the reset they close it.
    t.deps.chaos.reset();
    await vi.waitFor(
      () => {
        expect(t.deps.ehr.status().circuit_breaker.state).toBe('CLOSED');
      },
      { timeout: 20_000, interval: 20 },
    );
    answer = await t.deps.ehr.patientSummary(clinician, patient);
    expect(t.deps.ehr.status()).toMatchObject({
      status: 'ok',
      fallback_active: false,
      circuit_breaker: { state: 'CLOSED' },
    });
    expect(answer.stale).toBe(false);
    expect(server.requests.length).toBeGreaterThan(sent);
  });

  it('ends added EHR latency at the per-call timeout and answers from the fallback', async () => {
    const fresh = await t.deps.ehr.patientSummary(clinician, patient);
    const before = t.deps.chaos.status().dependencies.ehr.calls;
    t.deps.chaos.set('ehr', { latency_ms: 60_000, error_rate: 0 });
    const answer = await t.deps.ehr.patientSummary(clinician, patient);
    expect(answer).toMatchObject({ stale: true, fetchedAt: fresh.fetchedAt });
    // Every call of the first attempt and its two retries waited until the timeout; none failed
    // otherwise.
    const ehr = t.deps.chaos.status().dependencies.ehr;
    expect(ehr.delayed_calls).toBeGreaterThanOrEqual(3);
    expect(ehr).toMatchObject({ calls: before + ehr.delayed_calls, injected_errors: 0 });
    t.deps.chaos.reset();
    expect((await t.deps.ehr.patientSummary(clinician, patient)).stale).toBe(false);
  });

  it("turns a chat turn into the engine's LLM_ERROR, and answers again after reset", async () => {
    const conversationId = await conversation();
    const client = await connect('/ws');
    fail('llm');
    let from = client.frames.length;
    client.send({ type: 'message_send', conversation_id: conversationId, content: 'Dose?' });
    const error = await client.next((f) => f.type === 'error', 10_000, from);
    expect(error).toMatchObject({ code: 'LLM_ERROR' });
    const failed = await client.next((f) => f.type === 'message_done', 10_000, from);
    expect(failed.message).toMatchObject({ role: 'assistant', interrupted: true });
    // Retried as a real outage is (3 attempts), then given up.
    expect(t.deps.chaos.status().dependencies.llm).toMatchObject({ calls: 3, injected_errors: 3 });

    t.deps.chaos.reset();
    from = client.frames.length;
    client.send({ type: 'message_send', conversation_id: conversationId, content: 'Dose?' });
    const done = await client.next((f) => f.type === 'message_done', 10_000, from);
    expect(done.message).toMatchObject({ role: 'assistant', interrupted: false });
    expect(client.frames.slice(from).filter((f) => f.type === 'error')).toEqual([]);
  });

  it('reports an injected speech recognition failure as STT_ERROR', async () => {
    fail('stt');
    const client = await speakQuestion();
    expect(await errorCode(client)).toBe('STT_ERROR');
    expect(client.frames.some((f) => f.type === 'transcript.complete')).toBe(false);
    expect(t.deps.chaos.status().dependencies.stt.injected_errors).toBe(1);
  });

  it('reports an injected speech synthesis failure as TTS_ERROR, without audio', async () => {
    fail('tts');
    const client = await speakQuestion();
    expect(await errorCode(client)).toBe('TTS_ERROR');
    await client.next((f) => f.type === 'transcript.complete');
    // The answer's text is still stored, as when a real engine fails.
    const complete = await client.next((f) => f.type === 'response.complete', 60_000);
    expect(typeof complete.message_id).toBe('string');
    expect(client.frames.some((f) => f.type === 'audio.output')).toBe(false);
    expect(t.deps.chaos.status().dependencies.tts).toMatchObject({ injected_errors: 1 });
  });
});
