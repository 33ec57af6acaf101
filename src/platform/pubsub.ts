import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from './logger.js';
import type { OutageNotice } from './outages.js';

export type Handler = (payload: unknown) => void;

/**
 * Publish/subscribe between the instances of the service (chat typing, cancel and answer frames).
 * Handlers on this instance get a message at once, without a round trip; with Redis every other
 * instance subscribed to the channel gets it too. Delivery is at most once: a subscriber that is not
 * connected when a message goes out never sees it (what must survive is stored elsewhere).
 */
export interface PubSub {
  readonly kind: 'redis' | 'memory';
  /** Resolves once messages published on `channel` anywhere reach `handler`. */
  subscribe(channel: string, handler: Handler): Promise<() => void>;
  publish(channel: string, payload: unknown): void;
  /**
   * Called each time the subscription comes back after its connection dropped: messages sent
   * meanwhile were lost, so what they would have invalidated must be dropped by other means.
   */
  onReconnect(handler: () => void): void;
  close(): Promise<void>;
}

class LocalHandlers {
  private readonly byChannel = new Map<string, Set<Handler>>();

  add(channel: string, handler: Handler): { first: boolean; remove: () => boolean } {
    let set = this.byChannel.get(channel);
    const first = set === undefined;
    if (set === undefined) {
      set = new Set();
      this.byChannel.set(channel, set);
    }
    set.add(handler);
    const handlers = set;
    return {
      first,
      /** True when it was the channel's last handler. */
      remove: () => {
        handlers.delete(handler);
        if (handlers.size > 0 || this.byChannel.get(channel) !== handlers) return false;
        this.byChannel.delete(channel);
        return true;
      },
    };
  }

  deliver(channel: string, payload: unknown, log?: Logger): void {
    const set = this.byChannel.get(channel);
    if (set === undefined) return;
    for (const handler of [...set]) {
      try {
        handler(payload);
      } catch (err) {
        log?.error({ err }, 'pub/sub handler failed');
      }
    }
  }
}

export function memoryPubSub(): PubSub {
  const local = new LocalHandlers();
  return {
    kind: 'memory',
    subscribe(channel, handler) {
      const { remove } = local.add(channel, handler);
      return Promise.resolve(() => {
        remove();
      });
    },
    publish(channel, payload) {
      local.deliver(channel, payload);
    },
    onReconnect() {
      // One process: nothing is ever missed.
    },
    close: () => Promise.resolve(),
  };
}

/**
 * Redis channels (named `<prefix><channel>`, as keys are) on one subscriber connection per
 * instance, subscribed while this instance has a handler for them. Each message carries the
 * publishing instance's id, so the publisher's own handlers, already called, are not called twice.
 */
export function redisPubSub(
  redis: Redis,
  prefix: string,
  log: Logger,
  /** Told of a failed publish first: a lost Redis is logged there once, not per message. */
  outages?: OutageNotice,
): PubSub {
  const origin = randomUUID();
  const local = new LocalHandlers();
  // Named, so that operators (and tests) can tell it apart in CLIENT LIST. SUBSCRIBE may be sent
  // while this connection is still being made: it waits for it (or fails after one retry).
  const subscriber = redis.duplicate({
    keyPrefix: '',
    connectionName: `${prefix}pubsub`,
    enableOfflineQueue: true,
  });
  subscriber.on('error', () => undefined);
  const reconnected = new Set<() => void>();
  let connectedOnce = false;
  subscriber.on('ready', () => {
    if (connectedOnce) for (const handler of reconnected) handler();
    connectedOnce = true;
  });
  subscriber.on('messageBuffer', (channelBuf: Buffer, message: Buffer) => {
    const channel = channelBuf.toString('utf8').slice(prefix.length);
    let parsed: { o: string; p: unknown };
    try {
      parsed = JSON.parse(message.toString('utf8')) as { o: string; p: unknown };
    } catch {
      return;
    }
    if (parsed.o !== origin) local.deliver(channel, parsed.p, log);
  });
  return {
    kind: 'redis',
    async subscribe(channel, handler) {
      const { first, remove } = local.add(channel, handler);
      if (first) {
        try {
          await subscriber.subscribe(prefix + channel);
        } catch (err) {
          remove();
          throw err;
        }
      }
      return () => {
        if (remove()) void subscriber.unsubscribe(prefix + channel).catch(() => undefined);
      };
    },
    publish(channel, payload) {
      local.deliver(channel, payload, log);
      redis
        .publish(prefix + channel, JSON.stringify({ o: origin, p: payload }))
        .catch((err: unknown) => {
          if (outages?.noticed(err) !== true) log.warn({ err }, 'pub/sub publish failed');
        });
    },
    onReconnect(handler) {
      reconnected.add(handler);
    },
    async close() {
      subscriber.disconnect();
      await Promise.resolve();
    },
  };
}
