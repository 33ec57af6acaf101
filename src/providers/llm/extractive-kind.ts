/**
 * What kind of statement a question asks for, and whether a sentence makes one. On one topic a
 * guideline has several sentences sharing the question's words (a dose, a contraindication, a
 * monitoring interval, a threshold); the question's form says which is wanted: "how long" asks
 * for a duration, "at what level" for a value, "how often" for a frequency, "why" for a reason,
 * "avoid" or "must not" for a prohibition. The cue words themselves are not the question's topic
 * and are dropped from its terms: "long" in "how long" would otherwise match "long-term".
 *
 * Some kinds are facts a sentence either states or does not (`REQUIRED`): a question asking for a
 * dose, a number, a percentage or a ratio is answered only by a sentence that gives one, written
 * as such (a dose with its unit; digits, not "one of the"). On real documents the passages about
 * the question's drug or disease are found whether or not they hold the asked-for number, and the
 * best of them otherwise reads as an answer ("colchicine dose for recurrent pericarditis" answered
 * with "your doctor may prescribe colchicine"): without such a sentence the model declines.
 */

export type AnswerKind =
  'dose' | 'share' | 'ratio' | 'value' | 'duration' | 'time' | 'frequency' | 'reason' | 'negation';

const WORD_NUMBER =
  '(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|' +
  'forty|fifty|hundred|half)';
const NUMBER = `(?:\\d+(?:[.,]\\d+)?|${WORD_NUMBER}|a few|several)`;
const UNIT_OF_TIME = '(?:second|minute|hour|day|week|month|year)s?';
/** Digits standing as a number: not glued to a word or after a full stop ("variants.4", "7.1"). */
const DIGITS = '(?<![\\p{L}\\d.])\\d+(?:[.,]\\d+)?';
/** What a dose is measured in: "500 mg", "10 mg/kg", "2 tablets", "5 mL", "40 units". */
const DOSE_UNIT =
  '(?:mg|mcg|µg|micrograms?|milligrams?|grams?|g|ml|units?|iu|tablets?|capsules?|puffs?|drops?|mmol|meq)(?:/(?:kg|day|dose|m2))?';

/** Per kind: what in a question asks for it, and what in a sentence states it. */
const KINDS: Record<AnswerKind, { asked: RegExp; stated: RegExp }> = {
  // "What's the rifampin dose", "IVIG dose in g/kg", "Max daily dose of ...": the dose is what is
  // asked, not a word of the topic ("how long after the last ACE inhibitor dose").
  dose: {
    asked:
      /^\W*(?:\S+\s+){0,3}(?:doses?|dosages?|dosing)\b|\b(?:what|which)(?:'s| is| are)?\s+(?:the\s+)?(?:\S+\s+){0,2}(?:doses?|dosages?|dosing)\b/i,
    // A concentration ("8 mg/L") is a level, not a dose.
    stated: new RegExp(`${DIGITS}\\s?${DOSE_UNIT}\\b(?!/(?:d|m)?l\\b)`, 'iu'),
  },
  share: {
    asked: /%|\b(?:percent|percentage|proportion)\b/i,
    stated: new RegExp(`${DIGITS}\\s?(?:%|percent\\b)|\\b(?:one|\\d+) (?:in|out of) \\d+`, 'iu'),
  },
  ratio: {
    asked: /\bratio\b|\b[a-z]:[a-z]\b/i,
    stated: /\b(?:times|twice|ratio)\b|\d+:\d+/i,
  },
  value: {
    asked:
      /\b(?:how (?:much|many)(?! (?:days|weeks|months|hours|minutes|years)\b)|at what|what (?:\S+ )?(?:dose|dosage|level|threshold|target|reading|percentage|ratio|volume|amount|limit|value|regimen|range|cut-?off|rate|concentration|score|size|titer|titre))\b/i,
    stated: new RegExp(`\\b${NUMBER}\\b`, 'i'),
  },
  duration: {
    asked:
      /\b(?:how long(?! after| before| until)|how many (?:days|weeks|months|hours|minutes|years)|half-life)\b/i,
    stated: new RegExp(`\\b${NUMBER}(?:[ -]\\w+)?[ -]${UNIT_OF_TIME}\\b`, 'i'),
  },
  time: {
    asked:
      /\b(?:when|how (?:soon|quickly|fast)|within what|what time|how long (?:after|before|until))\b/i,
    stated: new RegExp(
      `\\b(?:${NUMBER}(?:[ -]\\w+)?[ -]${UNIT_OF_TIME}|within|immediately|as soon as|at once|same[ -]day|at diagnosis)\\b`,
      'i',
    ),
  },
  frequency: {
    asked: /\bhow (?:often|frequently|regularly)\b/i,
    stated:
      /\b(?:every|daily|weekly|monthly|annual(?:ly)?|yearly|once|twice|times a|a (?:day|week|month|year)|per (?:day|week|month|year))\b/i,
  },
  reason: {
    asked: /\bwhy\b/i,
    stated: /\b(?:because|causes?|caused|due to|since|risk of|leads? to|increases? the risk)\b/i,
  },
  negation: {
    asked:
      /\b(?:avoid(?:ed)?|not|never|contraindicat\w*|shouldn'?t|mustn'?t|can'?t|cannot|unsafe)\b|n't\b/i,
    stated:
      /\b(?:not|never|avoid(?:ed|ing)?|contraindicat\w*|unsuitable|no longer|do not|must not)\b/i,
  },
};

const ALL = Object.keys(KINDS) as AnswerKind[];

/**
 * The kinds a sentence must state to answer at all, and how it must state them: a dose with its
 * unit, a percentage, a ratio, and a value as a number (where `stated` also takes "a few" or the
 * "one" of "one of the", which rank a sentence but do not make it an answer). Durations, times
 * and the rest only rank: "when" is answered by "at diagnosis" as well as by a number.
 */
const REQUIRED: Partial<Record<AnswerKind, RegExp>> = {
  dose: KINDS.dose.stated,
  share: KINDS.share.stated,
  ratio: KINDS.ratio.stated,
  value: new RegExp(`${DIGITS}|\\b${WORD_NUMBER}\\b(?! of\\b)`, 'iu'),
};

/** Whether the sentence states every kind the question asks for that an answer must state. */
export function statesRequired(sentence: string, asked: readonly AnswerKind[]): boolean {
  return asked.every((kind) => REQUIRED[kind]?.test(sentence) ?? true);
}

/** The kinds of statement the question asks for. */
export function askedKinds(question: string): AnswerKind[] {
  return ALL.filter((kind) => KINDS[kind].asked.test(question));
}

/** The kinds of statement the sentence makes, of those asked. */
export function statedKinds(sentence: string, asked: readonly AnswerKind[]): AnswerKind[] {
  return asked.filter((kind) => KINDS[kind].stated.test(sentence));
}

// "how long", "how soon", "how often", "what time", "how frequently": the second word asks.
const CUE_WORDS =
  /\bhow (long|soon|often|frequently|regularly)\b|\b(?:what|within what) (time)\b/gi;

/** The question without the words that only say what kind of answer it wants. */
export function withoutCueWords(question: string): string {
  return question.replace(CUE_WORDS, (phrase) => phrase.replace(/\s\S+$/, ''));
}
