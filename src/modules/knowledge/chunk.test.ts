import { describe, expect, it } from 'vitest';
import { chunkPages, TooManyChunks, type Chunk } from './chunk.js';
import type { ExtractedPage } from './extract.js';

const txt = (text: string): ExtractedPage[] => [{ page: null, text }];

/** Numbered, distinct sentences of about 70-80 characters. */
const sentences = (count: number, from = 0) =>
  Array.from(
    { length: count },
    (_, i) => `Sentence ${i + from} says the patient should have a review of blood pressure soon.`,
  );

describe('chunkPages: sizes and overlap', () => {
  const body = sentences(60).join(' ');
  const chunks = chunkPages(txt(body));

  it('makes chunks of about the target size, cut between sentences', () => {
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) {
      expect(chunk.text.length).toBeLessThanOrEqual(800);
      expect(chunk.text).toMatch(/^Sentence \d+ says .* soon\.$/);
    }
    // All but the last are filled to within one sentence of the target.
    expect(chunks.slice(0, -1).every((c) => c.text.length > 800 - 85)).toBe(true);
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
  });

  it('repeats whole sentences from the end of the previous chunk, within overlapChars', () => {
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]?.text ?? '';
      const current = chunks[i]?.text ?? '';
      const firstNew = current.split(/(?<=\.) /).find((s) => !previous.includes(s)) ?? '';
      const overlap = current.slice(0, current.indexOf(firstNew)).trim();
      expect(overlap.length).toBeGreaterThan(0);
      expect(overlap.length).toBeLessThanOrEqual(150);
      expect(previous.endsWith(overlap)).toBe(true);
    }
  });

  it('loses no sentence and adds none', () => {
    const seen = new Set(chunks.flatMap((c) => c.text.split(/(?<=\.) /)));
    expect([...seen].sort()).toEqual(sentences(60).sort());
  });

  it('overlaps nothing with overlapChars 0 and honours another target', () => {
    const plain = chunkPages(txt(body), { targetChars: 400, overlapChars: 0 });
    expect(plain.map((c) => c.text).join(' ')).toBe(body);
    expect(Math.max(...plain.map((c) => c.text.length))).toBeLessThanOrEqual(400);
  });
});

describe('chunkPages: sentence boundaries', () => {
  /**
   * With a target of 100, sentences of 101-150 characters each make a chunk of their own (two
   * never fit together), and so does any piece of a sentence cut in the wrong place.
   */
  const split = (text: string) =>
    chunkPages(txt(text), { targetChars: 100, overlapChars: 0 }).map((c) => c.text);
  const expectSplit = (expected: string[]) => {
    for (const sentence of expected) expect(sentence.length).toBeGreaterThan(100);
    expect(split(expected.join(' '))).toEqual(expected);
  };

  it('does not cut after abbreviations, initials, units, decimals or list numbers', () => {
    expectSplit([
      'Offer an ACE inhibitor, e.g. ramipril, to adults with type 2 diabetes and a clinic blood pressure above target.',
      'Dr. Patel and Prof. Jones advise starting at 2.5 mg. Increase to 5 mg after two weeks if potassium is normal.',
      'Give 1 g i.v. Paracetamol every six hours when oral intake is not possible, as shown in Fig. 2 of the appendix.',
      'Steps: 1. Measure the blood pressure in both arms and repeat the reading after five minutes of quiet rest.',
      'The patient should be reviewed in 4 weeks, and the dose adjusted to the eGFR (approx. 45 mL/min) at that time.',
    ]);
  });

  it('cuts after ?, !, a closing quote, a number or a reference number', () => {
    expectSplit([
      'Is the patient pregnant or planning a pregnancy within the next year, given the risks of the drugs listed here?',
      'Stop the ACE inhibitor immediately if angioedema develops, and never restart it in that patient afterwards!',
      'The guideline says: "Review the blood pressure within four weeks of any change in the dose of the medicine."',
      'Then review it at least once a year, or sooner when the clinical picture changes, in adults aged under 80.',
      'Aged 80 or more, aim for a clinic reading below 150/90 mmHg instead of the lower target, as in Table 2.',
      'Where the readings disagree, ambulatory monitoring decides; the algorithm for this is shown in Fig. 3.',
      'Home readings are an alternative for people who cannot tolerate ambulatory monitoring for a whole day.',
    ]);
  });

  it('cuts an overlong sentence at clause boundaries and keeps every word', () => {
    const clause = 'consider the dose of each medicine with the pharmacist and the patient';
    const sentence = `${Array.from({ length: 8 }, (_, i) => `${clause} ${i}`).join(', ')}.`;
    const chunks = split(sentence);
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(100);
      expect(chunk).toMatch(/^consider .* \d[,.]$/); // cut after a comma, never mid-clause
    }
    expect(chunks.join(' ')).toBe(sentence);
  });

  it('keeps a sentence of up to 1.5 times the target whole', () => {
    const sentence = `Word ${'word '.repeat(26)}end.`; // 139 characters
    expect(split(`Short one here. ${sentence}`)).toEqual(['Short one here.', sentence]);
  });

  it('cuts a sentence with no spaces at all at the target', () => {
    const blob = 'x'.repeat(350);
    const chunks = split(blob);
    expect(chunks.join('')).toBe(blob);
    expect(chunks.every((c) => c.length <= 100)).toBe(true);
  });
});

describe('chunkPages: headings', () => {
  const headingsOf = (text: string) =>
    chunkPages(txt(text), { targetChars: 100, overlapChars: 0 }).map((c) => [c.heading, c.text]);

  it('recognises markdown, numbered, ALL CAPS, Title Case and lone short lines', () => {
    const text = [
      '# Hypertension',
      'Intro text.',
      '',
      '2.1 Management of blood pressure',
      'Managed text.',
      '',
      'RED FLAGS',
      'Flag text.',
      '',
      'Special Populations and the Elderly',
      'Population text.',
      '',
      'Follow-up care',
      '',
      'Follow text.',
    ].join('\n');
    expect(headingsOf(text)).toEqual([
      ['Hypertension', 'Intro text.'],
      ['2.1 Management of blood pressure', 'Managed text.'],
      ['RED FLAGS', 'Flag text.'],
      ['Special Populations and the Elderly', 'Population text.'],
      ['Follow-up care', 'Follow text.'],
    ]);
  });

  it('does not take sentences, long lines, lead-ins or lines inside a paragraph for headings', () => {
    const text = [
      'Introduction text here.',
      'This Line Looks Like A Title.',
      'Risk factors include:',
      'Obesity',
      '- Raised Blood Pressure',
      'smoking and',
      'Physical Inactivity Among Adults',
      'continued here.',
      'follow-up care of the person',
    ].join('\n');
    const [chunk, ...rest] = chunkPages(txt(text));
    expect(rest).toEqual([]);
    expect(chunk?.heading).toBeNull();
    expect(chunk?.text).toBe(text.replace(/\n/g, ' '));
  });

  it('starts a new chunk at each heading, without overlap from the previous section', () => {
    const text = `# One\n\n${sentences(3).join(' ')}\n\n# Two\n\n${sentences(2, 10).join(' ')}`;
    const chunks = chunkPages(txt(text));
    expect(chunks.map((c) => c.heading)).toEqual(['One', 'Two']);
    expect(chunks[1]?.text).toBe(sentences(2, 10).join(' '));
  });
});

describe('chunkPages: pages', () => {
  const pages: ExtractedPage[] = [
    { page: 1, text: `1 Scope\n\n${sentences(6).join(' ')}` },
    { page: 2, text: sentences(6, 6).join(' ') },
    { page: 3, text: `2 Treatment\n\n${sentences(2, 12).join(' ')}` },
  ];
  const chunks = chunkPages(pages);

  it('attributes each chunk to the page where it starts, runs on across pages', () => {
    const spanning = chunks.find(
      (c) => c.text.includes('Sentence 5 ') && c.text.includes('Sentence 6 '),
    );
    expect(spanning?.page).toBe(1);
    expect(chunks.at(-1)?.page).toBe(3);
    for (const chunk of chunks) {
      const source = pages.find((p) => p.page === chunk.page)?.text ?? '';
      expect(source.slice(chunk.startOffset)).toMatch(new RegExp(`^${chunk.text.slice(0, 20)}`));
    }
  });

  it('keeps the nearest heading above, across pages', () => {
    expect(chunks.filter((c) => c.page === 2).every((c) => c.heading === '1 Scope')).toBe(true);
    expect(chunks.at(-1)?.heading).toBe('2 Treatment');
  });

  it('drops running headers, footers and page numbers repeated on most pages', () => {
    const running: ExtractedPage[] = [1, 2, 3, 4].map((n) => ({
      page: n,
      text: `Hypertension in adults\n\nText of page ${n}.\n\nPage ${n} of 4`,
    }));
    const result = chunkPages(running);
    expect(result.map((c) => c.text.replace(/\s+/g, ' ')).join(' ')).toBe(
      'Text of page 1. Text of page 2. Text of page 3. Text of page 4.',
    );
    expect(result.every((c: Chunk) => c.heading === null)).toBe(true);
  });
});

describe('chunkPages: text clean-up', () => {
  it('normalises whitespace, soft hyphens and words hyphenated at a line end', () => {
    const text =
      'Beta-\nblockers  are\tnot first\u00ad\nline\u200b drugs.\nTreat-\n  ment follows.';
    const [chunk] = chunkPages(txt(text));
    expect(chunk?.text).toBe('Beta-blockers are not firstline drugs. Treat-ment follows.');
  });

  it('copes with a text file that is one paragraph of 250,000 sentences', () => {
    const chunks = chunkPages(txt('Go now. '.repeat(250_000)));
    expect(chunks.length).toBeGreaterThan(2000);
    expect(chunks.every((c) => c.text.length <= 800 && c.text.startsWith('Go now.'))).toBe(true);
  });

  it('keeps paragraph breaks as blank lines and returns nothing for empty input', () => {
    expect(chunkPages(txt('One.\nstill one.\n\n\n\nTwo.'))[0]?.text).toBe(
      'One. still one.\n\nTwo.',
    );
    expect(chunkPages([])).toEqual([]);
    expect(chunkPages([{ page: 1, text: ' \n\n ' }])).toEqual([]);
  });

  it('throws TooManyChunks at the first chunk over maxChunks, and not at maxChunks itself', () => {
    const body = sentences(60).join(' ');
    const all = chunkPages(txt(body)).length;
    expect(chunkPages(txt(body), { maxChunks: all })).toHaveLength(all);
    expect(() => chunkPages(txt(body), { maxChunks: all - 1 })).toThrow(TooManyChunks);
  });
});
