// The start of a qualification rollout: the clip's first frame (with its joint velocities,
// placed on the floor, as `motionbench sim` starts) plus a small perturbation drawn from the
// rollout's seed (xoshiro128**, platform-independent):
//   joint j:  q_j += U(−jointRad, jointRad), then clamped into the joint's range
//   root:     rotated about world z by U(−rootYawRad, rootYawRad)
// Draw order: 29 joint offsets in canonical order, then the yaw. Pure and reproducible: the
// same seed gives the same start on every machine.

import type { InitialState } from '../backend/backend';
import { quatMul, quatNormalize } from '../math/quat';
import type { MotionClip } from '../motion/motionClip';
import { initialStateFromClipFrame } from '../sim/initialState';
import { Xoshiro128StarStar } from '../stats/prng';
import type { PerturbationParameters } from './policy';

export interface AppliedPerturbation {
  seed: number;
  /** Offsets actually applied (after clamping), rad, canonical order. */
  jointOffsetsRad: number[];
  rootYawRad: number;
}

export function perturbedInitialState(
  clip: MotionClip,
  seed: number,
  p: PerturbationParameters,
  jointRangesRad: readonly (readonly [number, number] | null)[],
): { initial: InitialState; applied: AppliedPerturbation } {
  const base = initialStateFromClipFrame(clip);
  const rng = new Xoshiro128StarStar(seed);
  const J = base.jointPosRad.length;
  const q = [...base.jointPosRad];
  const offsets: number[] = [];
  for (let j = 0; j < J; j++) {
    const u = 2 * rng.nextFloat() - 1;
    let v = q[j] + u * p.jointRad;
    const r = jointRangesRad[j];
    if (r) v = Math.min(r[1], Math.max(r[0], v));
    offsets.push(v - q[j]);
    q[j] = v;
  }
  const yaw = (2 * rng.nextFloat() - 1) * p.rootYawRad;
  const rz: [number, number, number, number] = [Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2)];
  const rootQuatWxyz = quatNormalize(
    quatMul(rz, [base.rootQuatWxyz[0], base.rootQuatWxyz[1], base.rootQuatWxyz[2], base.rootQuatWxyz[3]]),
  );
  return {
    initial: { ...base, jointPosRad: q, rootQuatWxyz },
    applied: { seed, jointOffsetsRad: offsets, rootYawRad: yaw },
  };
}
