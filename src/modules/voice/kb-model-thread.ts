import { writeFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { readDictionaryWords } from '../../providers/stt/kb-dictionary.js';
import { buildKbLanguageModel } from '../../providers/stt/kb-language-model.js';

/** Builds the knowledge base's language model off the main thread and writes it as ARPA. */

export interface KbModelTask {
  texts: string[];
  dictionaryPath: string;
  arpaPath: string;
}

export interface KbModelResult {
  ngrams: [number, number, number];
}

const task = workerData as KbModelTask;
const dictionary = await readDictionaryWords(task.dictionaryPath);
const model = buildKbLanguageModel(task.texts, { dictionary });
if (model.ngrams[0] > 2) await writeFile(task.arpaPath, model.arpa, 'utf8');
parentPort?.postMessage({ ngrams: model.ngrams } satisfies KbModelResult);
