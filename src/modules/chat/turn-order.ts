import { AppError, serviceUnavailable } from '../../errors.js';
import type { KeyValueStore } from '../../platform/kv.js';
import { Lease } from '../../platform/leases.js';
import type { Logger } from '../../platform/logger.js';
import type { PubSub } from '../../platform/pubsub.js';

export interface TurnOrderLimits {
  /**
   * Lifetime of a turn's place in its branch's line, renewed while the turn waits or runs: a
   * crashed instance's turn stops holding the branch within it.
   */
  leaseMs: number;
  /** The longest a turn waits for the turns before it; past it the send fails (`CONFLICT`). */
  waitMs: number;
  /** Turns in one branch's line at most (running and waiting); past it a send is refused. */
  maxInLine: number;
  /** How often a waiting turn asks whether it is first, besides being woken over pub/sub. */
  pollMs: number;
}

export const TURN_ORDER_LIMITS: TurnOrderLimits = {
  leaseMs: 30_000,
  waitMs: 120_000,
  maxInLine: 16,
  pollMs: 500,
};

const lineKey = (conversationId: string, branchId: string) =>
  `chat:turn:${conversationId}:${branchId}`;

/**
 * Turns on one branch are sequential (DECISIONS 4): each turn takes a place at the end of its
 * branch's line (a lease in the key-value store, shared by every instance), waits until it is
 * first, stores its question, generates and stores its answer, and leaves the line, which wakes
 * the next turn (pub/sub, with polling as the fallback). The chat socket's turns and the voice
 * pipeline's share the line.
 */
export class TurnOrder {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly pubsub: PubSub,
    private readonly limits: TurnOrderLimits,
    private readonly log: Logger,
  ) {}

  /** Takes a place at the end of the branch's line (not waiting yet). */
  async join(conversationId: string, branchId: string, turnId: string): Promise<PlaceInLine> {
    const key = lineKey(conversationId, branchId);
    const { leaseMs, maxInLine } = this.limits;
    let lease: Lease | undefined;
    try {
      lease = await Lease.take(this.kv, key, turnId, leaseMs, maxInLine, this.log);
    } catch (err) {
      this.log.warn({ err }, 'the turn order could not be read');
      throw serviceUnavailable('Questions cannot be taken right now; try again shortly');
    }
    if (lease === undefined) {
      throw new AppError(
        'RATE_LIMITED',
        `At most ${String(maxInLine)} questions can wait on one branch; try again when one is answered`,
      );
    }
    return new PlaceInLine(lease, this.pubsub, this.limits);
  }

  /** Joins the line and waits to be first; undefined when `signal` stopped the wait. */
  async take(
    conversationId: string,
    branchId: string,
    turnId: string,
    signal: AbortSignal,
  ): Promise<PlaceInLine | undefined> {
    const place = await this.join(conversationId, branchId, turnId);
    try {
      if (await place.first(signal)) return place;
    } catch (err) {
      await place.release();
      throw err;
    }
    await place.release();
    return undefined;
  }
}

/** A turn's place in its branch's line. Release it once the turn's answer is stored. */
export class PlaceInLine {
  private readonly channel: string;

  constructor(
    readonly lease: Lease,
    private readonly pubsub: PubSub,
    private readonly limits: TurnOrderLimits,
  ) {
    this.channel = lease.key;
  }

  /**
   * Resolves true once every turn before this one has left the line (or its lease expired),
   * false when `signal` aborts the wait. Fails with `CONFLICT` after `waitMs`, and with
   * `SERVICE_UNAVAILABLE` when the store stays out of reach for a lease's lifetime.
   */
  async first(signal: AbortSignal): Promise<boolean> {
    const { leaseMs, waitMs, pollMs } = this.limits;
    const deadline = Date.now() + waitMs;
    if (this.lease.rank === 0) return true;
    let wake: () => void = () => undefined;
    const unsubscribe = await this.pubsub
      .subscribe(this.channel, () => {
        wake();
      })
      .catch(() => () => undefined);
    let failingSince: number | undefined;
    try {
      for (;;) {
        if (signal.aborted) return false;
        try {
          const rank = await this.lease.renew();
          failingSince = undefined;
          if (rank === 0 && this.settled()) return true;
        } catch {
          failingSince ??= Date.now();
          if (Date.now() - failingSince >= leaseMs) {
            throw serviceUnavailable('Questions cannot be taken right now; try again shortly');
          }
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new AppError(
            'CONFLICT',
            'An earlier question on this branch is still being answered; send it again when that answer ends',
          );
        }
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            wake = () => undefined;
            resolve();
          };
          const timer = setTimeout(done, Math.min(pollMs, left));
          signal.addEventListener('abort', done);
          wake = done;
        });
      }
    } finally {
      unsubscribe();
    }
  }

  /**
   * After losing its place (the store restarted empty), a turn waits half a lease before it
   * believes it is first: the turn running meanwhile takes its own place back (at its older
   * order) when it renews, every third of a lease.
   */
  private settled(): boolean {
    const lostAt = this.lease.lostAt;
    return lostAt === undefined || Date.now() - lostAt >= this.limits.leaseMs / 2;
  }

  /** Leaves the line and wakes the turn after it. */
  async release(): Promise<void> {
    await this.lease.release();
    this.pubsub.publish(this.channel, {});
  }
}
