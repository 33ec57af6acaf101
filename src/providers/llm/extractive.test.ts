import { describe, expect, it } from 'vitest';
import { deltas, ExtractiveProvider, NO_ANSWER, type CalculatorText } from './extractive.js';
import { DEFAULT_TUNING } from './extractive-answer.js';
import { scoreSentences } from './extractive-score.js';
import type { GlossaryEntry, LlmEvent, LlmMessage, LlmRequest, Passage } from './types.js';

const calculator: CalculatorText = {
  parseCalculatorRequest: (text) =>
    /^BMI for (\d+) kg and ([\d.]+) m$/.exec(text) === null ? null : { calculator: 'bmi' },
  describeCalculation: (result) => `The BMI is ${String(result.value)} kg/m².`,
};

const CALCULATOR_TOOL = {
  name: 'medical_calculator',
  description: 'Clinical calculators',
  parameters: { type: 'object' },
};

function passage(n: number, text: string, extra: Partial<Passage> = {}): Passage {
  return {
    n,
    chunkId: `00000000-0000-4000-8000-00000000000${n}`,
    documentId: '00000000-0000-4000-8000-000000000100',
    docKey: 'hypertension',
    title: 'Hypertension in Adults',
    version: 1,
    page: null,
    heading: null,
    text,
    score: 1 - n / 10,
    ...extra,
  };
}

const LIFESTYLE = passage(
  1,
  'Lifestyle changes lower blood pressure by amounts comparable to a single drug. ' +
    'Ask people to cut down on salt, aiming for less than 6 g of salt per day. ' +
    'Encourage regular aerobic exercise, at least 150 minutes a week of moderate activity.',
  { heading: 'Lifestyle measures' },
);
const TARGETS = passage(
  2,
  'For adults under 80, aim for a clinic blood pressure below 140/90 mmHg. ' +
    'For adults aged 80 and over, aim for a clinic blood pressure below 150/90 mmHg.',
  { heading: 'Blood pressure targets' },
);
// Overlaps TARGETS: the chunker repeats the last sentences of a chunk at the start of the next.
const TARGETS_OVERLAP = passage(
  3,
  'For adults aged 80 and over, aim for a clinic blood pressure below 150/90 mmHg. ' +
    'Use clinical judgement in people with frailty, in whom falls can outweigh the benefit.',
  { heading: 'Blood pressure targets' },
);

function request(messages: LlmMessage[], passages: Passage[] = [], tools = [CALCULATOR_TOOL]) {
  return { messages, passages, tools } satisfies LlmRequest;
}

const ask = (question: string, passages: Passage[]) =>
  request([{ role: 'user', content: question }], passages);

async function collect(provider: ExtractiveProvider, req: LlmRequest, signal?: AbortSignal) {
  const events: LlmEvent[] = [];
  const options = { signal: signal ?? new AbortController().signal };
  for await (const event of provider.stream(req, options)) events.push(event);
  return events;
}

const textOf = (events: LlmEvent[]) =>
  events.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');

/** Each quoted sentence with the passage number of the marker after it. */
const citations = (answer: string) =>
  [...answer.matchAll(/\s*(.+?)\s\[(\d+)\](?=\s|$)/g)].map((m) => ({
    sentence: m[1] ?? '',
    n: Number(m[2]),
  }));

describe('ExtractiveProvider: answers from passages', () => {
  const provider = new ExtractiveProvider({ calculator });

  it('quotes the sentence that answers the question, not the first one', async () => {
    const events = await collect(
      provider,
      ask('How much salt per day should someone with hypertension eat?', [LIFESTYLE, TARGETS]),
    );
    const answer = textOf(events);
    expect(answer).toContain('aiming for less than 6 g of salt per day. [1]');
    expect(answer).not.toContain('Lifestyle changes lower blood pressure');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('follows each sentence with the number of the passage that contains it', async () => {
    const answer = textOf(
      await collect(provider, ask('What BP target for people over 80?', [LIFESTYLE, TARGETS])),
    );
    const cited = citations(answer);
    expect(cited.length).toBeGreaterThan(0);
    for (const { sentence, n } of cited) {
      const source = [LIFESTYLE, TARGETS].find((p) => p.n === n);
      expect(source?.text).toContain(sentence);
    }
    expect(answer).toContain('below 150/90 mmHg. [2]');
  });

  it('quotes a sentence found in two overlapping passages once', async () => {
    const answer = textOf(
      await collect(
        provider,
        ask('Blood pressure target for adults aged 80 and over?', [TARGETS, TARGETS_OVERLAP]),
      ),
    );
    expect(answer.split('below 150/90 mmHg').length - 1).toBe(1);
  });

  it('quotes once a sentence cut differently, or worded nearly alike, in another passage', async () => {
    const question = 'Blood pressure target for adults aged 80 and over?';
    // Cut inside its first and last words: contained in TARGETS's sentence, words cut apart.
    const cut = passage(
      3,
      'ults aged 80 and over, aim for a clinic blood pressure below 150/90 mm.',
    );
    // The same sentence with one word of twenty changed: nine words in ten shared.
    const reworded = passage(
      4,
      'For adults aged 80 and over, aim for a clinic blood pressure below 150/90 mmHg, ' +
        'measured seated after five minutes of rest in a quiet warm room.',
    );
    const full = passage(
      5,
      'For adults aged 80 and over, aim for a clinic blood pressure below 150/90 mmHg, ' +
        'measured seated after five minutes of rest in a quiet calm room.',
    );
    for (const passages of [
      [TARGETS, cut],
      [reworded, full],
    ]) {
      const answer = textOf(await collect(provider, ask(question, passages)));
      expect(answer.split('150/90 mm').length - 1).toBe(1);
    }
  });

  it('says it found nothing, without a marker, when no passage answers', async () => {
    const events = await collect(
      provider,
      ask('What is the first-line treatment for a migraine?', [LIFESTYLE, TARGETS]),
    );
    expect(textOf(events)).toBe(NO_ANSWER);
    expect(textOf(events)).not.toMatch(/\[\d+\]/);
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([]);
  });

  it('refuses with no passages at all', async () => {
    expect(textOf(await collect(provider, ask('What is the BP target?', [])))).toBe(NO_ANSWER);
  });

  it('streams in several deltas, then done, and no usage (it has no tokens); the same every time', async () => {
    const req = ask('How much salt per day should someone with hypertension eat?', [LIFESTYLE]);
    const events = await collect(provider, req);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'text_delta').length).toBeGreaterThan(1);
    expect(types.at(-1)).toBe('done');
    expect(types).not.toContain('usage');
    expect(await collect(provider, req)).toEqual(events);
  });

  it('cuts text into deltas that join back to it', () => {
    const text = 'One two three four five six seven eight. [1]';
    expect(deltas(text).join('')).toBe(text);
    expect(deltas(text)).toHaveLength(2);
  });
});

describe("ExtractiveProvider: a clinician's shortened names", () => {
  it('reads "toxo" as the toxoplasmosis its passage spells out', () => {
    const provider = new ExtractiveProvider({ tuning: { maxSentences: 1 } });
    const parasites = passage(
      1,
      'Malaria in returning travellers is treated with artemether and lumefantrine. ' +
        'Toxoplasmosis in otherwise healthy adults is treated only when symptoms persist.',
      { docKey: 'parasites', title: 'Parasites', heading: null },
    );
    const text = provider.answer({
      messages: [{ role: 'user', content: 'When is toxo treated?' }],
      passages: [parasites],
      tools: [],
    });
    expect(text).toBe(
      'Toxoplasmosis in otherwise healthy adults is treated only when symptoms persist. [1]',
    );
  });
});

describe('ExtractiveProvider: the names a question is about', () => {
  const provider = new ExtractiveProvider();
  const toxoplasmosis = passage(
    1,
    'Toxoplasmosis in pregnancy is treated by a specialist. ' +
      'Pregnant women should avoid cleaning cat litter and eating undercooked meat.',
    { docKey: 'toxoplasmosis', title: 'Toxoplasmosis', heading: 'Pregnancy' },
  );
  const answer = (question: string) =>
    provider.answer({
      messages: [{ role: 'user', content: question }],
      passages: [toxoplasmosis],
      tools: [],
    });

  it('declines when a drug the question names is in no passage, however well the rest matches', () => {
    expect(answer('Is spiramycin used for toxoplasmosis in pregnancy?')).toBe(NO_ANSWER);
    // The same question without the drug is answered from the passage.
    expect(answer('How is toxoplasmosis treated in pregnancy?')).toContain('[1]');
  });

  it('answers when the missing words are everyday English, as a lay rewording has them', () => {
    expect(
      answer('My pregnant patient keeps scooping the kitty litter: is that a worry?'),
    ).toContain('cat litter');
  });

  it("weighs the asker's own lay verbs less than the nouns a question is about", () => {
    const rabies = passage(
      1,
      'Dogs and cats that are currently vaccinated are kept under observation for 45 days.',
      { docKey: 'rabies', title: 'Rabies', heading: 'Animals' },
    );
    const support = (question: string) =>
      scoreSentences(question, [rabies], DEFAULT_TUNING).quotes[0]?.support ?? 0;
    // "tangled" (a verb) and "tangle" (a noun) are both in no passage; the verb costs less.
    expect(
      support('How long is a vaccinated dog kept under observation after it tangled?'),
    ).toBeGreaterThan(
      support('How long is a vaccinated dog kept under observation after a tangle?'),
    );
  });

  it('declines for a brand name no passage holds, and answers once a passage names it', () => {
    expect(answer('Is Daraprim used for toxoplasmosis in pregnancy?')).toBe(NO_ANSWER);
    const withBrand = passage(
      2,
      'Pyrimethamine (Daraprim) is used for toxoplasmosis outside pregnancy.',
      { docKey: 'toxoplasmosis', title: 'Toxoplasmosis', heading: 'Treatment' },
    );
    const text = provider.answer({
      messages: [{ role: 'user', content: 'Is Daraprim used for toxoplasmosis in pregnancy?' }],
      passages: [toxoplasmosis, withBrand],
      tools: [],
    });
    expect(text).toContain('Pyrimethamine (Daraprim)');
  });
});

describe('ExtractiveProvider: abbreviations and names its passages define', () => {
  const label = passage(1, 'ZOLTRAVEX (mirdanotide acetate) tablets, for oral use.', {
    docKey: 'label',
    title: 'Label',
    heading: 'Highlights',
  });
  const dosing = (name: string) =>
    passage(2, `The maximum dose of ${name} is 40 mg a day.`, {
      docKey: 'label',
      title: 'Label',
      heading: 'Dosage',
    });
  const support = (question: string, passages: Passage[], glossary: GlossaryEntry[] = []) =>
    scoreSentences(question, passages, DEFAULT_TUNING, glossary).quotes.find(
      (q) => q.passage.n === 2,
    )?.support;

  it('reads a brand name as the generic name a passage pairs it with, and the other way', () => {
    const generic = 'What is the maximum dose of mirdanotide?';
    // The sentence naming the brand supports the question naming the generic as fully as a
    // sentence naming the generic itself.
    expect(support(generic, [label, dosing('ZOLTRAVEX')])).toBe(
      support(generic, [label, dosing('mirdanotide')]),
    );
    const brand = 'What is the maximum dose of Zoltravex?';
    expect(support(brand, [label, dosing('mirdanotide')])).toBe(
      support(brand, [label, dosing('Zoltravex')]),
    );
  });

  // A TB document's passages: one defining LTBI, one spelling it out, one writing it.
  const tb = (n: number, text: string) =>
    passage(n, text, { docKey: 'tb', title: 'TB', heading: null });
  const defines = tb(1, 'Latent TB infection (LTBI) is not contagious.');
  const spelled = tb(2, 'Treat latent TB infection with rifampin for four months.');
  const written = tb(2, 'Treat LTBI with rifampin for four months.');
  const ltbi = 'How long is rifampin given for LTBI?';

  it('reads an abbreviation as the long form a passage defines', () => {
    expect(support(ltbi, [defines, spelled])).toBe(support(ltbi, [defines, written]));
  });

  it('reads a two-letter acronym as the title or heading it spells, not as two words of a sentence', () => {
    const titled = (title: string, text: string) =>
      passage(2, text, { docKey: 'kd', title, heading: null });
    const fever = 'The fever lasts longer than 5 days.';
    const kd = 'How long does the fever last in KD?';
    expect(support(kd, [titled('Kawasaki Disease', fever)])).toBeGreaterThan(
      support(kd, [titled('Childhood fevers', fever)]) ?? 1,
    );
    // "kidney damage" spells k, d as well: in running text that is no match.
    const kidney = 'Kidney damage lasts longer than the fever.';
    expect(support(kd, [titled('Childhood fevers', kidney)])).toBe(
      support('How long does the fever last in XY?', [titled('Childhood fevers', kidney)]),
    );
  });

  it('reads a pair of names the question itself writes', () => {
    const provider = new ExtractiveProvider();
    const interactions = passage(
      1,
      'Drugs with no clinically important interaction with the stimulant include guanfacine.',
      { docKey: 'label', title: 'Label', heading: 'Interactions' },
    );
    const ask = (question: string) =>
      provider.answer({
        messages: [{ role: 'user', content: question }],
        passages: [interactions],
        tools: [],
      });
    // "Intuniv" is in no passage: alone it is a name the passages do not hold, and declined.
    expect(ask('Does Intuniv interact with the stimulant?')).toBe(NO_ANSWER);
    expect(ask('Does guanfacine (Intuniv) interact with the stimulant?')).toContain('[1]');
  });

  it("reads the knowledge base's glossary when no passage defines the word", () => {
    const glossary: GlossaryEntry[] = [
      { term: 'LTBI', means: 'latent TB infection', kind: 'abbreviation' },
    ];
    expect(support(ltbi, [spelled], glossary)).toBe(support(ltbi, [written]));
    expect(support(ltbi, [spelled])).toBeLessThan(support(ltbi, [written]) ?? 0);
  });
});

describe('ExtractiveProvider: the calculator tool', () => {
  const provider = new ExtractiveProvider({ calculator });

  it('calls medical_calculator for a plain calculator request', async () => {
    const events = await collect(provider, ask('BMI for 80 kg and 1.80 m', [LIFESTYLE]));
    expect(events.map((e) => e.type)).toEqual(['tool_call', 'done']);
    const [call] = events;
    expect(call).toMatchObject({
      type: 'tool_call',
      call: { name: 'medical_calculator', arguments: { calculator: 'bmi' } },
    });
    expect(call?.type === 'tool_call' && call.call.id).toMatch(/^call_[0-9a-f]{32}$/);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'tool_calls' });
  });

  it('gives each call its own id', async () => {
    const ids = await Promise.all(
      [1, 2].map(async () => {
        const [first] = await collect(provider, ask('BMI for 80 kg and 1.80 m', []));
        return first?.type === 'tool_call' ? first.call.id : '';
      }),
    );
    expect(new Set(ids).size).toBe(2);
  });

  it('answers from the passages when the tool is not offered', async () => {
    const req = request([{ role: 'user', content: 'BMI for 80 kg and 1.80 m' }], [], []);
    const events = await collect(provider, req);
    expect(events.some((e) => e.type === 'tool_call')).toBe(false);
    expect(textOf(events)).toBe(NO_ANSWER);
  });

  const afterTool = (content: string) =>
    request([
      { role: 'user', content: 'BMI for 80 kg and 1.80 m' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'medical_calculator', arguments: {} }],
      },
      { role: 'tool', toolCallId: 'call_1', name: 'medical_calculator', content },
    ]);

  it("states the tool's result, without citations", async () => {
    const events = await collect(provider, afterTool('{"value":24.7,"unit":"kg/m2"}'));
    expect(textOf(events)).toBe('The BMI is 24.7 kg/m².');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('says why the calculation could not be done when the tool failed', async () => {
    const error = {
      error: { code: 'TOOL_ERROR', message: 'Height must be between 0.5 and 2.5 m.' },
    };
    const events = await collect(provider, afterTool(JSON.stringify(error)));
    expect(textOf(events)).toBe(
      'The calculation could not be done: Height must be between 0.5 and 2.5 m.',
    );
    expect(textOf(events)).not.toMatch(/\[\d+\]/);
  });

  it('copes with a tool answer that is not a JSON object', async () => {
    const events = await collect(provider, afterTool('not json'));
    expect(textOf(events)).toMatch(/^The calculation could not be done/);
  });
});

describe('ExtractiveProvider: cancellation', () => {
  const provider = new ExtractiveProvider({ calculator });
  const req = ask('How much salt per day should someone with hypertension eat?', [LIFESTYLE]);

  it('stops between events once the signal aborts', async () => {
    const controller = new AbortController();
    const seen: LlmEvent[] = [];
    await expect(async () => {
      for await (const event of provider.stream(req, { signal: controller.signal })) {
        seen.push(event);
        controller.abort();
      }
    }).rejects.toThrow(/abort/i);
    expect(seen).toHaveLength(1);
  });

  it('emits nothing on a signal aborted before the start', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(collect(provider, req, controller.signal)).rejects.toThrow(/abort/i);
  });
});

describe('ExtractiveProvider with the real calculator text', () => {
  const provider = new ExtractiveProvider();

  it('turns a BMI request into medical_calculator arguments and states the result', async () => {
    const [call] = await collect(provider, ask('BMI for 80 kg and 1.80 m', []));
    expect(call).toMatchObject({
      type: 'tool_call',
      call: { name: 'medical_calculator', arguments: { calculator: 'bmi', weight: 80 } },
    });
    const result = {
      calculator: 'bmi',
      value: 24.7,
      unit: 'kg/m2',
      interpretation: 'normal weight',
    };
    const answer = textOf(
      await collect(
        provider,
        request([
          { role: 'user', content: 'BMI for 80 kg and 1.80 m' },
          {
            role: 'tool',
            toolCallId: 'call_1',
            name: 'medical_calculator',
            content: JSON.stringify(result),
          },
        ]),
      ),
    );
    expect(answer).toMatch(/^The BMI is 24\.7 kg\/m.*normal weight/);
  });

  it('answers a knowledge question from the passages, not with the calculator', async () => {
    const events = await collect(provider, ask('What BP target for people over 80?', [TARGETS]));
    expect(events.some((e) => e.type === 'tool_call')).toBe(false);
    expect(textOf(events)).toContain('[2]');
  });
});
