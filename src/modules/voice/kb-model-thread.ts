import { writeFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { buildAdaptedModel } from '../../providers/stt/kb-adapted.js';

/** Builds the knowledge base's language model off the main thread and writes it as ARPA. */

export interface KbModelTask {
  texts: string[];
  dictionaryPath: string;
  arpaPath: string;
}

export interface KbModelResult {
  ngrams: [number, number, number];
  words: { word: string; phones: string }[];
}

const task = workerData as KbModelTask;
const model = await buildAdaptedModel(task.texts, task.dictionaryPath);
if (model.ngrams[0] > 2) await writeFile(task.arpaPath, model.arpa, 'utf8');
parentPort?.postMessage({ ngrams: model.ngrams, words: model.words } satisfies KbModelResult);
