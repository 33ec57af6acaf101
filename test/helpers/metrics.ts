import { spawn } from 'node:child_process';
import { expect } from 'vitest';
import type { App } from '../../src/platform/http/types.js';

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

export type Exposition = ReadonlyMap<string, Family>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
/** The series a family of each type writes besides the bare name. */
const SUFFIXES: Record<string, string[]> = {
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['_sum', '_count'],
};

/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4, what prom-client
 * writes): a line it does not understand is an error, never skipped.
 */
export function parseExposition(text: string): Exposition {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      if (line.startsWith('#')) {
        readComment(line, families);
        return;
      }
      const sample = readSample(line);
      const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
      if (seen.has(key)) throw new Error('the same series twice');
      seen.add(key);
      familyOf(families, sample.name).samples.push(sample);
    } catch (err) {
      throw new Error(`exposition line ${String(i + 1)} (${line}): ${(err as Error).message}`);
    }
  });
  return families;
}

function readComment(line: string, families: Map<string, Family>): void {
  const match = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
  if (match === null) return; // a plain comment
  const [, keyword, name = '', rest = ''] = match;
  let family = families.get(name);
  if (family === undefined) {
    family = { name, type: 'untyped', help: '', samples: [] };
    families.set(name, family);
  }
  if (keyword === 'HELP') {
    family.help = rest.replace(/\\(\\|n)/g, (_all, c: string) => (c === 'n' ? '\n' : '\\'));
    return;
  }
  if (!TYPES.has(rest)) throw new Error(`unknown type "${rest}"`);
  if (family.samples.length > 0) throw new Error('TYPE after the samples of its family');
  family.type = rest;
}

/** The family a sample belongs to: its own name, or a histogram's or summary's suffixed series. */
function familyOf(families: Map<string, Family>, name: string): Family {
  const own = families.get(name);
  if (own !== undefined && !(own.type in SUFFIXES)) return own;
  for (const family of families.values()) {
    const suffixes = SUFFIXES[family.type] ?? [];
    if (suffixes.some((s) => `${family.name}${s}` === name)) return family;
  }
  if (own?.type === 'summary') return own; // quantile series
  throw new Error(`sample ${name} belongs to no declared family`);
}

function readSample(line: string): Sample {
  const name = METRIC_NAME.exec(line)?.[0];
  if (name === undefined) throw new Error('no metric name');
  let rest = line.slice(name.length);
  let labels: Record<string, string> = {};
  if (rest.startsWith('{')) [labels, rest] = readLabels(rest.slice(1));
  const fields = rest.split(' ');
  if (fields[0] !== '' || fields.length < 2 || fields.length > 3) {
    throw new Error('expected " value [timestamp]" after the name and labels');
  }
  const value = readValue(fields[1] ?? '');
  if (fields[2] !== undefined && !/^-?\d+$/.test(fields[2])) throw new Error('bad timestamp');
  return { name, labels, value };
}

/** Reads `name="value",...}`; returns the labels and what follows the closing brace. */
function readLabels(text: string): [Record<string, string>, string] {
  const labels: Record<string, string> = {};
  let rest = text;
  for (;;) {
    if (rest.startsWith('}')) return [labels, rest.slice(1)];
    const name = LABEL_NAME.exec(rest)?.[0];
    if (name === undefined || !rest.startsWith(`${name}="`)) throw new Error('bad label');
    if (name in labels) throw new Error(`label ${name} twice`);
    rest = rest.slice(name.length + 2);
    let value = '';
    for (;;) {
      const c = rest[0];
      if (c === undefined) throw new Error('unterminated label value');
      rest = rest.slice(1);
      if (c === '"') break;
      if (c !== '\\') {
        value += c;
        continue;
      }
      const escaped = rest[0];
      rest = rest.slice(1);
      if (escaped === 'n') value += '\n';
      else if (escaped === '\\' || escaped === '"') value += escaped;
      else throw new Error('bad escape in a label value');
    }
    labels[name] = value;
    if (rest.startsWith(',')) rest = rest.slice(1);
    else if (!rest.startsWith('}')) throw new Error('expected , or } after a label');
  }
}

/** A float as Go's ParseFloat reads it (Prometheus does): NaN and Inf in any case (prom-client writes `Nan`). */
function readValue(token: string): number {
  if (/^nan$/i.test(token)) return NaN;
  const infinite = /^([+-]?)inf(inity)?$/i.exec(token);
  if (infinite !== null) return infinite[1] === '-' ? -Infinity : Infinity;
  if (!FLOAT.test(token)) throw new Error(`bad value "${token}"`);
  return Number(token);
}

const sameLabels = (a: Labels, b: Labels) =>
  Object.keys(a).length === Object.keys(b).length &&
  Object.entries(b).every(([k, v]) => a[k] === v);

/** The sample of series `name` with exactly `labels`, if the exposition has it. */
export function sampleOf(exposition: Exposition, name: string, labels: Labels = {}) {
  for (const family of exposition.values()) {
    const found = family.samples.find((s) => s.name === name && sameLabels(s.labels, labels));
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The value of series `name` with exactly `labels`; 0 when absent (a counter not yet fed). */
export const valueOf = (exposition: Exposition, name: string, labels: Labels = {}): number =>
  sampleOf(exposition, name, labels)?.value ?? 0;

/** How much series `name{labels}` grew from `before` to `after`. */
export const growth = (before: Exposition, after: Exposition, name: string, labels: Labels = {}) =>
  valueOf(after, name, labels) - valueOf(before, name, labels);

/** GET /metrics, checked and parsed; the raw text too, for promtool. */
export async function scrape(app: App): Promise<{ text: string; exposition: Exposition }> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text: res.body, exposition: parseExposition(res.body) };
}

/**
 * `promtool check metrics` on `text` (stdin): its exit code and its complaints, one per line. A
 * machine without promtool fails here: `make test` installs it (scripts/ensure-tools.sh).
 */
export function promtoolCheck(text: string): Promise<{ code: number | null; lines: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'ENOENT'
          ? new Error(
              'promtool is not installed: run `bash scripts/ensure-tools.sh` (make test does)',
            )
          : err,
      );
    });
    child.on('close', (code) => {
      resolve({ code, lines: output.split('\n').filter((l) => l.trim() !== '') });
    });
    child.stdin.end(text);
  });
}
