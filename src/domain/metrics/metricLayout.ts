import { InputError } from '../problems';
import type { RobotProfile } from '../robot/robotProfile';
import type { MetricContract } from './metricContract';

// Where the reducers find things in a frame: joint count, body count, the root body and the
// contract's end-effectors, resolved once against a robot model.

export interface MetricLayout {
  jointCount: number;
  bodyCount: number;
  bodyNames: readonly string[];
  /** Index of the root (free-joint) body; p_root of MPJPE-l and z_root of the failure test. */
  rootBodyIndex: number;
  /** Body indices of the contract's end-effectors, in the contract's order. */
  endEffectorBodyIndices: Int32Array;
}

/**
 * Resolves the contract's end-effector names in the model. Throws InputError naming the model
 * file when one is missing (the contract cannot be evaluated on that model).
 */
export function metricLayoutFor(contract: MetricContract, profile: RobotProfile): MetricLayout {
  const names = profile.bodies.map((b) => b.name);
  const ee = contract.endEffectorBodies.map((n) => {
    const i = names.indexOf(n);
    if (i < 0) {
      throw new InputError(
        { file: profile.sourceFile },
        `the model has no body "${n}", an end-effector of metric contract ${contract.id}`,
      );
    }
    return i;
  });
  if (profile.rootBodyIndex < 0 || profile.rootBodyIndex >= names.length) {
    throw new InputError({ file: profile.sourceFile }, 'the model has no free-joint root body');
  }
  return {
    jointCount: profile.joints.length,
    bodyCount: names.length,
    bodyNames: names,
    rootBodyIndex: profile.rootBodyIndex,
    endEffectorBodyIndices: Int32Array.from(ee),
  };
}

/**
 * Frames on the common timeline, frame-major flat arrays:
 *   rootQuatWxyz K×4 (any non-zero scale), jointPosRad K×J (rad), bodyPosM K×B×3 (m, world, FK of
 *   the root pose and joint angles; the root body's entry is the root position).
 */
export interface MetricFrames {
  rootQuatWxyz: Float64Array;
  jointPosRad: Float64Array;
  bodyPosM: Float64Array;
}
