// Growable frame-major Float64Array columns (rows of `width` values), for trajectories that are
// appended to at a stream's rate: capacity doubles, so appends are amortised O(1) and allocation
// happens only on growth.

/** The smallest capacity reached by doubling `capacity` that holds `neededRows` rows. */
export function grownCapacity(capacity: number, neededRows: number): number {
  let c = Math.max(1, capacity);
  while (c < neededRows) c *= 2;
  return c;
}

/** A buffer for `capacityRows` rows holding a copy of the first `usedRows` rows of `a`. */
export function growRows(a: Float64Array, width: number, usedRows: number, capacityRows: number): Float64Array {
  const b = new Float64Array(width * capacityRows);
  b.set(a.subarray(0, width * usedRows));
  return b;
}
