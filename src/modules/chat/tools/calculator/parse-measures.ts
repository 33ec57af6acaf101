import {
  findAge,
  findHeight,
  findPressures,
  findSex,
  findWeight,
  labelled,
  unitFor,
} from './parse-text.js';

/** Arguments found (without `calculator`), or null when the request is incomplete. */
export type Built = Record<string, unknown> | null;

const MASS_UNITS = String.raw`mg\/dl|umol\/l|mmol\/l`;

export function buildBody(text: string): Built {
  const weight = findWeight(text);
  const height = findHeight(text);
  if (weight === undefined || height === undefined) return null;
  return {
    weight: weight.value,
    weight_unit: weight.unit,
    height: height.value,
    height_unit: height.unit,
  };
}

/**
 * Creatinine with its unit; without one, values up to 15 read as mg/dL and from 30 on as µmol/L
 * (no adult has 30 mg/dL or 15 µmol/L); in between the unit stays unknown.
 */
function findCreatinine(text: string): { creatinine: number; creatinine_unit: string } | null {
  const measured = labelled(
    text,
    String.raw`(?:serum |plasma )?(?:creatinine|creat|s?cr)`,
    MASS_UNITS,
  );
  if (measured === undefined) return null;
  const unit = unitFor(measured, 'mg/dL', 'umol/L', [15, 30]);
  if (unit !== 'mg/dL' && unit !== 'umol/L') return null;
  return { creatinine: measured.value, creatinine_unit: unit };
}

export function buildCreatinineRequest(name: 'egfr' | 'cockcroft_gault', text: string): Built {
  const age = findAge(text);
  const sex = findSex(text);
  const creatinine = findCreatinine(text);
  if (age === undefined || sex === undefined || creatinine === null) return null;
  if (name === 'egfr') return { age, sex, ...creatinine };
  const weight = findWeight(text);
  if (weight === undefined) return null;
  return { age, sex, weight: weight.value, weight_unit: weight.unit, ...creatinine };
}

export function buildMap(text: string): Built {
  const { systolic, diastolic } = findPressures(text);
  if (systolic === undefined || diastolic === undefined) return null;
  return { systolic, diastolic };
}

export function buildAnionGap(text: string): Built {
  const sodium = labelled(text, String.raw`sodium|na\+?`);
  const chloride = labelled(text, String.raw`chloride|cl-?`);
  const bicarbonate = labelled(text, String.raw`bicarbonate|bicarb|hco3-?|total co2|tco2|co2`);
  const potassium = labelled(text, String.raw`potassium|k\+?`);
  if (sodium === undefined || chloride === undefined || bicarbonate === undefined) return null;
  return {
    sodium: sodium.value,
    chloride: chloride.value,
    bicarbonate: bicarbonate.value,
    ...(potassium === undefined ? {} : { potassium: potassium.value }),
  };
}

/**
 * Calcium and albumin with their units; without one, calcium below 4 reads as mmol/L and from 5.5
 * as mg/dL, albumin up to 7 as g/dL and from 10 as g/L.
 */
export function buildCorrectedCalcium(text: string): Built {
  const calcium = labelled(
    text,
    String.raw`(?:total |serum )?(?:calcium|ca(?:2\+|\+\+)?)`,
    MASS_UNITS,
  );
  const albumin = labelled(text, String.raw`albumin|alb`, String.raw`g\/dl|g\/l`);
  if (calcium === undefined || albumin === undefined) return null;
  const calciumUnit = unitFor(calcium, 'mmol/L', 'mg/dL', [3.99, 5.5]);
  const albuminUnit = unitFor(albumin, 'g/dL', 'g/L', [7, 10]);
  if (calciumUnit === undefined || calciumUnit === 'umol/L' || albuminUnit === undefined) {
    return null;
  }
  return {
    calcium: calcium.value,
    calcium_unit: calciumUnit,
    albumin: albumin.value,
    albumin_unit: albuminUnit,
  };
}
