/**
 * The vocabularies of speakable.ts: how clinicians say units, acronyms and abbreviations aloud.
 * British spellings (the service's guidelines are British); engines read either fine.
 */

/** Unit as written (a regular-expression source) -> [after "1", otherwise]. Longest first. */
export const UNITS: [string, string, string][] = [
  [
    'mL\\/min\\/1\\.73\\s?m(?:2|²|\\^2)',
    'millilitre per minute per 1 point 7 3 square metres',
    'millilitres per minute per 1 point 7 3 square metres',
  ],
  ['mg\\/kg\\/day', 'milligram per kilogram per day', 'milligrams per kilogram per day'],
  ['mg\\/dL', 'milligram per decilitre', 'milligrams per decilitre'],
  ['mmol\\/mol', 'millimole per mole', 'millimoles per mole'],
  ['mmol\\/L', 'millimole per litre', 'millimoles per litre'],
  ['[µμu]mol\\/L', 'micromole per litre', 'micromoles per litre'],
  ['ng\\/mL', 'nanogram per millilitre', 'nanograms per millilitre'],
  ['pg\\/mL', 'picogram per millilitre', 'picograms per millilitre'],
  ['mIU\\/L', 'milli-unit per litre', 'milli-units per litre'],
  ['g\\/dL', 'gram per decilitre', 'grams per decilitre'],
  ['g\\/L', 'gram per litre', 'grams per litre'],
  ['mg\\/kg', 'milligram per kilogram', 'milligrams per kilogram'],
  ['mg\\/day', 'milligram per day', 'milligrams per day'],
  ['kg\\/m(?:2|²|\\^2)', 'kilogram per square metre', 'kilograms per square metre'],
  ['mL\\/min', 'millilitre per minute', 'millilitres per minute'],
  ['mL\\/h(?:r|our)?', 'millilitre per hour', 'millilitres per hour'],
  ['units?\\/kg', 'unit per kilogram', 'units per kilogram'],
  ['mmHg', 'millimetre of mercury', 'millimetres of mercury'],
  ['°C', 'degree Celsius', 'degrees Celsius'],
  ['°F', 'degree Fahrenheit', 'degrees Fahrenheit'],
  ['mEq', 'milliequivalent', 'milliequivalents'],
  ['mmol', 'millimole', 'millimoles'],
  ['mcg|[µμ]g|ug', 'microgram', 'micrograms'],
  ['mg', 'milligram', 'milligrams'],
  ['kg', 'kilogram', 'kilograms'],
  ['g', 'gram', 'grams'],
  ['mL|ml', 'millilitre', 'millilitres'],
  ['L', 'litre', 'litres'],
  ['cm', 'centimetre', 'centimetres'],
  ['mm', 'millimetre', 'millimetres'],
  ['IU', 'international unit', 'international units'],
  ['bpm', 'beat per minute', 'beats per minute'],
  ['hrs?|h', 'hour', 'hours'],
  ['mins?', 'minute', 'minutes'],
  ['%', 'percent', 'percent'],
];

/**
 * Units that are unambiguous without a number before them ("measured in mmHg"); the others are
 * read as units only right after a number ("5 g", not "g" in "GP").
 */
export const STANDALONE_UNITS = new Set(['mmHg', 'mg\\/dL', 'mmol\\/L', 'kg\\/m(?:2|²|\\^2)']);

/** Acronyms clinicians spell out, as the engine should say them. */
export const SPELLED: Record<string, string> = {
  HbA1c: 'H B A one C',
  eGFR: 'E G F R',
  GFR: 'G F R',
  ACE: 'A C E',
  ARB: 'A R B',
  COPD: 'C O P D',
  DVT: 'D V T',
  CKD: 'C K D',
  ECG: 'E C G',
  EKG: 'E K G',
  BMI: 'B M I',
  BP: 'B P',
  GP: 'G P',
  ICU: 'I C U',
  IV: 'I V',
  IM: 'I M',
  MRI: 'M R I',
  CT: 'C T',
  PE: 'P E',
  MI: 'M I',
  TIA: 'T I A',
  UTI: 'U T I',
  AF: 'A F',
  LDL: 'L D L',
  HDL: 'H D L',
  INR: 'I N R',
  TSH: 'T S H',
  ALT: 'A L T',
  AST: 'A S T',
  CRP: 'C R P',
  ESR: 'E S R',
  FBC: 'F B C',
  HIV: 'H I V',
  PPI: 'P P I',
  SSRI: 'S S R I',
  SGLT2: 'S G L T 2',
  'GLP-1': 'G L P 1',
  'DPP-4': 'D P P 4',
  NHS: 'N H S',
  WHO: 'W H O',
  ADHD: 'A D H D',
  PTSD: 'P T S D',
  CPR: 'C P R',
  ENT: 'E N T',
  IBS: 'I B S',
  OTC: 'O T C',
  BNF: 'B N F',
  SpO2: 'S P O 2',
  B12: 'B 12',
};

/**
 * Acronyms said as words: given in lower case so that an engine never spells them (Flite and
 * eSpeak NG spell some capitalised words letter by letter).
 */
export const SAID_AS_WORDS: Record<string, string> = {
  NICE: 'nice',
  SIGN: 'sign',
  AIDS: 'aids',
  NSAID: 'en-said',
  NSAIDs: 'en-saids',
  SARS: 'sars',
  MERS: 'mers',
  COVID: 'covid',
  'COVID-19': 'covid 19',
  GORD: 'gord',
  QOF: 'quoff',
  MIMS: 'mims',
};

/** Prescription shorthand and common abbreviations. Matched as whole words, case as written. */
export const ABBREVIATIONS: [RegExp, string][] = [
  [/\be\.g\.(?=\s|$)/gi, 'for example'],
  [/\bi\.e\.(?=\s|$)/gi, 'that is'],
  [/\betc\./gi, 'et cetera'],
  [/\bapprox\./gi, 'approximately'],
  [/\bvs\.?(?=\s)/gi, 'versus'],
  [/\b(?:bd|BD|b\.d\.)(?=[\s.,;]|$)/g, 'twice daily'],
  [/\b(?:tds|TDS|tid|TID)\b/g, 'three times daily'],
  [/\b(?:qds|QDS|qid|QID)\b/g, 'four times daily'],
  [/\b(?:prn|PRN)\b/g, 'as needed'],
  [/\bPO\b/g, 'by mouth'],
  [/\bSC\b/g, 'subcutaneously'],
];
