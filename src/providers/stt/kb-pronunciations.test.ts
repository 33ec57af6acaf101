import { describe, expect, it } from 'vitest';
import { dictionaryLines, phonesFromFlite } from './kb-pronunciations.js';

describe('phonesFromFlite', () => {
  it("turns t2p's output into the en-us model's phones: no pauses, no stress, schwa as AH", () => {
    expect(phonesFromFlite('pau m eh1 t f ao1 r m ih n pau \n')).toBe('M EH T F AO R M IH N');
    expect(phonesFromFlite('pau ax t r iy ax l pau')).toBe('AH T R IY AH L');
    expect(phonesFromFlite('pau b axr pau')).toBe('B ER');
  });

  it('refuses output with an unknown phone, or none', () => {
    expect(phonesFromFlite('pau m qq1 t pau')).toBeUndefined();
    expect(phonesFromFlite('pau pau')).toBeUndefined();
    expect(phonesFromFlite('')).toBeUndefined();
  });
});

describe('dictionaryLines', () => {
  it('writes one "word PHONES" line each, in order', () => {
    const lines = dictionaryLines(
      new Map([
        ['atrial', 'EY T R IY AH L'],
        ['metformin', 'M EH T F AO R M IH N'],
      ]),
    );
    expect(lines).toBe('atrial EY T R IY AH L\nmetformin M EH T F AO R M IH N\n');
  });
});
