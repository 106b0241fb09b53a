// Percentiles as numpy computes them by default (method 'linear', numpy ≥ 1.22):
//   virtual index i = (n − 1)·(p/100), lo = floor(i), γ = i − lo,
//   value = x[lo] + (x[lo+1] − x[lo])·γ, or x[lo+1] − (x[lo+1] − x[lo])·(1 − γ) when γ ≥ 0.5
// over the sorted values x (numpy's `_lerp`, which switches form at γ = 0.5 for monotonicity).
// Only the two order statistics x[lo] and x[lo+1] are needed, so they are found by in-place
// selection (O(n), Floyd–Rivest) rather than a full sort; the result is the same number either
// way, because order statistics do not depend on how they are found.

/**
 * The p-th percentile of `values[0..n)`, numpy 'linear'. Reorders `values[0..n)` in place.
 * n must be ≥ 1 and the values finite.
 */
export function percentileLinearInPlace(values: Float64Array, n: number, p: number): number {
  if (!(n >= 1 && n <= values.length)) throw new RangeError(`percentile of ${n} values`);
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile p must be in [0, 100], got ${p}`);
  const q = p / 100;
  const index = (n - 1) * q;
  const lo = Math.floor(index);
  const gamma = index - lo;
  const a = selectInPlace(values, 0, n - 1, lo);
  if (lo + 1 >= n) return a;
  // After selection, values[lo+1..n) are all ≥ x[lo]; x[lo+1] is their minimum.
  let b = values[lo + 1];
  for (let i = lo + 2; i < n; i++) if (values[i] < b) b = values[i];
  const diff = b - a;
  return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

/**
 * Puts the k-th smallest of values[left..right] at index k, with smaller-or-equal values before
 * it and greater-or-equal values after; returns values[k]. Floyd–Rivest selection (Floyd &
 * Rivest 1975, algorithm 489, as in the `quickselect` npm package): on large ranges it first
 * recurses into a small sample around the expected position, so one partition pass of ~n
 * comparisons usually suffices — about 2–3× fewer than median-of-three quickselect.
 */
export function selectInPlace(values: Float64Array, left: number, right: number, k: number): number {
  while (right > left) {
    if (right - left > 600) {
      const n = right - left + 1;
      const m = k - left + 1;
      const z = Math.log(n);
      const s = 0.5 * Math.exp((2 * z) / 3);
      const sd = 0.5 * Math.sqrt((z * s * (n - s)) / n) * (m - n / 2 < 0 ? -1 : 1);
      const newLeft = Math.max(left, Math.floor(k - (m * s) / n + sd));
      const newRight = Math.min(right, Math.floor(k + ((n - m) * s) / n + sd));
      selectInPlace(values, newLeft, newRight, k);
    }
    const t = values[k];
    let i = left;
    let j = right;
    swap(values, left, k);
    if (values[right] > t) swap(values, left, right);
    while (i < j) {
      swap(values, i, j);
      i++;
      j--;
      while (values[i] < t) i++;
      while (values[j] > t) j--;
    }
    if (values[left] === t) swap(values, left, j);
    else {
      j++;
      swap(values, j, right);
    }
    if (j <= k) left = j + 1;
    if (k <= j) right = j - 1;
  }
  return values[k];
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}
