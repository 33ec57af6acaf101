import { describe, expect, it } from 'vitest';
import { abbreviationCount, abbreviationsIn, expandAbbreviations } from './abbreviations.js';
import data from './data/clinical-abbreviations.json' with { type: 'json' };

const entries = [...Object.entries(data.matchAnyCase), ...Object.entries(data.matchExactCase)];

describe('the abbreviation list', () => {
  it('holds at least 120 entries, each found as written, none listed twice', () => {
    expect(entries.length).toBeGreaterThanOrEqual(120);
    expect(abbreviationCount).toBe(entries.length);
    for (const [abbreviation, expansion] of entries) {
      const [found] = abbreviationsIn(`see ${abbreviation} here`);
      expect(found?.abbreviation, abbreviation).toBe(abbreviation);
      expect(found?.expansions).toEqual(typeof expansion === 'string' ? [expansion] : expansion);
      expect(found?.expansions.every((e) => e.trim() !== '')).toBe(true);
    }
  });
});

describe('expandAbbreviations', () => {
  it('appends the expansion after the abbreviation', () => {
    expect(expandAbbreviations('HTN in T2DM with AF')).toBe(
      'HTN hypertension in T2DM type 2 diabetes mellitus with AF atrial fibrillation',
    );
    expect(expandAbbreviations('eGFR below 30 in CKD')).toBe(
      'eGFR estimated glomerular filtration rate below 30 in CKD chronic kidney disease',
    );
  });

  it('matches in any case only where the lower-case form is no word', () => {
    expect(expandAbbreviations('htn and copd')).toBe(
      'htn hypertension and copd chronic obstructive pulmonary disease',
    );
    expect(expandAbbreviations('CAP in adults')).toBe('CAP community-acquired pneumonia in adults');
    expect(expandAbbreviations('cap the dose; sob quietly; a pad')).toBe(
      'cap the dose; sob quietly; a pad',
    );
  });

  it('matches whole words only', () => {
    expect(expandAbbreviations('AFTER the PEG tube, HTNX and bp2')).toBe(
      'AFTER the PEG tube, HTNX and bp2',
    );
  });

  it('expands plurals, parts of compounds and words with inner punctuation', () => {
    expect(expandAbbreviations('NSAIDs and ARBs')).toBe(
      'NSAIDs non-steroidal anti-inflammatory drug and ARBs angiotensin receptor blocker',
    );
    expect(expandAbbreviations('HTN/T2DM clinic')).toBe(
      'HTN/T2DM hypertension type 2 diabetes mellitus clinic',
    );
    expect(expandAbbreviations('COVID-19 with N/V')).toBe(
      'COVID-19 coronavirus disease 2019 with N/V nausea and vomiting',
    );
  });

  it('expands each abbreviation once and skips expansions already present', () => {
    expect(expandAbbreviations('HTN, then HTN again')).toBe('HTN hypertension, then HTN again');
    expect(expandAbbreviations('hypertension (HTN) and MI')).toBe(
      'hypertension (HTN) and MI myocardial infarction',
    );
    expect(expandAbbreviations('Transient ischemic attack (TIA)')).toBe(
      'Transient ischemic attack (TIA transient ischaemic attack)',
    );
  });

  it('leaves exact-case abbreviations alone among words in capitals', () => {
    expect(expandAbbreviations('TREATMENT SUCH AS PE')).toBe('TREATMENT SUCH AS PE');
    expect(expandAbbreviations('PE AND HTN')).toBe('PE AND HTN hypertension');
    expect(expandAbbreviations('AS')).toBe('AS aortic stenosis');
  });

  it('leaves text without abbreviations unchanged', () => {
    const text = 'Offer lifestyle advice to every adult with raised blood pressure.';
    expect(expandAbbreviations(text)).toBe(text);
    expect(expandAbbreviations('')).toBe('');
  });
});

describe('abbreviationsIn', () => {
  it('lists each abbreviation once, at its first occurrence, in order', () => {
    const text = 'AF with HTN; af again and MS';
    expect(abbreviationsIn(text)).toEqual([
      { abbreviation: 'AF', expansions: ['atrial fibrillation'], start: 0, end: 2 },
      { abbreviation: 'HTN', expansions: ['hypertension'], start: 8, end: 11 },
      {
        abbreviation: 'MS',
        expansions: ['multiple sclerosis', 'mitral stenosis'],
        start: 26,
        end: 28,
      },
    ]);
  });
});
