/** The completions the drain pace is measured over: at most this many, in the last second. */
const PACE_MAX_COMPLETIONS = 32;
const PACE_MIN_COMPLETIONS = 8;
const PACE_WINDOW_MS = 1000;
/** The searches whose median duration stands for a search's, before the pace is measured. */
const RECENT_SEARCHES = 15;

/**
 * The chat turns' knowledge-base searches: at most `limit` at once, the others waiting in order. A
 * turn whose wait outlasts its deadline leaves the queue without searching, and a search given up
 * on is aborted, so a burst of turns costs the engine no more than `limit` searches at a time.
 *
 * The limit sizes itself (between 1 and `max`) to what the engine sustains: it grows by one while
 * searches take about as long as the fastest recently seen, and shrinks by one when a search takes
 * more than twice that (more at once would only queue inside the engine). From how long searches
 * take the gate also tells, before a turn is taken, whether its search would be answered
 * within the deadline (`admit`): a turn it would not be is refused up front, with the time after
 * which the queue should have drained, instead of being answered without passages.
 *
 * How fast the queue drains is measured where it can be: while searches wait for a slot, the pace
 * at which they complete is what the engine sustains. Before there is such a pace (the gate has
 * not been full in the last second, as at the start of a burst) it is estimated from the median
 * duration of the last 15 searches and the limit. Counting a search at the fastest recent duration
 * admitted turns that then missed the deadline (24 of 200 turns without passages at 20,000 chunks
 * on PGlite, bench/search-scale.ts); a mean weighted towards the latest searches refused half of
 * a burst of 200 at 2,000 chunks whose admitted half all had their first chunk within 1.4 s: its
 * first searches, slowed by the other turns' statements and the dense copy catching up, had
 * lifted the mean to 100 ms (searches took 10-20 ms) just as the limit fell to one.
 */
export class SearchGate {
  private running = 0;
  private readonly waiting: { admit: () => void; expired: boolean }[] = [];
  private limit: number;
  /** The durations of the last searches, ms, oldest first. */
  private readonly recentMs: number[] = [];
  /** The fastest recent search, ms: a minimum that slowly forgets upwards. */
  private fastestMs: number | undefined;
  /** Until when each admitted turn whose search has not asked for a slot yet counts as ahead. */
  private readonly promised: number[] = [];
  /** When the last searches completed while others waited (the gate full), oldest first. */
  private readonly fullCompletions: number[] = [];

  constructor(private readonly max: number) {
    this.limit = max;
  }

  /** Searches allowed at once now. */
  get size(): number {
    return this.limit;
  }

  /**
   * Before a turn is taken: undefined when its search is expected to finish within `budgetMs`,
   * and the turn is then counted as ahead of later ones until its search asks for a slot (or
   * `budgetMs` passes); else the ms after which the searches ahead should have drained.
   */
  admit(budgetMs: number): number | undefined {
    const now = performance.now();
    while (this.promised.length > 0 && (this.promised[0] ?? 0) <= now) this.promised.shift();
    const typical = this.typicalMs();
    if (typical !== undefined) {
      let live = 0;
      for (const w of this.waiting) if (!w.expired) live += 1;
      const ahead = Math.max(0, this.running + live + this.promised.length + 1 - this.limit);
      const drainMs = ahead * (this.measuredIntervalMs(now) ?? typical / this.limit);
      if (drainMs + typical > budgetMs) return Math.ceil(drainMs);
    }
    this.promised.push(now + budgetMs);
    return undefined;
  }

  /**
   * Runs `work` once a slot is free; undefined when `deadline` (ms, `performance.now()`) passes
   * first. `work` gets a signal aborted when `signal` is (the caller gave the search up).
   */
  async run<T>(
    work: (signal: AbortSignal) => Promise<T>,
    deadline: number,
    signal: AbortSignal = new AbortController().signal,
    /**
     * The question's own search of a turn (chat or voice, each admitted first): the entry
     * `admit` made for it no longer counts as waiting to ask.
     */
    admitted = false,
  ): Promise<T | undefined> {
    if (admitted) this.promised.shift();
    if (!(await this.enter(deadline))) return undefined;
    if (signal.aborted) {
      this.leave();
      throw signal.reason;
    }
    const started = performance.now();
    let completed = false;
    try {
      const result = await work(signal);
      completed = true;
      return result;
    } finally {
      // An aborted or failed search says nothing of how long searches take.
      if (completed) this.observe(performance.now() - started);
      this.leave();
    }
  }

  /**
   * The ms between completions while the gate was full, over the last few of them; undefined
   * when too few were seen in the last second (the gate was not full: only the demand was measured).
   */
  private measuredIntervalMs(now: number): number | undefined {
    const times = this.fullCompletions;
    while (times.length > 0 && (times[0] ?? 0) < now - PACE_WINDOW_MS) times.shift();
    if (times.length < PACE_MIN_COMPLETIONS) return undefined;
    const first = times[0] ?? now;
    const last = times[times.length - 1] ?? now;
    return (last - first) / (times.length - 1);
  }

  private recordCompletion(): void {
    const now = performance.now();
    const full = this.waiting.some((w) => !w.expired);
    if (!full) {
      this.fullCompletions.length = 0;
      return;
    }
    this.fullCompletions.push(now);
    if (this.fullCompletions.length > PACE_MAX_COMPLETIONS) this.fullCompletions.shift();
  }

  private observe(ms: number): void {
    this.recordCompletion();
    this.recentMs.push(ms);
    if (this.recentMs.length > RECENT_SEARCHES) this.recentMs.shift();
    const fastest = this.fastestMs === undefined ? ms : Math.min(ms, this.fastestMs);
    // Forgets upwards by 1% of the difference per search: the engine's speed may change.
    this.fastestMs = ms > fastest ? fastest + (ms - fastest) * 0.01 : fastest;
    if (ms > 2 * this.fastestMs + 2) this.limit = Math.max(1, this.limit - 1);
    else if (this.running >= this.limit) this.limit = Math.min(this.max, this.limit + 1);
  }

  /** The median of the last searches' durations, ms; undefined before the first. */
  private typicalMs(): number | undefined {
    if (this.recentMs.length === 0) return undefined;
    const sorted = [...this.recentMs].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
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

  /** Frees the slot, and admits as many live waiters as the (possibly changed) limit allows. */
  private leave(): void {
    this.running -= 1;
    while (this.running < this.limit) {
      const next = this.waiting.shift();
      if (next === undefined) return;
      if (next.expired) continue;
      this.running += 1;
      next.admit();
    }
  }
}
