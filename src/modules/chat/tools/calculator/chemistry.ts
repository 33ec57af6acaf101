import { ToolError } from '../types.js';
import { isGiven, readQuantity, unitOf } from './args.js';
import type { Calculator } from './result.js';
import {
  ALBUMIN,
  BICARBONATE,
  CALCIUM,
  CALCIUM_MG_DL_PER_MMOL_L,
  CHLORIDE,
  POTASSIUM,
  round,
  SODIUM,
} from './units.js';

/** A gap outside this range comes from mistyped electrolytes, not from a patient. */
const GAP_PLAUSIBLE = { min: -10, max: 70 };

/** The traditional interval, 12 ± 4 mmol/L; with potassium it is about 4 higher. */
function gapBand(gap: number, withPotassium: boolean): string {
  const low = withPotassium ? 12 : 8;
  const high = withPotassium ? 20 : 16;
  if (gap > high) return 'raised (high anion gap)';
  if (gap < low) return 'below the traditional reference interval';
  return 'within the traditional reference interval';
}

export const anionGapCalculator: Calculator = {
  name: 'anion_gap',
  fields: ['sodium', 'chloride', 'bicarbonate', 'potassium'],
  compute(args) {
    const sodium = readQuantity(args, SODIUM);
    const chloride = readQuantity(args, CHLORIDE);
    const bicarbonate = readQuantity(args, BICARBONATE);
    const potassium = isGiven(args, 'potassium') ? readQuantity(args, POTASSIUM) : null;
    const gap = sodium + (potassium ?? 0) - chloride - bicarbonate;
    if (gap < GAP_PLAUSIBLE.min || gap > GAP_PLAUSIBLE.max) {
      throw new ToolError('sodium, chloride and bicarbonate are implausible together: check them');
    }
    const value = round(gap, 1);
    return {
      calculator: 'anion_gap',
      value,
      unit: 'mmol/L',
      interpretation: gapBand(value, potassium !== null),
      inputs: {
        sodium_mmol_l: sodium,
        potassium_mmol_l: potassium,
        chloride_mmol_l: chloride,
        bicarbonate_mmol_l: bicarbonate,
      },
      formula: potassium === null ? 'AG = Na - (Cl + HCO3)' : 'AG = (Na + K) - (Cl + HCO3)',
      reference:
        'Emmett M, Narins RG. Clinical use of the anion gap. Medicine 1977;56:38-54 (12 +/- 4 ' +
        'mmol/L without potassium); Kraut JA, Madias NE. Serum anion gap. Clin J Am Soc Nephrol 2007',
      notes: [
        'Reference intervals depend on the analyser (ion-selective electrodes often give about ' +
          '3-11 mmol/L): compare with the laboratory’s own. Low albumin lowers the gap by about ' +
          '2.5 mmol/L per 10 g/L below 40 g/L and can hide a raised gap.',
      ],
    };
  },
};

function calciumBand(value: number, mgDl: boolean): string {
  const [low, high] = mgDl ? [8.5, 10.5] : [2.2, 2.6];
  if (value < low) return 'low (hypocalcaemia)';
  if (value > high) return 'high (hypercalcaemia)';
  return 'within the usual reference range';
}

const PAYNE_REFERENCE =
  'Payne RB, Little AJ, Williams RB, Milner JR. Interpretation of serum calcium in patients with ' +
  'abnormal serum proteins. BMJ 1973;4:643-6. The paper printed calcium - albumin + 4.0 (mg/100 ' +
  'mL, g/100 mL); the 0.8 mg/dL per g/dL (0.02 mmol/L per g/L) slope used here is the form in ' +
  'common clinical use';

export const correctedCalciumCalculator: Calculator = {
  name: 'corrected_calcium',
  fields: ['calcium', 'calcium_unit', 'albumin', 'albumin_unit'],
  compute(args) {
    const calciumMmol = readQuantity(args, CALCIUM);
    const albuminGl = readQuantity(args, ALBUMIN);
    const mgDl = unitOf(args, CALCIUM) === 'mg/dL';
    const calciumMgDl = calciumMmol * CALCIUM_MG_DL_PER_MMOL_L;
    const correctedMgDl = calciumMgDl + 0.8 * (4 - albuminGl / 10);
    const correctedMmol = calciumMmol + 0.02 * (40 - albuminGl);
    const value = mgDl ? round(correctedMgDl, 1) : round(correctedMmol, 2);
    return {
      calculator: 'corrected_calcium',
      value,
      unit: mgDl ? 'mg/dL' : 'mmol/L',
      interpretation: calciumBand(value, mgDl),
      alternative: mgDl
        ? { value: round(correctedMgDl / CALCIUM_MG_DL_PER_MMOL_L, 2), unit: 'mmol/L' }
        : { value: round(correctedMmol * CALCIUM_MG_DL_PER_MMOL_L, 1), unit: 'mg/dL' },
      inputs: { calcium_mmol_l: round(calciumMmol, 3), albumin_g_l: round(albuminGl, 1) },
      formula: mgDl
        ? 'corrected Ca (mg/dL) = Ca + 0.8 x (4.0 - albumin (g/dL))'
        : 'corrected Ca (mmol/L) = Ca + 0.02 x (40 - albumin (g/L))',
      reference: PAYNE_REFERENCE,
      notes: [
        'An approximation, least reliable in critical illness, kidney failure and acid-base ' +
          'disturbance: measure ionised calcium when it matters.',
      ],
    };
  },
};
