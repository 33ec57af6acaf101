import { describe, expect, it } from 'vitest';
import { composeNumber, parseTranscript, selectPhrases } from './asterisk-prompts.js';
import { werWords } from './wer.js';

// Lines in the form of Debian's core-sounds-en.txt.gz.
const TRANSCRIPT = [
  '; Core Asterisk Sounds in English',
  '',
  'auth-thankyou: Thank you.',
  'agent-pass: Please enter your password followed by the pound key.',
  'beep: [this is a simple beep tone]',
  'vm-intro: Please leave your message after the tone.  When done hang up. (simple tone sound plays)',
  'demo-enterkeywords: Please enter one or more keywords separated by * and then press the pound key.',
  'dir-multi9: Press 9 for more entries.',
  'conf-adminmenu: Please press 1 to mute or unmute yourself, 2 to lock or unlock the conference, 3 to eject the last user, 4 or 6 to decrease or increase the conference volume, or 8 to exit.',
  'call-fwd-no-ans: Call-Forward on No Answer.',
  'silence/1: (1 second of silence)',
  'followme/sorry: I am sorry, but I was unable to locate the person you are calling',
  'digits/1: one',
  'digits/2: two',
  'digits/5: five',
  'digits/20: twenty',
  'digits/hundred: hundred',
  'digits/thousand: thousand',
  'digits/h-1: first',
  'letters/a: a',
  'phonetic/a_p: alpha bravo charlie',
  '../../etc/passwd: not a recording',
  'no colon here',
].join('\n');

const isWord = () => true;

describe('parseTranscript', () => {
  it('reads name: text lines, skipping comments, blanks and names that climb out', () => {
    const prompts = parseTranscript(TRANSCRIPT);
    expect(prompts[0]).toEqual({ name: 'auth-thankyou', text: 'Thank you.' });
    expect(prompts.map((p) => p.name)).toContain('followme/sorry');
    expect(prompts.map((p) => p.name)).toContain('digits/h-1');
    expect(prompts.some((p) => p.name.includes('..'))).toBe(false);
    expect(prompts).toHaveLength(19);
  });

  it('keeps the text whole, inner spaces and punctuation included', () => {
    const vm = parseTranscript(TRANSCRIPT).find((p) => p.name === 'vm-intro');
    expect(vm?.text).toBe(
      'Please leave your message after the tone.  When done hang up. (simple tone sound plays)',
    );
  });
});

describe('selectPhrases', () => {
  it('keeps prompts of 3 to 25 said words outside the word folders', () => {
    const names = selectPhrases(parseTranscript(TRANSCRIPT), isWord).map((p) => p.name);
    expect(names).toEqual(['agent-pass', 'dir-multi9', 'call-fwd-no-ans', 'followme/sorry']);
  });

  it('normalises the kept prompts as the recognizer writes them', () => {
    const [dir, forward] = selectPhrases(parseTranscript(TRANSCRIPT), isWord).slice(1);
    expect(werWords(dir!.text, { isWord })).toEqual(['press', 'nine', 'for', 'more', 'entries']);
    expect(werWords(forward!.text, { isWord })).toEqual(['call', 'forward', 'on', 'no', 'answer']);
  });
});

describe('composeNumber', () => {
  const prompts = parseTranscript(TRANSCRIPT);

  it('joins the recordings of the words people say for a number', () => {
    expect(composeNumber(125, prompts)).toEqual({
      text: '125',
      parts: ['digits/1', 'digits/hundred', 'digits/20', 'digits/5'],
    });
    expect(composeNumber(2000, prompts)?.parts).toEqual(['digits/2', 'digits/thousand']);
  });

  it('has the recordings say what the reference says once normalised', () => {
    const composed = composeNumber(1520, prompts)!;
    const said = composed.parts.map((part) => prompts.find((p) => p.name === part)!.text);
    expect(said).toEqual(werWords(composed.text));
  });

  it('gives up when a word has no recording', () => {
    expect(composeNumber(30, prompts)).toBeUndefined();
  });
});
