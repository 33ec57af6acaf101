import { describe, expect, it } from 'vitest';
import { logProbability, parseArpa, vocabulary, type ArpaModel } from './kb-arpa.js';
import { parseDictionaryWords, spellingResolver } from './kb-dictionary.js';
import { buildKbLanguageModel } from './kb-language-model.js';
import { spokenSentences, spokenText } from './spoken-words.js';

const WORDS =
  'a b c d e f g h i j k l m n o p q r s t u v w x y z ' +
  "c's d's the of and or to in is for with at least less than over per point zero one two three " +
  'four five six seven eight nine ten twelve thirty forty sixty ninety hundred thousand first ' +
  'ninety ninth milligrams milligram millimeters mercury liter deciliter minute square meters ' +
  'percent units blood pressure reading stop treatment kidney disease edema hemoglobin ace ' +
  'inhibitor sofa nice lama curb chads vasc has bled signs sepsis pneumonia give daily twice ' +
  'degrees angiotensin pro lead electrocardiogram when should i start it patients with';
const DICTIONARY = parseDictionaryWords(
  WORDS.split(' ')
    .map((w) => `${w} X\n${w}(2) Y`)
    .join('\n'),
);
const isWord = (w: string) => DICTIONARY.has(w);

describe('spoken words', () => {
  it.each([
    ['140/90 mmHg', 'one hundred forty over ninety millimeters of mercury'],
    ['2.5 mg twice daily', 'two point five milligrams twice daily'],
    ['10 mg', 'ten milligrams'],
    ['1 mg', 'one milligram'],
    ['4.0 mmol/L', 'four point zero millimoles per liter'],
    ['10 mg/dL', 'ten milligrams per deciliter'],
    ['94%', 'ninety four percent'],
    [
      'eGFR 30 ml/min/1.73m2',
      'e g f r thirty milliliters per minute per one point seven three square meters',
    ],
    ['COPD', 'c o p d'],
    ['ACE inhibitor', 'ace inhibitor'],
    ['HbA1c', 'h b a one c'],
    ['CURB65', 'curb sixty five'],
    ['CHA2DS2-VASc and HAS-BLED', 'chads two vasc and has bled'],
    ['DOACs', "d o a c's"],
    ['NT-proBNP', 'n t pro b n p'],
    ['angiotensin II', 'angiotensin two'],
    ['qSOFA, NICE, LAMA', 'q sofa nice lama'],
    ['SIGNS OF SEPSIS', 'signs of sepsis'],
    ['the 99th centile', 'the ninety ninth centile'],
    ['2,000 units', 'two thousand units'],
    ['5-10 days', 'five to ten days'],
    ['≥ 94%', 'at least ninety four percent'],
    ['37.5°C', 'thirty seven point five degrees'],
    ['a 12-lead ECG', 'a twelve lead e c g'],
  ])('%s -> %s', (written, said) => {
    expect(spokenText(written, { isWord })).toBe(said);
  });

  it('splits sentences at full stops, semicolons and lines, not inside numbers or "e.g."', () => {
    const text = '# Heading\nGive 2.5 mg, e.g. at night; then stop. Next one!\n- a list item';
    expect(spokenSentences(text, { isWord }).map((s) => s.join(' '))).toEqual([
      'heading',
      'give two point five milligrams for example at night',
      'then stop',
      'next one',
      'a list item',
    ]);
  });
});

describe('dictionary spelling', () => {
  it('falls back from British to American spelling, and answers undefined otherwise', () => {
    const resolve = spellingResolver(DICTIONARY);
    expect(resolve('oedema')).toBe('edema');
    expect(resolve('haemoglobin')).toBe('hemoglobin');
    expect(resolve('litre')).toBe('liter');
    expect(resolve('metformin')).toBeUndefined();
  });
});

/** The largest |sum over the vocabulary of p(w | context) - 1| over every context of the model. */
function worstContextSum(model: ArpaModel): number {
  const words = vocabulary(model).filter((w) => w !== '<s>');
  const contexts = [
    [],
    ...model.orders.slice(0, -1).flatMap((o) => [...o.keys()].map((k) => k.split(' '))),
  ];
  let worst = 0;
  for (const context of contexts) {
    if (context.at(-1) === '</s>') continue;
    const sum = words.reduce((s, w) => s + 10 ** logProbability(model, context, w), 0);
    worst = Math.max(worst, Math.abs(sum - 1));
  }
  return worst;
}

const TEXTS = [
  'Stop treatment when the blood pressure reading is 140/90 mmHg. Give 10 mg twice daily.',
  'Patients with kidney disease: stop metformin when the eGFR is less than 30. Give 10 mg daily.',
  'When should I start an ACE inhibitor? Start it in patients with kidney disease and oedema.',
  'Stop treatment when the blood pressure reading is over 140/90 mmHg.',
];

describe('buildKbLanguageModel', () => {
  it('writes a model whose every context sums to one, pruned trigrams included', () => {
    for (const minTrigramCount of [1, 2]) {
      const built = buildKbLanguageModel(TEXTS, { dictionary: DICTIONARY, minTrigramCount });
      const model = parseArpa(built.arpa);
      expect(model.declared).toEqual(built.ngrams);
      expect(model.orders.map((o) => o.size)).toEqual(built.ngrams);
      expect(built.ngrams[2]).toBeGreaterThan(0);
      expect(worstContextSum(model)).toBeLessThan(1e-4);
      expect(model.orders[0]!.get('<s>')!.logProb).toBe(-99);
    }
  });

  it('stays normalised when counting had to drop n-grams and the vocabulary was capped', () => {
    const built = buildKbLanguageModel(TEXTS, {
      dictionary: DICTIONARY,
      maxNgramsPerOrder: 8,
      maxVocabulary: 15,
      minTrigramCount: 1,
    });
    expect(built.stats.droppedWhileCounting.bigrams).toBeGreaterThan(0);
    expect(built.ngrams[0]).toBe(17);
    expect(worstContextSum(parseArpa(built.arpa))).toBeLessThan(1e-4);
  });

  it('is deterministic', () => {
    const one = buildKbLanguageModel(TEXTS, { dictionary: DICTIONARY });
    const two = buildKbLanguageModel([...TEXTS], { dictionary: DICTIONARY });
    expect(two.arpa).toBe(one.arpa);
  });

  it('leaves out-of-dictionary words out and lets no n-gram span them; no <unk>', () => {
    const built = buildKbLanguageModel(['give metformin daily. give metformin daily.'], {
      dictionary: DICTIONARY,
      minTrigramCount: 1,
    });
    const model = parseArpa(built.arpa);
    expect(vocabulary(model).sort()).toEqual(['</s>', '<s>', 'daily', 'give']);
    expect([...model.orders[1]!.keys()].sort()).toEqual(['<s> give', 'daily </s>']);
    expect(model.orders[2]!.size).toBe(0);
    expect(built.stats.outOfDictionaryTokens).toBe(2);
    expect(built.stats.outOfDictionaryWords).toEqual([{ word: 'metformin', count: 2 }]);
  });

  it('writes a valid minimal model for empty input, or input without a dictionary word', () => {
    for (const texts of [[], ['metformin apixaban'], ['']]) {
      const built = buildKbLanguageModel(texts, { dictionary: DICTIONARY });
      expect(built.ngrams).toEqual([2, 0, 0]);
      const model = parseArpa(built.arpa);
      expect(model.orders[0]!.get('</s>')!.logProb).toBe(0);
      expect(worstContextSum(model)).toBeLessThan(1e-9);
    }
  });

  it('lists as many out-of-dictionary words as asked, most frequent first', () => {
    const texts = ['metformin apixaban metformin warfarin daily'];
    const built = buildKbLanguageModel(texts, { dictionary: DICTIONARY, reportOutOfDictionary: 2 });
    expect(built.stats.outOfDictionaryWords).toEqual([
      { word: 'metformin', count: 2 },
      { word: 'apixaban', count: 1 },
    ]);
  });

  it('stops reading at maxTokens and says so', () => {
    const built = buildKbLanguageModel(TEXTS, { dictionary: DICTIONARY, maxTokens: 20 });
    expect(built.stats.truncated).toBe(true);
    expect(built.stats.tokens).toBeLessThanOrEqual(20);
  });
});
