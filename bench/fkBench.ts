import { ForwardKinematics } from '../src/domain/robot/forwardKinematics';
import { loadMujocoModel } from '../src/services/mujoco/mujocoRuntime';
import { loadRobotProfile } from '../src/services/robot/loadRobotProfile';
import { compareRates, fmtRate } from './benchSupport';

// FK frames/s (ours, pure TypeScript) beside mujoco-js mj_kinematics calls/s on the same model
// and the same 4,096 random configurations. Target: ours ≥ 2× mj_kinematics.
export const FK_TARGET_RATIO = 2;

export async function benchForwardKinematics(
  modelFile: string,
  label: string,
): Promise<{ ratio: number; lines: string[] }> {
  const profile = loadRobotProfile(modelFile);
  const fk = new ForwardKinematics(profile);
  const mj = await loadMujocoModel(modelFile);
  const configs = 4096;
  const qpos = new Float64Array(36 * configs);
  let seed = 12345;
  const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let i = 0; i < configs; i++) {
    qpos.set([rand(), rand(), 0.8, 1, 0.1 * rand(), 0.1 * rand(), 0.1 * rand()], 36 * i);
    profile.joints.forEach((j, k) => {
      const [lo, hi] = j.rangeRad ?? [-1, 1];
      qpos[36 * i + 7 + k] = lo + rand() * (hi - lo);
    });
  }
  const outPos = new Float64Array(3 * fk.bodyCount);
  const outQuat = new Float64Array(4 * fk.bodyCount);
  let cursor = 0;
  const { mujoco, model, data } = mj;
  const results = compareRates([
    {
      label: 'ours',
      batch: 4096,
      op: (n) => {
        for (let k = 0; k < n; k++) {
          const f = cursor++ & (configs - 1);
          fk.compute(qpos, qpos, qpos, outPos, outQuat, 36 * f, 36 * f + 3, 36 * f + 7);
        }
      },
    },
    {
      label: 'mj_kinematics',
      batch: 4096,
      op: (n) => {
        // Same work a caller does: write qpos into MjData, run kinematics, positions ready in xpos.
        const view = data.qpos;
        for (let k = 0; k < n; k++) {
          const f = cursor++ & (configs - 1);
          view.set(qpos.subarray(36 * f, 36 * f + 36));
          mujoco.mj_kinematics(model, data);
        }
      },
    },
  ]);
  mj.dispose();
  const [ours, theirs] = results;
  const ratio = ours.perSecond / theirs.perSecond;
  return {
    ratio,
    lines: [
      `fk ${label}: ours ${fmtRate(ours.perSecond)} frames, mujoco-js mj_kinematics ${fmtRate(theirs.perSecond)} calls, ratio ${ratio.toFixed(2)}x (target >= ${FK_TARGET_RATIO}x) ${ratio >= FK_TARGET_RATIO ? 'PASS' : 'BELOW TARGET'}`,
    ],
  };
}
