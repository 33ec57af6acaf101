import { describe, expect, it } from 'vitest';
import { growth, parseExposition, sampleOf, valueOf } from './helpers/metrics.js';

const TEXT = [
  '# HELP req_total Requests, with a \\\\ and a \\n in the help',
  '# TYPE req_total counter',
  'req_total{method="GET",route="/a/:id"} 3',
  'req_total{method="POST",route="say \\"hi\\"\\\\\\n"} 1.5e2',
  '# TYPE dur_seconds histogram',
  'dur_seconds_bucket{le="0.1",route="/a"} 1',
  'dur_seconds_bucket{le="+Inf",route="/a"} 2',
  'dur_seconds_sum{route="/a"} 0.35',
  'dur_seconds_count{route="/a"} 2',
  '# A plain comment',
  '# TYPE temp gauge',
  'temp NaN',
  'temp{at="y"} Nan',
  'temp{at="z"} +inf',
  'temp{at="x"} -Inf 1700000000000',
  '# TYPE empty_total counter',
  '',
].join('\n');

describe('parseExposition', () => {
  it('reads families, label escapes, histogram series and special values', () => {
    const exposition = parseExposition(TEXT);
    expect([...exposition.keys()]).toEqual(['req_total', 'dur_seconds', 'temp', 'empty_total']);
    expect(exposition.get('req_total')?.help).toBe('Requests, with a \\ and a \n in the help');
    expect(valueOf(exposition, 'req_total', { method: 'GET', route: '/a/:id' })).toBe(3);
    expect(valueOf(exposition, 'req_total', { method: 'POST', route: 'say "hi"\\\n' })).toBe(150);
    expect(exposition.get('dur_seconds')?.samples.map((s) => s.name)).toEqual([
      'dur_seconds_bucket',
      'dur_seconds_bucket',
      'dur_seconds_sum',
      'dur_seconds_count',
    ]);
    expect(valueOf(exposition, 'dur_seconds_bucket', { le: '+Inf', route: '/a' })).toBe(2);
    expect(valueOf(exposition, 'temp')).toBeNaN();
    expect(valueOf(exposition, 'temp', { at: 'x' })).toBe(-Infinity);
    expect(valueOf(exposition, 'temp', { at: 'y' })).toBeNaN();
    expect(valueOf(exposition, 'temp', { at: 'z' })).toBe(Infinity);
    expect(exposition.get('empty_total')?.samples).toEqual([]);
  });

  it('matches labels exactly and reads an absent series as 0', () => {
    const exposition = parseExposition(TEXT);
    expect(sampleOf(exposition, 'req_total', { method: 'GET' })).toBeUndefined();
    expect(valueOf(exposition, 'req_total', { method: 'PUT', route: '/' })).toBe(0);
    const later = parseExposition(TEXT.replace('route="/a/:id"} 3', 'route="/a/:id"} 7'));
    expect(growth(exposition, later, 'req_total', { method: 'GET', route: '/a/:id' })).toBe(4);
  });

  it.each([
    ['a sample of no declared family', 'stray_total 1'],
    ['a missing value', '# TYPE a counter\na{x="1"}'],
    ['a value that is no number', '# TYPE a counter\na 1x'],
    ['an empty value', '# TYPE a counter\na '],
    ['a signed NaN', '# TYPE a gauge\na -NaN'],
    ['an unterminated label value', '# TYPE a counter\na{x="1} 1'],
    ['a label without quotes', '# TYPE a counter\na{x=1} 1'],
    ['an unknown escape', '# TYPE a counter\na{x="\\t"} 1'],
    ['a label given twice', '# TYPE a counter\na{x="1",x="2"} 1'],
    ['the same series twice', '# TYPE a counter\na{x="1"} 1\na{x="1"} 2'],
    ['an unknown type', '# TYPE a countr'],
    ['a TYPE after samples', '# TYPE a counter\na 1\n# TYPE a gauge'],
    ['a bad timestamp', '# TYPE a counter\na 1 soon'],
    ['two spaces before the value', '# TYPE a counter\na  1'],
  ])('rejects %s', (_what, text) => {
    expect(() => parseExposition(text)).toThrow(/exposition line \d+/);
  });
});
