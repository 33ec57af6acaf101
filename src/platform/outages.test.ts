import { DrizzleQueryError } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { createLogger } from './logger.js';
import { createMetrics } from './metrics.js';
import { lossOf, markLost, Outages } from './outages.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const query = (cause: Error) =>
  new DrizzleQueryError('select * from users where email = $1', ['secret@example.org'], cause);

describe('lossOf', () => {
  it.each([
    [
      'a refused connection',
      query(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')),
    ],
    ['a reset connection', query(withCode('read ECONNRESET', 'ECONNRESET'))],
    ['the server shutting down', query(withCode('terminating connection', '57P01'))],
    ['the server starting up', query(withCode('the database system is starting up', '57P03'))],
    ['a connection failure (class 08)', query(withCode('connection failure', '08006'))],
    ['a dropped connection', query(new Error('Connection terminated unexpectedly'))],
    ['no connection in time', query(new Error('timeout exceeded when trying to connect'))],
    ['a transaction that could not connect', markLost(new Error('connect ETIMEDOUT'), 'postgres')],
  ])('reads %s as PostgreSQL lost', (_, err) => {
    expect(lossOf(err)?.dependency).toBe('postgres');
  });

  it.each([
    ['offline', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    ['closed', new Error('Connection is closed.')],
    ['aborted', new Error('Command aborted due to connection close')],
    ['retried out', new Error('Reached the max retries per request limit (which is 1).')],
    ['loading', new Error('LOADING Redis is loading the dataset in memory')],
  ])('reads ioredis %s as Redis lost', (_, err) => {
    expect(lossOf(err)?.dependency).toBe('redis');
  });

  it.each([
    ['a unique violation', query(withCode('duplicate key', '23505'))],
    ['a bad cast', query(withCode('invalid input syntax', '22P02'))],
    ['a bug', new TypeError('Cannot read properties of undefined')],
    // Another service's connection (Qdrant, WebDAV, a model): not the database's, not Redis's.
    ['a refused fetch', new TypeError('fetch failed', { cause: withCode('x', 'ECONNREFUSED') })],
    ['a bare socket error', withCode('connect ECONNREFUSED 127.0.0.1:6333', 'ECONNREFUSED')],
    ['an AppError', new AppError('NOT_FOUND', 'Conversation not found')],
    ['not an Error', 'ECONNREFUSED'],
  ])('leaves %s alone', (_, err) => {
    expect(lossOf(err)).toBeUndefined();
  });

  it('reads a bare socket error as the loss of the client that raised it', () => {
    const err = withCode('connect ECONNREFUSED 127.0.0.1:6379', 'ECONNREFUSED');
    expect(lossOf(err, 'redis')).toEqual({ dependency: 'redis', reason: 'ECONNREFUSED' });
  });

  it('gives a code or the driver fixed words as the reason, never the query', () => {
    const loss = lossOf(query(withCode('connect ECONNREFUSED', 'ECONNREFUSED')));
    expect(loss?.reason).toBe('ECONNREFUSED');
    expect(lossOf(query(new Error('Connection terminated unexpectedly')))?.reason).toBe(
      'Connection terminated unexpectedly',
    );
  });
});

describe('Outages', () => {
  function setUp() {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger(
      { logLevel: 'info' },
      { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    let now = 1000;
    const metrics = createMetrics();
    const outages = new Outages(
      log,
      { postgres: () => Promise.reject(new Error('still down')) },
      metrics,
      () => now,
    );
    return { lines, outages, metrics, advance: (ms: number) => (now += ms) };
  }
  const lost = () => query(withCode('connect ECONNREFUSED', 'ECONNREFUSED'));

  it('answers 503 with Retry-After, logs the outage once and its end once, with the count', () => {
    const { lines, outages, advance } = setUp();
    for (let i = 0; i < 3; i += 1) {
      const refused = outages.refusal(lost());
      expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
      expect(refused?.headers).toEqual({ 'retry-after': '5' });
    }
    expect(outages.noticed(lost())).toBe(true);
    advance(2500);
    outages.restored('postgres');
    outages.restored('postgres');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, 'dependency unavailable'],
      [30, 'dependency available again'],
    ]);
    expect(lines[0]).toMatchObject({ dependency: 'postgres', reason: 'ECONNREFUSED' });
    expect(JSON.stringify(lines)).not.toMatch(/secret|select|stack/);
    expect(lines[1]).toMatchObject({ dependency: 'postgres', refused: 3, downMs: 2500 });
    outages.close();
  });

  it('leaves other failures to the caller', () => {
    const { lines, outages } = setUp();
    expect(outages.refusal(new TypeError('a bug'))).toBeUndefined();
    expect(outages.noticed(new TypeError('a bug'))).toBe(false);
    expect(lines).toEqual([]);
    expect(outages.isDown('postgres')).toBe(false);
  });

  it('tells a socket the AppError as it is, a lost dependency as 503, anything else as 500', () => {
    const { lines, outages } = setUp();
    const log = createLogger(
      { logLevel: 'error' },
      { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const notFound = new AppError('NOT_FOUND', 'Message not found');
    expect(outages.failure(notFound, log, 'failed', 'Oops')).toBe(notFound);
    expect(outages.failure(lost(), log, 'failed', 'Oops').code).toBe('SERVICE_UNAVAILABLE');
    const bug = outages.failure(new TypeError('a bug'), log, 'frame failed', 'Oops');
    expect(bug).toMatchObject({ code: 'INTERNAL_ERROR', message: 'Oops' });
    expect(lines.filter((l) => l.msg === 'frame failed')).toHaveLength(1);
    outages.close();
  });

  it('shows the state in dependency_up and dependency_refused_total', async () => {
    const { outages, metrics } = setUp();
    outages.refusal(lost());
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^dependency_up\{dependency="postgres"\} 0$/m);
    expect(text).toMatch(/^dependency_refused_total\{dependency="postgres"\} 1$/m);
    outages.restored('postgres');
    expect(await metrics.registry.metrics()).toMatch(/^dependency_up\{dependency="postgres"\} 1$/m);
  });
});
