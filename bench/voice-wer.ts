import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readDictionaryWords } from '../src/providers/stt/kb-dictionary.js';
import { buildKbLanguageModel } from '../src/providers/stt/kb-language-model.js';
import { buildAdaptedModel, type AdaptedBuild } from '../src/providers/stt/kb-adapted.js';
import { PocketSphinxSttProvider } from '../src/providers/stt/pocketsphinx.js';
import { spokenText } from '../src/providers/stt/spoken-words.js';
import { num } from './lib/sections.js';
import { frames, packageVersions, seconds, speak } from './lib/wer-audio.js';
import { werWords, wordEdits } from './lib/wer.js';
import { type Result, type Split } from './lib/wer-report.js';
import { render } from './lib/wer-render.js';

/**
 * Word error rate of the PocketSphinx recognizer on clinical questions about the evaluation
 * corpus and on everyday English, each spoken by Flite's slt and rms voices, with the generic
 * en-us language model and with the knowledge base's model (built from eval/corpus) interpolated
 * at several weights, once with the recognizer's dictionary as it is and once with the corpus
 * words it lacks added with Flite's pronunciations (as the service does). The model and weight are chosen on the tuning half of the questions; the held-out half
 * is only reported. Run: `npx tsx bench/voice-wer.ts`.
 *
 * Knobs: VOICE_WER_WEIGHTS (0.3,0.5,0.7), VOICE_WER_DICT_WEIGHTS (0.2,0.3,0.5),
 * VOICE_WER_LARGE_MB (50; 0 skips the builder's scale
 * run), BENCH_WRITE=0 (do not touch BENCHMARKS.md).
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const VOICES = ['slt', 'rms'] as const;
const WEIGHTS = (process.env.VOICE_WER_WEIGHTS ?? '0.3,0.5,0.7').split(',').map(Number);
const DICT_WEIGHTS = (process.env.VOICE_WER_DICT_WEIGHTS ?? '0.2,0.3,0.5').split(',').map(Number);
const LARGE_MB = num('VOICE_WER_LARGE_MB', 50);
const WRITE = process.env.BENCH_WRITE !== '0';
const CONCURRENCY = 2;

interface Item {
  id: string;
  split: Split;
  text: string;
}

function loadItems(): Item[] {
  const read = (file: string): unknown =>
    JSON.parse(readFileSync(path.join(ROOT, 'bench/data', file), 'utf8'));
  const questions = (read('voice-questions.json') as { questions: Item[] }).questions;
  const general = (read('general-sentences.json') as { sentences: Omit<Item, 'split'>[] })
    .sentences;
  return [...questions, ...general.map((s) => ({ ...s, split: 'general' as const }))];
}

const exec = promisify(execFile);

async function buildLargeModel() {
  if (LARGE_MB <= 0) return undefined;
  const { stdout } = await exec(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench/lib/wer-large.ts'), String(LARGE_MB)],
    { cwd: ROOT, maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

/**
 * The model as the service builds it (buildAdaptedModel): the corpus's out-of-dictionary words
 * get Flite's pronunciations and stay in the model; the recognizer adds them to its dictionary
 * when it loads the model.
 */
async function extendedModel(corpus: string[], dir: string) {
  const model = await buildAdaptedModel(corpus);
  const arpaPath = path.join(dir, 'kb-extended.arpa');
  writeFileSync(arpaPath, model.arpa);
  console.log(`extended: ${model.words.length} words added; ${model.ngrams.join('/')} n-grams`);
  return { arpaPath, words: model.words };
}

async function recognise(provider: PocketSphinxSttProvider, pcm: Buffer) {
  const started = performance.now();
  let text = '';
  for await (const event of provider.transcribe(frames(pcm), {
    signal: AbortSignal.timeout(60_000),
  })) {
    if (event.type === 'final') text = event.text;
  }
  return { text, decodeSeconds: (performance.now() - started) / 1000 };
}

/** Runs `work` over `items`, `limit` at a time, keeping the results in order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>) {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return out;
}

type Clip = Item & { voice: string; reference: string[]; pcm: Buffer };

/** Each item spoken by each voice, with its normalised reference. */
async function synthesise(items: readonly Item[], isWord: (w: string) => boolean): Promise<Clip[]> {
  const clips: Clip[] = [];
  for (const voice of VOICES) {
    for (const item of items) {
      const spoken = spokenText(item.text, { isWord });
      clips.push({
        ...item,
        voice,
        reference: werWords(item.text, { isWord }),
        pcm: await speak(spoken, voice),
      });
    }
  }

  return clips;
}

interface Run {
  arpaPath: string;
  /** Pronunciations the model needs added to the dictionary. */
  words: AdaptedBuild['words'];
  /** "generic" or "<family> <weight>". */
  names: string[];
}

/** Every clip recognised with every model of every run. */
async function recogniseAll(
  clips: readonly Clip[],
  runs: readonly Run[],
  isWord: (w: string) => boolean,
): Promise<Result[]> {
  const results: Result[] = [];
  for (const run of runs) {
    const provider = new PocketSphinxSttProvider({ poolSize: CONCURRENCY });
    try {
      await provider.ready();
      for (const name of run.names) {
        const weight = Number(name.split(' ')[1] ?? 0);
        const { arpaPath, words } = run;
        await provider.setAdaptedModel(weight > 0 ? { arpaPath, weight, words } : null);
        const recognised = await mapLimit(clips, CONCURRENCY, (clip) =>
          recognise(provider, clip.pcm),
        );
        clips.forEach((clip, i) => {
          const { text, decodeSeconds } = recognised[i]!;
          results.push({
            config: name,
            voice: clip.voice,
            split: clip.split,
            id: clip.id,
            edits: wordEdits(clip.reference, werWords(text, { isWord })),
            hypothesis: text,
            audioSeconds: seconds(clip.pcm),
            decodeSeconds,
          });
        });
        console.log(`${name}: done`);
      }
    } finally {
      await provider.close();
    }
  }
  return results;
}

async function main() {
  const dictionary = await readDictionaryWords();
  const isWord = (w: string) => dictionary.has(w);
  const items = loadItems();
  const corpusDir = path.join(ROOT, 'eval/corpus');
  const corpus = readdirSync(corpusDir)
    .sort()
    .map((f) => readFileSync(path.join(corpusDir, f), 'utf8'));
  const buildStarted = performance.now();
  const model = buildKbLanguageModel(corpus, { dictionary });
  const buildMs = performance.now() - buildStarted;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'voice-wer-'));
  const arpaPath = path.join(dir, 'kb.arpa');
  writeFileSync(arpaPath, model.arpa);
  const extended = await extendedModel(corpus, dir);
  console.log(
    `model: ${model.ngrams.join('/')} n-grams in ${buildMs.toFixed(0)} ms -> ${arpaPath}`,
  );

  const clips = await synthesise(items, isWord);
  const oov = [...new Set(clips.flatMap((c) => c.reference).filter((w) => !isWord(w)))].sort();
  console.log(`${clips.length} clips; reference words outside the dictionary: ${oov.join(' ')}`);
  const runs = [
    {
      arpaPath,
      words: [],
      names: ['generic', ...WEIGHTS.map((w) => `adapted ${w}`)],
    },
    {
      arpaPath: extended.arpaPath,
      words: extended.words,
      names: DICT_WEIGHTS.map((w) => `adapted+dict ${w}`),
    },
  ];
  const results = await recogniseAll(clips, runs, isWord);
  writeFileSync(
    path.join(path.dirname(arpaPath), 'results.json'),
    JSON.stringify(results, null, 1),
  );
  console.log(`hypotheses: ${path.join(path.dirname(arpaPath), 'results.json')}`);
  const large = await buildLargeModel();
  await render({
    results,
    voices: VOICES,
    configs: runs.flatMap((r) => r.names),
    model: { ngrams: model.ngrams, buildMs, stats: model.stats },
    large,
    oov,
    added: {
      words: extended.words.length,
      inReferences: oov.filter((w) => extended.words.some((a) => a.word === w)),
    },
    clipCount: clips.length,
    versions: await packageVersions(),
    write: WRITE,
  });
}

await main();
