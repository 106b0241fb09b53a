import { describe, expect, it } from 'vitest';
import {
  liftedRootPositions,
  placedClip,
  REFERENCE_PLACEMENT_TOLERANCE_M,
  referenceLiftOf,
} from '../../src/domain/sim/referencePlacement';

// The reference as placed for a run: the floor solve's shift of the reference's own frame 0,
// 0 within the floor solve's numerical noise (so an unplaced run is computed on the same clip
// object), else added to every root z (and stored body z) of a copy.

const clip = () => ({
  rootPosM: Float64Array.from([0.1, 0.2, 0.7, 0.3, 0.4, 0.75]),
  bodyPosW: { bodyCount: 1, data: Float64Array.from([0.1, 0.2, 0.05, 0.3, 0.4, 0.06]) },
});

describe('referenceLiftOf', () => {
  it('is the floor shift beyond the tolerance, up or down', () => {
    expect(referenceLiftOf(0.1537)).toBe(0.1537);
    expect(referenceLiftOf(-0.0485)).toBe(-0.0485);
    expect(referenceLiftOf(2 * REFERENCE_PLACEMENT_TOLERANCE_M)).toBe(2 * REFERENCE_PLACEMENT_TOLERANCE_M);
  });
  it('is exactly 0 for a reference that stands on the floor (the core-v1 clips solve to 2.4e-16 m)', () => {
    expect(referenceLiftOf(2.42861286636753e-16)).toBe(0);
    expect(referenceLiftOf(-REFERENCE_PLACEMENT_TOLERANCE_M)).toBe(0);
  });
  it('refuses a non-finite shift', () => {
    expect(() => referenceLiftOf(Number.NaN)).toThrow(/not finite/);
  });
});

describe('placedClip', () => {
  it('returns the same clip object for lift 0', () => {
    const c = clip();
    expect(placedClip(c, 0)).toBe(c);
  });
  it('lifts every root z and stored body z of a copy, leaving x, y and the input untouched', () => {
    const c = clip();
    const p = placedClip(c, 0.15);
    expect(p).not.toBe(c);
    expect(Array.from(p.rootPosM)).toEqual([0.1, 0.2, 0.7 + 0.15, 0.3, 0.4, 0.75 + 0.15]);
    expect(Array.from(p.bodyPosW!.data)).toEqual([0.1, 0.2, 0.05 + 0.15, 0.3, 0.4, 0.06 + 0.15]);
    expect(Array.from(c.rootPosM)).toEqual([0.1, 0.2, 0.7, 0.3, 0.4, 0.75]);
  });
  it('refuses a non-finite lift', () => {
    expect(() => placedClip(clip(), Number.POSITIVE_INFINITY)).toThrow(/not finite/);
  });
  it('liftedRootPositions adds to z only', () => {
    expect(Array.from(liftedRootPositions(Float64Array.from([1, 2, 3]), -1))).toEqual([1, 2, 2]);
  });
});
