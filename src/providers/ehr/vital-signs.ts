/**
 * The FHIR R4 vital-signs profiles (http://hl7.org/fhir/R4/observation-vitalsigns.html) the
 * provider writes to: an Observation whose code is one of these is a vital sign, and the written
 * resource conforms to its profile: `category` vital-signs (observation-category system), the
 * profile's LOINC coding, a UCUM quantity in one of the profile's units (blood pressure: no value,
 * a systolic and a diastolic component in mm[Hg]), `subject`, `effectiveDateTime` and `status`.
 */

export const LOINC = 'http://loinc.org';
export const UCUM = 'http://unitsofmeasure.org';
export const CATEGORY_SYSTEM = 'http://terminology.hl7.org/CodeSystem/observation-category';

export const BLOOD_PRESSURE = '85354-9';
export const SYSTOLIC = '8480-6';
export const DIASTOLIC = '8462-4';

export interface VitalSignProfile {
  /** The LOINC code the profile requires. */
  code: string;
  display: string;
  /** The profile's canonical URL (`meta.profile` of the written resource). */
  profile: string;
  /** The UCUM codes the profile allows (of the value; of each component for blood pressure). */
  units: readonly string[];
  /** More specific LOINC codes written alongside the profile's (pulse oximetry's SpO2). */
  alsoCodes?: readonly { code: string; display: string }[];
  /** Blood pressure: the components it is written with, no value of its own. */
  components?: readonly { code: string; display: string }[];
}

const base = 'http://hl7.org/fhir/StructureDefinition/';

export const VITAL_SIGN_PROFILES: readonly VitalSignProfile[] = [
  { code: '8867-4', display: 'Heart rate', profile: `${base}heartrate`, units: ['/min'] },
  { code: '9279-1', display: 'Respiratory rate', profile: `${base}resprate`, units: ['/min'] },
  {
    code: '2708-6',
    display: 'Oxygen saturation in Arterial blood',
    profile: `${base}oxygensat`,
    units: ['%'],
    alsoCodes: [
      { code: '59408-5', display: 'Oxygen saturation in Arterial blood by Pulse oximetry' },
    ],
  },
  {
    code: '8310-5',
    display: 'Body temperature',
    profile: `${base}bodytemp`,
    units: ['Cel', '[degF]'],
  },
  { code: '8302-2', display: 'Body height', profile: `${base}bodyheight`, units: ['cm', '[in_i]'] },
  {
    code: '9843-4',
    display: 'Head Occipital-frontal circumference',
    profile: `${base}headcircum`,
    units: ['cm', '[in_i]'],
  },
  {
    code: '29463-7',
    display: 'Body weight',
    profile: `${base}bodyweight`,
    units: ['kg', 'g', '[lb_av]'],
  },
  {
    code: '39156-5',
    display: 'Body mass index (BMI) [Ratio]',
    profile: `${base}bmi`,
    units: ['kg/m2'],
  },
  {
    code: BLOOD_PRESSURE,
    display: 'Blood pressure panel with all children optional',
    profile: `${base}bp`,
    units: ['mm[Hg]'],
    components: [
      { code: SYSTOLIC, display: 'Systolic blood pressure' },
      { code: DIASTOLIC, display: 'Diastolic blood pressure' },
    ],
  },
];

const byCode = new Map<string, VitalSignProfile>(
  VITAL_SIGN_PROFILES.flatMap((p) => [
    [p.code, p] as const,
    ...(p.alsoCodes ?? []).map((c) => [c.code, p] as const),
  ]),
);

/** The vital-signs profile a LOINC code is written under, if it is one. */
export function vitalSignProfile(system: string, code: string): VitalSignProfile | undefined {
  return system === LOINC ? byCode.get(code) : undefined;
}
