/**
 * A queue read as an async iterable: a producer pushes while a consumer (a speech engine, a
 * recognizer) reads at its own pace. `end()` lets the reader finish after what is queued. The
 * producer bounds what it pushes (a sentence at a time, an utterance's audio): the queue itself
 * does not drop anything.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiting: ((r: IteratorResult<T>) => void) | undefined;
  private ended = false;

  push(item: T): void {
    if (this.ended) return;
    const wake = this.waiting;
    if (wake === undefined) {
      this.items.push(item);
      return;
    }
    this.waiting = undefined;
    wake({ value: item, done: false });
  }

  end(): void {
    this.ended = true;
    const wake = this.waiting;
    this.waiting = undefined;
    wake?.({ value: undefined, done: true });
  }

  get size(): number {
    return this.items.length;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
      return: () => {
        this.end();
        this.items.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
