/** The operators' write figures (`/api/admin/metrics/epic`), kept in memory per instance. */
export interface WriteMetrics {
  write_requests: number;
  /** Successful writes over all writes; null before the first write. */
  write_success_rate: number | null;
  /** Mean latency of all writes (failed ones too); null before the first write. */
  avg_write_latency_ms: number | null;
}

export class WriteStats {
  private requests = 0;
  private successes = 0;
  private totalMs = 0;

  record(success: boolean, latencyMs: number): void {
    this.requests += 1;
    if (success) this.successes += 1;
    this.totalMs += latencyMs;
  }

  snapshot(): WriteMetrics {
    if (this.requests === 0) {
      return { write_requests: 0, write_success_rate: null, avg_write_latency_ms: null };
    }
    return {
      write_requests: this.requests,
      write_success_rate: this.successes / this.requests,
      avg_write_latency_ms: Math.round((this.totalMs / this.requests) * 10) / 10,
    };
  }
}
