import type { Bundle, MedicationRequest, Observation } from '@medplum/fhirtypes';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from './helpers/app.js';
import { bearer, dataOf, type TestUser } from './helpers/factories.js';
import { EHR_TEST_BEARER, startEhrApp, type EhrTestApp } from './helpers/ehr-app.js';
import type { FhirTestServer } from './helpers/fhir-server.js';
import { silence, speak } from './helpers/speech-audio.js';
import { ChatClient, listenLocal, newConversation, type Frame } from './helpers/ws-client.js';

/**
 * Issue 13's "chat engine answering a patient question through the tools": the offline extractive
 * model, the chat and voice sockets of a listening server, the EHR tools and service, and a real
 * FHIR server seeded with generated patients. A clinician asks about a patient; the model calls
 * the tools and states what they returned. A write is never cancelled once sent.
 */

const VOICE_PATH = '/api/voice/pipeline-ws';
/** 100 ms of PCM16 at 16 kHz. */
const FRAME = 3200;
/** Long enough for a cancel to land while the EHR holds the write. */
const SLOW_WRITE_MS = 3000;

interface StoredCall {
  name: string;
  arguments: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
}
interface Message {
  id: string;
  role: string;
  content: string;
  toolCalls: StoredCall[];
  interrupted: boolean;
}

describe('the chat engine answering patient questions through the EHR tools', () => {
  let ehr: EhrTestApp;
  let server: FhirTestServer;
  let t: TestApp;
  let clinician: TestUser;
  let port: number;
  let patient: string;
  const clients: ChatClient[] = [];

  const connect = async (path = '/ws') => {
    const client = await ChatClient.connect(port, clinician.access, path);
    clients.push(client);
    return client;
  };
  /** A FHIR search on the test server itself, all pages' worth in one (small data). */
  const search = async <T>(query: string): Promise<T[]> => {
    const res = await fetch(`${server.baseUrl}/${query}&_count=1000`, {
      headers: { authorization: `Bearer ${EHR_TEST_BEARER}` },
    });
    expect(res.status).toBe(200);
    const bundle = (await res.json()) as Bundle;
    return (bundle.entry ?? []).map((e) => e.resource as T);
  };
  const observations = (code: string) =>
    search<Observation>(`Observation?patient=${patient}&code=${code}`);
  const posts = () =>
    server.requests.filter((r) => r.method === 'POST' && r.url.includes('/Observation')).length;
  const ask = async (client: ChatClient, conversationId: string, content: string) => {
    const from = client.frames.length;
    client.send({ type: 'message_send', conversation_id: conversationId, content });
    const done = await client.next((f) => f.type === 'message_done', 20_000, from);
    const frames = client.frames.slice(from);
    return { message: done.message as Message, frames };
  };
  const calls = (frames: Frame[], type: 'tool_call' | 'tool_result') =>
    frames.filter((f) => f.type === type).map((f) => f.call as StoredCall);
  const chunks = (frames: Frame[]) =>
    frames
      .filter((f) => f.type === 'chunk')
      .map((f) => String(f.delta))
      .join('');
  const thread = async (conversationId: string) => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/conversations/${conversationId}/messages`,
      headers: bearer(clinician.access),
    });
    expect(res.statusCode, res.body).toBe(200);
    return dataOf<{ items: Message[] }>(res).items;
  };

  beforeAll(async () => {
    ehr = await startEhrApp({ patients: 2, seed: 13 });
    ({ server, t, patient, clinician } = ehr);
    port = await listenLocal(t.app);
  });
  afterEach(async () => {
    server.clearFaults();
    const open = clients.splice(0);
    for (const c of open) c.close();
    await Promise.all(open.map((c) => c.closed));
  });
  afterAll(async () => {
    await ehr.close();
  });

  it("names the patient's active medications, with tool frames and the call stored", async () => {
    const active = await search<MedicationRequest>(
      `MedicationRequest?patient=${patient}&status=active`,
    );
    expect(active.length).toBeGreaterThan(0);
    const client = await connect();
    const conversationId = await newConversation(t.app, clinician.access);
    const question = `What are the active medications of patient ${patient}?`;
    const { message, frames } = await ask(client, conversationId, question);
    expect(calls(frames, 'tool_call')).toMatchObject([
      { name: 'ehr_medications', arguments: { patient_id: patient } },
    ]);
    expect(calls(frames, 'tool_result')).toMatchObject([{ name: 'ehr_medications', error: null }]);
    expect(message.content).toMatch(new RegExp(`^Active medications for patient ${patient}: `));
    for (const m of active) {
      const name = m.medicationCodeableConcept?.text ?? '';
      expect(message.content).toContain(`${name} (${m.dosageInstruction?.[0]?.text ?? ''})`);
    }
    // Only what the EHR returned: the medications not active are not named.
    const stopped = await search<MedicationRequest>(
      `MedicationRequest?patient=${patient}&status=stopped`,
    );
    for (const m of stopped) {
      expect(message.content).not.toContain(m.medicationCodeableConcept?.text ?? '-');
    }
    expect(chunks(frames)).toBe(message.content);
    expect(message).toMatchObject({ interrupted: false, toolCalls: [{ name: 'ehr_medications' }] });
    expect(message.toolCalls[0]?.result).toMatchObject({ patient_id: patient, stale: false });
  });

  it('states the latest creatinine with its value, unit and date', async () => {
    const seeded = await observations('2160-0');
    const newest = seeded.sort((a, b) =>
      String(b.effectiveDateTime).localeCompare(String(a.effectiveDateTime)),
    )[0];
    const client = await connect();
    const conversationId = await newConversation(t.app, clinician.access);
    const question = `What is the latest creatinine of patient ${patient}?`;
    const { message, frames } = await ask(client, conversationId, question);
    expect(calls(frames, 'tool_call')).toMatchObject([
      { name: 'ehr_recent_labs', arguments: { patient_id: patient, codes: ['2160-0'] } },
    ]);
    const value = `${String(newest?.valueQuantity?.value)} mg/dL`;
    const day = String(newest?.effectiveDateTime).slice(0, 10);
    expect(message.content).toContain(
      `Latest laboratory results for patient ${patient}: creatinine ${value} on ${day}`,
    );
  });

  it('records an observation asked for, and says what was written', async () => {
    const before = posts();
    const client = await connect();
    const conversationId = await newConversation(t.app, clinician.access);
    const question = `Please record heart rate 72 bpm for patient ${patient}.`;
    const { message, frames } = await ask(client, conversationId, question);
    expect(calls(frames, 'tool_call')).toMatchObject([
      {
        name: 'ehr_record_observation',
        arguments: { patient_id: patient, code: '8867-4', value: 72, unit: '/min' },
      },
    ]);
    const result = message.toolCalls[0]?.result ?? {};
    expect(result).toMatchObject({ resource_type: 'Observation', created: true });
    const written = await observations('8867-4');
    const mine = written.filter((o) => o.id === result.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      subject: { reference: `Patient/${patient}` },
      valueQuantity: { value: 72, code: '/min' },
    });
    expect(message.content).toMatch(
      new RegExp(
        `^Recorded heart rate 72 /min for patient ${patient} at \\d{4}-\\d{2}-\\d{2} ` +
          `\\d{2}:\\d{2} UTC \\(Observation/${String(result.id)}\\)\\.$`,
      ),
    );
    expect(posts() - before).toBe(1);
  });

  it('reads back in the patient summary what was recorded a moment before', async () => {
    const client = await connect();
    const conversationId = await newConversation(t.app, clinician.access);
    const posted = posts();
    const recorded = await ask(
      client,
      conversationId,
      `Record heart rate 72 for patient ${patient}`,
    );
    const heartRate = recorded.message.toolCalls[0]?.result ?? {};
    expect(heartRate).toMatchObject({ created: true, written: { code: '8867-4', value: 72 } });
    const pressure = await ask(
      client,
      conversationId,
      `Record blood pressure 128/84 for patient ${patient}`,
    );
    // One blood pressure panel (85354-9 with its two components), not two Observations.
    expect(pressure.message.toolCalls).toMatchObject([
      {
        name: 'ehr_record_observation',
        arguments: { code: '85354-9', systolic: 128, diastolic: 84, unit: 'mm[Hg]' },
        result: { created: true },
      },
    ]);
    expect(posts() - posted).toBe(2);
    expect(pressure.message.content).toMatch(
      new RegExp(`^Recorded blood pressure 128/84 mmHg for patient ${patient} at `),
    );

    const { message } = await ask(
      client,
      conversationId,
      `Give me a summary of patient ${patient}`,
    );
    expect(message.toolCalls).toMatchObject([{ name: 'ehr_patient_summary', error: null }]);
    const day = (result: Record<string, unknown>) =>
      (result.written as { effective: string }).effective.slice(0, 10);
    const vitals = message.content.slice(message.content.indexOf('Latest vital signs: '));
    expect(vitals).toContain(`heart rate 72 /min on ${day(heartRate)}`);
    expect(vitals).toContain(
      `blood pressure 128/84 mmHg on ${day(pressure.message.toolCalls[0]?.result ?? {})}`,
    );
  });

  it('finishes a write the user cancels right after it was sent, and stores its result', async () => {
    const before = posts();
    const client = await connect();
    const conversationId = await newConversation(t.app, clinician.access);
    server.inject({ kind: 'delay', ms: SLOW_WRITE_MS, times: 1 });
    const from = client.frames.length;
    client.send({
      type: 'message_send',
      conversation_id: conversationId,
      content: `Record body weight 81.5 kg for patient ${patient}`,
    });
    const call = await client.next((f) => f.type === 'tool_call', 20_000, from);
    client.send({ type: 'message_cancel', message_id: call.message_id });
    const done = await client.next((f) => f.type === 'message_done', 20_000, from);
    const message = done.message as Message;
    expect(message.interrupted).toBe(true);
    expect(message.toolCalls).toHaveLength(1);
    const stored = message.toolCalls[0];
    expect(stored).toMatchObject({ name: 'ehr_record_observation', error: null });
    expect(stored?.result).toMatchObject({ created: true, written: { value: 81.5, unit: 'kg' } });
    const result = client.frames.slice(from).find((f) => f.type === 'tool_result');
    expect(result?.call).toMatchObject({ error: null, result: { id: stored?.result?.id } });
    // Written exactly once, and the answer cut short still says what was written.
    const weights = (await observations('29463-7')).filter((o) => o.valueQuantity?.value === 81.5);
    expect(weights.map((o) => o.id)).toEqual([stored?.result?.id]);
    expect(posts() - before).toBe(1);
    expect(message.content).toContain(`Recorded body weight 81.5 kg for patient ${patient} at `);
    expect(message.content).toContain(`(Observation/${String(stored?.result?.id)}).`);
    const [, answer] = await thread(conversationId);
    expect(answer).toMatchObject({ id: message.id, interrupted: true, content: message.content });
    expect(answer?.toolCalls[0]).toMatchObject({ error: null, result: stored?.result });
  });

  it('finishes a write when the user talks over the voice answer (barge-in)', async () => {
    const before = posts();
    const client = await connect(VOICE_PATH);
    const interruption = Buffer.concat([await speak('stop please, that is enough'), silence(800)]);
    server.inject({ kind: 'delay', ms: SLOW_WRITE_MS, times: 1 });
    client.send({ type: 'text.input', text: `Record heart rate 88 bpm for patient ${patient}` });
    const call = await client.next((f) => f.type === 'tool.call', 20_000);
    expect(call).toMatchObject({ name: 'ehr_record_observation', arguments: { value: 88 } });
    const from = client.frames.length;
    for (let at = 0; at < interruption.length; at += FRAME) {
      const audio = interruption.subarray(at, at + FRAME).toString('base64');
      client.send({ type: 'audio.input', audio });
    }
    await client.next(
      (f) => f.type === 'voice.state' && f.state === 'CANCELLED' && f.reason === 'barge_in',
      20_000,
      from,
    );
    // The cancelled turn's end (the interruption itself becomes the next question).
    const complete = await client.next(
      (f) => f.type === 'response.complete' && f.interrupted === true,
      20_000,
    );
    const result = await client.next((f) => f.type === 'tool.result', 20_000);
    expect(result).toMatchObject({ call_id: call.call_id, result: { created: true } });
    expect(result.error).toBeUndefined();
    const id = (result.result as { id: string }).id;
    const rates = (await observations('8867-4')).filter((o) => o.valueQuantity?.value === 88);
    expect(rates.map((o) => o.id)).toEqual([id]);
    expect(posts() - before).toBe(1);
    const listed = await t.app.inject({
      method: 'GET',
      url: '/conversations',
      headers: bearer(clinician.access),
    });
    const conversations = dataOf<{ items: { id: string }[] }>(listed).items;
    const all = (await Promise.all(conversations.map((c) => thread(c.id)))).flat();
    const stored = all.find((m) => m.id === complete.message_id);
    expect(stored).toMatchObject({ role: 'assistant', interrupted: true, content: complete.text });
    expect(stored?.toolCalls).toMatchObject([{ error: null, result: { id, created: true } }]);
  });
});
