import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { ToolError } from '../types.js';
import { KNOWN_FIELDS } from './calculators.js';
import { describeCalculation, medicalCalculatorTool, parseCalculatorRequest } from './index.js';
import { CALCULATOR_NAMES } from './result.js';

const context = { userId: 'user-1', signal: new AbortController().signal };
const run = (args: unknown) => medicalCalculatorTool.run(args as Record<string, unknown>, context);

describe('the medical_calculator definition', () => {
  const { definition } = medicalCalculatorTool;

  it('is named medical_calculator and describes every calculator', () => {
    expect(definition.name).toBe('medical_calculator');
    for (const name of CALCULATOR_NAMES) expect(definition.description).toContain(name);
  });

  it('is a strict draft 2020-12 object schema listing exactly the arguments the code reads', () => {
    const ajv = new Ajv2020({ strict: true });
    const validate = ajv.compile(definition.parameters);
    expect(definition.parameters).toMatchObject({ type: 'object', required: ['calculator'] });
    expect(Object.keys(definition.parameters.properties as object).sort()).toEqual(
      [...KNOWN_FIELDS].sort(),
    );
    expect(
      validate({
        calculator: 'bmi',
        weight: 80,
        weight_unit: 'kg',
        height: 180,
        height_unit: 'cm',
      }),
    ).toBe(true);
    expect(validate({ calculator: 'bmi', extra: 1 })).toBe(false);
    expect(validate({ calculator: 'nope' })).toBe(false);
  });
});

describe('medicalCalculatorTool.run', () => {
  it('returns the result as a JSON object', async () => {
    const result = await run({ calculator: 'map', systolic: 120, diastolic: 80 });
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
    expect(result).toMatchObject({ calculator: 'map', value: 93, unit: 'mmHg' });
    expect(Object.keys(result)).toEqual(
      expect.arrayContaining(['value', 'unit', 'interpretation', 'inputs', 'formula', 'reference']),
    );
  });

  it.each([
    ['no calculator', {}, 'calculator is required'],
    ['an unknown calculator', { calculator: 'apgar' }, 'calculator must be one of: bmi, bsa, egfr'],
    ['a calculator name of the wrong type', { calculator: ['bmi'] }, 'calculator must be one of'],
    ['a prototype key as calculator', { calculator: 'constructor' }, 'calculator must be one of'],
    ['arguments that are an array', ['bmi'], 'arguments must be a JSON object'],
    ['arguments that are null', null, 'arguments must be a JSON object'],
    [
      'an unknown argument',
      { calculator: 'map', systolic: 120, diastolic: 80, note: 'x' },
      'unknown argument "note"',
    ],
    [
      'a __proto__ key',
      JSON.parse('{"calculator":"map","__proto__":{"x":1}}'),
      'unknown argument "__proto__"',
    ],
  ])('rejects %s with a ToolError', async (_name, args, message) => {
    const refusal = run(args);
    await expect(refusal).rejects.toBeInstanceOf(ToolError);
    await expect(refusal).rejects.toThrow(message);
  });

  it('shortens an absurdly long unknown argument name in its message', async () => {
    const name = 'x'.repeat(5000);
    const error = await run({ calculator: 'map', [name]: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).message.length).toBeLessThan(80);
  });

  it('accepts null for arguments another calculator takes (some models send every field)', async () => {
    const result = await run({
      calculator: 'map',
      systolic: 120,
      diastolic: 80,
      weight: null,
      sex: null,
    });
    expect(result.value).toBe(93);
  });
});

describe('describeCalculation', () => {
  it('states a measurement with its unit and category', async () => {
    const result = await run({
      calculator: 'bmi',
      weight: 80,
      weight_unit: 'kg',
      height: 1.8,
      height_unit: 'm',
    });
    expect(describeCalculation(result)).toBe('The BMI is 24.7 kg/m² (normal weight).');
  });

  it('keeps the reported decimals (26.0, 2.00, 2.30)', async () => {
    const bmi = await run({
      calculator: 'bmi',
      weight: 176,
      weight_unit: 'lb',
      height: 69,
      height_unit: 'in',
    });
    expect(describeCalculation(bmi)).toBe('The BMI is 26.0 kg/m² (overweight).');
    const bsa = await run({
      calculator: 'bsa',
      weight: 80,
      weight_unit: 'kg',
      height: 180,
      height_unit: 'cm',
    });
    expect(describeCalculation(bsa)).toMatch(/^The body surface area \(Mosteller\) is 2\.00 m²/);
    const calcium = await run({
      calculator: 'corrected_calcium',
      calcium: 8,
      calcium_unit: 'mg/dL',
      albumin: 2.5,
      albumin_unit: 'g/dL',
    });
    expect(describeCalculation(calcium)).toBe(
      'The albumin-corrected calcium is 9.2 mg/dL, or 2.30 mmol/L (within the usual reference range).',
    );
  });

  it('names the eGFR category', async () => {
    const result = await run({
      calculator: 'egfr',
      age: 60,
      sex: 'female',
      creatinine: 1.2,
      creatinine_unit: 'mg/dL',
    });
    expect(describeCalculation(result)).toBe(
      'The eGFR (CKD-EPI 2021) is 52 mL/min/1.73 m² (GFR category G3a, mildly to moderately decreased).',
    );
  });

  it('adds the criteria that counted to a score, in a second sentence', async () => {
    const result = await run({
      calculator: 'cha2ds2_vasc',
      age: 76,
      sex: 'female',
      hypertension: true,
    });
    expect(describeCalculation(result)).toBe(
      'The CHA₂DS₂-VASc score is 4 points (high stroke risk: oral anticoagulation is recommended). ' +
        'Counted: hypertension (+1); age 75 or over (+2); female sex (+1).',
    );
    const wells = await run({
      calculator: 'wells_dvt',
      alternative_diagnosis_likely: true,
      pitting_edema: true,
    });
    expect(describeCalculation(wells)).toMatch(
      /^The Wells DVT score is -1 point \(DVT unlikely; .*\(-2\)\.$/,
    );
    const none = await run({ calculator: 'wells_dvt' });
    expect(describeCalculation(none)).toMatch(/is 0 points .* No criteria counted\.$/);
  });

  it('gives a neutral sentence for anything that is not a result', () => {
    for (const junk of [
      {},
      { calculator: 'bmi' },
      { calculator: 'x', value: 1 },
      { calculator: 'bmi', value: '24' },
    ]) {
      expect(describeCalculation(junk)).toBe('The calculation did not produce a result.');
    }
  });

  it('describes what the parser and the tool produce together', async () => {
    const args = parseCalculatorRequest('MAP for BP 120/80');
    expect(args).not.toBeNull();
    expect(describeCalculation(await run(args))).toBe(
      'The mean arterial pressure is 93 mmHg (within the usual adult range).',
    );
  });
});
