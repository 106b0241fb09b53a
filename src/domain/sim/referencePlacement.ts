// The reference as placed for a simulated run (docs/METRICS.md "Reference placement"). The
// simulator puts the robot's start on the floor (placeOnFloor: the lowest collision point brought
// to the floor plane by a vertical move of the root). A reference whose own first frame does not
// stand on the floor of the run's model (a retargeted motion whose ankles start 10 cm below
// z = 0, or one floating above it) is placed the same way: the vertical move that puts its
// frame 0, as given, on the floor is its lift, and the run's hard-failure test, metrics and
// qualification margins compare the executed motion with the reference lifted by it, every frame.
// Only heights change: MPJPE-l, joint errors and xy drift do not depend on a vertical move.
// The lift is measured on the unperturbed reference frame 0 (not on the robot's possibly
// perturbed start), so it is a property of the clip on the model; a reference that already
// stands on the floor (to REFERENCE_PLACEMENT_TOLERANCE_M, the floor solve's numerical noise) has
// lift 0 and its episodes are computed exactly as without placement.

import type { MotionClip } from '../motion/motionClip';

/** |floor shift| at or below this is numerical noise of the floor solve: no placement, m. */
export const REFERENCE_PLACEMENT_TOLERANCE_M = 1e-6;

/** The lift of a reference from the floor solve of its own frame 0 (m, + = up); 0 within the tolerance. */
export function referenceLiftOf(frame0FloorShiftM: number): number {
  if (!Number.isFinite(frame0FloorShiftM)) throw new RangeError(`floor shift ${frame0FloorShiftM} is not finite`);
  return Math.abs(frame0FloorShiftM) > REFERENCE_PLACEMENT_TOLERANCE_M ? frame0FloorShiftM : 0;
}

/** Root positions with `liftM` added to every z (a new array; the input is not touched). */
export function liftedRootPositions(rootPosM: Float64Array, liftM: number): Float64Array {
  const out = Float64Array.from(rootPosM);
  for (let i = 2; i < out.length; i += 3) out[i] += liftM;
  return out;
}

/**
 * The clip as placed for a run: the same clip object when the lift is 0 (so an unplaced run is
 * computed on exactly the same numbers), else a copy whose root (and stored body positions) are
 * lifted by `liftM`. The id stays the clip's: it is the same motion, placed.
 */
export function placedClip<T extends Pick<MotionClip, 'rootPosM' | 'bodyPosW'>>(clip: T, liftM: number): T {
  if (liftM === 0) return clip;
  if (!Number.isFinite(liftM)) throw new RangeError(`reference lift ${liftM} is not finite`);
  const placed: T = { ...clip, rootPosM: liftedRootPositions(clip.rootPosM, liftM) };
  if (clip.bodyPosW) placed.bodyPosW = { ...clip.bodyPosW, data: liftedRootPositions(clip.bodyPosW.data, liftM) };
  return placed;
}
