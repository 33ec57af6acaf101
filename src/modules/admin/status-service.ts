import type { Db } from '../../db/client.js';
import type { SocketRegistry } from './socket-registry.js';
import { mergeInstances } from './socket-status.js';
import { statusRepo } from './status-repo.js';
import type { SystemMetrics } from './system-metrics.js';

/** Users listed by websocket-status (the busiest first); `users_total` counts them all. */
export const MAX_LISTED_USERS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The panel's live views: sockets across the instances, and this instance's own figures. */
export class StatusService {
  constructor(
    private readonly db: Db,
    private readonly registry: SocketRegistry,
    private readonly system: SystemMetrics,
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

  async metrics() {
    return { instance_id: this.registry.id, ...(await this.system.read()) };
  }
}
