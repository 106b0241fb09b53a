// Force and control limits of every joint as MuJoCo compiles the model (defaults and classes
// applied): the tightest of the actuator's `forcerange` (when forcelimited) and the joint's
// `actuatorfrcrange` (when actfrclimited) — our G1 states the former, MuJoCo Menagerie's G1 the
// latter. The saturation measure needs them; the RobotProfile reader keeps only the actuator's.

import { actuatorLimitsOf, type ActuatorLimits } from '../../domain/qualification';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { loadMujocoModel } from '../mujoco/mujocoRuntime';

const mjOBJ_JOINT = 3;
const mjTRN_JOINT = 0;

const cache = new Map<string, Promise<ActuatorLimits>>();

export function modelActuatorLimits(profile: RobotProfile): Promise<ActuatorLimits> {
  let p = cache.get(profile.sourceFile);
  if (!p) {
    p = compute(profile);
    cache.set(profile.sourceFile, p);
    p.catch(() => cache.delete(profile.sourceFile));
  }
  return p;
}

async function compute(profile: RobotProfile): Promise<ActuatorLimits> {
  const limits = actuatorLimitsOf(profile);
  const mj = await loadMujocoModel(profile.sourceFile);
  try {
    const { mujoco, model } = mj;
    const m = model as unknown as Record<string, ArrayLike<number>>;
    const trntype = m.actuator_trntype;
    const trnid = m.actuator_trnid;
    const forcelimited = m.actuator_forcelimited;
    const forcerange = m.actuator_forcerange;
    const jntLimited = m.jnt_actfrclimited;
    const jntRange = m.jnt_actfrcrange;
    const nu = model.nu;
    profile.joints.forEach((jt, j) => {
      const id = mujoco.mj_name2id(model, mjOBJ_JOINT, jt.name);
      if (id < 0) return;
      let limit = Infinity;
      if (jntLimited && jntRange && jntLimited[id])
        limit = Math.min(limit, Math.max(Math.abs(jntRange[2 * id]), Math.abs(jntRange[2 * id + 1])));
      for (let a = 0; a < nu; a++) {
        if (trntype[a] !== mjTRN_JOINT || trnid[2 * a] !== id) continue;
        if (forcelimited[a])
          limit = Math.min(limit, Math.max(Math.abs(forcerange[2 * a]), Math.abs(forcerange[2 * a + 1])));
      }
      limits.forceLimitNm[j] = Number.isFinite(limit) && limit > 0 ? limit : null;
    });
  } finally {
    mj.dispose();
  }
  return limits;
}
