import type { Db } from '../../db/client.js';
import type { KeyValueStore } from '../../platform/kv.js';
import { refreshTokensRepo } from './repo.js';

/**
 * Revoked access tokens (by jti) and token families (by fam), kept in the shared store until the
 * tokens they cover would have expired anyway. Every authenticated request asks it once.
 */
export class RevocationList {
  constructor(
    private readonly store: KeyValueStore,
    private readonly familyTtlSeconds: number,
  ) {}

  revokeToken(jti: string, ttlSeconds: number): Promise<void> {
    return this.store.setFlag(`revoked:jti:${jti}`, Math.max(1, ttlSeconds));
  }

  async revokeFamilies(families: readonly string[]): Promise<void> {
    await Promise.all(
      families.map((f) => this.store.setFlag(`revoked:fam:${f}`, this.familyTtlSeconds)),
    );
  }

  /**
   * Refills a store that starts empty (the in-process one, after a restart) from the database:
   * every revocation (logout, password change, deactivation, reuse) also revokes the family's
   * refresh tokens there, so the families still inside their lifetime are marked again.
   */
  async restoreFromDatabase(db: Db, now: Date): Promise<number> {
    const since = new Date(now.getTime() - this.familyTtlSeconds * 1000);
    const families = await refreshTokensRepo.familiesRevokedSince(db, since);
    await Promise.all(
      families.map(({ familyId, revokedAt }) =>
        this.store.setFlag(
          `revoked:fam:${familyId}`,
          this.familyTtlSeconds - (now.getTime() - revokedAt.getTime()) / 1000,
        ),
      ),
    );
    return families.length;
  }

  /**
   * Fails closed: an unreachable store fails the check, and the request answers 503 (a lost
   * dependency, platform/outages.ts) rather than pass unchecked.
   */
  isRevoked(jti: string, family: string): Promise<boolean> {
    return this.store.anyFlag([`revoked:jti:${jti}`, `revoked:fam:${family}`]);
  }
}
