// Reproducible resampling with replacement (the bootstrap's draw), and grouping into clusters.
//
// Draw order, fixed so that a (seed, B, input) triple always yields the same replicates:
// one Xoshiro128StarStar(seed) stream; replicate b = 0, 1, …, B−1 in turn draws its m indices
// j = 0, 1, …, m−1 in turn, each as rng.nextBelow(m). Nothing else consumes the stream.

import { Xoshiro128StarStar } from './prng';
import { assertPositiveInteger, StatsError } from './result';

/** Fills `out` (length m, or a given length) with indices drawn uniformly from 0..m−1 with replacement. */
export function drawIndices(rng: Xoshiro128StarStar, m: number, out: Uint32Array = new Uint32Array(m)): Uint32Array {
  assertPositiveInteger(m, 'resample population size');
  return rng.fillBelow(m, out);
}

/**
 * Runs `B` bootstrap replicates over a population of `m` units (values, pairs or clusters):
 * for each replicate draws m unit indices with replacement (order as in the file header) and
 * records `statistic(indices)`. The indices array is reused between calls: copy it to keep it.
 */
export function bootstrapReplicates(
  m: number,
  B: number,
  seed: number,
  statistic: (indices: Uint32Array) => number,
): Float64Array {
  assertPositiveInteger(m, 'resample population size');
  assertPositiveInteger(B, 'B (bootstrap replicates)', 10_000_000);
  const rng = new Xoshiro128StarStar(seed);
  const idx = new Uint32Array(m);
  const out = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    rng.fillBelow(m, idx);
    out[b] = statistic(idx);
  }
  return out;
}

/**
 * Groups `values` into clusters by `keys` (same length), clusters in order of first appearance,
 * values within a cluster in input order. E.g. per-episode readings keyed by WBC–motion pair.
 */
export function groupByKey<K>(values: ArrayLike<number>, keys: ArrayLike<K>): number[][] {
  if (values.length !== keys.length) {
    throw new StatsError('length-mismatch', `groupByKey: ${values.length} values but ${keys.length} keys`);
  }
  const byKey = new Map<K, number[]>();
  for (let i = 0; i < values.length; i++) {
    const k = keys[i];
    let c = byKey.get(k);
    if (c === undefined) {
      c = [];
      byKey.set(k, c);
    }
    c.push(values[i]);
  }
  return [...byKey.values()];
}

/** Cluster membership as index lists: for keys, the positions 0..n−1 grouped by first appearance. */
export function clusterIndexLists<K>(keys: ArrayLike<K>): number[][] {
  const byKey = new Map<K, number[]>();
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    let c = byKey.get(k);
    if (c === undefined) {
      c = [];
      byKey.set(k, c);
    }
    c.push(i);
  }
  return [...byKey.values()];
}
