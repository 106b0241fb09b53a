// Reads an N-d array stored with arbitrary element strides into C order (row-major, last index
// fastest). Two stored layouts need it:
//   - .npy members written with fortran_order True (numpy writes them after fancy indexing or a
//     transpose): column-major, first index fastest, so strides are (1, d0, d0·d1, …);
//   - torch tensors in a torch.save archive: a view into a storage, at a storage offset, with the
//     tensor's own strides (ProtoMotions saves `dof_pos` as the columns 7..35 of a qpos storage,
//     stride (36, 1), and some velocity tensors with strides (1, N, N·B)).
// Strides and offsets count elements, not bytes. Callers check the extent first
// (stridedExtent), so every index read lies inside the source, and the layout
// (stridedOverlapProblem), so no element is read twice: an array is then backed by one stored
// element per element it has, and its element count is bounded by the bytes present.

/** C-order (row-major) element strides of a shape: (d1·d2·…, …, d_{n-1}, 1). */
export function cOrderStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let k = shape.length - 1; k >= 0; k--) {
    s[k] = acc;
    acc *= shape[k];
  }
  return s;
}

/** Fortran-order (column-major) element strides of a shape: (1, d0, d0·d1, …). */
export function fortranOrderStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let k = 0; k < shape.length; k++) {
    s[k] = acc;
    acc *= shape[k];
  }
  return s;
}

/**
 * The highest source index an array of `shape` with `strides` at `offset` reads, or −1 for an
 * empty array. Strides must be ≥ 0 (numpy files and torch tensors never store negative ones).
 */
export function stridedExtent(shape: readonly number[], strides: readonly number[], offset: number): number {
  let last = offset;
  for (let k = 0; k < shape.length; k++) {
    if (shape[k] === 0) return -1;
    last += (shape[k] - 1) * strides[k];
  }
  return last;
}

/**
 * Why an array of `shape` with `strides` may address one stored element at two indices, or null
 * when it cannot. Dimensions of size 1 are ignored; the others, taken by increasing stride, must
 * each have a stride beyond the highest offset all smaller-stride dimensions reach together
 * (Σ (d_j − 1)·s_j): then the index ↦ offset map is one-to-one (a mixed-radix number). Every view
 * torch or numpy makes of contiguous data by slicing, stepping, narrowing or permuting passes;
 * what fails is a stride 0 (an expanded or broadcast dimension, whose entries are all one
 * element) or strides that interleave. Such arrays repeat stored values instead of storing them,
 * so a few bytes could claim any number of frames: they are refused, never expanded.
 */
export function stridedOverlapProblem(shape: readonly number[], strides: readonly number[]): string | null {
  const dims = shape
    .map((size, axis) => ({ size, stride: strides[axis], axis }))
    .filter((d) => d.size > 1)
    .sort((a, b) => a.stride - b.stride);
  let reach = 0;
  const below: number[] = [];
  for (const d of dims) {
    if (d.stride === 0)
      return `dimension ${d.axis} (size ${d.size}) has stride 0: its ${d.size} entries are one stored element`;
    if (d.stride <= reach)
      return `dimension ${d.axis} (size ${d.size}, stride ${d.stride}) overlaps dimension${below.length > 1 ? 's' : ''} ${below.join(', ')}, which reach${below.length > 1 ? '' : 'es'} element offset ${reach}: entries would share stored elements`;
    reach += (d.size - 1) * d.stride;
    below.push(d.axis);
  }
  return null;
}

/**
 * Gathers the elements of a strided array into a new Float64Array in C order:
 * out[c-order index of (i0, …, i_{n-1})] = read(offset + Σ i_k·strides[k]).
 */
export function gatherStrided(
  shape: readonly number[],
  strides: readonly number[],
  offset: number,
  read: (index: number) => number,
): Float64Array {
  const n = shape.length;
  const count = shape.reduce((a, d) => a * d, 1);
  const out = new Float64Array(count);
  if (count === 0) return out;
  if (n === 0) {
    out[0] = read(offset);
    return out;
  }
  const idx = new Array<number>(n).fill(0);
  const last = n - 1;
  const innerLen = shape[last];
  const innerStride = strides[last];
  let base = offset;
  for (let o = 0; o < count; o += innerLen) {
    for (let i = 0, src = base; i < innerLen; i++, src += innerStride) out[o + i] = read(src);
    // odometer over the outer indices
    for (let k = last - 1; k >= 0; k--) {
      idx[k]++;
      base += strides[k];
      if (idx[k] < shape[k]) break;
      base -= idx[k] * strides[k];
      idx[k] = 0;
    }
  }
  return out;
}
