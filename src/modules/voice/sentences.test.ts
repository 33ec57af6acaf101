import { describe, expect, it } from 'vitest';
import { SentenceSplitter } from './sentences.js';

/** Feeds `text` in pieces of `size` characters, as a model streams it. */
function split(text: string, size: number, maxChars?: number): string[] {
  const s = new SentenceSplitter(maxChars);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(...s.push(text.slice(i, i + size)));
  return [...out, ...s.flush()];
}

describe('SentenceSplitter', () => {
  const answer =
    'Offer metformin 500 mg twice daily. [1] Review HbA1c after 3 to 6 months, e.g. at 3.5 months. [2] ' +
    'Is the eGFR below 30? Stop it! Done.';
  const want = [
    'Offer metformin 500 mg twice daily. [1]',
    'Review HbA1c after 3 to 6 months, e.g. at 3.5 months. [2]',
    'Is the eGFR below 30?',
    'Stop it!',
    'Done.',
  ];

  it.each([1, 2, 3, 7, 1000])('splits the same whatever the piece size (%i)', (size) => {
    expect(split(answer, size)).toEqual(want);
  });

  it('keeps several markers with their sentence', () => {
    expect(split('First point. [1] [3] Second point. [2, 4]', 4)).toEqual([
      'First point. [1] [3]',
      'Second point. [2, 4]',
    ]);
  });

  it('does not wait for the next sentence once a paragraph ends', () => {
    const s = new SentenceSplitter();
    expect(s.push('- a list item without a stop\n\n')).toEqual(['- a list item without a stop']);
  });

  it('releases a sentence only once what follows it shows it is complete', () => {
    const s = new SentenceSplitter();
    expect(s.push('Take 2.')).toEqual([]);
    expect(s.push('5 mg daily. ')).toEqual([]);
    expect(s.push('Then')).toEqual(['Take 2.5 mg daily.']);
  });

  it('cuts a run-on sentence at a comma or space near the limit', () => {
    const long = `${'word, '.repeat(60)}end`;
    const parts = split(long, 5, 50);
    expect(parts.length).toBeGreaterThan(5);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(50);
    expect(parts.join(' ').replace(/\s+/g, ' ')).toBe(long.replace(/\s+/g, ' '));
  });

  it('cuts the first sentence at its first clause when asked, and only the first', () => {
    const s = new SentenceSplitter(240, true);
    const text =
      'For adults with type 2 diabetes, offer metformin first, at 500 mg daily. [1] Then, review it. [2]';
    const parts = [...s.push(text.slice(0, 40)), ...s.push(text.slice(40)), ...s.flush()];
    expect(parts).toEqual([
      'For adults with type 2 diabetes,',
      'offer metformin first, at 500 mg daily. [1]',
      'Then, review it. [2]',
    ]);
    const short = new SentenceSplitter(240, true);
    expect([...short.push('Yes, it is. Then more text follows here.'), ...short.flush()]).toEqual([
      'Yes, it is.',
      'Then more text follows here.',
    ]);
  });

  it('gives nothing for blank text', () => {
    expect(split('   \n ', 2)).toEqual([]);
  });
});
