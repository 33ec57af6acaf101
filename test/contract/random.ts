import { createHash } from 'node:crypto';

/**
 * Seeded randomness for the contract fuzzer: the same seed gives the same requests, so a failure
 * reproduces with `CONTRACT_SEED=<seed>`.
 */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  /** A 31-bit seed for a library that takes one (json-schema-faker). */
  seed(): number;
}

/** mulberry32: small, fast, and good enough to pick test inputs. */
export function rng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => {
      const item = items[int(items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    seed: () => int(0x7fffffff),
  };
}

/**
 * A seed of its own for each operation and caller, derived from the run's seed: an operation added
 * later does not change the requests any other operation gets.
 */
export function derivedSeed(seed: number, ...parts: string[]): number {
  const digest = createHash('sha256')
    .update([String(seed), ...parts].join('\u0000'))
    .digest();
  return digest.readUInt32BE(0);
}

/** The run's seed: `CONTRACT_SEED` (a number, or `random` for a fresh one), else a fixed default. */
export function runSeed(value: string | undefined): number {
  if (value === undefined || value === '') return 20261123;
  if (value === 'random') return Math.floor(Math.random() * 0xffffffff);
  const seed = Number(value);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new Error(`CONTRACT_SEED must be a non-negative integer or "random", not ${value}`);
  }
  return seed;
}
