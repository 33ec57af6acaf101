import os from 'node:os';
import type { CountStats } from '../../src/providers/stt/kb-counts.js';
import { writeSection } from './sections.js';
import { chooseModel, deltaTable, werOf, werTable, type Result } from './wer-report.js';

/** The Markdown section of bench/voice-wer.ts. */

export interface RenderInput {
  results: Result[];
  voices: readonly string[];
  configs: readonly string[];
  model: { ngrams: [number, number, number]; buildMs: number; stats: CountStats };
  large: Record<string, unknown> | undefined;
  oov: string[];
  /** Corpus words given Flite's pronunciations, and those of the reference words among them. */
  added: { words: number; inReferences: string[] };
  clipCount: number;
  versions: string;
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

export async function render(input: RenderInput): Promise<void> {
  const { results, voices, configs } = input;
  const withinBound = chooseModel(results, voices, configs.slice(1), MAX_GENERAL_DELTA);
  // With none within the bound, the best on the tuning split is shown against the generic model.
  const chosen = withinBound ?? chooseModel(results, voices, configs.slice(1), Infinity);
  const words = input.model.stats.outOfDictionaryWords.slice(0, 12).map((w) => w.word);
  const tuning = voices.map((v) => `${v} ${werOf(results, chosen ?? '', v, 'tune').toFixed(3)}`);
  const why =
    withinBound === undefined
      ? `No model kept general English within ${MAX_GENERAL_DELTA} of the generic model on every voice; the table above compares ${chosen ?? 'none'} with it: the lowest clinical WER on the tuning questions (${tuning.join(', ')}).`
      : `Chosen: ${withinBound}, the lowest clinical WER on the tuning questions (mean of the voices: ${tuning.join(', ')}) among the models whose general-English WER stays within ${MAX_GENERAL_DELTA} of the generic model on both voices. Held-out figures played no part.`;
  const markdown = [
    '## Voice: word error rate',
    '',
    'Written by `bench/voice-wer.ts`; edit the script, not this section.',
    '',
    '- Command: `npx tsx bench/voice-wer.ts`',
    `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    `- Machine: ${machine()}; ${input.versions}.`,
    `- Audio: ${input.clipCount} clips: 40 clinical questions (bench/data/voice-questions.json; 20 tuning, 20 held-out) and 20 everyday sentences (bench/data/general-sentences.json), each spoken by Flite's ${voices.join(' and ')} voices, converted by sox to 16 kHz PCM16 mono and fed to \`PocketSphinxSttProvider\` in 100 ms pieces without pacing, two utterances at a time (2 decoder threads).`,
    '- WER: word-level Levenshtein distance over reference words, summed over a set; reference and hypothesis normalised alike (src/providers/stt/spoken-words.ts: lower case, numbers and units as words, abbreviations as said, no punctuation). RTF: decoding wall time (first audio to final) over audio duration.',
    `- Models: generic = Debian's en-us.lm.bin; adapted w = the knowledge-base model built from eval/corpus by \`buildKbLanguageModel\` (${input.model.ngrams.join(' / ')} 1/2/3-grams in ${input.model.buildMs.toFixed(0)} ms) interpolated with it, w its share; adapted+dict w = the same with the ${input.added.words} corpus words the dictionary lacks added to it with Flite's letter-to-sound pronunciations (src/providers/stt/kb-adapted.ts, exactly what the service builds; the recognizer loads cmudict plus those words when it loads the model) and the model rebuilt with them (reference words among them: ${input.added.inReferences.join(', ')}).`,
    `- Reference words outside cmudict (never recognised without added pronunciations): ${input.oov.length === 0 ? 'none' : input.oov.join(', ')}. Most frequent corpus words outside it (cut from the model): ${words.join(', ')}.`,
    '',
    '### WER by model, voice and set',
    '',
    werTable(results, configs, voices),
    '',
    ...(chosen
      ? ['### Chosen weight against the generic model', '', deltaTable(results, chosen, voices), '']
      : []),
    why,
    '',
    NOISE,
    '',
    largeLine(input.large),
  ].join('\n');
  await writeSection('voice-wer', markdown, input.write);
}
