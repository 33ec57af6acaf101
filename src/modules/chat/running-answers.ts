import type { KeyValueStore } from '../../platform/kv.js';
import type { Lease } from '../../platform/leases.js';
import type { PubSub } from '../../platform/pubsub.js';
import { STREAM_LIMITS, type AnswerInfo } from './answer-streams.js';
import { cancelChannel } from './channels.js';
import { within } from './turn-inputs.js';

interface Running {
  info: AnswerInfo;
  controller: AbortController;
  done: Promise<void>;
  leases: Lease[];
}

/** How long a cancel is kept for the answer's instance to find (DECISIONS 4's replay window). */
const CANCEL_TTL_SECONDS = STREAM_LIMITS.keepAfterEndMs / 1000;
const cancelKey = (messageId: string) => `chat:cancelled:${messageId}`;

/**
 * The answers running on this instance, and their cancels from any instance. A cancel is a key in
 * the shared store, which this instance looks for every `pollMs` (and at once when its subscriber
 * comes back), and a pub/sub message, heard at once while the subscriber is there. When the store
 * comes back, every answer running here renews its leases (its answer slot, its place in line).
 */
export class RunningAnswers {
  private readonly running = new Map<string, Running>();
  private readonly watch: NodeJS.Timeout;

  constructor(
    private readonly kv: KeyValueStore,
    private readonly pubsub: PubSub,
    pollMs: number,
  ) {
    this.watch = setInterval(() => {
      this.checkCancels();
    }, pollMs);
    this.watch.unref();
    pubsub.onReconnect(() => {
      this.checkCancels();
      this.renewAll();
    });
  }

  /**
   * Runs `answer` here until it ends or is cancelled; `release` gives its leases back after. The
   * cancel subscription is made first; without it (Redis away) the cancel is found in the store.
   */
  async start(
    info: AnswerInfo,
    leases: Lease[],
    answer: (signal: AbortSignal) => Promise<void>,
    release: () => Promise<void>,
  ): Promise<void> {
    const { messageId, userId } = info;
    const controller = new AbortController();
    const unsubscribe = await this.pubsub
      .subscribe(cancelChannel(messageId), (payload) => {
        if ((payload as { userId?: unknown }).userId === userId) controller.abort();
      })
      .catch(() => () => undefined);
    const done = answer(controller.signal).finally(async () => {
      unsubscribe();
      this.running.delete(messageId);
      await release();
    });
    this.running.set(messageId, { info, controller, done, leases });
  }

  /** Stops the user's answer if it runs here; false when it does not. */
  cancelHere(userId: string, messageId: string): boolean {
    const here = this.running.get(messageId);
    if (here?.info.userId !== userId) return false;
    here.controller.abort();
    return true;
  }

  /** Tells the answer's instance, wherever it is: the durable key, then the message. */
  async cancelElsewhere(userId: string, messageId: string): Promise<void> {
    await this.kv.setFlag(cancelKey(messageId), CANCEL_TTL_SECONDS);
    this.pubsub.publish(cancelChannel(messageId), { userId });
  }

  /** Shutdown: the answers get half of `timeoutMs` to end; the rest are cancelled. */
  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.watch);
    const all = [...this.running.values()];
    const settled = Promise.allSettled(all.map((r) => r.done));
    if (await within(settled, timeoutMs / 2)) return;
    for (const r of all) r.controller.abort();
    await within(settled, timeoutMs / 2);
  }

  /** Stops every answer running here whose cancel is in the store. */
  private checkCancels(): void {
    for (const [messageId, r] of this.running) {
      if (r.controller.signal.aborted) continue;
      this.kv.anyFlag([cancelKey(messageId)]).then(
        (cancelled) => {
          if (cancelled) r.controller.abort();
        },
        () => undefined,
      );
    }
  }

  /** After the store came back: the answers running here take their slots and places back at once. */
  private renewAll(): void {
    for (const r of this.running.values()) {
      for (const lease of r.leases) lease.renew().catch(() => undefined);
    }
  }
}
