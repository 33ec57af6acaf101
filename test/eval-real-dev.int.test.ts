import { describe, expect, it } from 'vitest';
import {
  judgeReal,
  loadRealQuestions,
  tallyReal,
  type RealQuestion,
} from '../eval/lib/real-dev.js';
import { serviceWith } from '../eval/lib/real-service.js';
import { LedgerError, readLedger } from '../eval/lib/splits.js';

/**
 * eval/answers.ts --corpus (issue 25): the scoring of the service's answers on the real documents,
 * the ledger's guard over their question files, and the whole path through a listening service
 * (uploads, indexing, a question over the chat socket) on two small documents of this test, so
 * that it runs where ../shared/ is absent.
 */

const dose: RealQuestion = {
  id: 'q1',
  split: 'real-dev',
  q: 'Amox dose?',
  doc_key: 'amoxicillin',
  keys: ['500 mg'],
};
const unanswerable: RealQuestion = {
  id: 'q2',
  split: 'real-dev',
  q: 'Cafeteria?',
  doc_key: null,
  keys: [],
};

describe('judging an answer of the service', () => {
  it('counts a key fact only with the right document cited, in any case', () => {
    const right = judgeReal(dose, {
      content: 'Give 500 MG twice daily. [1]',
      cited: ['amoxicillin'],
    });
    expect(right).toMatchObject({ fact: true, rightDocument: true, declined: false });
    expect(right.preciseCitations).toBe(1);
    const elsewhere = judgeReal(dose, { content: 'Give 500 mg. [1]', cited: ['aspirin'] });
    expect(elsewhere).toMatchObject({ fact: false, rightDocument: false, preciseCitations: 0 });
  });

  it('calls an answer without citations a decline, and any citation of an unanswerable one imprecise', () => {
    expect(judgeReal(dose, { content: 'I could not find it.', cited: [] }).declined).toBe(true);
    const answered = judgeReal(unanswerable, { content: 'Open at 8. [1]', cited: ['menu'] });
    expect(answered).toMatchObject({ declined: false, citations: 1, preciseCitations: 0 });
    const scores = tallyReal([
      judgeReal(dose, { content: '500 mg [1]', cited: ['amoxicillin', 'aspirin'] }),
      judgeReal(dose, { content: 'No answer.', cited: [] }),
      answered,
      judgeReal(unanswerable, { content: 'No answer.', cited: [] }),
    ]);
    expect(scores).toEqual({
      answerable: 2,
      unanswerable: 2,
      facts: 1,
      rightDocument: 1,
      falseRefusals: 1,
      declinedUnanswerable: 1,
      citations: 3,
      preciseCitations: 1,
    });
  });
});

describe('the real-dev question files and the ledger', () => {
  it('answers only real-dev: the held-out real-test has no questions here', async () => {
    await expect(loadRealQuestions('real-test', await readLedger())).rejects.toThrow(LedgerError);
  });

  it('stops at a question file the ledger does not list', async () => {
    const ledger = (await readLedger()).filter((r) => r.split !== 'real-dev');
    await expect(loadRealQuestions('real-dev', ledger)).rejects.toThrow(/not in eval\/SPLITS.md/);
  });
});

describe('the whole path through a listening service', () => {
  it('uploads, indexes and answers over the chat socket with the cited documents', async () => {
    const service = await serviceWith([
      {
        key: 'amoxicillin',
        title: 'Amoxicillin label',
        text: 'Amoxicillin label\nThe usual adult dose of amoxicillin is 500 mg every 12 hours.\n',
      },
      {
        key: 'aspirin',
        title: 'Aspirin label',
        text: 'Aspirin label\nDo not give aspirin to children or teenagers recovering from flu.\n',
      },
    ]);
    try {
      const answer = await service.ask('What is the usual adult dose of amoxicillin?');
      expect(answer.cited).toContain('amoxicillin');
      expect(answer.content).toContain('500 mg');
      const none = await service.ask('What time does the cafeteria close tonight?');
      expect(none.cited).toEqual([]);
    } finally {
      await service.close();
    }
  }, 120_000);
});
