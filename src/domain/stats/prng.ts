// Seeded pseudo-random number generator: xoshiro128** 1.1 (Blackman & Vigna, 2018,
// https://prng.di.unimi.it/xoshiro128starstar.c), seeded through SplitMix64.
//
// Why this one: its state is four 32-bit words and every step is 32-bit integer arithmetic
// (Math.imul, shifts, xor), so the stream is bit-identical on every JavaScript engine and
// platform — nothing depends on floating-point rounding or Math.random. Period 2^128 − 1.
//
// Step (all operations mod 2^32, on unsigned 32-bit words s0..s3):
//   result = rotl(s1 · 5, 7) · 9
//   t = s1 << 9
//   s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 11)
//
// Seeding (as the authors recommend, SplitMix64 expands one seed into a full state): the seed
// is an integer 0 ≤ seed ≤ 2^53 − 1 taken as the 64-bit SplitMix64 state; two SplitMix64
// outputs z1, z2 give s0 = low32(z1), s1 = high32(z1), s2 = low32(z2), s3 = high32(z2).
// The state cannot be all zero (SplitMix64 is a bijection of its counter, so z1 and z2 are
// never both 0). SplitMix64 (Vigna 2015, https://prng.di.unimi.it/splitmix64.c):
//   x += 0x9e3779b97f4a7c15; z = x;
//   z = (z ^ (z >> 30)) · 0xbf58476d1ce4e5b9; z = (z ^ (z >> 27)) · 0x94d049bb133111eb;
//   return z ^ (z >> 31)            (all mod 2^64; computed here once per seed with BigInt)
//
// Derived draws:
//   nextUint32()  — the raw output.
//   nextFloat()   — a double in [0, 1) with 53 random bits: (a >>> 5) · 2^26 + (b >>> 6), / 2^53
//                   (two outputs a, b; the genrand_res53 construction of MT19937), exact.
//   nextBelow(n)  — an integer uniform on 0..n−1 (1 ≤ n ≤ 2^32) without modulo bias, by
//                   rejection: draw u until u < 2^32 − (2^32 mod n), return u mod n. Every
//                   operation is exact in doubles, so the result is platform-independent.
// The test suite checks the stream against the reference C code compiled with gcc.

import { StatsError } from './result';

const TWO_32 = 4294967296;
const MASK64 = (1n << 64n) - 1n;

/** One SplitMix64 step: returns [newState, output], both as unsigned 64-bit BigInts. */
export function splitMix64Next(state: bigint): [bigint, bigint] {
  const x = (state + 0x9e3779b97f4a7c15n) & MASK64;
  let z = x;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return [x, z ^ (z >> 31n)];
}

/** Throws unless `seed` is an integer in [0, 2^53 − 1]. */
export function assertSeed(seed: number): void {
  if (!(Number.isSafeInteger(seed) && seed >= 0)) {
    throw new StatsError('invalid-argument', `seed must be an integer in [0, 2^53 − 1], got ${String(seed)}`);
  }
}

function assertBound(n: number): void {
  if (!(Number.isInteger(n) && n >= 1 && n <= TWO_32)) {
    throw new StatsError('invalid-argument', `nextBelow(n) needs an integer 1 ≤ n ≤ 2^32, got ${String(n)}`);
  }
}

export class Xoshiro128StarStar {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** Seeded through SplitMix64 (see the file header). */
  constructor(readonly seed: number) {
    assertSeed(seed);
    const [x1, z1] = splitMix64Next(BigInt(seed));
    const [, z2] = splitMix64Next(x1);
    this.s0 = Number(z1 & 0xffffffffn);
    this.s1 = Number(z1 >> 32n);
    this.s2 = Number(z2 & 0xffffffffn);
    this.s3 = Number(z2 >> 32n);
  }

  /** A generator with an explicit state (four uint32 words, not all zero); for tests. */
  static fromState(state: readonly [number, number, number, number]): Xoshiro128StarStar {
    const words = state.map((w) => w >>> 0);
    if (words.every((w) => w === 0))
      throw new StatsError('invalid-argument', 'xoshiro128** state must not be all zero');
    const g = new Xoshiro128StarStar(0);
    [g.s0, g.s1, g.s2, g.s3] = words;
    return g;
  }

  /** The next raw output, an unsigned 32-bit integer. */
  nextUint32(): number {
    const s1 = this.s1;
    const m = Math.imul(s1, 5);
    const result = Math.imul((m << 7) | (m >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = (this.s3 << 11) | (this.s3 >>> 21);
    return result;
  }

  /** A double uniform on [0, 1) with 53 random bits (two outputs). */
  nextFloat(): number {
    const a = this.nextUint32() >>> 5; // 27 bits
    const b = this.nextUint32() >>> 6; // 26 bits
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** An integer uniform on 0..n−1, 1 ≤ n ≤ 2^32, unbiased (rejection sampling). */
  nextBelow(n: number): number {
    assertBound(n);
    const limit = TWO_32 - (TWO_32 % n);
    for (;;) {
      const u = this.nextUint32();
      if (u < limit) return u % n;
    }
  }

  /** Fills `out` with successive nextBelow(n) draws (the same stream, one bound check). */
  fillBelow(n: number, out: Uint32Array): Uint32Array {
    assertBound(n);
    const limit = TWO_32 - (TWO_32 % n);
    for (let j = 0; j < out.length; j++) {
      let u = this.nextUint32();
      while (u >= limit) u = this.nextUint32();
      out[j] = u % n;
    }
    return out;
  }
}

/** `() => nextFloat()` of a fresh generator: seeded uniform numbers on [0, 1) for test data and benchmarks. */
export function seededUniform(seed: number): () => number {
  const rng = new Xoshiro128StarStar(seed);
  return () => rng.nextFloat();
}
