import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resampleClip } from '../../src/domain/motion/resample';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { G1_ISAACLAB_JOINT_NAMES } from '../../src/domain/robot/jointOrder';
import { sonicDeployJointParameters } from '../../src/domain/wbc/sonicFamily';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { SimEngine } from '../../src/services/sim/simEngine';
import { planPolicy } from '../../src/services/wbc/policyRun';
import {
  encodeHoloMotionProbe,
  holomotionJointValues,
  holomotionMetadata,
  HOLOMOTION_KV_DIMS,
  writeHoloMotionFolder,
} from '../helpers/holomotionFixture';
import { rolloutIntactAndFaulted } from '../helpers/policyRollout';
import { sharedData } from '../helpers/sharedData';
import { writeSonicFolder } from '../helpers/sonicFixture';

// The peers' exports load and run in real MuJoCo: interface-exposing
// exports whose weights make them reference trackers through the family's own observation (the
// reference joint angles, in the file's joint order, through SONIC's encoder and token or
// HoloMotion's future frames) run a real clip on the family's physics, on the floor with no
// assist — so, like the builtin tracker there, they fall within a second or two: they have no
// balance. Until then their joints follow the reference; the negative control, reading the
// joints in the wrong order, must not.

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

/** Joint RMSE against the reference over frames 1–40 (before a balance-less tracker falls). */
function jointRmse(q: Float64Array): number {
  const ref = resampleClip(clip, 50);
  let s2 = 0;
  for (let k = 1; k <= 40; k++) for (let j = 0; j < 29; j++) s2 += (q[29 * k + j] - ref.jointPosRad[29 * k + j]) ** 2;
  return Math.sqrt(s2 / (40 * 29));
}

/** The policy in the folder, intact and with the wrong joint order, on B_HandsUp. */
function runPair(folder: string, label: string): void {
  const plan = planPolicy(folder, profile);
  const { good, bad } = rolloutIntactAndFaulted(engine, plan, profile, clip, 'wrong_joint_order');
  const g = jointRmse(good.q);
  const b = jointRmse(bad.q);
  console.log(
    `${label} tracker probe on B_HandsUp (${plan.binding.id}@${plan.binding.version}): ${good.frames}/${good.plannedFrames} frames, ${good.outcome}, first failure ${good.failureFrame ?? 'none'}; joint RMSE over frames 1–40 ${g.toFixed(4)} rad, wrong joint order ${b.toFixed(4)} rad`,
  );
  expect(good.frames).toBeGreaterThan(40);
  expect(g).toBeLessThan(0.15);
  expect(b).toBeGreaterThan(3 * g);
}

const isaacLabCanonical = G1_ISAACLAB_JOINT_NAMES.map((n) => (G1_JOINT_NAMES as readonly string[]).indexOf(n));

describe('peer exports in the simulator', () => {
  it('SONIC release: the encoder’s current reference frame through the token to the targets', () => {
    // encoder: token[i] = motion_joint_positions frame 0 (current), Isaac Lab joint i (entries 4…32);
    // decoder: a_i = (token[i] − default_i) / scale_i  ⇒  target = the current reference angles
    const p = sonicDeployJointParameters();
    const folder = writeSonicFolder(
      path.join(tmp, 'sonic'),
      'release',
      Array.from({ length: 29 }, (_, i) => 4 + i),
      Array.from({ length: 29 }, (_, i) => i),
      {
        decoderGain: isaacLabCanonical.map((c) => 1 / p.scale[c]),
        decoderBias: isaacLabCanonical.map((c) => -p.def[c] / p.scale[c]),
      },
    );
    runPair(folder, 'SONIC release');
  }, 120_000);

  it('HoloMotion v1.4: actor_ref_dof_pos_fut frame k+1 to the targets, with the key/value cache fed back', () => {
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
    runPair(writeHoloMotionFolder(path.join(tmp, 'holomotion'), model), 'HoloMotion v1.4');
  }, 120_000);
});
