import { describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { startPoseVerdict } from '../../src/domain/trial/startPoseVerdict';
import { CALIBRATION_CHECK } from '../../src/domain/trial/trialChecks';

// A captured start pose far from the clip's first frame is flagged before Accept; one within the
// runner's trial-start tolerance is not.

function residuals(jointRad: number[], rollRad = 0, pitchRad = 0) {
  let max = -1;
  let maxJ = 0;
  jointRad.forEach((d, j) => {
    if (Math.abs(d) > max) [max, maxJ] = [Math.abs(d), j];
  });
  return { jointRad, maxAbsJointRad: max, maxAbsJoint: G1_JOINT_NAMES[maxJ], rollRad, pitchRad };
}

describe('startPoseVerdict', () => {
  it('flags a joint 28° from the clip start, naming it with the limit', () => {
    const q = new Array<number>(29).fill(0.001);
    q[G1_JOINT_NAMES.indexOf('left_shoulder_roll_joint')] = (28 * Math.PI) / 180;
    const v = startPoseVerdict(residuals(q), G1_JOINT_NAMES);
    expect(v.within).toBe(false);
    expect(v.reasons).toEqual(["1 joint beyond 2.9° of the clip's first frame: left_shoulder_roll 28.0°"]);
    expect(v.summary).toMatch(/^start pose OUTSIDE tolerance: 1 joint beyond 2\.9°/);
  });

  it('flags roll or pitch beyond the attitude limit, and lists at most three joints, largest first', () => {
    const q = [0.2, -0.3, 0.1, 0.06, ...new Array<number>(25).fill(0)];
    const v = startPoseVerdict(residuals(q, 0, -0.05), G1_JOINT_NAMES);
    expect(v.reasons).toEqual([
      "4 joints beyond 2.9° of the clip's first frame: left_hip_roll -17.2°, left_hip_pitch 11.5°, left_hip_yaw 5.7°, …",
      'pitch -2.9° beyond 2.0°',
    ]);
  });

  it('negative controls: a pose within the limits is not flagged; a NaN residual is', () => {
    const near = new Array<number>(29).fill(CALIBRATION_CHECK.maxJointDiffRad * 0.9);
    const ok = startPoseVerdict(residuals(near, 0.03, -0.03), G1_JOINT_NAMES);
    expect(ok.within).toBe(true);
    expect(ok.summary).toBe('start pose within tolerance: max |Δ| 2.6° ≤ 2.9°, roll 1.7° and pitch -1.7° within 2.0°');
    const nan = [...near];
    nan[5] = Number.NaN;
    expect(startPoseVerdict(residuals(nan), G1_JOINT_NAMES).within).toBe(false);
  });
});
