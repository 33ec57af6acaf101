import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integerWords } from '../../src/providers/stt/spoken-numbers.js';
import { CLINICAL_NUMBERS } from './asterisk-prompts.js';
import { human } from './wer-sources.js';

// A sounds folder laid out as Debian's Asterisk packages lay theirs, with tones for recordings:
// only the 8 kHz WAV band, as if asterisk-core-sounds-en-g722 could not be installed.
describe('human', () => {
  const isWord = () => true;
  let dir: string;
  let sounds: string;
  let transcript: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'wer-sources-'));
    sounds = path.join(dir, 'en_US_f_Allison');
    mkdirSync(path.join(sounds, 'digits'), { recursive: true });
    const words = [...new Set(CLINICAL_NUMBERS.flatMap((n) => integerWords(n)))];
    const digits = words.map((word, i) => `digits/w${i}: ${word}`);
    const lines = [
      '; test sounds',
      'auth-thankyou: Thank you.',
      'agent-pass: Please enter your password followed by the pound key.',
      'tt-monkeys: [sound of monkeys screaming]',
      ...digits,
    ];
    transcript = path.join(dir, 'core-sounds-en.txt.gz');
    writeFileSync(transcript, gzipSync(lines.join('\n')));
    const names = [
      'auth-thankyou',
      'agent-pass',
      'tt-monkeys',
      ...digits.map((d) => d.split(':')[0]!),
    ];
    names.forEach((name, i) => {
      const wav = path.join(sounds, `${name}.wav`);
      execFileSync('sox', [
        '-n',
        '-r',
        '8000',
        '-b',
        '16',
        '-c',
        '1',
        wav,
        'synth',
        '0.2',
        'sine',
        String(300 + i),
      ]);
    });
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('skips every recording, and says so, without the transcript', async () => {
    const source = await human(isWord, { transcript: path.join(dir, 'absent.gz'), sounds });
    expect(source.voices).toEqual([]);
    expect(source.clips).toEqual([]);
    expect(source.skipped).toEqual([
      'every recording: asterisk-core-sounds-en (the transcript) is not installed',
    ]);
  });

  it('keeps the band that is installed and names the one that is not', async () => {
    const source = await human(isWord, { transcript, sounds });
    expect(source.voices).toEqual(['person 8k']);
    expect(source.skipped).toEqual(['person 16k (asterisk-core-sounds-en-g722): not installed']);
    const phrases = source.clips.filter((c) => c.split === 'phrases');
    expect(phrases.map((c) => c.id)).toEqual(['agent-pass']);
    expect(phrases[0]!.reference.join(' ')).toBe(
      'please enter your password followed by the pound key',
    );
    const numbers = source.clips.filter((c) => c.split === 'numbers');
    expect(numbers).toHaveLength(CLINICAL_NUMBERS.length);
    const n125 = numbers.find((c) => c.id === 'number 125')!;
    expect(n125.reference).toEqual(['one', 'hundred', 'twenty', 'five']);
    // Four 0.2 s recordings, converted to 16 kHz PCM16: 4 * 0.2 * 16,000 * 2 bytes.
    expect(n125.pcm.length).toBe(4 * 0.2 * 16_000 * 2);
  });
});
