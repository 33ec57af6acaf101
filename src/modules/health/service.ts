export type Role = 'postgres' | 'redis' | 'qdrant' | 'nextcloud';

export interface ReadinessCheck {
  role: Role;
  /** Which implementation serves the role, e.g. `postgresql`, `pglite`, `in-process`. */
  backend: string;
  probe(): Promise<void>;
}

export interface Readiness {
  status: 'ready' | 'not_ready';
  checks: Record<Role, boolean>;
  backends: Record<Role, string>;
  timestamp: number;
}

/** Probes every role of DECISIONS 8 in parallel, each bounded by a timeout. */
export class HealthService {
  readonly startedAt = Date.now();

  constructor(
    readonly version: string,
    private readonly checks: readonly ReadinessCheck[],
    private readonly timeoutMs: number,
  ) {}

  liveness() {
    return { status: 'ok' as const, version: this.version, timestamp: Date.now() / 1000 };
  }

  async readiness(): Promise<Readiness> {
    const results = await Promise.all(
      this.checks.map(async (c) => [c, await withTimeout(c.probe(), this.timeoutMs)] as const),
    );
    const checks = {} as Record<Role, boolean>;
    const backends = {} as Record<Role, string>;
    for (const [c, okay] of results) {
      checks[c.role] = okay;
      backends[c.role] = c.backend;
    }
    const ready = results.every(([, okay]) => okay);
    return {
      status: ready ? 'ready' : 'not_ready',
      checks,
      backends,
      timestamp: Date.now() / 1000,
    };
  }
}

async function withTimeout(probe: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([probe.then(() => true).catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
