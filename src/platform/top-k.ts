/**
 * The k best (id, score) pairs of a stream, in a fixed-size min-heap: the root is the worst kept,
 * worse meaning a lower score, then (on equal scores) a higher id, so ties go to the lower id.
 * Shared by the lexical postings and the dense index.
 */
export class TopK {
  private readonly scores: Float64Array;
  private readonly ids: Int32Array;
  private n = 0;

  constructor(private readonly k: number) {
    this.scores = new Float64Array(k);
    this.ids = new Int32Array(k);
  }

  get full(): boolean {
    return this.n === this.k;
  }

  /** The worst score kept (the k-th best once full). */
  get min(): number {
    return this.scores[0] ?? 0;
  }

  /** Keeps (id, score) if it is among the k best so far; says whether it did. */
  offer(id: number, score: number): boolean {
    if (this.k === 0) return false;
    if (this.n < this.k) {
      const at = this.n++;
      this.place(at, score, id);
      this.siftUp(at);
      return true;
    }
    const worst = this.scores[0] ?? 0;
    if (score < worst || (score === worst && id > (this.ids[0] ?? 0))) return false;
    this.place(0, score, id);
    this.siftDown(0);
    return true;
  }

  /** The ids kept, best first. */
  sorted(): number[] {
    return this.sortedWithScores().map(([id]) => id);
  }

  /** [id, score] pairs kept, best first. */
  sortedWithScores(): [number, number][] {
    const pairs: [number, number][] = [];
    for (let i = 0; i < this.n; i++) pairs.push([this.ids[i] ?? 0, this.scores[i] ?? 0]);
    pairs.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return pairs;
  }

  private worse(i: number, j: number): boolean {
    const a = this.scores[i] ?? 0;
    const b = this.scores[j] ?? 0;
    return a < b || (a === b && (this.ids[i] ?? 0) > (this.ids[j] ?? 0));
  }

  private siftUp(start: number): void {
    for (let at = start; at > 0;) {
      const parent = (at - 1) >> 1;
      if (!this.worse(at, parent)) return;
      this.swap(at, parent);
      at = parent;
    }
  }

  private siftDown(start: number): void {
    for (let at = start; ;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let worst = at;
      if (left < this.n && this.worse(left, worst)) worst = left;
      if (right < this.n && this.worse(right, worst)) worst = right;
      if (worst === at) return;
      this.swap(at, worst);
      at = worst;
    }
  }

  private place(at: number, score: number, id: number): void {
    this.scores[at] = score;
    this.ids[at] = id;
  }

  private swap(a: number, b: number): void {
    const score = this.scores[a] ?? 0;
    const id = this.ids[a] ?? 0;
    this.place(a, this.scores[b] ?? 0, this.ids[b] ?? 0);
    this.place(b, score, id);
  }
}
