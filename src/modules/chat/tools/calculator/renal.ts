import { readQuantity, readSex } from './args.js';
import type { Calculator } from './result.js';
import { AGE, CREATININE, CREATININE_UMOL_PER_MG_DL, round, WEIGHT } from './units.js';

/** CKD-EPI 2021 creatinine equation (Inker et al. NEJM 2021), creatinine in mg/dL. */
export function ckdEpi2021(creatinineMgDl: number, age: number, female: boolean): number {
  const kappa = female ? 0.7 : 0.9;
  const alpha = female ? -0.241 : -0.302;
  const ratio = creatinineMgDl / kappa;
  return (
    142 *
    Math.min(ratio, 1) ** alpha *
    Math.max(ratio, 1) ** -1.2 *
    0.9938 ** age *
    (female ? 1.012 : 1)
  );
}

/** KDIGO 2012 GFR categories, read from the rounded value. */
function gfrCategory(gfr: number): string {
  if (gfr >= 90) return 'G1, normal or high';
  if (gfr >= 60) return 'G2, mildly decreased';
  if (gfr >= 45) return 'G3a, mildly to moderately decreased';
  if (gfr >= 30) return 'G3b, moderately to severely decreased';
  if (gfr >= 15) return 'G4, severely decreased';
  return 'G5, kidney failure range';
}

function clearanceBand(clearance: number): string {
  if (clearance >= 90) return 'not reduced';
  if (clearance >= 60) return 'mildly reduced';
  if (clearance >= 30) return 'moderately reduced';
  if (clearance >= 15) return 'severely reduced';
  return 'very severely reduced';
}

function creatinineInputs(mgDl: number): Record<string, number> {
  return {
    creatinine_mg_dl: round(mgDl, 2),
    creatinine_umol_l: round(mgDl * CREATININE_UMOL_PER_MG_DL, 1),
  };
}

export const egfrCalculator: Calculator = {
  name: 'egfr',
  fields: ['age', 'sex', 'creatinine', 'creatinine_unit'],
  compute(args) {
    const creatinine = readQuantity(args, CREATININE);
    const age = readQuantity(args, AGE);
    const sex = readSex(args);
    const value = round(ckdEpi2021(creatinine, age, sex === 'female'), 0);
    return {
      calculator: 'egfr',
      value,
      unit: 'mL/min/1.73m2',
      interpretation: `GFR category ${gfrCategory(value)}`,
      inputs: { age_years: age, sex, ...creatinineInputs(creatinine) },
      formula:
        'eGFR = 142 x min(Scr/k, 1)^a x max(Scr/k, 1)^-1.200 x 0.9938^age x 1.012 [female]; ' +
        'Scr in mg/dL; k = 0.7 (female) or 0.9 (male); a = -0.241 (female) or -0.302 (male)',
      reference:
        'Inker LA et al. New creatinine- and cystatin C-based equations to estimate GFR without ' +
        'race. N Engl J Med 2021;385:1737-49 (CKD-EPI 2021); categories: KDIGO 2012',
      notes: [
        'Adults only. Unreliable when creatinine is not steady (acute kidney injury) or muscle mass ' +
          'is unusual; CKD also needs kidney damage or a GFR below 60 for more than 3 months.',
      ],
    };
  },
};

export const cockcroftGaultCalculator: Calculator = {
  name: 'cockcroft_gault',
  fields: ['age', 'sex', 'weight', 'weight_unit', 'creatinine', 'creatinine_unit'],
  compute(args) {
    const age = readQuantity(args, AGE);
    const sex = readSex(args);
    const weightKg = readQuantity(args, WEIGHT);
    const creatinine = readQuantity(args, CREATININE);
    const clearance =
      (((140 - age) * weightKg) / (72 * creatinine)) * (sex === 'female' ? 0.85 : 1);
    const value = round(clearance, 0);
    return {
      calculator: 'cockcroft_gault',
      value,
      unit: 'mL/min',
      interpretation: clearanceBand(value),
      inputs: {
        age_years: age,
        sex,
        weight_kg: round(weightKg, 2),
        ...creatinineInputs(creatinine),
      },
      formula: 'CrCl = (140 - age) x weight (kg) / (72 x Scr (mg/dL)) x 0.85 [female]',
      reference:
        'Cockcroft DW, Gault MH. Prediction of creatinine clearance from serum creatinine. ' +
        'Nephron 1976;16:31-41 (the 0.85 female factor was proposed there)',
      notes: [
        'Uses the weight given; in obesity an ideal or adjusted weight is often preferred. Not ' +
          'indexed to body surface area. For drug dosing use the product’s own thresholds.',
      ],
    };
  },
};
