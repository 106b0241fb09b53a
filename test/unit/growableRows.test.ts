import { describe, expect, it } from 'vitest';
import { growRows, grownCapacity } from '../../src/domain/buffers/growableRows';

describe('growable rows', () => {
  it('doubles capacity until the rows fit', () => {
    expect(grownCapacity(256, 256)).toBe(256);
    expect(grownCapacity(256, 257)).toBe(512);
    expect(grownCapacity(3, 25)).toBe(48);
    expect(grownCapacity(0, 5)).toBe(8);
  });

  it('keeps the used rows and only those, in a buffer of the new capacity', () => {
    const a = Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8]); // 4 rows of 2, 3 used
    const b = growRows(a, 2, 3, 8);
    expect(b.length).toBe(16);
    expect(Array.from(b.subarray(0, 6))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(Array.from(b.subarray(6))).toEqual(new Array(10).fill(0));
  });
});
