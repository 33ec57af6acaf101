import { afterAll, beforeAll } from 'vitest';
import { PocketSphinxSttProvider } from '../src/providers/stt/pocketsphinx.js';
import { speak } from './helpers/speech-audio.js';
import { sttContract } from './helpers/stt-contract.js';

/** The SttProvider contract against PocketSphinx, on Flite speech made for the test. */

// Not "... of metformin": the word is not in cmudict, so the generic model can never produce it.
const SENTENCE = 'what is the dose of ibuprofen for children';

let provider: PocketSphinxSttProvider;
let speech: Buffer;

beforeAll(async () => {
  provider = new PocketSphinxSttProvider({ poolSize: 2 });
  [speech] = await Promise.all([speak(SENTENCE), provider.ready()]);
});
afterAll(() => provider.close());

sttContract('pocketsphinx', {
  provider: () => provider,
  speech: () => speech,
  keyWords: SENTENCE.split(' '),
  minWords: 5,
  partials: true,
});
