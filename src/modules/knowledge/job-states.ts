import type { Counter } from 'prom-client';
import { JOB_STATES, type JobState } from '../../db/schema/index.js';

/**
 * Where indexing jobs report reaching a state (kb_jobs_total{state}). Called once per transition,
 * after it is committed, by the code that made it: each instance counts its own transitions, and a
 * transition another runner made (a job found superseded mid-run) is not counted again.
 */
export interface JobStateCounter {
  reached(state: JobState, jobs?: number): void;
}

/** kb_jobs_total on `counter`; every state starts at 0, so rates work from the first scrape. */
export function jobStateCounter(counter: Counter<'state'>): JobStateCounter {
  const byState = new Map(JOB_STATES.map((state) => [state, counter.labels({ state })]));
  for (const child of byState.values()) child.inc(0);
  return {
    reached(state, jobs = 1) {
      if (jobs > 0) byState.get(state)?.inc(jobs);
    },
  };
}
