/** Items pushed from callbacks, read in order by one `await next()` loop. */
export class AsyncInbox<T> {
  readonly #items: T[] = [];
  #wake: (() => void) | null = null;

  push(item: T): void {
    this.#items.push(item);
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  async next(): Promise<T> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) return item;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}
