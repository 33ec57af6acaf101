import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDocument } from '../scripts/openapi.js';
import { ResponseChecker } from './contract/check.js';
import { KeepAliveClient, type WireResponse } from './contract/client.js';
import { toWire, type Case } from './contract/draft.js';
import { callersFor, type CallerFixture } from './contract/fixtures.js';
import { RequestJudge } from './contract/judge.js';
import { mutations } from './contract/mutations.js';
import { derivedSeed, rng, runSeed } from './contract/random.js';
import { loadOperations, operationIdOf, type Operation } from './contract/spec.js';
import { validDraft } from './contract/valid.js';
import { createTestApp, type TestApp } from './helpers/app.js';

/**
 * The schema-driven contract suite: every operation of the service's own /openapi.json gets
 * generated valid requests and mutated ones, from each of four callers, over a keep-alive
 * connection; every answer is checked against the document (status, media type, schema with Ajv
 * 2020-12 and formats), the envelope and request id of DECISIONS 1, and for leaks. Operations come
 * from the document, so a route added later is fuzzed with no new test code.
 *
 *   CONTRACT_SEED=<n|random>            another seed (the default is fixed, so CI reproduces)
 *   CONTRACT_OPERATIONS=login,getUser   only these operations
 */

const SEED = runSeed(process.env.CONTRACT_SEED);
const ONLY = process.env.CONTRACT_OPERATIONS?.split(',').filter(Boolean);
const VALID_PER_CALLER = 4;
const COMMITTED = path.join(import.meta.dirname, '..', 'docs', 'openapi.json');

/** The operations to fuzz, read when the suite is collected; the served document must equal it. */
const committed = JSON.parse(readFileSync(COMMITTED, 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string }>>;
};
const operationIds = Object.entries(committed.paths)
  .flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => operationIdOf(method, path, op)),
  )
  .filter((id) => ONLY === undefined || ONLY.includes(id));

function describeRequest(c: Case, fixture: CallerFixture, wire: { method: string; path: string }) {
  const shown = wire.path.length > 140 ? `${wire.path.slice(0, 140)}…` : wire.path;
  return `[${fixture.caller}] ${c.label}: ${wire.method} ${shown}`;
}

const excerpt = (res: WireResponse) => {
  const text = res.body.toString('utf8');
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

/** What only the caller and the request's validity decide, beyond what the document says. */
function accessProblems(op: Operation, fixture: CallerFixture, invalid: boolean, status: number) {
  const problems: string[] = [];
  const succeeded = status >= 200 && status < 300;
  if (succeeded && invalid)
    problems.push('succeeded although the document says the request is invalid');
  const tokenless = fixture.caller === 'anonymous' || fixture.caller === 'garbage token';
  if (succeeded && op.authenticated && tokenless) problems.push('succeeded without a valid token');
  if (succeeded && fixture.caller === 'user' && op.roles.includes('admin')) {
    problems.push('an ordinary user succeeded on an administrators’ operation');
  }
  return problems;
}

describe(`contract (seed ${SEED}; rerun with CONTRACT_SEED=${SEED})`, () => {
  let t: TestApp;
  let client: KeepAliveClient;
  let served: unknown;
  let operations: Map<string, Operation>;
  const checker = new ResponseChecker();
  const judge = new RequestJudge();

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    client = new KeepAliveClient(address.port);
    const res = await client.send({ method: 'GET', path: '/openapi.json', headers: {} });
    served = JSON.parse(res.body.toString('utf8'));
    operations = new Map((await loadOperations(served)).map((op) => [op.id, op]));
  });
  afterAll(async () => {
    client.close();
    await t.close();
  });

  it('serves the committed docs/openapi.json (`make openapi` rewrites it)', () => {
    const current = formatDocument(served) === readFileSync(COMMITTED, 'utf8');
    expect(current, 'docs/openapi.json differs from /openapi.json: run `make openapi`').toBe(true);
  });

  it.each(operationIds)(
    '%s keeps its contract',
    async (id) => {
      const op = operations.get(id);
      if (op === undefined) throw new Error(`${id} is in docs/openapi.json but not served`);
      const needsDocument = /\{(document_id|job_id)\}/.test(op.path);
      const failures: string[] = [];
      let sent = 0;
      for (const fixture of await callersFor(t.app, t.deps, needsDocument)) {
        const random = rng(derivedSeed(SEED, id, fixture.caller));
        const base = validDraft(op, fixture.known, random);
        const valid = Array.from({ length: VALID_PER_CALLER - 1 }, (_, i) => ({
          label: `valid request ${i + 2}`,
          draft: validDraft(op, fixture.known, random),
        }));
        // Valid requests last: they may log the caller out or delete what the others act on.
        const cases: Case[] = [
          ...mutations(op, base, random),
          { label: 'valid request 1', draft: base },
          ...valid,
        ];
        for (const c of cases) {
          const wire = toWire(op, c.draft, fixture.headers);
          const where = describeRequest(c, fixture, wire);
          sent += 1;
          let res: WireResponse;
          try {
            res = await client.send(wire);
          } catch (err) {
            failures.push(`${where}\n    request failed: ${(err as Error).message}`);
            continue;
          }
          const problems = [
            ...checker.check(op, wire, res),
            ...accessProblems(op, fixture, judge.invalid(op, c), res.status),
          ];
          if (problems.length > 0) {
            failures.push(
              `${where}\n    → ${res.status}: ${problems.join('; ')}\n    ${excerpt(res)}`,
            );
          }
        }
      }
      expect(sent).toBeGreaterThan(0);
      expect(
        failures,
        `${failures.length} of ${sent} answers break the contract (seed ${SEED}):\n${failures.join('\n')}`,
      ).toEqual([]);
    },
    300_000,
  );
});
