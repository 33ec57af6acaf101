import type { Db } from '../../db/client.js';
import { usersRepo } from '../users/repo.js';
import { refreshTokensRepo } from './repo.js';
import type { RevocationList } from './revocation.js';

/** Ends every session of a user: refresh tokens in the database, their families in the store. */
export class Sessions {
  constructor(private readonly revocations: RevocationList) {}

  /**
   * Call inside the transaction that changes the user, before it commits: if the shared store is
   * down the change rolls back rather than leaving live tokens behind it. The user's row is locked
   * first, so a refresh in progress commits before the tokens are revoked (or waits for them).
   */
  async revokeAll(tx: Db, userId: string, at: Date): Promise<void> {
    await usersRepo.lockForTokens(tx, userId);
    const families = await refreshTokensRepo.revokeAllForUser(tx, userId, at);
    await this.revocations.revokeFamilies(families);
  }
}
