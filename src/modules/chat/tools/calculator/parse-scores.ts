import {
  CHA2DS2_VASC_PHRASES,
  CURB_65_PHRASES,
  findCriteria,
  HAS_BLED_PHRASES,
  WELLS_DVT_PHRASES,
} from './parse-criteria.js';
import type { Built } from './parse-measures.js';
import { findAge, findPressures, findRespiratoryRate, findSex, labelled } from './parse-text.js';

/** Openings of questions about a score rather than requests to compute one. */
const KNOWLEDGE_OPENING =
  /^(?:is|are|does|do|did|should|can|could|would|why|how|which|when|where|who|explain|define|describe|tell me about|what (?:counts|does|do|is meant|are the))(?![a-z])/;
/** Words saying a patient is being described or a computation is wanted. */
const PATIENT_CUE =
  /(?<![a-z])(?:patient|pt|person|someone|calculate|compute|work out|estimate)(?![a-z])/;
/** "<score> for …", "score with …": findings listed for a score. */
const SCORE_CUE = /(?<![a-z])(?:calc|score|points?|dvt)\s+(?:for|with|in|of)(?![a-z])/;

/**
 * Whether a text that names a score asks for it to be computed: something was found (`found`), and
 * a patient is described (age or sex, `described`), or findings are listed for the score in a text
 * that does not open as a knowledge question ("does HAS-BLED count alcohol?").
 */
function asksForScore(text: string, found: boolean, described: boolean): boolean {
  if (!found) return false;
  if (described || PATIENT_CUE.test(text)) return true;
  return SCORE_CUE.test(text) && !KNOWLEDGE_OPENING.test(text);
}

const anyTrue = (flags: Record<string, boolean>): boolean => Object.values(flags).some(Boolean);

function optional<T>(key: string, value: T | undefined): Record<string, T> {
  return value === undefined ? {} : { [key]: value };
}

export function buildCha2ds2Vasc(text: string): Built {
  const age = findAge(text);
  const sex = findSex(text);
  const flags = findCriteria(text, CHA2DS2_VASC_PHRASES);
  const described = age !== undefined || sex !== undefined;
  if (!asksForScore(text, described || anyTrue(flags), described)) return null;
  return { ...optional('age', age), ...optional('sex', sex), ...flags };
}

export function buildHasBled(text: string): Built {
  const age = findAge(text);
  const flags = findCriteria(text, HAS_BLED_PHRASES);
  const described = age !== undefined || findSex(text) !== undefined;
  if (!asksForScore(text, described || anyTrue(flags), described)) return null;
  return { ...optional('age', age), ...flags };
}

/** Urea in mmol/L (no unit: mmol/L), or BUN in mg/dL (BUN in mmol/L is urea in mmol/L). */
function findUrea(text: string): Record<string, number> {
  const bun = labelled(
    text,
    String.raw`bun|blood urea nitrogen|urea nitrogen`,
    String.raw`mg\/dl|mmol\/l`,
  );
  if (bun !== undefined) return bun.unit === 'mmol/l' ? { urea: bun.value } : { bun: bun.value };
  const urea = labelled(text, String.raw`(?:blood |serum )?urea`, String.raw`mmol\/l|mg\/dl`);
  return urea === undefined || urea.unit === 'mg/dl' ? {} : { urea: urea.value };
}

export function buildCurb65(text: string): Built {
  const age = findAge(text);
  const urea = findUrea(text);
  const rate = findRespiratoryRate(text);
  const { systolic, diastolic } = findPressures(text);
  const flags = findCriteria(text, CURB_65_PHRASES);
  const numbers = [age, rate, systolic, diastolic].some((n) => n !== undefined);
  const found = numbers || Object.keys(urea).length > 0 || anyTrue(flags);
  if (!asksForScore(text, found, age !== undefined || findSex(text) !== undefined)) return null;
  return {
    ...flags,
    ...urea,
    ...optional('respiratory_rate', rate),
    ...optional('systolic', systolic),
    ...optional('diastolic', diastolic),
    ...optional('age', age),
  };
}

export function buildWellsDvt(text: string): Built {
  const flags = findCriteria(text, WELLS_DVT_PHRASES);
  const described = findAge(text) !== undefined || findSex(text) !== undefined;
  if (!asksForScore(text, described || anyTrue(flags), described)) return null;
  return flags;
}
