import type { Db } from '../../db/client.js';
import type { FeatureFlagRow } from '../../db/schema/index.js';
import { conflict, notFound } from '../../errors.js';
import type { AuditService, RequestContext } from '../audit/service.js';
import type { CacheRegion } from '../../platform/layered-cache.js';
import { isOnFor } from './bucket.js';
import { ALL_FLAGS } from './cache.js';
import { flagsRepo, type FlagPatch } from './repo.js';
import { toFlagDto } from './schema.js';

/** The administrator making a change. */
export interface FlagActor {
  id: string;
  email: string;
}

export interface NewFlag {
  name: string;
  enabled: boolean;
  description: string;
  rolloutPercentage: number;
}

export type FlagChanges = Partial<Pick<NewFlag, 'enabled' | 'description' | 'rolloutPercentage'>>;

/**
 * Feature flags (spec 4.7, DECISIONS 7): administrators change them, each change audited with the
 * flag before and after in its transaction; every module asks whether a flag is on for a user.
 * Evaluation reads the cached list of all flags (never the database per call); every committed
 * change drops that list on every instance.
 */
export class FlagsService {
  /** Each cached list indexed by name once, however often it is read. */
  private readonly indexes = new WeakMap<FeatureFlagRow[], Map<string, FeatureFlagRow>>();

  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly cache: CacheRegion<FeatureFlagRow[]>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Every flag by name, as stored (administrators read the database, not the cache). */
  list(): Promise<FeatureFlagRow[]> {
    return flagsRepo.list(this.db);
  }

  async get(name: string): Promise<FeatureFlagRow> {
    const row = await flagsRepo.find(this.db, name);
    if (row === undefined) throw notFound('Feature flag');
    return row;
  }

  async create(actor: FlagActor, input: NewFlag, ctx: RequestContext): Promise<FeatureFlagRow> {
    const at = this.now();
    const created = await this.db.transaction(async (tx) => {
      const row = await flagsRepo.insert(tx, { ...input, createdAt: at, updatedAt: at });
      if (row === undefined) throw conflict(`A feature flag named "${input.name}" already exists`);
      await this.record(tx, 'flag.created', actor, input.name, null, row, ctx);
      return row;
    });
    await this.forget();
    return created;
  }

  /** Applies the changes that differ from the stored flag; none: the flag as it is, no entry. */
  async update(
    actor: FlagActor,
    name: string,
    changes: FlagChanges,
    ctx: RequestContext,
  ): Promise<FeatureFlagRow> {
    return this.change(actor, name, 'flag.updated', ctx, (before) => {
      const patch: FlagPatch = {};
      if (changes.enabled !== undefined && changes.enabled !== before.enabled) {
        patch.enabled = changes.enabled;
      }
      if (changes.description !== undefined && changes.description !== before.description) {
        patch.description = changes.description;
      }
      const pct = changes.rolloutPercentage;
      if (pct !== undefined && pct !== before.rolloutPercentage) patch.rolloutPercentage = pct;
      return patch;
    });
  }

  /** Flips `enabled` under the row's lock: two concurrent toggles are two flips. */
  toggle(actor: FlagActor, name: string, ctx: RequestContext): Promise<FeatureFlagRow> {
    return this.change(actor, name, 'flag.toggled', ctx, (before) => ({
      enabled: !before.enabled,
    }));
  }

  /**
   * Sets `enabled` on several flags in one transaction (the operators' batch): every flag exists
   * or nothing changes (404 naming the first missing one). Rows are locked in name order, so two
   * batches touching the same flags cannot deadlock; each real change is audited as
   * `flag.updated`. Answers the flags after the batch, in the order asked, and how many changed.
   */
  async setEnabled(
    actor: FlagActor,
    updates: readonly { name: string; enabled: boolean }[],
    ctx: RequestContext,
  ): Promise<{ rows: FeatureFlagRow[]; changed: number }> {
    const ordered = [...updates].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const { rows, changed } = await this.db.transaction(async (tx) => {
      const after = new Map<string, FeatureFlagRow>();
      let count = 0;
      for (const { name, enabled } of ordered) {
        const before = await flagsRepo.lock(tx, name);
        if (before === undefined) throw notFound(`Feature flag "${name}"`);
        if (before.enabled === enabled) {
          after.set(name, before);
          continue;
        }
        const row = await flagsRepo.update(tx, name, { enabled, updatedAt: this.now() });
        if (row === undefined) throw notFound(`Feature flag "${name}"`);
        await this.record(tx, 'flag.updated', actor, name, before, row, ctx);
        after.set(name, row);
        count += 1;
      }
      return {
        rows: updates.map((u) => after.get(u.name)).filter((r) => r !== undefined),
        changed: count,
      };
    });
    if (changed > 0) await this.forget();
    return { rows, changed };
  }

  async delete(actor: FlagActor, name: string, ctx: RequestContext): Promise<void> {
    await this.db.transaction(async (tx) => {
      const before = await flagsRepo.delete(tx, name);
      if (before === undefined) throw notFound('Feature flag');
      await this.record(tx, 'flag.deleted', actor, name, before, null, ctx);
    });
    await this.forget();
  }

  /** Whether the flag is on for the user; an unknown flag is off. */
  async isEnabled(name: string, userId: string): Promise<boolean> {
    const flag = this.index(await this.current()).get(name);
    return flag !== undefined && isOnFor(flag, userId);
  }

  /** Every flag by name: whether it is on for the user. */
  async evaluate(userId: string): Promise<Record<string, boolean>> {
    const result: Record<string, boolean> = {};
    for (const flag of await this.current()) result[flag.name] = isOnFor(flag, userId);
    return result;
  }

  /** The flag locked, `patch(before)` applied (when it changes anything) and audited. */
  private async change(
    actor: FlagActor,
    name: string,
    action: string,
    ctx: RequestContext,
    patch: (before: FeatureFlagRow) => FlagPatch,
  ): Promise<FeatureFlagRow> {
    const { row, changed } = await this.db.transaction(async (tx) => {
      const before = await flagsRepo.lock(tx, name);
      if (before === undefined) throw notFound('Feature flag');
      const changes = patch(before);
      if (Object.keys(changes).length === 0) return { row: before, changed: false };
      const after = await flagsRepo.update(tx, name, { ...changes, updatedAt: this.now() });
      if (after === undefined) throw notFound('Feature flag');
      await this.record(tx, action, actor, name, before, after, ctx);
      return { row: after, changed: true };
    });
    if (changed) await this.forget();
    return row;
  }

  private record(
    tx: Db,
    action: string,
    actor: FlagActor,
    name: string,
    before: FeatureFlagRow | null,
    after: FeatureFlagRow | null,
    ctx: RequestContext,
  ): Promise<void> {
    const details = {
      before: before === null ? null : toFlagDto(before),
      after: after === null ? null : toFlagDto(after),
    };
    const event = {
      action,
      success: true,
      actorId: actor.id,
      actorEmail: actor.email,
      resourceType: 'feature_flag',
      resourceId: name,
      details,
    };
    return this.audit.append(tx, event, ctx);
  }

  /** All flags, from the cache (loaded from the database on a miss). */
  private async current(): Promise<FeatureFlagRow[]> {
    return (await this.cache.get(ALL_FLAGS, () => flagsRepo.list(this.db))) ?? [];
  }

  private index(rows: FeatureFlagRow[]): Map<string, FeatureFlagRow> {
    let index = this.indexes.get(rows);
    if (index === undefined) {
      index = new Map(rows.map((r) => [r.name, r]));
      this.indexes.set(rows, index);
    }
    return index;
  }

  /** Drops the cached list in Redis and on every instance (after a committed change). */
  private async forget(): Promise<void> {
    await this.cache.delete(ALL_FLAGS);
  }
}
