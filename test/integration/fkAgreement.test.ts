import { describe, expect, it } from 'vitest';
import { seededUniform } from '../../src/domain/stats/prng';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import { readMjcf } from '../../src/domain/robot/mjcfReader';
import { loadMujocoModel } from '../../src/services/mujoco/mujocoRuntime';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { MENAGERIE_G1, OUR_G1 } from '../helpers/sharedData';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Our FK against MuJoCo's own mj_kinematics (real mujoco-js), on 1,000 random configurations:
// random root position, random (unnormalised) root quaternion, joint angles uniform over each
// joint's range widened by 20% on both sides (FK must not care about limits).

async function maxDeviation(modelFile: string, samples: number, seed: number) {
  const profile = loadRobotProfile(modelFile);
  const fk = new ForwardKinematics(profile);
  const mj = await loadMujocoModel(modelFile);
  try {
    const { mujoco, model, data } = mj;
    const bodyIds = profile.bodies.map((b) => mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY.value, b.name));
    expect(bodyIds.every((id) => id > 0)).toBe(true);
    // The joint layout in qpos: free joint (7) then the 29 hinges in canonical order.
    expect(model.nq).toBe(36);
    const rand = seededUniform(seed);
    const pos = new Float64Array(3 * fk.bodyCount);
    const quat = new Float64Array(4 * fk.bodyCount);
    let maxPos = 0;
    let maxQuat = 0;
    for (let s = 0; s < samples; s++) {
      const root = [rand() * 4 - 2, rand() * 4 - 2, rand() * 1.5];
      const q = [rand() * 2 - 1, rand() * 2 - 1, rand() * 2 - 1, rand() * 2 - 1];
      const joints = profile.joints.map((j) => {
        const [lo, hi] = j.rangeRad ?? [-Math.PI, Math.PI];
        const w = hi - lo;
        return lo - 0.2 * w + rand() * 1.4 * w;
      });
      data.qpos.set([...root, ...q, ...joints]);
      mujoco.mj_kinematics(model, data);
      fk.compute(root, q, joints, pos, quat);
      const xpos = data.xpos;
      const xquat = data.xquat;
      bodyIds.forEach((id, b) => {
        for (let c = 0; c < 3; c++) maxPos = Math.max(maxPos, Math.abs(xpos[3 * id + c] - pos[3 * b + c]));
        for (let c = 0; c < 4; c++) maxQuat = Math.max(maxQuat, Math.abs(xquat[4 * id + c] - quat[4 * b + c]));
      });
    }
    return { maxPos, maxQuat };
  } finally {
    mj.dispose();
  }
}

describe('forward kinematics agrees with mujoco-js mj_kinematics', () => {
  it('on MuJoCo Menagerie g1.xml, 1,000 random configurations, to 1e-9', async () => {
    const { maxPos, maxQuat } = await maxDeviation(MENAGERIE_G1, 1000, 1);
    console.log(
      `Menagerie g1.xml: max |xpos| error ${maxPos.toExponential(2)} m, max |xquat| error ${maxQuat.toExponential(2)}`,
    );
    expect(maxPos).toBeLessThan(1e-9);
    expect(maxQuat).toBeLessThan(1e-9);
  });

  it('on our assets/g1 model, 1,000 random configurations, to 1e-9', async () => {
    const { maxPos, maxQuat } = await maxDeviation(OUR_G1, 1000, 2);
    console.log(`our G1: max |xpos| error ${maxPos.toExponential(2)} m, max |xquat| error ${maxQuat.toExponential(2)}`);
    expect(maxPos).toBeLessThan(1e-9);
    expect(maxQuat).toBeLessThan(1e-9);
  });

  it('handles joint anchors, ref offsets, <frame> and euler in degrees like MuJoCo', async () => {
    // A synthetic G1-jointed chain exercising the FK branches the G1 models do not use.
    const names = loadRobotProfile(MENAGERIE_G1).joints.map((j) => j.name);
    // A chain of 29 bodies; every fifth one opens a <frame> that closes with its body.
    let xml = '';
    {
      let open = '';
      names.forEach((n, k) => {
        open += `<body name="b${k}" pos="0.01 ${k % 3 === 0 ? 0.02 : -0.01} -0.03" euler="${k * 7} ${k * 3} ${-k * 5}"><joint name="${n}" pos="0.015 -0.02 0.01" axis="${(k % 3) + 0.3} 1 ${k % 2}" ref="${k * 2}" range="-170 170"/><geom size="0.01"/>`;
        if (k % 5 === 4) open += '<frame pos="0.02 0 0.01" euler="10 20 30">';
      });
      let close = '';
      for (let k = names.length - 1; k >= 0; k--) {
        if (k % 5 === 4) close += '</frame>';
        close += '</body>';
      }
      xml = `<mujoco model="chain"><compiler angle="degree"/><worldbody><body name="root" pos="0 0 1"><freejoint/><geom size="0.05"/>${open}${close}</body></worldbody></mujoco>`;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-fk-'));
    const file = path.join(dir, 'chain.xml');
    fs.writeFileSync(file, xml);
    const profile = readMjcf({ file, readText: (p) => fs.readFileSync(p, 'utf8'), endEffectors: [] });
    const fk = new ForwardKinematics(profile);
    const mj = await loadMujocoModel(file);
    const rand = seededUniform(3);
    const pos = new Float64Array(3 * fk.bodyCount);
    const quat = new Float64Array(4 * fk.bodyCount);
    let maxPos = 0;
    for (let s = 0; s < 200; s++) {
      const root = [rand(), rand(), rand()];
      const q = [rand() - 0.5, rand() - 0.5, rand() - 0.5, rand() - 0.5];
      const joints = names.map(() => rand() * 4 - 2);
      mj.data.qpos.set([...root, ...q, ...joints]);
      mj.mujoco.mj_kinematics(mj.model, mj.data);
      fk.compute(root, q, joints, pos, quat);
      const xpos = mj.data.xpos;
      for (let b = 0; b < fk.bodyCount; b++)
        for (let c = 0; c < 3; c++) maxPos = Math.max(maxPos, Math.abs(xpos[3 * (b + 1) + c] - pos[3 * b + c]));
    }
    mj.dispose();
    expect(maxPos).toBeLessThan(1e-9);
  });
});
