/**
 * The merge behind GET /api/admin/panel/websocket-status: every live instance's socket counts
 * into totals per endpoint, per user and per instance. Pure.
 */

/** Every socket endpoint the service serves (chat, then voice). */
export const SOCKET_ENDPOINTS = [
  '/ws',
  '/api/realtime/ws',
  '/api/voice/pipeline-ws',
  '/api/realtime',
] as const;

export type EndpointCounts = Record<string, number>;

/** One instance's entry in the shared registry. */
export interface InstanceEntry {
  id: string;
  hostname: string;
  pid: number;
  /** ISO 8601: when the instance last wrote the entry. */
  updated_at: string;
  /** user id -> endpoint -> open sockets. */
  users: Record<string, EndpointCounts>;
}

export interface UserSockets {
  user_id: string;
  connections: number;
  endpoints: EndpointCounts;
}

export interface SocketStatus {
  total: number;
  by_endpoint: EndpointCounts;
  users_total: number;
  by_user: UserSockets[];
  instances: {
    id: string;
    hostname: string;
    pid: number;
    connections: number;
    updated_at: string;
  }[];
}

const zeroes = (): EndpointCounts => Object.fromEntries(SOCKET_ENDPOINTS.map((e) => [e, 0]));

const positive = (n: unknown): number =>
  typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0;

/**
 * Sums the entries. Users are sorted by open sockets (most first, then by id) and cut to
 * `maxUsers`; `users_total` counts them all. Instances are sorted by id.
 */
export function mergeInstances(entries: readonly InstanceEntry[], maxUsers: number): SocketStatus {
  const byEndpoint = zeroes();
  const byUser = new Map<string, UserSockets>();
  const instances: SocketStatus['instances'] = [];
  let total = 0;
  for (const entry of entries) {
    let connections = 0;
    for (const [userId, endpoints] of Object.entries(entry.users)) {
      let user = byUser.get(userId);
      for (const [endpoint, raw] of Object.entries(endpoints)) {
        const n = positive(raw);
        if (n === 0) continue;
        user ??= { user_id: userId, connections: 0, endpoints: zeroes() };
        user.endpoints[endpoint] = (user.endpoints[endpoint] ?? 0) + n;
        user.connections += n;
        byEndpoint[endpoint] = (byEndpoint[endpoint] ?? 0) + n;
        connections += n;
      }
      if (user !== undefined) byUser.set(userId, user);
    }
    total += connections;
    const { id, hostname, pid, updated_at } = entry;
    instances.push({ id, hostname, pid, connections, updated_at });
  }
  const users = [...byUser.values()].sort(
    (a, b) => b.connections - a.connections || (a.user_id < b.user_id ? -1 : 1),
  );
  instances.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    total,
    by_endpoint: byEndpoint,
    users_total: users.length,
    by_user: users.slice(0, maxUsers),
    instances,
  };
}

/** An entry read back from Redis, or undefined when it is not one (a foreign or torn value). */
export function parseEntry(text: string | null): InstanceEntry | undefined {
  if (text === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<keyof InstanceEntry, unknown>;
  const ok =
    typeof v.id === 'string' &&
    typeof v.hostname === 'string' &&
    typeof v.pid === 'number' &&
    typeof v.updated_at === 'string' &&
    typeof v.users === 'object' &&
    v.users !== null;
  return ok ? (value as InstanceEntry) : undefined;
}
