import type { KeyValueStore } from '../../platform/kv.js';

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

  isRevoked(jti: string, family: string): Promise<boolean> {
    return this.store.anyFlag([`revoked:jti:${jti}`, `revoked:fam:${family}`]);
  }
}
