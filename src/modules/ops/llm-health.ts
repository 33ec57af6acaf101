import { ProviderError, type LlmProvider } from '../../providers/llm/types.js';
import { abortable } from '../../platform/abortable.js';

/**
 * The language model's health, measured (issue 22 item 7): the provider's `probe` (an
 * OpenAI-compatible endpoint lists its models; the offline model answers a fixed question
 * in-process) within a timeout, at most once per `ttlMs` however many ask, and judged:
 *
 * - `ok`: answered within `slowMs`.
 * - `degraded`: answered, but slower than `slowMs`; or answered with something other than a model
 *   list: 429 (rate limited), 404 (no listing at that URL), another 4xx, or a 2xx that is not a
 *   list. The endpoint is there but may not serve answers as it should.
 * - `unavailable` (down): no answer within the timeout, the connection failed, a 5xx, or 401/403
 *   (every answer would be refused).
 * - `unknown`: the provider has no probe.
 *
 * `last_error` is the most recent failed or degraded probe's reason, kept after the model
 * recovers (with `last_error_at`), so a flap between two looks is still seen. Messages come from
 * the provider's errors: status, upstream code and a key-redacted excerpt, never the URL or key.
 */

export type LlmHealthStatus = 'ok' | 'degraded' | 'unavailable' | 'unknown';

export interface LlmHealth {
  status: LlmHealthStatus;
  kind: 'remote' | 'in_process' | null;
  /** What the probe does, e.g. `GET /models`; null without a probe. */
  probe: string | null;
  detail: string | undefined;
  /** How long the probe took; null when it did not answer in time or there is no probe. */
  latencyMs: number | null;
  checkedAt: Date;
  /** Whether the endpoint lists the configured model; null when not known. */
  modelListed: boolean | null;
  lastError: string | null;
  lastErrorAt: Date | null;
}

export interface LlmHealthOptions {
  timeoutMs: number;
  slowMs: number;
  /** How long a probe's result is reused (default 30 s). */
  ttlMs?: number;
  /** Milliseconds since the epoch (tests move it). */
  now?: () => number;
}

export const LLM_HEALTH_TTL_MS = 30_000;

type Judged = Pick<LlmHealth, 'status' | 'kind' | 'probe' | 'detail' | 'latencyMs' | 'modelListed'>;

export class LlmHealthProbe {
  readonly #ttlMs: number;
  readonly #now: () => number;
  #current: Promise<LlmHealth> | undefined;
  #running = false;
  #startedAt = 0;
  #lastError: { message: string; at: Date } | undefined;

  constructor(
    private readonly llm: LlmProvider,
    private readonly options: LlmHealthOptions,
  ) {
    this.#ttlMs = options.ttlMs ?? LLM_HEALTH_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The last probe's result while it is younger than the TTL; else a new probe. Never two at once:
   * while one runs (even past the TTL, with a long timeout) every caller waits for it.
   */
  check(): Promise<LlmHealth> {
    const now = this.#now();
    const stale = now - this.#startedAt >= this.#ttlMs;
    if (this.#current === undefined || (stale && !this.#running)) {
      this.#startedAt = now;
      this.#running = true;
      this.#current = this.#run().finally(() => {
        this.#running = false;
      });
    }
    return this.#current;
  }

  async #run(): Promise<LlmHealth> {
    const judged = await this.#judge();
    const checkedAt = new Date(this.#now());
    if (judged.status !== 'ok' && judged.status !== 'unknown') {
      this.#lastError = { message: judged.detail ?? judged.status, at: checkedAt };
    }
    return {
      ...judged,
      checkedAt,
      lastError: this.#lastError?.message ?? null,
      lastErrorAt: this.#lastError?.at ?? null,
    };
  }

  async #judge(): Promise<Judged> {
    const { llm } = this;
    const none = { kind: null, probe: null, latencyMs: null, modelListed: null };
    if (llm.probe === undefined) {
      return { ...none, status: 'unknown', detail: 'this provider has no health probe' };
    }
    const { timeoutMs, slowMs } = this.options;
    const signal = AbortSignal.timeout(timeoutMs);
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const result = await abortable(llm.probe({ signal }), signal);
      const latencyMs = elapsed();
      const listed = { modelListed: result.modelListed ?? null };
      const found = { ...listed, kind: result.kind, probe: result.probe, latencyMs };
      if (latencyMs > slowMs) {
        const detail = `answered in ${String(latencyMs)} ms, slower than ${String(slowMs)} ms`;
        return { ...found, status: 'degraded', detail };
      }
      const detail =
        result.modelListed === false
          ? `the endpoint does not list the model ${llm.model}`
          : undefined;
      return { ...found, status: 'ok', detail };
    } catch (error) {
      if (signal.aborted) {
        return {
          ...none,
          status: 'unavailable',
          detail: `no answer within ${String(timeoutMs)} ms`,
        };
      }
      const answered = error instanceof ProviderError ? error.status : undefined;
      const detail = error instanceof ProviderError ? error.message : 'the probe failed';
      const down = answered === undefined || answered >= 500 || [401, 403].includes(answered);
      return {
        ...none,
        latencyMs: answered === undefined ? null : elapsed(),
        status: down ? 'unavailable' : 'degraded',
        detail,
      };
    }
  }
}
