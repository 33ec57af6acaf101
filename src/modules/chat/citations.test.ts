import { describe, expect, it } from 'vitest';
import type { Passage } from '../../providers/llm/types.js';
import { CitationMarkers } from './citations.js';

const passage = (n: number, text = `Passage ${String(n)} text.`): Passage => ({
  n,
  chunkId: `chunk-${String(n)}`,
  documentId: `doc-${String(n)}`,
  docKey: `key-${String(n)}`,
  title: `Title ${String(n)}`,
  version: 1,
  page: n,
  heading: null,
  text,
  score: 0.5,
});

const streamed = (markers: CitationMarkers, deltas: string[]) =>
  deltas.map((d) => markers.push(d)).join('') + markers.flush();

describe('CitationMarkers', () => {
  it('renumbers passage references in order of first use and lists exactly those', () => {
    const markers = new CitationMarkers(() => [passage(1), passage(2), passage(3)]);
    const text = streamed(markers, ['Beta [3]. Alpha [1]. ', 'Beta again [3].']);
    expect(text).toBe('Beta [1]. Alpha [2]. Beta again [1].');
    expect(markers.citations().map((c) => [c.index, c.chunkId])).toEqual([
      [1, 'chunk-3'],
      [2, 'chunk-1'],
    ]);
  });

  it('holds a marker split across deltas until it is complete', () => {
    const markers = new CitationMarkers(() => [passage(1), passage(12)]);
    expect(markers.push('Dose is 500 mg [')).toBe('Dose is 500 mg ');
    expect(markers.push('1')).toBe('');
    expect(markers.push('2] daily.')).toBe('[1] daily.');
    expect(markers.citations()[0]?.chunkId).toBe('chunk-12');
  });

  it('drops references to passages that do not exist, and splits lists', () => {
    const markers = new CitationMarkers(() => [passage(1), passage(2)]);
    expect(streamed(markers, ['A [7]. B [2, 1]. C [1,1].'])).toBe('A . B [1][2]. C [2].');
    expect(markers.citations().map((c) => c.index)).toEqual([1, 2]);
  });

  it('leaves brackets that are not references alone', () => {
    const markers = new CitationMarkers(() => [passage(1)]);
    expect(streamed(markers, ['Range [a, b] and ', 'an open [ bracket'])).toBe(
      'Range [a, b] and an open [ bracket',
    );
    expect(markers.citations()).toEqual([]);
  });

  it('gives each citation a short snippet of its passage and a score in 0..1', () => {
    const long = 'word '.repeat(200);
    const markers = new CitationMarkers(() => [{ ...passage(1, long), score: 1.7 }]);
    streamed(markers, ['See [1].']);
    const [citation] = markers.citations();
    expect(citation?.snippet.length).toBeLessThanOrEqual(301);
    expect(citation?.score).toBe(1);
  });
});
