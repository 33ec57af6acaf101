import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_CONTEXT } from '../src/modules/audit/service.js';
import { ToolError, type Tool } from '../src/modules/chat/tools/types.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { FhirTestServer } from './helpers/fhir-server.js';
import { ChatClient, listenLocal } from './helpers/ws-client.js';
import type { LlmEvent, LlmProvider, LlmRequest, LlmToolCall } from '../src/providers/llm/types.js';

const BEARER = 'ehr-tools-test-token';
const EHR_TOOLS = [
  'ehr_patient_summary',
  'ehr_recent_labs',
  'ehr_medications',
  'ehr_allergies',
  'ehr_record_observation',
];

async function toolError(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe('TOOL_ERROR');
    return error as ToolError;
  }
  throw new Error('expected a tool error');
}

/**
 * A scripted model: asks for the queued tool call when the user speaks (if one is queued), and
 * answers with the tool's result size once the tool answered. Only the model is scripted: the chat
 * engine, the tools, the EHR service and the FHIR server are the real ones.
 */
class ToolAskingModel implements LlmProvider {
  readonly name = 'scripted';
  readonly model = 'scripted-1';
  readonly queued: LlmToolCall[] = [];

  async *stream(request: LlmRequest): AsyncIterable<LlmEvent> {
    await Promise.resolve();
    const last = request.messages.at(-1);
    const call = last?.role === 'user' ? this.queued.shift() : undefined;
    if (call !== undefined && request.tools.some((x) => x.name === call.name)) {
      yield { type: 'tool_call', call };
      yield { type: 'done', finishReason: 'tool_calls' };
      return;
    }
    yield { type: 'text_delta', text: `Answered (${String(last?.content.length ?? 0)}).` };
    yield { type: 'done', finishReason: 'stop' };
  }
}

describe('EHR chat tools against a real FHIR server', () => {
  const model = new ToolAskingModel();
  let server: FhirTestServer;
  let t: TestApp;
  let admin: TestUser;
  let userId: string;
  let clinician: TestUser;
  let port: number;
  let allowed: string;
  let notAllowed: string;

  const tool = (name: string): Tool => {
    const found = t.deps.chat.tools.find((x) => x.definition.name === name);
    if (found === undefined) throw new Error(`tool ${name} is not registered`);
    return found;
  };
  const run = (name: string, args: Record<string, unknown>, extra: object = {}) =>
    tool(name).run(args, { userId, signal: new AbortController().signal, ...extra });
  const enable = (name: string) =>
    t.deps.flags.create(
      admin,
      { name, enabled: true, description: name, rolloutPercentage: 100 },
      SYSTEM_CONTEXT,
    );

  beforeAll(async () => {
    server = await FhirTestServer.start({
      auth: { bearer: BEARER },
      seed: { patients: 2, seed: 7 },
    });
    [allowed = '', notAllowed = ''] = server.seeded.patientIds;
    t = await createTestApp({
      env: {
        FHIR_BASE_URL: server.baseUrl,
        FHIR_AUTH: 'bearer',
        FHIR_BEARER_TOKEN: BEARER,
        EHR_ALLOWED_PATIENTS: allowed,
      },
      llm: model,
    });
    admin = await createUser(t.app, t.deps, { admin: true });
    clinician = await createUser(t.app, t.deps);
    userId = clinician.id;
    port = await listenLocal(t.app);
  });
  afterAll(async () => {
    await t.close();
    await server.stop();
  });

  it('registers the EHR tools with strict schemas when FHIR is configured', () => {
    const names = t.deps.chat.tools.map((x) => x.definition.name);
    expect(names).toEqual(expect.arrayContaining(['medical_calculator', ...EHR_TOOLS]));
    for (const name of EHR_TOOLS) {
      expect(tool(name).definition.parameters).toMatchObject({ additionalProperties: false });
      expect(JSON.stringify(tool(name).definition.parameters)).not.toContain('x-pattern');
    }
  });

  it('refuses while the flags are off, without patient data in the message', async () => {
    const read = await toolError(run('ehr_patient_summary', { patient_id: allowed }));
    expect(read.message).toBe('Refused: EHR read access is not enabled for this user');
    const write = await toolError(
      run('ehr_record_observation', {
        patient_id: allowed,
        code: '8867-4',
        value: 72,
        unit: '/min',
      }),
    );
    expect(write.message).toBe('Refused: EHR write access is not enabled for this user');
    expect(write.message).not.toContain(allowed);
    expect(server.requests.filter((r) => r.url.includes(allowed))).toEqual([]);
  });

  it('answers a compact summary for an allowed patient, and refuses another', async () => {
    await enable('ehr.read');
    await enable('ehr.write');
    const summary = await run('ehr_patient_summary', { patient_id: allowed });
    expect(summary).toMatchObject({ patient: { id: allowed }, stale: false });
    expect(Number.isNaN(Date.parse(String(summary.fetched_at)))).toBe(false);
    const conditions = summary.conditions as { id: string; display: string }[];
    expect(conditions.length).toBeGreaterThan(0);
    expect(typeof conditions[0]?.display).toBe('string');
    const vitals = summary.vitals as { code: string; effective: string }[];
    expect(vitals.length).toBeGreaterThan(0);
    // Compact: no FHIR scaffolding.
    expect(JSON.stringify(summary)).not.toContain('resourceType');
    const refused = await toolError(run('ehr_patient_summary', { patient_id: notAllowed }));
    expect(refused.message).toBe('Refused: this patient is not accessible to this user');
  });

  it('reads labs by LOINC code, newest first, within the limit', async () => {
    const answer = await run('ehr_recent_labs', {
      patient_id: allowed,
      codes: ['2160-0'],
      limit: 3,
    });
    const labs = answer.labs as {
      code: string;
      value: number;
      unit: string;
      effective: string;
    }[];
    expect(labs).toHaveLength(3);
    for (const lab of labs) {
      expect(lab).toMatchObject({ code: '2160-0', unit: 'mg/dL' });
      expect(typeof lab.value).toBe('number');
    }
    const times = labs.map((l) => Date.parse(l.effective));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const common = await run('ehr_recent_labs', { patient_id: allowed, codes: null });
    expect((common.labs as unknown[]).length).toBeGreaterThan(0);
    const meds = await run('ehr_medications', { patient_id: allowed });
    expect((meds.medications as unknown[]).length).toBeGreaterThan(0);
    const allergies = await run('ehr_allergies', { patient_id: allowed });
    expect((allergies.allergies as { substance: string }[])[0]?.substance).toEqual(
      expect.any(String),
    );
  });

  it('refuses bad arguments as TOOL_ERROR naming the field, not the value', async () => {
    const before = server.requests.length;
    const cases: [string, Record<string, unknown>, string][] = [
      ['ehr_patient_summary', { patient_id: '../Patient?name=x' }, 'patient_id must be a FHIR id'],
      ['ehr_patient_summary', {}, 'patient_id is required'],
      ['ehr_allergies', { patient_id: allowed, extra: 1 }, 'extra is not an allowed field'],
      ['ehr_recent_labs', { patient_id: allowed, codes: ['glucose'] }, 'must be a LOINC code'],
      ['ehr_recent_labs', { patient_id: allowed, limit: 1000 }, 'limit must be <= 100'],
      [
        'ehr_record_observation',
        { patient_id: allowed, code: '8867-4', value: '72', unit: '/min' },
        'value must be number',
      ],
    ];
    for (const [name, args, message] of cases) {
      const error = await toolError(run(name, args));
      expect(error.message).toContain(message);
      expect(error.message).not.toContain('../Patient');
      expect(error.message).not.toContain('glucose');
    }
    await toolError(
      tool('ehr_medications').run([] as never, { userId, signal: AbortSignal.abort() }),
    );
    expect(server.requests.length).toBe(before);
  });

  it('writes an observation once per turn, even when the turn is generated again', async () => {
    const args = {
      patient_id: allowed,
      code: '8867-4',
      value: 72,
      unit: '/min',
      effective: '2026-01-02T03:04:05Z',
    };
    const turn = { turnId: 'msg-1', toolCallId: 'call-1' };
    const first = await run('ehr_record_observation', args, turn);
    expect(first).toMatchObject({
      resource_type: 'Observation',
      created: true,
      outcome: 'created',
      patient_id: allowed,
      written: { code: '8867-4', value: 72, unit: '/min', effective: '2026-01-02T03:04:05.000Z' },
    });
    const again = await run('ehr_record_observation', args, turn);
    expect(again).toMatchObject({ id: first.id, created: false, outcome: 'existing' });
    // The turn generated again: the model names its call anew; still the same reading.
    const regenerated = await run('ehr_record_observation', args, {
      ...turn,
      toolCallId: 'call-9',
    });
    expect(regenerated).toMatchObject({ id: first.id, created: false });
    const other = await run('ehr_record_observation', args, {
      turnId: 'msg-2',
      toolCallId: 'call-1',
    });
    expect(other.created).toBe(true);
    expect(other.id).not.toBe(first.id);
    // Conditional creates: asked four times, two resources exist on the server.
    const url = `${server.baseUrl}/Observation?patient=${allowed}&code=8867-4&date=2026-01-02`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${BEARER}` } });
    const bundle = (await res.json()) as { entry?: { resource: { id: string } }[] };
    const ids = (bundle.entry ?? []).map((e) => e.resource.id).sort();
    expect(ids).toEqual([first.id, other.id].sort());
  });

  it('runs through the chat engine: tool frames, and the call stored with the answer', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/conversations',
      headers: bearer(clinician.access),
      payload: { title: 'EHR' },
    });
    const conversationId = dataOf<{ id: string }>(res).id;
    const client = await ChatClient.connect(port, clinician.access, '/ws');
    try {
      const ask = async (call: LlmToolCall) => {
        model.queued.push(call);
        const from = client.frames.length;
        client.send({ type: 'message_send', conversation_id: conversationId, content: 'Chart?' });
        const done = await client.next((f) => f.type === 'message_done', 10_000, from);
        const result = client.frames.slice(from).find((f) => f.type === 'tool_result');
        const message = done.message as { toolCalls: Record<string, unknown>[] };
        return { result, stored: message.toolCalls[0] };
      };
      const good = { id: 'c1', name: 'ehr_allergies', arguments: { patient_id: allowed } };
      const ok = await ask(good);
      expect(ok.result).toMatchObject({ call: { name: 'ehr_allergies', error: null } });
      expect(ok.stored).toMatchObject({ result: { patient_id: allowed, stale: false } });
      const bad = { id: 'c2', name: 'ehr_allergies', arguments: { patient_id: notAllowed } };
      const refused = await ask(bad);
      const error = {
        code: 'TOOL_ERROR',
        message: 'Refused: this patient is not accessible to this user',
      };
      expect(refused.result).toMatchObject({ call: { result: null, error } });
      expect(refused.stored).toMatchObject({ error });
    } finally {
      client.close();
      await client.closed;
    }
  });

  it('answers from the last good value, marked stale, while the EHR is down', async () => {
    const fresh = await run('ehr_medications', { patient_id: allowed });
    server.inject({ kind: 'status', status: 503 });
    try {
      const stale = await run('ehr_medications', { patient_id: allowed });
      expect(stale).toMatchObject({ stale: true, fetched_at: fresh.fetched_at });
      expect(stale.medications).toEqual(fresh.medications);
      const none = await toolError(
        run('ehr_recent_labs', { patient_id: allowed, codes: ['718-7'], limit: 1 }),
      );
      expect(none.message).toBe('The EHR is unavailable; try again later');
    } finally {
      server.clearFaults();
    }
  });
});

describe('EHR chat tools without FHIR_BASE_URL', () => {
  it('are not registered', async () => {
    const t = await createTestApp();
    try {
      const names = t.deps.chat.tools.map((x) => x.definition.name);
      expect(names).toContain('medical_calculator');
      expect(names.filter((n) => n.startsWith('ehr_'))).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
