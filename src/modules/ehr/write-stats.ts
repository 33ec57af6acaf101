/** Why a write was refused before anything was sent to the EHR (the guard's refusals). */
export const WRITE_REFUSALS = ['flag_off', 'patient_not_allowed', 'invalid_input'] as const;
export type WriteRefusal = (typeof WRITE_REFUSALS)[number];

export const isWriteRefusal = (kind: string): kind is WriteRefusal =>
  (WRITE_REFUSALS as readonly string[]).includes(kind);

/** The operators' write figures (`/api/admin/metrics/epic`), kept in memory per instance. */
export interface WriteMetrics {
  /** Every write asked for: refused, failed or successful. */
  write_requests: number;
  /** Successful writes over all write requests (refusals are not successes); null before the first. */
  write_success_rate: number | null;
  /** Mean latency of the writes sent to the EHR (failed ones too; refusals are never sent). */
  avg_write_latency_ms: number | null;
  /** Write requests refused before reaching the EHR, by reason (part of `write_requests`). */
  write_refused: Record<WriteRefusal, number>;
}

export class WriteStats {
  private requests = 0;
  private successes = 0;
  private sent = 0;
  private totalMs = 0;
  private readonly refused: Record<WriteRefusal, number> = {
    flag_off: 0,
    patient_not_allowed: 0,
    invalid_input: 0,
  };

  /** A write sent to the EHR, with how it ended and how long it took. */
  record(success: boolean, latencyMs: number): void {
    this.requests += 1;
    this.sent += 1;
    if (success) this.successes += 1;
    this.totalMs += latencyMs;
  }

  /**
   * A write that never reached the EHR: refused (`reason`), or failed before sending (the flag
   * could not be read: no reason).
   */
  unsent(reason: WriteRefusal | undefined): void {
    this.requests += 1;
    if (reason !== undefined) this.refused[reason] += 1;
  }

  snapshot(): WriteMetrics {
    return {
      write_requests: this.requests,
      write_success_rate: this.requests === 0 ? null : this.successes / this.requests,
      avg_write_latency_ms:
        this.sent === 0 ? null : Math.round((this.totalMs / this.sent) * 10) / 10,
      write_refused: { ...this.refused },
    };
  }
}
