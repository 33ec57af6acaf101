/**
 * What kind of statement a question asks for, and whether a sentence makes one. On one topic a
 * guideline has several sentences sharing the question's words (a dose, a contraindication, a
 * monitoring interval, a threshold); the question's form says which is wanted: "how long" asks
 * for a duration, "at what level" for a value, "how often" for a frequency, "why" for a reason,
 * "avoid" or "must not" for a prohibition. The cue words themselves are not the question's topic
 * and are dropped from its terms: "long" in "how long" would otherwise match "long-term".
 */

export type AnswerKind = 'value' | 'duration' | 'time' | 'frequency' | 'reason' | 'negation';

const NUMBER =
  '(?:\\d+(?:[.,]\\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|' +
  'fifteen|twenty|thirty|forty|fifty|hundred|half|a few|several)';
const UNIT_OF_TIME = '(?:second|minute|hour|day|week|month|year)s?';

/** Per kind: what in a question asks for it, and what in a sentence states it. */
const KINDS: Record<AnswerKind, { asked: RegExp; stated: RegExp }> = {
  value: {
    asked:
      /\b(?:how (?:much|many)(?! (?:days|weeks|months|hours|minutes|years)\b)|at what|what (?:\S+ )?(?:dose|dosage|level|threshold|target|reading|percentage|ratio|volume|amount|limit|value|regimen|range|cut-?off|rate|concentration|score|size))\b/i,
    stated: new RegExp(`\\b${NUMBER}\\b`, 'i'),
  },
  duration: {
    asked:
      /\b(?:how long(?! after| before| until)|how many (?:days|weeks|months|hours|minutes|years))\b/i,
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
