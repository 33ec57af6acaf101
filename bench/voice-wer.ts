import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readDictionaryWords } from '../src/providers/stt/kb-dictionary.js';
import { buildKbLanguageModel } from '../src/providers/stt/kb-language-model.js';
import {
  buildAdaptedModel,
  KB_MODEL_WEIGHT,
  type AdaptedBuild,
} from '../src/providers/stt/kb-adapted.js';
import { PocketSphinxSttProvider } from '../src/providers/stt/pocketsphinx.js';
import { num } from './lib/sections.js';
import { espeakPronunciations } from './lib/espeak-pronunciations.js';
import { frames, packageVersions, seconds } from './lib/wer-audio.js';
import { human, synthesised, type Clip, type Sentence, type Source } from './lib/wer-sources.js';
import { werWords, wordEdits } from './lib/wer.js';
import { type Result } from './lib/wer-report.js';
import { render, type RenderInput } from './lib/wer-render.js';

/**
 * Word error rate of the PocketSphinx recognizer, with the generic en-us language model and with
 * the knowledge base's model (built from eval/corpus) interpolated at several weights, once with
 * the recognizer's dictionary as it is and once with the corpus words it lacks added with Flite's
 * pronunciations (as the service does). Speech from three sources (bench/lib/wer-sources.ts):
 *
 * - Flite's slt and rms voices on clinical questions and everyday sentences: every model. The
 *   model and weight are chosen on the tuning half of the questions; the held-out half is only
 *   reported. The added pronunciations come from Flite's own letter-to-sound rules, so on these
 *   voices their gain is partly circular;
 * - eSpeak NG's voices on the same sentences, and a person's recordings shipped by Debian's
 *   Asterisk sound packages (everyday telephone-system phrases, and numbers): the generic model,
 *   the plain adapted model at the lowest weight and the service's model.
 *
 * Run: `make bench-voice-wer` (installs the packages) or `npx tsx bench/voice-wer.ts`.
 *
 * Knobs: VOICE_WER_WEIGHTS (0.3,0.5,0.7), VOICE_WER_DICT_WEIGHTS (0.2,0.3,0.5),
 * VOICE_WER_SOURCES (flite,espeak-ng,human), VOICE_WER_ESPEAK_VOICES (en-us,en-us+f2,en+m3),
 * VOICE_WER_LARGE_MB (50; 0 skips the builder's scale run), BENCH_WRITE=0 (do not touch
 * BENCHMARKS.md), VOICE_WER_PHRASES_EVERY (2: every nth of the person's phrases),
 * VOICE_WER_BANDS (16k,8k: the person's recordings to use),
 * VOICE_WER_RENDER=<render.json of earlier runs, comma-separated> (only write their figures, as
 * one: runs that each recognised some of the sources).
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const FLITE_VOICES = ['slt', 'rms'];
const ESPEAK_VOICES = (process.env.VOICE_WER_ESPEAK_VOICES ?? 'en-us,en-us+f2,en+m3').split(',');
const SOURCES = (process.env.VOICE_WER_SOURCES ?? 'flite,espeak-ng,human').split(',');
const WEIGHTS = (process.env.VOICE_WER_WEIGHTS ?? '0.3,0.5,0.7')
  .split(',')
  .filter((w) => w !== '')
  .map(Number);
const DICT_WEIGHTS = (process.env.VOICE_WER_DICT_WEIGHTS ?? '0.2,0.3,0.5').split(',').map(Number);
const LARGE_MB = num('VOICE_WER_LARGE_MB', 50);
const PHRASES_EVERY = num('VOICE_WER_PHRASES_EVERY', 2);
const BANDS = (process.env.VOICE_WER_BANDS ?? '16k,8k').split(',').map((b) => `person ${b}`);
const WRITE = process.env.BENCH_WRITE !== '0';
const CONCURRENCY = 2;
/** Long clips on a busy machine decode slowly; a stuck decoder still ends within this. */
const ANSWER_TIMEOUT_MS = 1_800_000;

function loadSentences(): Sentence[] {
  const read = (file: string): unknown =>
    JSON.parse(readFileSync(path.join(ROOT, 'bench/data', file), 'utf8'));
  const questions = (read('voice-questions.json') as { questions: Sentence[] }).questions;
  const general = (read('general-sentences.json') as { sentences: Omit<Sentence, 'split'>[] })
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
 * get Flite's pronunciations (or, with `pronounce`, another source's) and stay in the model; the
 * recognizer adds them to its dictionary when it loads the model.
 */
async function extendedModel(
  corpus: string[],
  file: string,
  pronounce?: (words: string[]) => Promise<Map<string, string>>,
) {
  const model = await buildAdaptedModel(corpus, undefined, pronounce);
  writeFileSync(file, model.arpa);
  console.log(
    `${path.basename(file)}: ${model.words.length} words added; ${model.ngrams.join('/')} n-grams`,
  );
  return { arpaPath: file, words: model.words };
}

async function recognise(provider: PocketSphinxSttProvider, pcm: Buffer) {
  const started = performance.now();
  let text = '';
  for await (const event of provider.transcribe(frames(pcm), {
    signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
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

interface Run {
  arpaPath: string;
  /** Pronunciations the model needs added to the dictionary. */
  words: AdaptedBuild['words'];
  /** "generic" or "<family> <weight>". */
  names: string[];
}

/** Every clip recognised with every model of every run that `wants` it. */
async function recogniseAll(
  clips: readonly Clip[],
  runs: readonly Run[],
  wants: (clip: Clip, config: string) => boolean,
  isWord: (w: string) => boolean,
  /** Called with the results so far after each model. */
  onConfig: (results: readonly Result[]) => void,
): Promise<Result[]> {
  const results: Result[] = [];
  for (const run of runs) {
    // The audio arrives all at once, not in real time: the decoder may owe its answer for as long
    // as a whole clip takes to decode, longer than the service's watchdog allows under load.
    const provider = new PocketSphinxSttProvider({
      poolSize: CONCURRENCY,
      answerTimeoutMs: ANSWER_TIMEOUT_MS,
    });
    try {
      await provider.ready();
      for (const name of run.names) {
        const mine = clips.filter((clip) => wants(clip, name));
        if (mine.length === 0) continue;
        const weight = Number(name.split(' ')[1] ?? 0);
        const { arpaPath, words } = run;
        await provider.setAdaptedModel(weight > 0 ? { arpaPath, weight, words } : null);
        const started = performance.now();
        const recognised = await mapLimit(mine, CONCURRENCY, (clip) =>
          recognise(provider, clip.pcm),
        );
        mine.forEach((clip, i) => {
          const { text, decodeSeconds } = recognised[i]!;
          results.push({
            config: name,
            source: clip.source,
            voice: clip.voice,
            split: clip.split,
            id: clip.id,
            edits: wordEdits(clip.reference, werWords(text, { isWord })),
            hypothesis: text,
            audioSeconds: seconds(clip.pcm),
            decodeSeconds,
          });
        });
        onConfig(results);
        const secs = ((performance.now() - started) / 1000).toFixed(0);
        console.log(`${name}: ${mine.length} clips in ${secs} s`);
      }
    } finally {
      await provider.close();
    }
  }
  return results;
}

/** How this run was started: the make target, or the script with the knobs that were set. */
function commandLine(): string {
  const knobs = Object.entries(process.env)
    .filter(([name]) => name.startsWith('VOICE_WER_') && name !== 'VOICE_WER_RENDER')
    .map(([name, value]) => `${name}=${value ?? ''}`)
    .sort();
  if (knobs.length === 0) return '`make bench-voice-wer` (`npx tsx bench/voice-wer.ts`)';
  return `\`${knobs.join(' ')} npx tsx bench/voice-wer.ts\``;
}

/** The sources VOICE_WER_SOURCES names, each with its clips (or the reasons it has none). */
async function loadSources(isWord: (w: string) => boolean): Promise<Source[]> {
  const sentences = loadSentences();
  const sources: Source[] = [];
  if (SOURCES.includes('flite')) {
    sources.push(await synthesised('flite', 'flite', FLITE_VOICES, sentences, isWord));
  }
  if (SOURCES.includes('espeak-ng')) {
    sources.push(await synthesised('espeak-ng', 'espeak-ng', ESPEAK_VOICES, sentences, isWord));
  }
  if (SOURCES.includes('human')) {
    sources.push(await human(isWord, undefined, PHRASES_EVERY, BANDS));
  }
  for (const source of sources) {
    const words = source.clips.reduce((n, c) => n + c.reference.length, 0);
    console.log(`${source.name}: ${source.clips.length} clips, ${words} reference words`);
    for (const skipped of source.skipped) console.log(`${source.name}: skipped ${skipped}`);
  }
  return sources;
}

async function main() {
  const dictionary = await readDictionaryWords();
  const isWord = (w: string) => dictionary.has(w);
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
  const extended = await extendedModel(corpus, path.join(dir, 'kb-extended.arpa'));
  // The experiment: the same words with eSpeak NG's pronunciations instead of Flite's.
  const espeak = await extendedModel(corpus, path.join(dir, 'kb-espeak.arpa'), (words) =>
    espeakPronunciations(words),
  );
  console.log(
    `model: ${model.ngrams.join('/')} n-grams in ${buildMs.toFixed(0)} ms -> ${arpaPath}`,
  );

  const sources = await loadSources(isWord);
  const clips = sources.flatMap((s) => s.clips);
  const service = `adapted+dict ${KB_MODEL_WEIGHT}`;
  const runs: Run[] = [
    {
      arpaPath,
      words: [],
      names: ['generic', ...WEIGHTS.map((w) => `adapted ${w}`)],
    },
    {
      arpaPath: extended.arpaPath,
      words: extended.words,
      names: [...new Set([...DICT_WEIGHTS, KB_MODEL_WEIGHT])].map((w) => `adapted+dict ${w}`),
    },
  ];
  const fliteConfigs = runs.flatMap((r) => r.names);
  const experiment = `adapted+espeak ${KB_MODEL_WEIGHT}`;
  runs.push({ arpaPath: espeak.arpaPath, words: espeak.words, names: [experiment] });
  // Elsewhere: the generic model, the knowledge base's words alone, and the service's model.
  const otherConfigs = [
    'generic',
    ...(WEIGHTS.length > 0 ? [`adapted ${Math.min(...WEIGHTS)}`] : []),
    service,
  ];
  // The experiment changes only the clinical words' pronunciations: the person says none of them.
  const wants = (clip: Clip, config: string) =>
    (config === experiment && clip.source !== 'human') ||
    (clip.source === 'flite' ? fliteConfigs : otherConfigs).includes(config);
  // Written after each model, so a run cut short keeps what it measured.
  const save = (results: readonly Result[]) => {
    writeFileSync(path.join(dir, 'results.json'), JSON.stringify(results, null, 1));
  };
  const results = await recogniseAll(clips, runs, wants, isWord, save);
  console.log(`hypotheses: ${path.join(dir, 'results.json')}`);
  const large = await buildLargeModel();
  const input: RenderInput = {
    results,
    sources: sources.map(({ clips: sourceClips, ...rest }) => ({
      ...rest,
      clipCount: sourceClips.length,
      oov: [...new Set(sourceClips.flatMap((c) => c.reference).filter((w) => !isWord(w)))].sort(),
    })),
    fliteConfigs,
    otherConfigs,
    service,
    experiment: {
      config: experiment,
      added: espeak.words.map((w) => w.word),
      differing: espeak.words.filter((w) =>
        extended.words.some((f) => f.word === w.word && f.phones !== w.phones),
      ).length,
    },
    model: { ngrams: model.ngrams, buildMs, stats: model.stats },
    large,
    added: extended.words.map((w) => w.word),
    versions: await packageVersions(),
    command: commandLine(),
    phrasesEvery: PHRASES_EVERY,
    write: WRITE,
  };
  const saved = path.join(dir, 'render.json');
  writeFileSync(saved, JSON.stringify(input));
  console.log(`figures: ${saved} (VOICE_WER_RENDER=${saved} renders them again)`);
  await render(input);
}

/** The figures of runs that each recognised some of the sources, as one. */
function merged(files: string[]): RenderInput {
  const runs = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as RenderInput);
  const [first] = runs;
  if (!first) throw new Error('VOICE_WER_RENDER names no file');
  const union = (pick: (r: RenderInput) => string[]) => [...new Set(runs.flatMap(pick))];
  return {
    ...first,
    // Flite's models: those of the runs that spoke with Flite.
    fliteConfigs: union((r) => (r.sources.some((s) => s.name === 'flite') ? r.fliteConfigs : [])),
    otherConfigs: union((r) => r.otherConfigs),
    results: runs.flatMap((r) => r.results),
    sources: runs.flatMap((r) => r.sources),
    large: runs.find((r) => r.large !== undefined)?.large,
    command: [...new Set(runs.map((r) => r.command))].join(' and '),
  };
}

if (process.env.VOICE_WER_RENDER) {
  await render({ ...merged(process.env.VOICE_WER_RENDER.split(',')), write: WRITE });
} else {
  await main();
}
