import { describe, expect, it } from 'vitest';
import { EHR_TOOL_NAMES } from '../../modules/chat/tools/ehr-describe.js';
import { ExtractiveProvider } from './extractive.js';
import { ehrAnswer, ehrAsks, patientIdIn } from './extractive-ehr.js';
import type { LlmEvent, LlmMessage, LlmRequest, LlmTool } from './types.js';

const tool = (name: string): LlmTool => ({ name, description: name, parameters: {} });
const EHR = EHR_TOOL_NAMES.map(tool);
const ID = 'pat-0a1b2c3d4e5f';

function request(messages: LlmMessage[], tools: LlmTool[] = EHR): LlmRequest {
  return { messages, passages: [], tools };
}
const asks = (question: string, tools?: LlmTool[]) =>
  ehrAsks(request([{ role: 'user', content: question }], tools));
const reads = (question: string) => asks(question).reads;
const writes = (question: string) => asks(question).writes;

/** A conversation ending with the tools' answers to the calls, as the chat engine builds it. */
function answered(calls: { name: string; args: Record<string, unknown>; result: unknown }[]) {
  const toolCalls = calls.map((c, i) => ({
    id: `call_${String(i)}`,
    name: c.name,
    arguments: c.args,
  }));
  return [
    { role: 'user', content: 'question' },
    { role: 'assistant', content: '', toolCalls },
    ...calls.map((c, i) => ({
      role: 'tool' as const,
      toolCallId: `call_${String(i)}`,
      name: c.name,
      content: JSON.stringify(c.result),
    })),
  ] satisfies LlmMessage[];
}

describe('patientIdIn', () => {
  it('finds the id after "patient", "patient id", "Patient/" and before "\'s"', () => {
    expect(patientIdIn(`medications of patient ${ID}?`)?.id).toBe(ID);
    expect(patientIdIn('allergies for patient 12345.')?.id).toBe('12345');
    expect(patientIdIn('summary for patient id: example')?.id).toBe('example');
    expect(patientIdIn('summary for Patient/abc.def-9')?.id).toBe('abc.def-9');
    expect(patientIdIn(`What are ${ID}'s medications`)?.id).toBe(ID);
  });

  it('takes no ordinary word for an id, and nothing from "patients"', () => {
    expect(patientIdIn('what does the patient have')).toBeUndefined();
    expect(patientIdIn('patients with penicillin allergy')).toBeUndefined();
    expect(patientIdIn('patient identity checks')).toBeUndefined();
    expect(patientIdIn(`patient ${'a1'.repeat(40)}`)).toBeUndefined();
  });
});

describe('ehrAsks: reads', () => {
  it('asks for medications, allergies and the summary by their words', () => {
    expect(reads(`What are the active medications of patient ${ID}?`)).toEqual([
      { name: 'ehr_medications', arguments: { patient_id: ID } },
    ]);
    expect(reads(`Any allergies for patient ${ID}?`)).toEqual([
      { name: 'ehr_allergies', arguments: { patient_id: ID } },
    ]);
    expect(reads(`Give me a summary of patient ${ID}`)).toEqual([
      { name: 'ehr_patient_summary', arguments: { patient_id: ID } },
    ]);
    expect(reads(`${ID}'s meds and allergies`).map((a) => a.name)).toEqual([
      'ehr_medications',
      'ehr_allergies',
    ]);
    // A patient named and nothing else known: the summary.
    expect(reads(`patient ${ID}?`).map((a) => a.name)).toEqual(['ehr_patient_summary']);
  });

  it('maps laboratory test names to their LOINC codes', () => {
    expect(reads(`latest creatinine for patient ${ID}`)).toEqual([
      {
        name: 'ehr_recent_labs',
        arguments: { patient_id: ID, codes: ['2160-0'], limit: 3 },
      },
    ]);
    const codes = (q: string) => reads(q)[0]?.arguments.codes;
    expect(codes(`HbA1c and potassium of patient ${ID}`)).toEqual(['4548-4', '2823-3']);
    // "hemoglobin A1c" is HbA1c, not hemoglobin as well; LDL is not total cholesterol as well.
    expect(codes(`hemoglobin A1c of patient ${ID}`)).toEqual(['4548-4']);
    expect(codes(`LDL cholesterol of patient ${ID}`)).toEqual(['13457-7']);
    expect(codes(`eGFR, INR and TSH for patient ${ID}`)).toEqual(['33914-3', '6301-6', '3016-3']);
    expect(reads(`recent labs for patient ${ID}`)).toEqual([
      { name: 'ehr_recent_labs', arguments: { patient_id: ID } },
    ]);
  });

  it('asks nothing without a patient id, and only for the tools offered', () => {
    expect(asks('What are the medications for hypertension?')).toEqual({ writes: [], reads: [] });
    expect(asks('Which patients have penicillin allergies?')).toEqual({ writes: [], reads: [] });
    expect(asks(`medications of patient ${ID}`, [tool('medical_calculator')]).reads).toEqual([]);
    expect(
      asks(`medications and allergies of patient ${ID}`, [tool('ehr_allergies')]).reads,
    ).toEqual([{ name: 'ehr_allergies', arguments: { patient_id: ID } }]);
    const afterTool = request([
      ...answered([{ name: 'ehr_allergies', args: { patient_id: ID }, result: {} }]),
    ]);
    expect(ehrAsks(afterTool)).toEqual({ writes: [], reads: [] });
  });

  it('reuses the patient of an earlier turn when the question points back at one', () => {
    const earlier: LlmMessage[] = [
      { role: 'user', content: `medications of patient ${ID}` },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', name: 'ehr_medications', arguments: { patient_id: ID } }],
      },
      { role: 'tool', toolCallId: 'c1', name: 'ehr_medications', content: '{}' },
      { role: 'assistant', content: 'Active medications for …' },
    ];
    const next = (content: string) =>
      ehrAsks(request([...earlier, { role: 'user', content }])).reads;
    expect(next('And what are her allergies?')).toEqual([
      { name: 'ehr_allergies', arguments: { patient_id: ID } },
    ]);
    expect(next('latest potassium of the patient')[0]?.arguments).toMatchObject({
      patient_id: ID,
      codes: ['2823-3'],
    });
    expect(next('What are common drug allergies?')).toEqual([]);
    const named = [{ role: 'user' as const, content: `I saw patient ${ID} today.` }];
    expect(ehrAsks(request([...named, { role: 'user', content: 'her meds?' }])).reads).toEqual([
      { name: 'ehr_medications', arguments: { patient_id: ID } },
    ]);
  });
});

describe('ehrAsks: writes', () => {
  const obs = (code: string, value: number, unit: string) => ({
    name: 'ehr_record_observation',
    arguments: { patient_id: ID, code, value, unit },
  });

  it('records vital signs with their LOINC codes and UCUM units', () => {
    expect(writes(`Record heart rate 72 bpm for patient ${ID}`)).toEqual([
      obs('8867-4', 72, '/min'),
    ]);
    // A blood pressure is one panel with both values (the FHIR R4 blood pressure profile).
    const pressure = (systolic: number, diastolic: number) => ({
      name: 'ehr_record_observation',
      arguments: { patient_id: ID, code: '85354-9', systolic, diastolic, unit: 'mm[Hg]' },
    });
    expect(writes(`Please record blood pressure 120/80 mmHg for patient ${ID}.`)).toEqual([
      pressure(120, 80),
    ]);
    expect(writes(`record systolic 135 mmHg, diastolic 85 for patient ${ID}`)).toEqual([
      pressure(135, 85),
    ]);
    // The body height profile's units are cm and inches: metres are recorded as centimetres.
    expect(writes(`record height 1.72 m for patient ${ID}`)).toEqual([obs('8302-2', 172, 'cm')]);
    expect(writes(`log weight of 80.5 kg for patient ${ID}`)).toEqual([obs('29463-7', 80.5, 'kg')]);
    expect(writes(`record temperature 38.2 °C for patient ${ID}`)).toEqual([
      obs('8310-5', 38.2, 'Cel'),
    ]);
    expect(writes(`record temperature 101.2 F for patient ${ID}`)).toEqual([
      obs('8310-5', 101.2, '[degF]'),
    ]);
    expect(writes(`chart SpO2 97% and respiratory rate 18 for patient ${ID}`)).toEqual([
      obs('9279-1', 18, '/min'),
      obs('59408-5', 97, '%'),
    ]);
    // Without a unit, the vital sign's usual one; the id's digits are no measurement.
    expect(writes(`For patient 77 record pulse 64`)).toEqual([
      {
        ...obs('8867-4', 64, '/min'),
        arguments: { ...obs('8867-4', 64, '/min').arguments, patient_id: '77' },
      },
    ]);
  });

  it('records nothing, and reads nothing instead, when a measurement is unclear', () => {
    for (const q of [
      `record weight 180 lbs for patient ${ID}`,
      `record heart rate for patient ${ID}`,
      `record blood pressure 120 for patient ${ID}`,
      `record blood pressure for patient ${ID}`,
      // One part of a blood pressure alone is no reading.
      `record systolic 135 mmHg for patient ${ID}`,
      `record diastolic 85 for patient ${ID}`,
    ]) {
      expect(asks(q), q).toEqual({ writes: [], reads: [] });
    }
    // A recording verb without a measurement is a read ("chart" of the patient).
    expect(reads(`show the chart summary of patient ${ID}`).map((a) => a.name)).toEqual([
      'ehr_patient_summary',
    ]);
    expect(writes('record heart rate 72 bpm')).toEqual([]);
  });
});

/** What `ehr_record_observation` says it wrote for a blood pressure of 120/80. */
const PANEL_WRITTEN = {
  code: '85354-9',
  systolic: 120,
  diastolic: 80,
  unit: 'mm[Hg]',
  effective: '2026-01-02T03:04:05Z',
};

describe('ehrAnswer', () => {
  const meds = {
    patient_id: ID,
    medications: [
      { id: 'm1', display: 'lisinopril 10 MG Oral Tablet', dosage: '10 mg by mouth once daily' },
      { id: 'm2', display: 'atorvastatin 40 MG Oral Tablet' },
    ],
    stale: false,
    fetched_at: '2026-01-02T03:04:05.000Z',
  };

  it('states medications, allergies and labs as the tool returned them', () => {
    expect(ehrAnswer(answered([{ name: 'ehr_medications', args: {}, result: meds }]))).toBe(
      `Active medications for patient ${ID}: lisinopril 10 MG Oral Tablet (10 mg by mouth once ` +
        'daily); atorvastatin 40 MG Oral Tablet.',
    );
    const allergies = {
      patient_id: ID,
      allergies: [{ substance: 'Penicillin', reactions: ['Hives'], criticality: 'high' }],
      stale: false,
    };
    expect(ehrAnswer(answered([{ name: 'ehr_allergies', args: {}, result: allergies }]))).toBe(
      `Allergies recorded for patient ${ID}: Penicillin (reaction: Hives; criticality high).`,
    );
    const labs = {
      patient_id: ID,
      labs: [
        { code: '2160-0', value: 1.21, unit: 'mg/dL', effective: '2025-12-01T08:00:00Z' },
        { code: '4548-4', value: 7.1, unit: '%', effective: '2025-11-01T08:00:00Z' },
        { code: '2160-0', value: 1.1, unit: 'mg/dL', effective: '2025-06-01T08:00:00Z' },
      ],
      stale: false,
    };
    expect(ehrAnswer(answered([{ name: 'ehr_recent_labs', args: {}, result: labs }]))).toBe(
      `Latest laboratory results for patient ${ID}: creatinine 1.21 mg/dL on 2025-12-01 ` +
        '(earlier: 1.1 mg/dL on 2025-06-01); HbA1c 7.1 % on 2025-11-01.',
    );
    const none = { patient_id: ID, medications: [], stale: false };
    expect(ehrAnswer(answered([{ name: 'ehr_medications', args: {}, result: none }]))).toBe(
      `No active medications are recorded for patient ${ID}.`,
    );
  });

  it('says when the record is the last one fetched, and states errors by their message', () => {
    const stale = { ...meds, stale: true, medications: [] };
    expect(ehrAnswer(answered([{ name: 'ehr_medications', args: {}, result: stale }]))).toBe(
      'The EHR is unreachable; this is the record as fetched at 2026-01-02 03:04 UTC. ' +
        `No active medications are recorded for patient ${ID}.`,
    );
    const refused = {
      error: {
        code: 'TOOL_ERROR',
        message: 'Refused: this patient is not accessible to this user',
      },
    };
    const args = { patient_id: 'other-1' };
    const text = ehrAnswer(answered([{ name: 'ehr_allergies', args, result: refused }]));
    expect(text).toBe('Refused: this patient is not accessible to this user.');
  });

  it('says what was written, or that it already was', () => {
    const written = {
      resource_type: 'Observation',
      id: 'obs-1',
      created: true,
      patient_id: ID,
      outcome: 'created',
      written: { code: '8480-6', value: 120, unit: 'mm[Hg]', effective: '2026-01-02T03:04:05Z' },
    };
    const name = 'ehr_record_observation';
    expect(ehrAnswer(answered([{ name, args: {}, result: written }]))).toBe(
      `Recorded systolic blood pressure 120 mmHg for patient ${ID} at 2026-01-02 03:04 UTC ` +
        '(Observation/obs-1).',
    );
    const existing = { ...written, created: false, outcome: 'existing' };
    expect(ehrAnswer(answered([{ name, args: {}, result: existing }]))).toBe(
      `Systolic blood pressure 120 mmHg for patient ${ID} at 2026-01-02 03:04 UTC was already ` +
        'recorded (Observation/obs-1).',
    );
    const panel = { ...written, written: PANEL_WRITTEN };
    expect(ehrAnswer(answered([{ name, args: {}, result: panel }]))).toBe(
      `Recorded blood pressure 120/80 mmHg for patient ${ID} at 2026-01-02 03:04 UTC ` +
        '(Observation/obs-1).',
    );
  });

  it("summarises a patient's record, the newest of each vital sign", () => {
    const summary = {
      patient: { id: ID, name: 'Ada Costa', gender: 'female', birth_date: '1961-04-02' },
      conditions: [{ id: 'c1', display: 'Hypertensive disorder' }],
      medications: [],
      allergies: [{ substance: 'Peanut' }],
      vitals: [
        { code: '8867-4', value: 64, unit: '/min', effective: '2025-12-01T08:00:00Z' },
        {
          code: '85354-9',
          components: [
            { code: '8480-6', value: 128, unit: 'mm[Hg]' },
            { code: '8462-4', value: 82, unit: 'mm[Hg]' },
          ],
          effective: '2025-12-01T08:00:00Z',
        },
        { code: '8867-4', value: 70, unit: '/min', effective: '2025-06-01T08:00:00Z' },
      ],
      stale: false,
    };
    const text = ehrAnswer(
      answered([{ name: 'ehr_patient_summary', args: { patient_id: ID }, result: summary }]),
    );
    expect(text).toBe(
      `Patient ${ID}: Ada Costa, female, born 1961-04-02. Active conditions: Hypertensive ` +
        'disorder. No active medications are recorded. Allergies: Peanut. Latest vital signs: ' +
        'heart rate 64 /min on 2025-12-01; blood pressure 128/82 mmHg on 2025-12-01.',
    );
  });

  it('answers only after EHR tools', () => {
    expect(ehrAnswer([{ role: 'user', content: 'hello' }])).toBeUndefined();
    const calc = answered([{ name: 'medical_calculator', args: {}, result: { value: 1 } }]);
    expect(ehrAnswer(calc)).toBeUndefined();
  });
});

describe('ExtractiveProvider with the EHR tools', () => {
  const provider = new ExtractiveProvider();
  const collect = async (req: LlmRequest) => {
    const events: LlmEvent[] = [];
    for await (const e of provider.stream(req, { signal: new AbortController().signal })) {
      events.push(e);
    }
    return events;
  };

  it('calls the tools a question asks for, then states their answers', async () => {
    const question = `Record blood pressure 120/80 for patient ${ID}`;
    const events = await collect(request([{ role: 'user', content: question }]));
    expect(events.map((e) => e.type)).toEqual(['tool_call', 'done']);
    expect(events[0]).toMatchObject({
      type: 'tool_call',
      call: {
        name: 'ehr_record_observation',
        arguments: { patient_id: ID, code: '85354-9', systolic: 120, diastolic: 80 },
      },
    });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'tool_calls' });
    const result = {
      resource_type: 'Observation',
      id: 'a',
      created: true,
      patient_id: ID,
      written: PANEL_WRITTEN,
    };
    const messages = answered([{ name: 'ehr_record_observation', args: {}, result }]);
    const answer = await collect(request(messages));
    const text = answer.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
    expect(text).toBe(
      `Recorded blood pressure 120/80 mmHg for patient ${ID} at 2026-01-02 03:04 UTC ` +
        '(Observation/a).',
    );
  });

  it('still computes a calculator request that names no patient', async () => {
    const events = await collect(
      request(
        [{ role: 'user', content: 'BMI for 80 kg and 1.80 m' }],
        [...EHR, tool('medical_calculator')],
      ),
    );
    const call = events.find((e) => e.type === 'tool_call');
    expect(call?.type === 'tool_call' && call.call.name).toBe('medical_calculator');
  });
});
