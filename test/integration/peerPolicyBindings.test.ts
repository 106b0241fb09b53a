import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { G1_ISAACLAB_JOINT_NAMES } from '../../src/domain/wbc/jointOrder';
import { resampleClip } from '../../src/domain/motion/resample';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { SimEngine } from '../../src/services/sim/simEngine';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { createTrackingPolicyController } from '../../src/services/wbc/trackingPolicyController';
import {
  encodeHoloMotionProbe,
  holomotionJointValues,
  holomotionMetadata,
  HOLOMOTION_KV_DIMS,
  writeHoloMotionFolder,
} from '../helpers/holomotionFixture';
import { rolloutInThread } from '../helpers/policyRollout';
import { sharedData } from '../helpers/sharedData';

// The peers' exports load and run in real MuJoCo (issue 16 "done when"): an interface-exposing
// export whose weights make it a reference tracker through the family's own observation (the
// future reference joint angles, frame k+1, in the file's joint order) runs a real clip on the
// family's physics, on the floor with no assist (so, like the builtin tracker there, it falls
// within seconds: it has no balance). Until then its joints follow the reference; its negative
// control, reading the joints in the wrong order, must not.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
const clip = loadClipFile(sharedData('motions/g1_moves/npz/B_HandsUp.npz'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-peer-run-'));
let engine: SimEngine;
beforeAll(async () => {
  engine = await SimEngine.load(DEFAULT_MODEL_FILE);
});
afterAll(() => {
  engine?.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('a HoloMotion export in the simulator', () => {
  it('follows B_HandsUp through actor_ref_dof_pos_fut until it falls; read in the wrong joint order it does not', () => {
    // a_j = (ref q_j(k+1) − default_j) / scale_j  ⇒  target_j = ref q_j(k+1)
    const v = G1_ISAACLAB_JOINT_NAMES.map((n) => holomotionJointValues(n));
    const scale = v.map((x) => Number(x.scale.toFixed(3)));
    const def = v.map((x) => Number(x.def.toFixed(3)));
    const model = encodeHoloMotionProbe({
      D: 604,
      kvDims: HOLOMOTION_KV_DIMS,
      metadata: holomotionMetadata(),
      probe: {
        kind: 'obs',
        index: Array.from({ length: 29 }, (_, a) => 134 + a),
        gain: scale.map((s) => 1 / s),
        bias: def.map((d, a) => -d / scale[a]),
      },
    });
    const plan = planPolicy(writeHoloMotionFolder(path.join(tmp, 'holomotion'), model), profile);
    const good = rolloutInThread(
      engine,
      plan.binding,
      createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded }),
      clip,
    );
    const bad = rolloutInThread(
      engine,
      plan.binding,
      createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded, fault: 'wrong_joint_order' }),
      clip,
    );
    console.log(
      `HoloMotion tracker probe on B_HandsUp: ${good.frames}/${good.plannedFrames} frames, ${good.outcome}, first failure ${good.failureFrame ?? 'none'}, mean live MPJPE-l ${good.meanLiveMpjpeMm.toFixed(1)} mm; wrong joint order: first failure ${bad.failureFrame ?? 'none'}, ${bad.meanLiveMpjpeMm.toFixed(1)} mm`,
    );
    // joint RMSE against the reference over the first 0.8 s (before either falls)
    const ref = resampleClip(clip, 50);
    const rmse = (q: Float64Array) => {
      let s2 = 0;
      for (let k = 1; k <= 40; k++)
        for (let j = 0; j < 29; j++) s2 += (q[29 * k + j] - ref.jointPosRad[29 * k + j]) ** 2;
      return Math.sqrt(s2 / (40 * 29));
    };
    console.log(
      `  joint RMSE over frames 1–40: ${rmse(good.q).toFixed(4)} rad; wrong joint order ${rmse(bad.q).toFixed(4)} rad`,
    );
    expect(good.frames).toBeGreaterThan(40);
    expect(rmse(good.q)).toBeLessThan(0.15);
    expect(rmse(bad.q)).toBeGreaterThan(3 * rmse(good.q));
  }, 120_000);
});
