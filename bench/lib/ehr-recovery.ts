import { performance } from 'node:perf_hooks';
import type { Deps } from '../../src/deps.js';
import type { EhrCaller } from '../../src/modules/ehr/service.js';
import type { FhirPeer } from './fhir-peer.js';
import { sleep } from './processes.js';

/**
 * Time from provider recovery to CLOSED: the FHIR server answers 503 to everything until the
 * breaker is OPEN; `clearDelayMs` after it opened the faults are cleared (the recovery instant).
 * The breaker closes on its own probes of the server (`GET metadata`, issue 23): in a run "with
 * traffic" one patient summary at a time goes out every `tickMs` all along (answered from the last
 * good value while not CLOSED, never a trial call); in a run "without traffic" nobody asks anything
 * once the breaker is open. The breaker's transitions are read off the
 * `circuit_breaker_state{dependency="ehr"}` gauge the service sets (onGauge), with the time of each
 * set.
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
  /** Summaries sent every tick until CLOSED (true), or none once the breaker opened (false). */
  traffic: boolean;
  /** Milliseconds from the first 503 to OPEN. */
  toOpen: number;
  /** Wait left on the half-open timer when the faults were cleared. */
  waitLeft: number;
  /** From the end of the wait to the first probe after the recovery (HALF_OPEN). */
  toFirstProbe: number;
  /** From that probe to CLOSED (the successful probes, an interval apart). */
  probing: number;
  /** From the recovery (faults cleared) to CLOSED. */
  recovery: number;
  /** Requests the FHIR server got from the recovery to CLOSED: probes, and anything else. */
  probesAfterRecovery: number;
  otherRequestsAfterRecovery: number;
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

const isProbe = (path: string): boolean => path.split('?')[0]?.endsWith('/metadata') ?? false;

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
  traffic: boolean,
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
    const opened = after(ctx.transitions, 2, faultAt) !== undefined;
    if (traffic || !opened) answers.push(await summary(ctx));
    const openedAt = after(ctx.transitions, 2, faultAt);
    if (openedAt !== undefined && clearing === undefined) {
      // Cleared on a timer of its own, not on the request cadence.
      clearing = sleep(Math.max(0, openedAt + clearDelayMs - performance.now())).then(async () => {
        await ctx.peer.forget();
        clearedAt = performance.now();
        await ctx.peer.clearFaults();
      });
    }
    if (!Number.isNaN(clearedAt) && after(ctx.transitions, 0, clearedAt) !== undefined) break;
    if (performance.now() > deadline) throw new Error('the breaker did not close within 60 s');
    await sleep(Math.max(0, tick + (traffic || !opened ? ctx.tickMs : 1) - performance.now()));
  }
  await clearing;
  const seen = traffic ? [] : await ctx.peer.requests();
  const run = measureRun(ctx, answers, faultAt, clearedAt, traffic);
  return {
    ...run,
    probesAfterRecovery: traffic ? Number.NaN : seen.filter(isProbe).length,
    otherRequestsAfterRecovery: traffic ? Number.NaN : seen.filter((p) => !isProbe(p)).length,
  };
}

function measureRun(
  ctx: RecoveryContext,
  answers: Answer[],
  faultAt: number,
  clearedAt: number,
  traffic: boolean,
): Omit<RecoveryRun, 'probesAfterRecovery' | 'otherRequestsAfterRecovery'> {
  const openedAt = after(ctx.transitions, 2, faultAt) ?? Number.NaN;
  const halfOpenAt = after(ctx.transitions, 1, clearedAt) ?? Number.NaN;
  const closedAt = after(ctx.transitions, 0, clearedAt) ?? Number.NaN;
  // The wait that was running at the recovery: from the last opening before it (a failed probe
  // opens the breaker again and starts a new wait).
  const lastOpen = ctx.transitions.filter((t) => t.value === 2 && t.at <= clearedAt).at(-1);
  const waitEnds = (lastOpen?.at ?? openedAt) + ctx.halfOpenMs;
  const firstFresh = answers.find((a) => a.start >= clearedAt && !a.stale && !a.failed);
  return {
    traffic,
    toOpen: openedAt - faultAt,
    waitLeft: Math.max(0, waitEnds - clearedAt),
    toFirstProbe: halfOpenAt - Math.max(waitEnds, clearedAt),
    probing: closedAt - halfOpenAt,
    recovery: closedAt - clearedAt,
    staleAnswers: answers.filter((a) => a.stale).length,
    failedAnswers: answers.filter((a) => a.failed).length,
    staleAfterRecovery: (firstFresh?.end ?? Number.NaN) - clearedAt,
    staleLatencies: answers
      .filter((a) => a.stale && a.start >= openedAt && a.end <= halfOpenAt)
      .map((a) => a.end - a.start),
  };
}
