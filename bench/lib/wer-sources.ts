import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { spokenText } from '../../src/providers/stt/spoken-words.js';
import {
  CLINICAL_NUMBERS,
  composeNumber,
  parseTranscript,
  selectPhrases,
  type Prompt,
} from './asterisk-prompts.js';
import { recording, speak, type Engine } from './wer-audio.js';
import { werWords } from './wer.js';
import type { Split } from './wer-report.js';

/**
 * The speech the word-error-rate benchmark recognises, by source: the benchmark's sentences
 * spoken by Flite's voices and by eSpeak NG's, and a person's recordings from Debian's Asterisk
 * sound packages. A source whose package is missing is skipped with the reason.
 */

export interface Clip {
  source: SourceName;
  voice: string;
  split: Split;
  id: string;
  /** The normalised reference words. */
  reference: string[];
  pcm: Buffer;
}

export type SourceName = 'flite' | 'espeak-ng' | 'human';

export interface Source {
  name: SourceName;
  /** The voices' column names, in order. */
  voices: string[];
  splits: Split[];
  clips: Clip[];
  /** Voices left out, and why. */
  skipped: string[];
}

export interface Sentence {
  id: string;
  split: Split;
  text: string;
}

const run = promisify(execFile);

async function installed(command: string): Promise<boolean> {
  try {
    await run('sh', ['-c', 'command -v "$1"', 'sh', command]);
    return true;
  } catch {
    return false;
  }
}

/** The sentences spoken by each voice of a speech engine. */
export async function synthesised(
  engine: Engine,
  name: SourceName,
  voices: readonly string[],
  sentences: readonly Sentence[],
  isWord: (w: string) => boolean,
): Promise<Source> {
  const source: Source = {
    name,
    voices: [],
    splits: ['tune', 'heldout', 'general'],
    clips: [],
    skipped: [],
  };
  if (!(await installed(engine))) {
    source.skipped.push(`${voices.join(', ')}: ${engine} is not installed`);
    return source;
  }
  for (const voice of voices) {
    source.voices.push(voice);
    for (const sentence of sentences) {
      source.clips.push({
        source: name,
        voice,
        split: sentence.split,
        id: sentence.id,
        reference: werWords(sentence.text, { isWord }),
        pcm: await speak(spokenText(sentence.text, { isWord }), voice, engine),
      });
    }
  }
  return source;
}

export const TRANSCRIPT = '/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz';
export const SOUNDS = '/usr/share/asterisk/sounds/en_US_f_Allison';

/** The recordings' two forms: wideband G.722 and telephone-band 8 kHz WAV. */
const BANDS = [
  { voice: 'person 16k', extension: 'g722', pkg: 'asterisk-core-sounds-en-g722' },
  { voice: 'person 8k', extension: 'wav', pkg: 'asterisk-core-sounds-en-wav' },
] as const;

/**
 * The Asterisk recordings: the phrases set and the numbers set, in each band installed. A band
 * whose package is missing (or whose decoder cannot load) is skipped with the reason.
 */
export async function human(
  isWord: (w: string) => boolean,
  where: { transcript: string; sounds: string } = { transcript: TRANSCRIPT, sounds: SOUNDS },
  /** Keeps every nth phrase in the transcript's order (1: all of them). */
  every = 1,
  /** The bands to use, by voice name ('person 16k', 'person 8k'); others are skipped. */
  bands: readonly string[] = BANDS.map((b) => b.voice),
): Promise<Source> {
  const source: Source = {
    name: 'human',
    voices: [],
    splits: ['phrases', 'numbers'],
    clips: [],
    skipped: [],
  };
  if (!existsSync(where.transcript)) {
    source.skipped.push(
      `every recording: asterisk-core-sounds-en (the transcript) is not installed`,
    );
    return source;
  }
  const prompts = parseTranscript(gunzipSync(readFileSync(where.transcript)).toString('utf8'));
  for (const band of BANDS) {
    if (!bands.includes(band.voice)) {
      source.skipped.push(`${band.voice}: not asked for (VOICE_WER_BANDS)`);
      continue;
    }
    const file = (name: string) => path.join(where.sounds, `${name}.${band.extension}`);
    try {
      const clips = await bandClips(band.voice, prompts, file, isWord, every);
      source.voices.push(band.voice);
      source.clips.push(...clips);
    } catch (error) {
      source.skipped.push(`${band.voice} (${band.pkg}): ${(error as Error).message}`);
    }
  }
  return source;
}

async function bandClips(
  voice: string,
  prompts: readonly Prompt[],
  file: (name: string) => string,
  isWord: (w: string) => boolean,
  every: number,
): Promise<Clip[]> {
  const phrases = selectPhrases(prompts, isWord)
    .filter((p) => existsSync(file(p.name)))
    .filter((_, i) => i % every === 0);
  if (phrases.length === 0) throw new Error('not installed');
  const clips: Clip[] = [];
  for (const p of phrases) {
    clips.push({
      source: 'human',
      voice,
      split: 'phrases',
      id: p.name,
      reference: werWords(p.text, { isWord }),
      pcm: await recording(file(p.name)),
    });
  }
  for (const n of CLINICAL_NUMBERS) {
    const composed = composeNumber(n, prompts);
    if (!composed) throw new Error(`the transcript has no recording of a word of ${n}`);
    const pieces = await Promise.all(composed.parts.map((part) => recording(file(part))));
    clips.push({
      source: 'human',
      voice,
      split: 'numbers',
      id: `number ${n}`,
      reference: werWords(composed.text, { isWord }),
      pcm: Buffer.concat(pieces),
    });
  }
  return clips;
}
