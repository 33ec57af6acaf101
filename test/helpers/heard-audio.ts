import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { speakable } from '../../src/providers/tts/speakable.js';
import type { ChatClient } from './ws-client.js';

/**
 * What a listener heard of a spoken answer, worked out from what the client received alone, for
 * checking what the voice socket stores of an answer cut short (DECISIONS 5). Nothing here comes
 * from the server's own cut (src/modules/voice/heard.ts): the sentences and their audio are the
 * `audio.output` frames (each names its sentence; the first of a sentence carries its text), and
 * the words said are Flite's own (`flite -pw`, the engine the tests speak with), given the text the
 * speech provider hands it: `speakable`, the providers' documented normalisation for the ear
 * (markers dropped, "mg" said "milligrams"). Flite then reads "500" as "five hundred" itself.
 */

const run = promisify(execFile);

/** A sentence of an answer as the client received it. */
export interface ReceivedSentence {
  index: number;
  /** As displayed, with its markers. */
  text: string;
  /** Milliseconds of its audio received. */
  ms: number;
  /** All of its audio was received (a later sentence's audio, or the answer's last frame, came). */
  whole: boolean;
}

/** The sentences of response `responseId` from the client's `audio.output` frames, in order. */
export function receivedSentences(client: ChatClient, responseId: unknown): ReceivedSentence[] {
  const sentences: ReceivedSentence[] = [];
  for (const f of client.ofType('audio.output')) {
    if (f.response_id !== responseId) continue;
    const last = sentences.at(-1);
    if (f.final === true) {
      if (last !== undefined) last.whole = true;
      continue;
    }
    let current = last;
    if (current === undefined || current.index !== f.sentence) {
      if (typeof f.sentence !== 'number' || typeof f.sentence_text !== 'string') {
        throw new Error(
          `the first audio of a sentence names it and its text: ${JSON.stringify(f)}`,
        );
      }
      if (current !== undefined) current.whole = true;
      current = { index: f.sentence, text: f.sentence_text, ms: 0, whole: false };
      sentences.push(current);
    }
    const bytes = Buffer.from(String(f.audio), 'base64').length;
    current.ms += (bytes / 2 / Number(f.sample_rate)) * 1000;
  }
  return sentences;
}

const said = new Map<string, number>();

/** How many words Flite says for a displayed text. */
export async function saidWords(text: string): Promise<number> {
  const spoken = speakable(text);
  if (!/[\p{L}\p{N}]/u.test(spoken)) return 0;
  const known = said.get(spoken);
  if (known !== undefined) return known;
  const { stdout } = await run('flite', ['-pw', '-t', spoken, 'none']);
  const count = stdout.split(/\s+/).filter((w) => w !== '').length;
  said.set(spoken, count);
  return count;
}

/** Its displayed words with, for each, how many words Flite has said once it is said. */
export async function saidUpTo(text: string): Promise<{ word: string; said: number }[]> {
  const words = text.split(/\s+/).filter((w) => w !== '');
  return Promise.all(
    words.map(async (word, i) => ({
      word,
      said: await saidWords(words.slice(0, i + 1).join(' ')),
    })),
  );
}

/**
 * The text of the first `playedMs` of an answer: the sentences whose audio had ended, whole; of
 * the sentence being played (which must have been received whole, or its length is unknown), the
 * displayed words all of whose spoken words were heard, each spoken word taking an equal share of
 * the sentence's audio, without citation markers.
 */
export async function heardFromReceived(
  sentences: readonly ReceivedSentence[],
  playedMs: number,
): Promise<string> {
  const parts: string[] = [];
  let start = 0;
  for (const s of sentences) {
    if (playedMs >= start + s.ms) {
      parts.push(s.text);
      start += s.ms;
      continue;
    }
    if (playedMs <= start) break;
    if (!s.whole) throw new Error('the sentence being played was not received whole');
    const heard = Math.floor((await saidWords(s.text)) * ((playedMs - start) / s.ms));
    const kept: string[] = [];
    let last = 0;
    let keep = 0;
    const words = await saidUpTo(s.text);
    for (const [i, w] of words.entries()) {
      if (w.said > heard) break;
      if (w.said > last) keep = i + 1;
      last = Math.max(last, w.said);
    }
    for (const w of words.slice(0, keep)) if (!/^\[[\d,\s]+\]$/.test(w.word)) kept.push(w.word);
    if (kept.length > 0) parts.push(kept.join(' '));
    break;
  }
  return parts.join(' ');
}
