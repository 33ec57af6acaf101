import type { Db } from '../../db/client.js';
import type { SocketRegistry } from './socket-registry.js';
import { mergeInstances } from './socket-status.js';
import { statusRepo, type TokenTotalsRow } from './status-repo.js';
import type { SystemMetrics } from './system-metrics.js';

const HOUR_MS = 3_600_000;

/** The start of the panel's recent token window: the current hour (UTC) and the 23 before it. */
export function tokenWindowStart(now: Date): Date {
  return new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - 23 * HOUR_MS);
}

/** Users listed by websocket-status (the busiest first); `users_total` counts them all. */
export const MAX_LISTED_USERS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The panel's live views: sockets across the instances, and this instance's own figures. */
export class StatusService {
  constructor(
    private readonly db: Db,
    private readonly registry: SocketRegistry,
    private readonly system: SystemMetrics,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async websocketStatus() {
    const view = await this.registry.view();
    const status = mergeInstances(view.entries, MAX_LISTED_USERS);
    // Registry entries hold ids only; emails are looked up now (a deleted user has none).
    const ids = status.by_user.map((u) => u.user_id).filter((id) => UUID.test(id));
    const emails = await statusRepo.emailsOf(this.db, ids);
    return {
      scope: view.scope,
      instance_id: this.registry.id,
      total: status.total,
      by_endpoint: status.by_endpoint,
      users_total: status.users_total,
      by_user: status.by_user.map((u) => ({
        user_id: u.user_id,
        email: emails.get(u.user_id) ?? null,
        connections: u.connections,
        endpoints: u.endpoints,
      })),
      instances: status.instances,
    };
  }

  /** Open sockets per endpoint, cluster-wide when the registry is shared (no user lookups). */
  async endpointCounts() {
    const view = await this.registry.view();
    const status = mergeInstances(view.entries, 0);
    return { scope: view.scope, by_endpoint: status.by_endpoint };
  }

  /** This instance's figures, and the token counts of every stored answer (cluster-wide). */
  async metrics() {
    const since = tokenWindowStart(this.now());
    // In turn: the pool figures must not count this request's own query.
    const system = await this.system.read();
    const tokens = await statusRepo.tokenTotals(this.db, since);
    return { instance_id: this.registry.id, ...system, llm_tokens: tokenFigures(tokens, since) };
  }
}

interface TokenCounts {
  answers: number;
  input_tokens: number;
  output_tokens: number;
}

const recentOf = (r: TokenTotalsRow): TokenCounts => ({
  answers: r.recentAnswers,
  input_tokens: r.recentInputTokens,
  output_tokens: r.recentOutputTokens,
});
const allOf = (r: TokenTotalsRow): TokenCounts => ({
  answers: r.answers,
  input_tokens: r.inputTokens,
  output_tokens: r.outputTokens,
});
const sum = (counts: TokenCounts[]): TokenCounts => ({
  answers: counts.reduce((n, c) => n + c.answers, 0),
  input_tokens: counts.reduce((n, c) => n + c.input_tokens, 0),
  output_tokens: counts.reduce((n, c) => n + c.output_tokens, 0),
});

/** The panel's token section: per provider and model, and in all; last 24 h and all time. */
function tokenFigures(rows: TokenTotalsRow[], since: Date) {
  return {
    scope: 'cluster' as const,
    since: since.toISOString(),
    total: { last_24h: sum(rows.map(recentOf)), all_time: sum(rows.map(allOf)) },
    by_model: rows.map((r) => ({
      provider: r.provider,
      model: r.model,
      last_24h: recentOf(r),
      all_time: allOf(r),
    })),
  };
}
