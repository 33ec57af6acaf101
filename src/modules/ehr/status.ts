import type { BreakerState, Resilience } from '../../providers/ehr/resilience.js';

export interface EhrStatus {
  status: 'ok' | 'degraded' | 'unavailable' | 'disabled';
  /** True while reads are answered from the last good values. */
  fallback_active: boolean;
  /** Null when the integration is disabled. */
  circuit_breaker: { state: BreakerState | null };
}

/**
 * ok: closed and answering fresh. degraded: probing the server (half-open), or reads answered from
 * the last good values. unavailable: open with nothing served from the fallback yet. disabled: no
 * EHR is configured (`resilience` absent).
 */
export function statusOf(resilience: Resilience | undefined): EhrStatus {
  if (resilience === undefined) {
    return { status: 'disabled', fallback_active: false, circuit_breaker: { state: null } };
  }
  const state = resilience.state();
  const fallback = resilience.fallbackActive();
  let status: EhrStatus['status'] = 'ok';
  if (state === 'OPEN') status = fallback ? 'degraded' : 'unavailable';
  else if (state === 'HALF_OPEN' || fallback) status = 'degraded';
  return { status, fallback_active: fallback, circuit_breaker: { state } };
}
