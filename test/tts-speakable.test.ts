import { describe, expect, it } from 'vitest';
import { speakable, splitForSpeech } from '../src/providers/tts/speakable.js';
import { numberWords, spokenWords } from '../src/providers/tts/spoken-words.js';

const cases: [string, string][] = [
  // citation markers
  ['Start metformin at 500 mg daily [1].', 'Start metformin at 500 milligrams daily.'],
  ['Review yearly [1, 2].', 'Review yearly.'],
  ['Review yearly [1][2].', 'Review yearly.'],
  ['Review yearly [1-3] and refer [12].', 'Review yearly and refer.'],
  ['Avoid with ARBs (see [12]).', 'Avoid with A R Bs (see).'],
  ['Nothing here [1]', 'Nothing here'],
  ['Keep [sic] and [a] brackets with words.', 'Keep [sic] and [a] brackets with words.'],
  // units
  ['Glucose 126 mg/dL.', 'Glucose 126 milligrams per decilitre.'],
  ['Glucose 7 mmol/L.', 'Glucose 7 millimoles per litre.'],
  ['HbA1c 48 mmol/mol.', 'H B A one C 48 millimoles per mole.'],
  ['BP 140/90 mmHg.', 'B P 140 over 90 millimetres of mercury.'],
  ['BP 120/80.', 'B P 120 over 80.'],
  ['Measure in mmHg.', 'Measure in millimetres of mercury.'],
  ['BMI 30 kg/m2.', 'B M I 30 kilograms per square metre.'],
  ['BMI 30 kg/m².', 'B M I 30 kilograms per square metre.'],
  ['eGFR 45 mL/min/1.73m2.', 'E G F R 45 millilitres per minute per 1 point 7 3 square metres.'],
  ['eGFR 45 mL/min/1.73 m².', 'E G F R 45 millilitres per minute per 1 point 7 3 square metres.'],
  ['Fever 38°C.', 'Fever 38 degrees Celsius.'],
  ['Fever 37.5 °C.', 'Fever 37 point 5 degrees Celsius.'],
  ['HbA1c above 7%.', 'H B A one C above 7 percent.'],
  ['Give 50 µg.', 'Give 50 micrograms.'],
  ['Give 50 μg.', 'Give 50 micrograms.'],
  ['Give 50 mcg.', 'Give 50 micrograms.'],
  ['Give 1 mg.', 'Give 1 milligram.'],
  ['Give 1 g then 2 g.', 'Give 1 gram then 2 grams.'],
  ['Max 4 g/day.', 'Max 4 grams per day.'],
  ['Infuse 500 mL over 2 h.', 'Infuse 500 millilitres over 2 hours.'],
  ['Creatinine 90 µmol/L.', 'Creatinine 90 micromoles per litre.'],
  ['Heart rate 110 bpm.', 'Heart rate 110 beats per minute.'],
  ['Insulin 0.1 units/kg.', 'Insulin 0 point 1 units per kilogram.'],
  ['Ask your GP.', 'Ask your G P.'],
  // acronyms
  ['ACE inhibitors in CKD.', 'A C E inhibitors in C K D.'],
  ['COPD and DVT.', 'C O P D and D V T.'],
  ['Check eGFR and HbA1c.', 'Check E G F R and H B A one C.'],
  ['Follow NICE guidance.', 'Follow nice guidance.'],
  ['NSAIDs raise BP.', 'en-saids raise B P.'],
  ['GLP-1 and SGLT2 inhibitors.', 'G L P 1 and S G L T 2 inhibitors.'],
  ['An ECG and an MRI.', 'An E C G and an M R I.'],
  ['SpO2 below 92%.', 'S P O 2 below 92 percent.'],
  ['Patients with COVID-19.', 'Patients with covid 19.'],
  ['Check LDL/HDL.', 'Check L D L or H D L.'],
  ['Unknown XYZ spelled.', 'Unknown X Y Z spelled.'],
  ['IMPORTANT words stay.', 'IMPORTANT words stay.'],
  // numbers, ranges, comparators
  ['Take 1.5 tablets.', 'Take 1 point 5 tablets.'],
  ['Take 0.25 mg.', 'Take 0 point 2 5 milligrams.'],
  ['Give 5-10 mg.', 'Give 5 to 10 milligrams.'],
  ['Give 5–10 mg.', 'Give 5 to 10 milligrams.'],
  ['Give 5 to 10 mg.', 'Give 5 to 10 milligrams.'],
  ['Potassium 5.5-6.0 mmol/L.', 'Potassium 5 point 5 to 6 point 0 millimoles per litre.'],
  ['Age ≥65 years.', 'Age at least 65 years.'],
  ['Age >= 65 years.', 'Age at least 65 years.'],
  ['Age ≤ 16.', 'Age at most 16.'],
  ['eGFR <30.', 'E G F R below 30.'],
  ['eGFR > 60.', 'E G F R above 60.'],
  ['Repeat x2.', 'Repeat times 2.'],
  ['Take 2x daily.', 'Take 2 times daily.'],
  ['Dose ±10%.', 'Dose plus or minus 10 percent.'],
  ['About ~5 mg.', 'About about 5 milligrams.'],
  ['10,000 units.', '10000 units.'],
  ['Born 12/10/2024.', 'Born 12/10/2024.'],
  // abbreviations and markup
  ['Paracetamol 1 g qds prn.', 'Paracetamol 1 gram four times daily as needed.'],
  ['Metformin bd with food.', 'Metformin twice daily with food.'],
  ['Statins, e.g. atorvastatin.', 'Statins, for example atorvastatin.'],
  ['Use **bold** and _italic_.', 'Use bold and italic.'],
  ['See [the guideline](https://x.example/a) now.', 'See the guideline now.'],
  ['See https://www.nice.org.uk/guidance/ng28 for details.', 'See a link for details.'],
  ['- a bullet', 'a bullet'],
  ['Salt & water.', 'Salt and water.'],
  ['  spaced   out  .', 'spaced out.'],
  ['', ''],
  ['   ', ''],
  ['[1]', ''],
];

describe('speakable', () => {
  it.each(cases)('%j -> %j', (input, expected) => {
    expect(speakable(input)).toBe(expected);
  });

  it('applies English rules to English tags only', () => {
    expect(speakable('Check BP 140/90 mmHg [1].', 'en-GB')).toBe(
      'Check B P 140 over 90 millimetres of mercury.',
    );
    expect(speakable('Der Blutdruck 140/90 mmHg [1].', 'de-DE')).toBe('Der Blutdruck 140/90 mmHg.');
  });
});

describe('splitForSpeech', () => {
  it('keeps short text whole and drops text with nothing to say', () => {
    expect(splitForSpeech('Hello there.', 100)).toEqual(['Hello there.']);
    expect(splitForSpeech('  ... , ', 100)).toEqual([]);
  });

  it('cuts long text at clause ends, then at spaces, within the limit', () => {
    const text = `${'word '.repeat(30)}end. ${'more, '.repeat(40)}last`;
    const pieces = splitForSpeech(text, 80);
    expect(pieces.every((p) => p.length <= 80)).toBe(true);
    expect(pieces.join(' ').replace(/\s+/g, ' ')).toBe(text.replace(/\s+/g, ' ').trim());
  });

  it('cuts text without spaces hard', () => {
    const pieces = splitForSpeech('a'.repeat(250), 100);
    expect(pieces.map((p) => p.length)).toEqual([100, 100, 50]);
  });
});

describe('spokenWords', () => {
  // Each expectation is what `flite -pw` prints for the sentence's speakable form.
  it.each([
    [
      'Start metformin at 500 mg once daily [1].',
      'start metformin at five hundred milligrams once daily',
    ],
    [
      'Do not start metformin when the eGFR is below 30.',
      'do not start metformin when the e g f r is below thirty',
    ],
    ['HbA1c 48 mmol/mol.', 'h b a one c forty eight millimoles per mole'],
    ['BP 140/90 mmHg.', 'b p one hundred forty over ninety millimetres of mercury'],
    ['Take 0.25 mg.', 'take zero point two five milligrams'],
    ['GLP-1 and SGLT2 inhibitors.', 'g l p one and s g l t two inhibitors'],
    ['NSAIDs raise BP.', 'en saids raise b p'],
    ['Patients with COVID-19.', 'patients with covid nineteen'],
    ['[1]', ''],
  ])('%j is said as %j', (text, words) => {
    expect(spokenWords(text).join(' ').toLowerCase()).toBe(words);
  });

  it.each([
    ['0', 'zero'],
    ['07', 'zero seven'],
    ['15', 'fifteen'],
    ['101', 'one hundred one'],
    ['126', 'one hundred twenty six'],
    ['1050', 'one thousand fifty'],
    ['1500', 'one thousand five hundred'],
    ['1800', 'eighteen hundred'],
    ['1909', 'nineteen oh nine'],
    ['1999', 'nineteen ninety nine'],
    ['2001', 'two thousand one'],
    ['2010', 'twenty ten'],
    ['2110', 'twenty one ten'],
    ['3500', 'three thousand five hundred'],
    ['10001', 'ten thousand one'],
    ['1234567', 'one million two hundred thirty four thousand five hundred sixty seven'],
  ])('reads %s as Flite does: %s', (digits, words) => {
    expect(numberWords(digits).join(' ')).toBe(words);
  });

  it('counts a number as one word in a language whose numbers it does not read', () => {
    expect(spokenWords('Geben Sie 500 mg.', 'de-DE')).toEqual(['Geben', 'Sie', '500', 'mg']);
  });
});
