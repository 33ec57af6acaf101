import type { Db } from '../../db/client.js';
import { AppError, serviceUnavailable } from '../../errors.js';
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
    return unavailableOnFailure(this.store.setFlag(`revoked:jti:${jti}`, Math.max(1, ttlSeconds)));
  }

  async revokeFamilies(families: readonly string[]): Promise<void> {
    await unavailableOnFailure(
      Promise.all(
        families.map((f) => this.store.setFlag(`revoked:fam:${f}`, this.familyTtlSeconds)),
      ),
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

  isRevoked(jti: string, family: string): Promise<boolean> {
    return unavailableOnFailure(
      this.store.anyFlag([`revoked:jti:${jti}`, `revoked:fam:${family}`]),
    );
  }
}

/**
 * Token checks fail closed when the store is unreachable; the caller gets 503, a dependency
 * outage, rather than a 500 that reads like a bug.
 */
async function unavailableOnFailure<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw serviceUnavailable('The token store is unavailable; try again shortly');
  }
}
