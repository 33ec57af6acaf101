/**
 * Yes/no criteria in a normalised request. A criterion counts when a phrase for it appears outside
 * a negation ("no diabetes", "without heart failure", "denies alcohol"); criteria not mentioned
 * count as absent.
 */

export interface CriterionPhrase {
  key: string;
  pattern: RegExp;
  /** A mention is ignored when the text just before it matches (e.g. "well controlled "). */
  unlessBefore?: RegExp;
}

const NEGATION =
  /(?<![a-z])(?:no|not|nor|without|denies|denied|negative for|absence of|free of|never had|never)(?![a-z])/;
/** Where a negation stops applying: punctuation, and words that start a new finding. */
const CLAUSE_BREAK = /[.,;:!?()]|(?<![a-z])(?:but|with|has|have|had|plus|however|also)(?![a-z])/g;
const LOOK_BACK = 80;

function clauseBefore(text: string, index: number): string {
  const before = text.slice(Math.max(0, index - LOOK_BACK), index);
  const parts = before.split(CLAUSE_BREAK);
  return parts[parts.length - 1] ?? '';
}

export function isAffirmed(text: string, phrase: CriterionPhrase): boolean {
  const pattern = new RegExp(phrase.pattern.source, 'g');
  for (const match of text.matchAll(pattern)) {
    const clause = clauseBefore(text, match.index);
    if (NEGATION.test(clause)) continue;
    if (phrase.unlessBefore?.test(text.slice(0, match.index)) === true) continue;
    return true;
  }
  return false;
}

/** Every criterion as a flag: true when affirmed, false otherwise. */
export function findCriteria(
  text: string,
  phrases: readonly CriterionPhrase[],
): Record<string, boolean> {
  return Object.fromEntries(phrases.map((p) => [p.key, isAffirmed(text, p)]));
}

const w = (words: string): RegExp => new RegExp(`(?<![a-z])(?:${words})`);

export const CHA2DS2_VASC_PHRASES: readonly CriterionPhrase[] = [
  {
    key: 'congestive_heart_failure',
    pattern: w(
      String.raw`heart failure|chf(?![a-z])|hf(?:ref|pef)?(?![a-z])|lv dysfunction|reduced ejection fraction|cardiomyopathy`,
    ),
  },
  { key: 'hypertension', pattern: w(String.raw`hypertensi|htn(?![a-z])|high blood pressure`) },
  { key: 'diabetes', pattern: w(String.raw`diabet|t[12]dm(?![a-z])|dm(?![a-z])`) },
  {
    key: 'stroke_tia_thromboembolism',
    pattern: w(
      String.raw`stroke(?!\s*(?:risk|prevention))|tia(?![a-z])|transient ischa?emic|thromboembol|cva(?![a-z])|systemic embol`,
    ),
  },
  {
    key: 'vascular_disease',
    pattern: w(
      String.raw`vascular disease|myocardial infarction|mi(?![a-z])|heart attack|peripheral arter|pad(?![a-z])|aortic plaque|coronary artery disease|cad(?![a-z])`,
    ),
  },
];

export const HAS_BLED_PHRASES: readonly CriterionPhrase[] = [
  {
    key: 'uncontrolled_hypertension',
    pattern: w(
      String.raw`hypertensi|htn(?![a-z])|high blood pressure|systolic (?:over|above|>) ?160`,
    ),
    unlessBefore: /(?<![a-z])(?:well[- ]|adequately )?controlled\s*$/,
  },
  {
    key: 'abnormal_renal_function',
    pattern: w(
      String.raw`renal (?:impairment|failure|disease|dysfunction|insufficiency|transplant)|kidney (?:disease|failure|transplant)|dialysis|ckd(?![a-z])|abnormal renal`,
    ),
  },
  {
    key: 'abnormal_liver_function',
    pattern: w(
      String.raw`cirrho|liver (?:disease|failure|dysfunction|impairment)|hepatic (?:impairment|failure|dysfunction)|abnormal liver`,
    ),
  },
  { key: 'prior_stroke', pattern: w(String.raw`stroke(?!\s*(?:risk|prevention))|cva(?![a-z])`) },
  {
    key: 'bleeding_history',
    pattern: w(String.raw`bleed(?:ing|s)?(?![a-z]|\s*risk)|ha?emorrhag|ana?emi`),
  },
  {
    key: 'labile_inr',
    pattern: w(
      String.raw`labile inrs?|unstable inrs?|inrs? (?:is |are )?(?:labile|unstable)|poor (?:inr control|ttr)|low ttr`,
    ),
  },
  {
    key: 'antiplatelet_or_nsaid',
    pattern: w(
      String.raw`aspirin|antiplatelet|clopidogrel|prasugrel|ticagrelor|nsaids?(?![a-z])|ibuprofen|naproxen|diclofenac`,
    ),
  },
  {
    key: 'alcohol_excess',
    pattern: w(
      String.raw`alcohol(?:ism|ic)? (?:excess|abuse|misuse|use disorder|dependence)|excess(?:ive)? (?:alcohol|drinking)|alcoholism|an alcoholic(?![a-z])|heavy (?:drink|alcohol)|(?:[89]|\d\d)\+? (?:or more )?(?:alcoholic )?drinks`,
    ),
  },
];

export const CURB_65_PHRASES: readonly CriterionPhrase[] = [
  { key: 'confusion', pattern: w('confus|disorient|altered mental|delirium|delirious') },
];

export const WELLS_DVT_PHRASES: readonly CriterionPhrase[] = [
  { key: 'active_cancer', pattern: w('cancer|malignan|metasta|chemotherapy|palliative') },
  {
    key: 'paralysis_or_recent_cast',
    pattern: w(
      String.raw`paraly|paresis|plaster|cast(?![a-z])|immobili[sz]ation of the (?:leg|lower)`,
    ),
  },
  {
    key: 'bedridden_or_recent_surgery',
    pattern: w(
      String.raw`bed-?ridden|bed ?rest|bed-?bound|(?:recent |major )+surgery|post-?op|after surgery`,
    ),
  },
  { key: 'localized_tenderness', pattern: w('tender') },
  {
    key: 'entire_leg_swollen',
    pattern: w(
      String.raw`(?:entire|whole) leg (?:is )?swollen|swollen (?:entire|whole) leg|(?:entire|whole)[- ]leg swelling|swelling of the (?:entire|whole) leg`,
    ),
  },
  {
    key: 'calf_swelling',
    pattern: w(
      String.raw`calf swelling|swollen calf|calf (?:is )?swollen|calf (?:circumference )?(?:\d+(?:\.\d+)? ?cm )?(?:larger|bigger|greater)`,
    ),
  },
  { key: 'pitting_edema', pattern: w('pitting') },
  { key: 'collateral_superficial_veins', pattern: w('collateral') },
  {
    key: 'previous_dvt',
    pattern: w(
      String.raw`(?:previous|prior|past|old|history of|previously documented) (?:dvt|deep vein thrombosis|deep venous thrombosis)`,
    ),
  },
  {
    key: 'alternative_diagnosis_likely',
    pattern: w(
      String.raw`(?:alternative|other|another) diagnosis (?:is )?(?:(?:at least|equally|as|more) )+(?:likely|probable)`,
    ),
  },
];
