import { performance } from 'node:perf_hooks';
import type { Deps } from '../../src/deps.js';
import type { EhrCaller } from '../../src/modules/ehr/service.js';
import type { FhirPeer } from './fhir-peer.js';
import { sleep } from './processes.js';

/**
 * Time from provider recovery to CLOSED: the FHIR server answers 503 to everything until the
 * breaker is OPEN; `clearDelayMs` after it opened the faults are cleared (the recovery instant);
 * meanwhile one patient summary at a time goes out every `tickMs`. The breaker's transitions are
 * read off the `circuit_breaker_state{dependency="ehr"}` gauge the service sets (onGauge), with
 * the time of each set.
 */

export interface Transition {
  at: number;
  value: number;
}

/** Times (performance.now) every set of the EHR breaker gauge, from now on. */
export function watchBreakerGauge(deps: Deps): Transition[] {
  const gauge = deps.metrics.circuitBreakerState;
  const transitions: Transition[] = [];
  const set = gauge.set.bind(gauge) as (labels: object, value: number) => void;
  (gauge as unknown as { set: (labels: object, value: number) => void }).set = (labels, value) => {
    if ((labels as { dependency?: string }).dependency === 'ehr') {
      transitions.push({ at: performance.now(), value });
    }
    set(labels, value);
  };
  return transitions;
}

interface Answer {
  start: number;
  end: number;
  stale: boolean;
  failed: boolean;
}

export interface RecoveryRun {
  /** Milliseconds from the first 503 to OPEN. */
  toOpen: number;
  /** Wait left on the half-open timer when the faults were cleared. */
  waitLeft: number;
  /** From the end of the wait to the first trial call (the next request's tick). */
  toFirstTrial: number;
  /** From the first trial call to CLOSED (three successful trials). */
  trials: number;
  /** From the recovery (faults cleared) to CLOSED. */
  recovery: number;
  /** Answers from the last good value, and answers that failed, during the run. */
  staleAnswers: number;
  failedAnswers: number;
  /** From the recovery to the first fresh answer's end. */
  staleAfterRecovery: number;
  /** Latencies of the stale answers served while the breaker was OPEN. */
  staleLatencies: number[];
}

export interface RecoveryContext {
  deps: Deps;
  peer: FhirPeer;
  caller: EhrCaller;
  patientId: string;
  transitions: Transition[];
  halfOpenMs: number;
  tickMs: number;
}

const after = (list: Transition[], value: number, from: number) =>
  list.find((t) => t.value === value && t.at >= from)?.at;

async function summary(ctx: RecoveryContext): Promise<Answer> {
  const start = performance.now();
  try {
    const answer = await ctx.deps.ehr.patientSummary(ctx.caller, ctx.patientId);
    return { start, end: performance.now(), stale: answer.stale, failed: false };
  } catch {
    return { start, end: performance.now(), stale: false, failed: true };
  }
}

export async function recoveryRun(
  ctx: RecoveryContext,
  clearDelayMs: number,
): Promise<RecoveryRun> {
  const first = await summary(ctx);
  if (first.stale || first.failed || ctx.deps.ehr.status().circuit_breaker.state !== 'CLOSED') {
    throw new Error('the breaker is not CLOSED with a fresh answer before the run');
  }
  const answers: Answer[] = [];
  let clearedAt = Number.NaN;
  let clearing: Promise<void> | undefined;
  await ctx.peer.inject({ kind: 'status', status: 503 });
  const faultAt = performance.now();
  const deadline = faultAt + 60_000;
  for (;;) {
    const tick = performance.now();
    answers.push(await summary(ctx));
    const openedAt = after(ctx.transitions, 2, faultAt);
    if (openedAt !== undefined && clearing === undefined) {
      // Cleared on a timer of its own, not on the request cadence.
      clearing = sleep(Math.max(0, openedAt + clearDelayMs - performance.now())).then(() => {
        clearedAt = performance.now();
        return ctx.peer.clearFaults();
      });
    }
    if (!Number.isNaN(clearedAt) && after(ctx.transitions, 0, clearedAt) !== undefined) break;
    if (performance.now() > deadline) throw new Error('the breaker did not close within 60 s');
    await sleep(Math.max(0, tick + ctx.tickMs - performance.now()));
  }
  await clearing;
  return measureRun(ctx, answers, faultAt, clearedAt);
}

function measureRun(
  ctx: RecoveryContext,
  answers: Answer[],
  faultAt: number,
  clearedAt: number,
): RecoveryRun {
  const openedAt = after(ctx.transitions, 2, faultAt) ?? Number.NaN;
  const halfOpenAt = after(ctx.transitions, 1, clearedAt) ?? Number.NaN;
  const closedAt = after(ctx.transitions, 0, clearedAt) ?? Number.NaN;
  const waitEnds = openedAt + ctx.halfOpenMs;
  const firstFresh = answers.find((a) => a.start >= clearedAt && !a.stale && !a.failed);
  return {
    toOpen: openedAt - faultAt,
    waitLeft: Math.max(0, waitEnds - clearedAt),
    toFirstTrial: halfOpenAt - Math.max(waitEnds, clearedAt),
    trials: closedAt - halfOpenAt,
    recovery: closedAt - clearedAt,
    staleAnswers: answers.filter((a) => a.stale).length,
    failedAnswers: answers.filter((a) => a.failed).length,
    staleAfterRecovery: (firstFresh?.end ?? Number.NaN) - clearedAt,
    staleLatencies: answers
      .filter((a) => a.stale && a.start >= openedAt && a.end <= halfOpenAt)
      .map((a) => a.end - a.start),
  };
}
