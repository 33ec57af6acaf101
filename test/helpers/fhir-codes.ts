import type { CodeableConcept } from '@medplum/fhirtypes';

/** Code systems, code tables and the PRNG behind the seeded FHIR test data. */

export const LOINC = 'http://loinc.org';
export const SNOMED = 'http://snomed.info/sct';
export const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm';
export const UCUM = 'http://unitsofmeasure.org';
export const MRN_SYSTEM = 'http://hospital.example.org/mrn';
export const CATEGORY_SYSTEM = 'http://terminology.hl7.org/CodeSystem/observation-category';
export const DAY_MS = 86_400_000;

/** mulberry32: a small deterministic PRNG, enough for test data. */
export class Prng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  real(min: number, max: number, decimals: number): number {
    return Number((min + this.next() * (max - min)).toFixed(decimals));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  /** Picks `n` distinct items. */
  sample<T>(items: readonly T[], n: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    while (out.length < n && pool.length > 0)
      out.push(pool.splice(this.int(0, pool.length - 1), 1)[0] as T);
    return out;
  }
  hex(length: number): string {
    let s = '';
    while (s.length < length) s += this.int(0, 15).toString(16);
    return s;
  }
}

export interface Coded {
  code: string;
  display: string;
}
export const cc = (system: string, c: Coded): CodeableConcept => ({
  coding: [{ system, code: c.code, display: c.display }],
  text: c.display,
});

export const GIVEN = [
  'Ada',
  'Bram',
  'Chiara',
  'Dmitri',
  'Elif',
  'Farid',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Keiko',
];
export const FAMILY = [
  'Alvarez',
  'Bakker',
  'Costa',
  'Dubois',
  'Eriksen',
  'Fischer',
  'Garcia',
  'Haddad',
  'Ivanova',
];
export const CONDITIONS: Coded[] = [
  { code: '44054006', display: 'Diabetes mellitus type 2' },
  { code: '38341003', display: 'Hypertensive disorder' },
  { code: '709044004', display: 'Chronic kidney disease' },
  { code: '195967001', display: 'Asthma' },
  { code: '55822004', display: 'Hyperlipidemia' },
  { code: '49436004', display: 'Atrial fibrillation' },
];
export const MEDICATIONS: (Coded & { dose: string })[] = [
  {
    code: '860975',
    display: 'metformin hydrochloride 500 MG Oral Tablet',
    dose: '500 mg by mouth twice daily',
  },
  { code: '314076', display: 'lisinopril 10 MG Oral Tablet', dose: '10 mg by mouth once daily' },
  { code: '617312', display: 'atorvastatin 40 MG Oral Tablet', dose: '40 mg by mouth at bedtime' },
  { code: '197361', display: 'amlodipine 5 MG Oral Tablet', dose: '5 mg by mouth once daily' },
  { code: '855332', display: 'warfarin sodium 5 MG Oral Tablet', dose: '5 mg by mouth once daily' },
];
export const ALLERGENS: (Coded & { reaction: Coded })[] = [
  { code: '764146007', display: 'Penicillin', reaction: { code: '247472004', display: 'Hives' } },
  { code: '91935009', display: 'Peanut', reaction: { code: '39579001', display: 'Anaphylaxis' } },
  {
    code: '387207008',
    display: 'Ibuprofen',
    reaction: { code: '271807003', display: 'Skin rash' },
  },
];

/** Laboratory tests: LOINC code, display, UCUM unit, plausible range, decimals. */
export const LABS = [
  {
    code: '2160-0',
    display: 'Creatinine [Mass/volume] in Serum or Plasma',
    unit: 'mg/dL',
    min: 0.6,
    max: 2.4,
    dp: 2,
  },
  {
    code: '4548-4',
    display: 'Hemoglobin A1c/Hemoglobin.total in Blood',
    unit: '%',
    min: 5.0,
    max: 9.5,
    dp: 1,
  },
  {
    code: '2823-3',
    display: 'Potassium [Moles/volume] in Serum or Plasma',
    unit: 'mmol/L',
    min: 3.3,
    max: 5.6,
    dp: 1,
  },
  {
    code: '13457-7',
    display: 'Cholesterol in LDL [Mass/volume] in Serum or Plasma by calculation',
    unit: 'mg/dL',
    min: 60,
    max: 190,
    dp: 0,
  },
] as const;
