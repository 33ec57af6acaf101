/**
 * At most `limit` knowledge-base searches of chat turns at once; the others wait in order. A turn
 * whose wait outlasts its deadline leaves the queue without searching, so a burst of turns costs
 * the database no more than `limit` searches at a time and the late turns fail fast (KB_TIMEOUT)
 * instead of piling searches up behind one another (bench/chat.ts, part 3).
 */
export class SearchGate {
  private running = 0;
  private readonly waiting: { admit: () => void; expired: boolean }[] = [];

  constructor(private readonly limit: number) {}

  /** Runs `work` once a slot is free; undefined when `deadline` (ms, `performance.now()`) passes first. */
  async run<T>(work: () => Promise<T>, deadline: number): Promise<T | undefined> {
    if (!(await this.enter(deadline))) return undefined;
    try {
      return await work();
    } finally {
      this.leave();
    }
  }

  private enter(deadline: number): Promise<boolean> {
    if (this.running < this.limit) {
      this.running += 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const entry = {
        expired: false,
        admit: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(
        () => {
          entry.expired = true;
          resolve(false);
        },
        Math.max(0, deadline - performance.now()),
      );
      this.waiting.push(entry);
    });
  }

  private leave(): void {
    for (let next = this.waiting.shift(); next !== undefined; next = this.waiting.shift()) {
      // The slot passes straight to the next live waiter.
      if (!next.expired) {
        next.admit();
        return;
      }
    }
    this.running -= 1;
  }
}
