// Gini coefficient of a set of scores: how unequally they are spread, Σᵢ Σⱼ |xᵢ − xⱼ| / (2 n² |x̄|).
// In the benchmark audit it is a benchmark's discriminative power (scores that are all alike
// separate no models). 0 when every score is equal or the mean is 0; scale-free.

import { assertAllFinite, StatsError } from '../stats/result';

export function gini(values: ArrayLike<number>): number {
  assertAllFinite(values, 'gini values');
  const n = values.length;
  if (n === 0) throw new StatsError('empty', 'gini: no values');
  const sorted = Float64Array.from(values).sort();
  // Σᵢ Σⱼ |xᵢ − xⱼ| = 2 Σₖ (2k − n + 1)·x₍ₖ₎ over the sorted values (k from 0).
  let s = 0;
  let total = 0;
  for (let k = 0; k < n; k++) {
    s += (2 * k - n + 1) * sorted[k];
    total += sorted[k];
  }
  const mean = total / n;
  if (mean === 0) return 0;
  return (2 * s) / (2 * n * n * Math.abs(mean));
}
