import { describe, expect, it } from 'vitest';
import { TopK } from './top-k.js';

describe('TopK', () => {
  it('keeps the k best, best first, ties to the lower id', () => {
    const top = new TopK(3);
    const offers: [number, number][] = [
      [5, 1],
      [1, 4],
      [9, 4],
      [2, 0.5],
      [7, 3],
      [3, 4],
    ];
    for (const [id, score] of offers) top.offer(id, score);
    expect(top.full).toBe(true);
    expect(top.sortedWithScores()).toEqual([
      [1, 4],
      [3, 4],
      [9, 4],
    ]);
    expect(top.min).toBe(4);
    // A tie with the worst kept and a higher id is refused; a lower id replaces it.
    expect(top.offer(10, 4)).toBe(false);
    expect(top.offer(0, 4)).toBe(true);
    expect(top.sorted()).toEqual([0, 1, 3]);
  });

  it('keeps nothing when k is 0, and fewer than k when fewer came', () => {
    expect(new TopK(0).offer(1, 1)).toBe(false);
    const top = new TopK(5);
    top.offer(4, 2);
    top.offer(8, 3);
    expect(top.full).toBe(false);
    expect(top.sorted()).toEqual([8, 4]);
  });
});
