import {
  buildAnionGap,
  buildBody,
  buildCorrectedCalcium,
  buildCreatinineRequest,
  buildMap,
  type Built,
} from './parse-measures.js';
import { buildCha2ds2Vasc, buildCurb65, buildHasBled, buildWellsDvt } from './parse-scores.js';
import { normaliseText } from './parse-text.js';
import type { CalculatorName } from './result.js';

/** Longer texts are documents or conversations, not a calculator request. */
const MAX_REQUEST_LENGTH = 1000;

const DETECTORS: readonly (readonly [CalculatorName, RegExp])[] = [
  ['bmi', /(?<![a-z])(?:bmi|body mass index)(?![a-z])/],
  ['bsa', /(?<![a-z])(?:bsa|body surface area)(?![a-z])/],
  ['egfr', /(?<![a-z])(?:e?gfr|ckd-?epi|glomerular filtration rate)(?![a-z])/],
  ['cockcroft_gault', /cockcroft|creatinine clearance|(?<![a-z])crcl(?![a-z])/],
  ['map', /(?<![a-z])(?:map|mean arterial (?:blood )?pressure)(?![a-z])/],
  ['anion_gap', /anion gap/],
  [
    'corrected_calcium',
    /(?:corrected|adjusted) (?:total |serum )?calcium|calcium (?:corrected|adjusted|correction)/,
  ],
  ['cha2ds2_vasc', /cha2?ds2?-? ?vasc/],
  ['has_bled', /has-? ?bled/],
  ['curb_65', /(?<![a-z])curb-? ?65(?![0-9])/],
  ['wells_dvt', /(?<![a-z])wells(?![a-z])/],
];

/** Score names with digits or criterion-like words, replaced before looking for findings. */
const SCORE_NAMES = /cha2?ds2?-? ?vasc|has-? ?bled|curb-? ?65|ckd-?epi(?: ?20\d\d)?/g;

/** Wells here is the DVT score; the Wells PE score is not offered. */
const PULMONARY_EMBOLISM = /(?<![a-z])(?:pe|pulmonary embol)/;

const BUILDERS: Readonly<Record<CalculatorName, (text: string) => Built>> = {
  bmi: buildBody,
  bsa: buildBody,
  egfr: (text) => buildCreatinineRequest('egfr', text),
  cockcroft_gault: (text) => buildCreatinineRequest('cockcroft_gault', text),
  map: buildMap,
  anion_gap: buildAnionGap,
  corrected_calcium: buildCorrectedCalcium,
  cha2ds2_vasc: buildCha2ds2Vasc,
  has_bled: buildHasBled,
  curb_65: buildCurb65,
  wells_dvt: buildWellsDvt,
};

function detect(text: string): CalculatorName | null {
  const names = DETECTORS.filter(([, pattern]) => pattern.test(text)).map(([name]) => name);
  if (names.length !== 1 || names[0] === undefined) return null;
  if (names[0] === 'wells_dvt' && PULMONARY_EMBOLISM.test(text)) return null;
  return names[0];
}

/**
 * The `medical_calculator` arguments a plain request asks for ("BMI for 80 kg and 1.80 m",
 * "CURB-65 for a 70 year old with confusion, urea 8 mmol/L, RR 32, BP 85/50"), or null when the
 * text is no such request: no calculator named, more than one, or a question about a calculator
 * rather than a calculation ("what is BMI?"). Measurement calculators need every number they use;
 * scores need a patient described or findings listed. Criteria not mentioned count as absent.
 */
export function parseCalculatorRequest(text: string): Record<string, unknown> | null {
  if (typeof text !== 'string' || text.length > MAX_REQUEST_LENGTH) return null;
  const normalised = normaliseText(text);
  const name = detect(normalised);
  if (name === null) return null;
  const args = BUILDERS[name](normalised.replace(SCORE_NAMES, ' calc '));
  return args === null ? null : { calculator: name, ...args };
}
