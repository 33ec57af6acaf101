import os from 'node:os';
import type { CountStats } from '../../src/providers/stt/kb-counts.js';
import { CLINICAL_NUMBERS } from './asterisk-prompts.js';
import { table, writeSection } from './sections.js';
import {
  chooseModel,
  deltaTable,
  werOf,
  werOver,
  werTable,
  type Result,
  type Split,
} from './wer-report.js';

/** The Markdown section of bench/voice-wer.ts. */

/** A source of speech as the section describes it. */
export interface SourceSummary {
  name: string;
  voices: string[];
  splits: Split[];
  skipped: string[];
  clipCount: number;
  /** Reference words outside the recognizer's dictionary. */
  oov: string[];
}

export interface RenderInput {
  results: Result[];
  sources: SourceSummary[];
  /** Every model, run on Flite's voices; the first is the generic model. */
  fliteConfigs: string[];
  /** The models run on the other sources: generic, the plain adapted model, the service's. */
  otherConfigs: string[];
  /** The service's model. */
  service: string;
  /**
   * Run on every source, never chosen: the service's model with eSpeak NG's pronunciations for
   * the added words instead of Flite's (how many words got one; how many differ from Flite's).
   */
  experiment: { config: string; added: string[]; differing: number };
  model: { ngrams: [number, number, number]; buildMs: number; stats: CountStats };
  large: Record<string, unknown> | undefined;
  /** Corpus words given Flite's pronunciations. */
  added: string[];
  versions: string;
  /** How the run (or runs) were started. */
  command: string;
  /** Every nth of the person's phrases was kept (1: all). */
  phrasesEvery: number;
  write: boolean;
}

const MAX_GENERAL_DELTA = 0.03;
const NOISE =
  'Figures move a little from run to run: the decoders keep state from one utterance to the next ' +
  "(probably PocketSphinx's running cepstral mean), and which decoder gets which clip varies. Over " +
  "three runs the generic model's figures moved by up to 0.02; one word of a voice's general set " +
  'is 0.005, so read a general-English delta near the bound as at its edge.';

function machine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  const gib = (os.totalmem() / 2 ** 30).toFixed(1);
  return `${cpu}, ${os.cpus().length} cores, ${gib} GiB, load average ${os.loadavg()[0]?.toFixed(2) ?? '?'} at the end; Node ${process.version}`;
}

function largeLine(large: Record<string, unknown> | undefined): string {
  if (!large) return 'Builder at scale: not run (VOICE_WER_LARGE_MB=0).';
  const n = large.ngrams as number[];
  const mb = large.megabytes as number;
  const secs = (large.seconds as number).toFixed(1);
  const rss = (large.peakRssMiB as number).toFixed(0);
  const arpa = (large.arpaMB as number).toFixed(1);
  return (
    `Builder at scale: a synthetic ${mb} MB knowledge base (bench/lib/wer-synthetic.ts, ` +
    `${String(large.tokens)} words) builds in ${secs} s with a peak RSS of ${rss} MiB ` +
    `(the whole process, dictionary included) into ${n.join(' / ')} 1/2/3-grams, ${arpa} MB of ARPA; ` +
    droppedLine(large.droppedWhileCounting as { bigrams: number; trigrams: number })
  );
}

function droppedLine(dropped: { bigrams: number; trigrams: number }): string {
  if (dropped.bigrams === 0 && dropped.trigrams === 0) return 'counting stayed within its caps.';
  return (
    `to stay within its caps, counting dropped bigrams seen at most ${dropped.bigrams} and ` +
    `trigrams seen at most ${dropped.trigrams} times so far.`
  );
}

const f = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(3));
const signed = (x: number) => (x >= 0 ? `+${x.toFixed(3)}` : x.toFixed(3));

const SET_NAMES: Readonly<Record<Split, string>> = {
  tune: 'clinical questions (tuning)',
  heldout: 'clinical questions (held-out)',
  general: 'everyday sentences',
  phrases: 'recorded phrases',
  numbers: 'recorded numbers',
};

const SOURCE_NAMES: Readonly<Record<string, string>> = {
  flite: 'Flite',
  'espeak-ng': 'eSpeak NG',
  human: 'a person (Asterisk)',
};

/** The plain adapted model the other sources ran, if any ('' when none). */
const plainOf = (input: RenderInput) =>
  input.otherConfigs.find((c) => c.startsWith('adapted ')) ?? '';

/** Generic against the service's model, each source's voices pooled, set by set. */
function bySourceTable(input: RenderInput): string {
  const { results, service } = input;
  const plain = plainOf(input);
  const rows = input.sources.flatMap((source) =>
    source.voices.length === 0
      ? []
      : source.splits.map((split) => {
          const words = results
            .filter(
              (r) => r.config === 'generic' && source.voices.includes(r.voice) && r.split === split,
            )
            .reduce((n, r) => n + r.edits.words, 0);
          const generic = werOver(results, 'generic', source.voices, split);
          const adapted = werOver(results, service, source.voices, split);
          return [
            SOURCE_NAMES[source.name] ?? source.name,
            source.voices.join(', '),
            SET_NAMES[split],
            words,
            f(generic),
            ...(plain === '' ? [] : [f(werOver(results, plain, source.voices, split))]),
            f(adapted),
            signed(adapted - generic),
            f(werOver(results, input.experiment.config, source.voices, split)),
          ];
        }),
  );
  return table(
    [
      'source',
      'voices',
      'set',
      'words',
      'generic',
      ...(plain === '' ? [] : [plain]),
      `${service} (service)`,
      'delta',
      `${input.experiment.config} (experiment)`,
    ],
    rows,
  );
}

function fliteSection(input: RenderInput, flite: SourceSummary): string[] {
  const { results, fliteConfigs: configs } = input;
  const voices = flite.voices;
  const withinBound = chooseModel(results, voices, configs.slice(1), MAX_GENERAL_DELTA);
  // With none within the bound, the best on the tuning split is shown against the generic model.
  const chosen = withinBound ?? chooseModel(results, voices, configs.slice(1), Infinity);
  const tuning = voices.map((v) => `${v} ${werOf(results, chosen ?? '', v, 'tune').toFixed(3)}`);
  const why =
    withinBound === undefined
      ? `No model kept general English within ${MAX_GENERAL_DELTA} of the generic model on every voice; the table above compares ${chosen ?? 'none'} with it: the lowest clinical WER on the tuning questions (${tuning.join(', ')}).`
      : `Chosen: ${withinBound}, the lowest clinical WER on the tuning questions (mean of the voices: ${tuning.join(', ')}) among the models whose general-English WER stays within ${MAX_GENERAL_DELTA} of the generic model on both voices. Held-out figures played no part. ${serviceLine(input, withinBound, voices)}`;
  return [
    "### Flite's voices: every model",
    '',
    werTable(results, [...configs, input.experiment.config], voices),
    '',
    ...(chosen
      ? [
          '#### Chosen weight against the generic model',
          '',
          deltaTable(results, chosen, voices),
          '',
        ]
      : []),
    why,
    '',
  ];
}

function otherSection(input: RenderInput, source: SourceSummary, title: string): string[] {
  if (source.voices.length === 0) return [];
  const configs = [
    ...input.otherConfigs,
    ...(source.name === 'human' ? [] : [input.experiment.config]),
  ];
  return [title, '', werTable(input.results, configs, source.voices, source.splits), ''];
}

/** How many words are wrong, said plainly ("one word in 4", "about 7 words in 10"). */
const oneIn = (wer: number) => {
  if (wer <= 0) return 'no word';
  return wer < 0.45
    ? `one word in ${String(Math.round(1 / wer))}`
    : `about ${String(Math.round(wer * 10))} words in 10`;
};

/**
 * Which model the service runs, and, when this run's rule chose another, by how much the two
 * differ on the tuning questions (the measure the rule compares).
 */
function serviceLine(input: RenderInput, chosen: string, voices: readonly string[]): string {
  const { service, results } = input;
  if (chosen === service) return `The service runs ${service}.`;
  const mean = (config: string) =>
    voices.reduce((sum, v) => sum + werOf(results, config, v, 'tune'), 0) / voices.length;
  const gap = mean(service) - mean(chosen);
  return `The service runs ${service}, chosen by the same rule in an earlier run; here it is ${gap.toFixed(3)} behind on the tuning questions (the mean of the voices), ${gap <= 0.02 ? 'within the run-to-run spread of 0.02 (below), so it was not changed' : 'more than the run-to-run spread of 0.02 (below): the choice should be made again'}.`;
}

/**
 * What a clinician can expect (from the person's recordings and eSpeak NG's voices, never from
 * Flite's), and why Flite's held-out gain is no general figure.
 */
function expectations(input: RenderInput): string[] {
  const { results, service, experiment } = input;
  const voices = (name: string) => input.sources.find((s) => s.name === name)?.voices ?? [];
  const wer = (config: string, name: string, split: Split, only?: string) =>
    werOver(results, config, only ? [only] : voices(name), split);
  const lines: string[] = [];
  const person = voices('human');
  const espeak = voices('espeak-ng');
  if (person.length > 0 || espeak.length > 0) {
    const parts: string[] = [];
    if (person.includes('person 16k')) {
      const g = wer('generic', 'human', 'phrases', 'person 16k');
      const a = wer(service, 'human', 'phrases', 'person 16k');
      parts.push(
        `On a person's recorded everyday phrases (wideband, as from a headset or a browser), the service's model got ${f(a)} of the words wrong (${oneIn(a)}; generic model ${f(g)})`,
      );
    }
    if (person.includes('person 8k')) {
      const a = wer(service, 'human', 'phrases', 'person 8k');
      parts.push(`over the telephone band ${f(a)} (${oneIn(a)})`);
    }
    if (person.length > 0) {
      const a = wer(service, 'human', 'numbers');
      const g = wer('generic', 'human', 'numbers');
      parts.push(`numbers said one word at a time ${f(a)} (generic ${f(g)})`);
    }
    if (espeak.length > 0) {
      const heldout = wer(service, 'espeak-ng', 'heldout');
      const generic = wer('generic', 'espeak-ng', 'heldout');
      parts.push(
        `and clinical questions in eSpeak NG's voices, whose pronunciations are not the ones the service added, ${f(heldout)} on the held-out questions (${oneIn(heldout)}; generic model ${f(generic)})`,
      );
    }
    lines.push(
      `**What a clinician speaking can expect.** No clinician was recorded: the nearest measures are a person's recordings (not clinical questions) and a second speech engine's voices on the clinical questions. ${parts.join('; ')}. A clinician's own speech, accent, microphone and room will differ from all of these; Flite's figures are not a guide to it.`,
      '',
    );
  }
  const flite = voices('flite');
  if (flite.length > 0) {
    const g = wer('generic', 'flite', 'heldout');
    const a = wer(service, 'flite', 'heldout');
    const plainConfig = plainOf(input);
    const plain = wer(plainConfig, 'flite', 'heldout');
    const crossed =
      espeak.length > 0
        ? ` The same model on eSpeak NG's voices: held-out ${f(wer('generic', 'espeak-ng', 'heldout'))} -> ${f(wer(service, 'espeak-ng', 'heldout'))}. With eSpeak NG's pronunciations instead (${experiment.config}), Flite's held-out questions came out at ${f(wer(experiment.config, 'flite', 'heldout'))} and eSpeak NG's at ${f(wer(experiment.config, 'espeak-ng', 'heldout'))}: each set of pronunciations is partly circular on its own engine's voices, so only the crossed figures (Flite's pronunciations on eSpeak NG's voices, eSpeak NG's on Flite's) compare the two fairly.`
        : '';
    lines.push(
      `**Flite's held-out gain is partly circular.** On Flite's voices the held-out clinical WER falls from ${f(g)} (generic) to ${f(a)} (${service}), of which ${f(g)} -> ${f(plain)} comes from the knowledge base's word sequences alone (${plainConfig}). The rest comes from the words the dictionary lacks, whose pronunciations are Flite's own letter-to-sound rules (\`t2p\`): Flite's voices say those words by exactly those rules, so the added pronunciations match the test audio as no speaker would.${crossed}`,
      '',
    );
  }
  return lines;
}

export async function render(input: RenderInput): Promise<void> {
  const source = (name: string) => input.sources.find((s) => s.name === name);
  const flite = source('flite');
  const espeak = source('espeak-ng');
  const person = source('human');
  const words = input.model.stats.outOfDictionaryWords.slice(0, 12).map((w) => w.word);
  const skipped = input.sources.flatMap((s) =>
    s.skipped.map((why) => `${SOURCE_NAMES[s.name] ?? s.name} ${why}`),
  );
  const inReferences = (s: SourceSummary | undefined) =>
    (s?.oov ?? []).filter((w) => input.added.includes(w));
  const oovLine = input.sources
    .map(
      (s) => `${SOURCE_NAMES[s.name] ?? s.name}: ${s.oov.length === 0 ? 'none' : s.oov.join(', ')}`,
    )
    .join('; ');
  const markdown = [
    '## Voice: word error rate',
    '',
    'Written by `bench/voice-wer.ts`; edit the script, not this section.',
    '',
    input.command.startsWith('`make bench-voice-wer`')
      ? `- Command: ${input.command}; it installs the Debian packages below when absent, then runs every source and model`
      : `- Command: ${input.command} (\`make bench-voice-wer\` installs the Debian packages below when absent, then runs \`npx tsx bench/voice-wer.ts\` with every source and model)`,
    `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    `- Machine: ${machine()}; ${input.versions}.`,
    `- Speech: ${input.sources.map((s) => `${SOURCE_NAMES[s.name] ?? s.name} ${s.clipCount} clips`).join(', ')}. The clinical questions (bench/data/voice-questions.json; 20 tuning, 20 held-out) and everyday sentences (bench/data/general-sentences.json, 20) are spoken by Flite's ${flite?.voices.join(' and ') ?? ''} voices and by eSpeak NG's ${espeak?.voices.join(', ') ?? ''} (\`espeak-ng -v\`). The person is Debian's Asterisk sound packages' speaker: phrases = ${input.phrasesEvery > 1 ? `one in ${String(input.phrasesEvery)}, in the transcript's order, of the prompts` : 'every prompt'} of the transcript (asterisk-core-sounds-en's core-sounds-en.txt.gz) that is what is said (no \`( )\`/\`[ ]\` description, no \`*\` or \`#\`) with 3 to 25 words, outside the digits, letters, phonetic and silence folders (bench/lib/asterisk-prompts.ts): everyday telephone-system phrases, some with digits ("press 1"), not clinical questions; numbers = ${CLINICAL_NUMBERS.length} doses, ages and readings (${CLINICAL_NUMBERS.slice(0, 4).join(', ')} … ${CLINICAL_NUMBERS.at(-1)}) joined from the recordings of their words the way Asterisk says numbers. person 16k = the wideband G.722 recordings (asterisk-core-sounds-en-g722, decoded by libspandsp2); person 8k = the same prompts' telephone-band 8 kHz WAV (asterisk-core-sounds-en-wav), upsampled. Every clip is converted by the same sox command to 16 kHz PCM16 mono and fed to \`PocketSphinxSttProvider\` in 100 ms pieces without pacing, two utterances at a time (2 decoder threads).`,
    '- WER: word-level Levenshtein distance over reference words, summed over a set; reference and hypothesis normalised alike (src/providers/stt/spoken-words.ts: lower case, numbers and units as words as the recognizer writes them, abbreviations as said, no punctuation). RTF: decoding wall time (first audio to final) over audio duration.',
    `- Models: generic = Debian's en-us.lm.bin; adapted w = the knowledge-base model built from eval/corpus by \`buildKbLanguageModel\` (${input.model.ngrams.join(' / ')} 1/2/3-grams in ${input.model.buildMs.toFixed(0)} ms) interpolated with it, w its share; adapted+dict w = the same with the ${input.added.length} corpus words the dictionary lacks added to it with Flite's letter-to-sound pronunciations (\`t2p\`; src/providers/stt/kb-adapted.ts, exactly what the service builds; the recognizer loads cmudict plus those words when it loads the model) and the model rebuilt with them (reference words among them: ${inReferences(flite ?? espeak).join(', ')}). Flite's voices run every model; the other sources run ${input.otherConfigs.join(', ')}. ${input.experiment.config} (an experiment, never chosen; not run on the person, who says none of the words it changes) = adapted+dict with eSpeak NG's pronunciations instead of Flite's (\`espeak-ng --ipa -v en-us\` mapped to the CMU phones, bench/lib/espeak-pronunciations.ts: ${input.experiment.added.length} words, ${input.experiment.differing} of them pronounced differently from Flite's).`,
    `- Reference words outside cmudict (never recognised without added pronunciations): ${oovLine}. Most frequent corpus words outside it (cut from the plain adapted model): ${words.join(', ')}.`,
    ...(skipped.length > 0 ? [`- Skipped: ${skipped.join('; ')}.`] : []),
    '',
    ...(flite
      ? fliteSection(input, flite)
      : [
          "Flite's voices were not run this time (VOICE_WER_SOURCES): their table, and the choice of the service's weight, are those of the last run that had them, in this file's history.",
          '',
        ]),
    ...(espeak ? otherSection(input, espeak, "### eSpeak NG's voices: the same sentences") : []),
    ...(person ? otherSection(input, person, '### A person: Asterisk recordings') : []),
    "### Generic against the service's model, by source",
    '',
    "Each source's voices pooled: all their errors over all their words.",
    '',
    bySourceTable(input),
    '',
    ...expectations(input),
    NOISE,
    '',
    largeLine(input.large),
  ].join('\n');
  await writeSection('voice-wer', markdown, input.write);
}
