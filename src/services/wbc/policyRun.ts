// A released policy prepared for a run on a robot model: its binding, its baked reference as a
// clip (with the FK residual of that clip on the model), and the check of a user-supplied clip
// against the baked one: a policy that carries its reference tracks that
// reference; another clip is accepted only if it is the same motion, else refused with the
// first differing frame.

import { ForwardKinematics } from '../../domain/robot/forwardKinematics';
import type { MotionClip } from '../../domain/motion/motionClip';
import { resampleClip } from '../../domain/motion/resample';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { bakedMotion, type BakedMotionResult } from '../../domain/wbc/bakedMotion';
import type { PolicyBinding } from '../../domain/wbc/wbcBinding';
import { loadTrackingPolicy, policyBinding, type LoadedPolicy } from './loadPolicy';
import { openPolicySession } from './trackingPolicyController';

export interface PolicyPlan {
  binding: PolicyBinding;
  loaded: LoadedPolicy;
  baked: BakedMotionResult | null;
}

/**
 * Reads a policy for a run on `profile`: its files (InputError on bad input), a trial inference
 * (a policy whose action is not finite is refused here, before anything is recorded), its baked
 * motion as a clip, and its binding. `presetId` names a declared preset for a file that does not
 * carry its own interface (loadTrackingPolicy).
 */
export function planPolicy(policyPath: string, profile: RobotProfile, presetId: string | null = null): PolicyPlan {
  const loaded = loadTrackingPolicy(policyPath, presetId);
  // The action drives the policy's joints (a subset when the family holds the others).
  openPolicySession(
    loaded.modelFile,
    loaded.spec,
    undefined,
    loaded.spec.jointOrder.canonicalOf.length,
  ).session.release();
  const baked = loaded.spec.baked
    ? bakedMotion(loaded.info, loaded.spec, profile, new ForwardKinematics(profile), loaded.name, loaded.contentHash)
    : null;
  return { binding: policyBinding(loaded, baked?.clip.id ?? null), loaded, baked };
}

export class ClipMismatchError extends Error {
  override readonly name = 'ClipMismatchError';
}

/** Tolerances of "the same motion": joint angles 1 mrad, root position 1 mm (float32 exports). */
export const SAME_MOTION_TOLERANCE = { jointRad: 1e-3, rootM: 1e-3 } as const;

/**
 * Throws ClipMismatchError naming the first frame (on the baked timeline) where `clip` differs
 * from the policy's baked reference, or a different length.
 */
export function checkClipMatchesBaked(clip: MotionClip, baked: MotionClip, policyFile: string): void {
  const c = clip.fps === baked.fps ? clip : resampleClip(clip, baked.fps);
  if (c.frameCount !== baked.frameCount)
    throw new ClipMismatchError(
      `${clip.provenance.file}: ${c.frameCount} frames at ${baked.fps} fps, the motion baked into ${policyFile} has ${baked.frameCount}; this policy tracks only its own reference`,
    );
  const J = baked.jointPosRad.length / baked.frameCount;
  for (let f = 0; f < baked.frameCount; f++) {
    for (let j = 0; j < J; j++) {
      const d = Math.abs(c.jointPosRad[f * J + j] - baked.jointPosRad[f * J + j]);
      if (!(d <= SAME_MOTION_TOLERANCE.jointRad))
        throw new ClipMismatchError(
          `${clip.provenance.file}: frame ${f} differs from the motion baked into ${policyFile} (joint ${j} by ${d.toFixed(4)} rad); this policy tracks only its own reference`,
        );
    }
    for (let k = 0; k < 3; k++) {
      const d = Math.abs(c.rootPosM[3 * f + k] - baked.rootPosM[3 * f + k]);
      if (!(d <= SAME_MOTION_TOLERANCE.rootM))
        throw new ClipMismatchError(
          `${clip.provenance.file}: frame ${f} differs from the motion baked into ${policyFile} (root ${'xyz'[k]} by ${d.toFixed(4)} m); this policy tracks only its own reference`,
        );
    }
  }
}
