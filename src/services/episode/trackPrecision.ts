import type { BodyFrameTree } from '../../domain/robot/bodyTransforms';
import type { RobotProfile } from '../../domain/robot/robotProfile';

// The precision the 3D tracks (/exec/transforms, /ref/transforms) are stored at. They exist for
// drawing; the authoritative state is the joint vector on /executed/state and /reference, stored
// exactly. Every value of a transform that moves from frame to frame is snapped to a binary grid
// before encoding: the root's translation and rotation, each hinge's rotation, and a hinge's
// translation when its anchor is off the body origin (otherwise that translation is the model's
// constant offset). Constant values (fixed offsets, `@rest` frames, a hinge's exact zero
// quaternion components) stay exact, so they cost nothing after compression and add no error.
//
// A power-of-two grid keeps the snapped value a valid double (Foxglove's Vector3 and Quaternion
// fields are doubles) whose low mantissa bits are zero: a translation under 2 m on the 2^-20 m
// grid, or a quaternion component on the 2^-21 grid, has at most 21 significant bits, so the low
// four of its eight little-endian bytes are zero and zstd stores them for next to nothing. Snapping
// is exact arithmetic (scaling by a power of two, rounding), so the stored value is the grid point
// nearest the exact one.
//
// The bounds this gives, per stored transform: each moving translation component within
// 2^-21 m = 0.48 µm of its exact value, each moving quaternion component within 2^-22 = 2.4e-7
// (a hinge's rotation within 6.7e-7 rad, the root's within 9.5e-7 rad). Composed from `world` as
// Foxglove's 3D panel does (each rotation normalised), a body's drawn pose is within
// TRACK_WORLD_POSITION_BOUND_M and TRACK_WORLD_ROTATION_BOUND_RAD of forward kinematics: the G1's
// longest chain (the root and ten hinges to a hand, under 1 m) adds at most 11 rotation errors,
// 7.7e-6 rad, and 7.7e-6 rad × 1 m + 0.83 µm of root translation = 8.5 µm.

/** Grid of the moving translation components, metres: 2^-20 m = 0.95 µm. */
export const TRACK_POSITION_STEP_M = 2 ** -20;
/** Grid of the moving quaternion components: 2^-21 = 4.8e-7. */
export const TRACK_QUATERNION_STEP = 2 ** -21;
/** Every body's drawn position agrees with FK within this, m (a drawing needs no more). */
export const TRACK_WORLD_POSITION_BOUND_M = 1e-5;
/** Every body's drawn orientation agrees with FK within this, rad. */
export const TRACK_WORLD_ROTATION_BOUND_RAD = 1e-5;

/** The grid point nearest `v` (a power-of-two `step` makes this exact). */
export const snapToGrid = (v: number, step: number): number => Math.round(v / step) * step;

/** The metadata of a transforms channel: the grids its moving values are on (strings, MCAP channel metadata). */
export const TRACK_PRECISION_METADATA: ReadonlyMap<string, string> = new Map([
  ['position_step_m', String(TRACK_POSITION_STEP_M)],
  ['quaternion_step', String(TRACK_QUATERNION_STEP)],
]);

/** Which frames of a tree move: their rotation, and their translation. */
export interface MovingFrames {
  rotation: readonly number[];
  translation: readonly number[];
}

/** The frames of `tree` whose rotation or translation varies with the root pose and joint angles. */
export function movingFrames(tree: BodyFrameTree, profile: RobotProfile): MovingFrames {
  const rotation: number[] = [];
  const translation: number[] = [];
  tree.frames.forEach((f, i) => {
    const joint = f.body < 0 ? null : profile.bodies[f.body].joint;
    if (joint?.kind === 'free') {
      rotation.push(i);
      translation.push(i);
    } else if (joint?.kind === 'hinge') {
      rotation.push(i);
      if (joint.anchorM.some((v) => v !== 0)) translation.push(i);
    }
  });
  return { rotation, translation };
}

/** Snaps the moving values of a computed tree (BodyFrameTree.compute's outputs) to the track grids, in place. */
export function snapMovingFrames(moving: MovingFrames, posM: Float64Array, quatWxyz: Float64Array): void {
  for (const f of moving.translation)
    for (let a = 3 * f; a < 3 * f + 3; a++) posM[a] = snapToGrid(posM[a], TRACK_POSITION_STEP_M);
  for (const f of moving.rotation)
    for (let a = 4 * f; a < 4 * f + 4; a++) quatWxyz[a] = snapToGrid(quatWxyz[a], TRACK_QUATERNION_STEP);
}
