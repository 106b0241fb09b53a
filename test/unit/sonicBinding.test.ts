import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { createControlCommand, type ControlReference } from '../../src/domain/wbc/controller';
import { G1_ISAACLAB_JOINT_NAMES } from '../../src/domain/robot/jointOrder';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { planPolicy } from '../../src/services/wbc/policyRun';
import {
  createTrackingPolicyController,
  type TrackingControllerOptions,
} from '../../src/services/wbc/trackingPolicyController';
import { makeObservation } from '../helpers/onnxBuilder';
import { conj, movingReference, qmul, refQ, rot6d, rotInv, yaw, yawQ, type Q } from '../helpers/referenceTestMath';
import {
  SONIC_DECODER_WIDTH,
  SONIC_ENCODER_WIDTH,
  sonicObservationConfig,
  writeSonicFolder,
  type SonicVariantName,
} from '../helpers/sonicFixture';
import { expectInputError } from './motionTestHelpers';

// The SONIC binding on interface-exposing deploy folders: model_encoder.onnx
// and model_decoder.onnx with the exporter's exact I/O, observation_config.yaml with the shipped
// term lists. The probes copy input entries into the token and the action, so every entry the
// encoder and the decoder receive is read back through both graphs and compared with a value this
// test computes from the deploy code's definitions (g1_deploy_onnx_ref.cpp): the registry's
// widths and frame strides, [R00, R01, R10, R11, R20, R21] of conj(q_pelvis) ⊗ q_aligned_ref,
// the decoder's 10-frame histories oldest first with the state logger's zero padding.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-sonic-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let seq = 0;
const dirFor = () => path.join(tmp, `p${seq++}`);

/** policy_parameters.hpp:99-104 (value at MuJoCo slot m = Isaac Lab index). */
const ISAACLAB_TO_MUJOCO = [
  0, 3, 6, 9, 13, 17, 1, 4, 7, 10, 14, 18, 2, 5, 8, 11, 15, 19, 21, 23, 25, 27, 12, 16, 20, 22, 24, 26, 28,
];
/** policy_parameters.hpp:210-240, MuJoCo order. */
const DEFAULT_ANGLES = [
  -0.312, 0, 0, 0.669, -0.363, 0, -0.312, 0, 0, 0.669, -0.363, 0, 0, 0, 0, 0.2, 0.2, 0, 0.6, 0, 0, 0, 0.2, -0.2, 0, 0.6,
  0, 0, 0,
];

/** The g1 encoder input of the deploy for step k (frame 0 = current; other modes' slots 0). */
function expectedEncoder(
  variant: SonicVariantName,
  r: ControlReference,
  k: number,
  robotQ: Q,
  alignYaw: number,
): number[] {
  const F = r.frameCount;
  const cl = (f: number) => Math.max(0, Math.min(F - 1, f));
  const step = variant === 'low_latency' ? 1 : 5;
  const frames = Array.from({ length: 10 }, (_, i) => cl(k + i * step));
  const il = G1_ISAACLAB_JOINT_NAMES.map((n) => (G1_JOINT_NAMES as readonly string[]).indexOf(n));
  const pos = (f: number) => il.map((c) => r.jointPosRad[29 * f + c]);
  const vel = (f: number) => {
    const a = cl(f - 1),
      b = cl(f + 1);
    return il.map((c) => (r.jointPosRad[29 * b + c] - r.jointPosRad[29 * a + c]) / ((b - a) / r.rateHz));
  };
  const left = variant === 'v1_1' ? yawQ(yaw(robotQ)) : robotQ;
  const ori = (f: number) => rot6d(qmul(conj(left), qmul(yawQ(alignYaw), refQ(r, f))));
  const z = (n: number) => new Array<number>(n).fill(0);
  const g1 = [...frames.flatMap(pos), ...frames.flatMap(vel)];
  if (variant === 'release')
    return [0, 0, 0, 0, ...g1, ...z(11), ...z(6), ...frames.flatMap(ori), ...z(240 + 21 + 720 + 60 + 60)];
  if (variant === 'low_latency') return [0, 0, 0, 0, ...g1, ...frames.flatMap(ori), ...z(6 + 240 + 21 + 288 + 24 + 24)];
  return [0, 0, 0, 0, ...g1, ...frames.flatMap(ori), ...z(6 + 240 + 21 + 720 + 60 + 60)];
}

interface Seen {
  gyro: number[];
  q: number[];
  dq: number[];
  action: number[];
  quat: Q;
}

/** token | gyro ×10 | q − default ×10 | dq ×10 | last action ×10 | gravity ×10, oldest first, zero-padded. */
function expectedDecoder(token: number[], history: Seen[]): number[] {
  const last10 = Array.from({ length: 10 }, (_, i) => history[history.length - 10 + i] ?? null);
  const il = G1_ISAACLAB_JOINT_NAMES.map((n) => (G1_JOINT_NAMES as readonly string[]).indexOf(n));
  const z = (n: number) => new Array<number>(n).fill(0);
  return [
    ...token,
    ...last10.flatMap((s) => (s ? s.gyro : z(3))),
    ...last10.flatMap((s) => (s ? il.map((c) => s.q[c] - DEFAULT_ANGLES[c]) : z(29))),
    ...last10.flatMap((s) => (s ? il.map((c) => s.dq[c]) : z(29))),
    ...last10.flatMap((s) => (s ? s.action : z(29))),
    ...last10.flatMap((s) => (s ? rotInv(s.quat, [0, 0, -1]) : [0, 0, 1])),
  ];
}

/** Runs `steps` on a probe folder; returns the largest |read-back − expected| over the probed entries. */
function probe(
  variant: SonicVariantName,
  encIndex: number[],
  decIndex: number[],
  check: 'encoder' | 'decoder',
  steps: number[],
  fault?: TrackingControllerOptions['fault'],
): number {
  const plan = planPolicy(writeSonicFolder(dirFor(), variant, encIndex, decIndex), profile);
  const ctrl = createTrackingPolicyController(plan.binding, profile, {
    loaded: plan.loaded,
    ...(fault ? { fault } : {}),
  });
  const ref = movingReference(60);
  const out = createControlCommand();
  const history: Seen[] = [];
  let alignYaw = NaN;
  let worst = 0;
  for (const [i, k] of steps.entries()) {
    const obs = makeObservation(ref, profile.defaultPose.jointPosRad, 21 + i, k);
    const robotQ = Array.from(obs.state.rootQuatWxyz!) as Q;
    if (i === 0) alignYaw = yaw(robotQ) - yaw(refQ(ref, k));
    const enc = expectedEncoder(variant, ref, k, robotQ, alignYaw);
    history.push({
      gyro: Array.from(obs.state.imu.gyroRadS),
      q: Array.from(obs.state.jointPosRad),
      dq: Array.from(obs.state.jointVelRadS),
      action: Array.from(ctrl.lastAction),
      quat: robotQ,
    });
    ctrl.step(obs, out);
    if (check === 'encoder')
      encIndex.slice(0, 29).forEach((d, a) => {
        if (d >= 0) worst = Math.max(worst, Math.abs(ctrl.lastAction[a] - enc[d]));
      });
    else {
      const token = encIndex.map((d) => (d >= 0 ? Math.fround(enc[d]) : 0));
      const dec = expectedDecoder(token, history);
      decIndex.forEach((d, a) => {
        if (d >= 0) worst = Math.max(worst, Math.abs(ctrl.lastAction[a] - dec[d]));
      });
    }
  }
  ctrl.dispose();
  return worst;
}

const window = (w: number, n: number, width: number) =>
  Array.from({ length: n }, (_, a) => (w * n + a < width ? w * n + a : -1));
const identity29 = Array.from({ length: 29 }, (_, a) => a);

describe('SONIC deploy folders: the version from the term names, the layout from observation_config.yaml', () => {
  for (const variant of ['release', 'low_latency', 'v1_1'] as const)
    it(`${variant}: encoder ${SONIC_ENCODER_WIDTH[variant]} wide, decoder 994, g1 frames ${variant === 'low_latency' ? '1' : '5'} step(s) apart`, () => {
      const s = planPolicy(writeSonicFolder(dirFor(), variant, [], []), profile).loaded.spec;
      expect(s.family).toBe('sonic');
      expect(s.encoder!.observationSize).toBe(SONIC_ENCODER_WIDTH[variant]);
      expect(s.observationSize).toBe(SONIC_DECODER_WIDTH);
      expect(s.notes[0]).toMatch(new RegExp(`^SONIC ${variant.replace('_', '-')}:`));
      const pos = s.encoder!.observation.find((t) => t.kind === 'ref_joint_pos')!;
      const stride = variant === 'low_latency' ? 1 : 5;
      expect(pos.frameOffsets).toEqual(Array.from({ length: 10 }, (_, i) => i * stride));
      expect(s.controlRateHz).toBe(50);
    });

  it('release layout offsets are the deploy registry widths in yaml order', () => {
    const s = planPolicy(writeSonicFolder(dirFor(), 'release', [], []), profile).loaded.spec;
    let o = 0;
    const offsets = s.encoder!.observation.map((t) => {
      const at = o;
      o += t.size * t.history * (t.frameOffsets?.length ?? 1);
      return at;
    });
    expect(offsets).toEqual([0, 4, 294, 584, 594, 595, 601, 661, 781, 901, 910, 922, 1642, 1702]);
    expect(s.encoder!.observation.filter((t) => t.kind !== 'zeros').map((t) => t.name)).toEqual([
      'encoder_mode_4',
      'motion_joint_positions_10frame_step5',
      'motion_joint_velocities_10frame_step5',
      'motion_anchor_orientation_10frame_step5',
    ]);
  });

  it('joint remap, gains, default pose and action scale as policy_parameters.hpp derives them', () => {
    const s = planPolicy(writeSonicFolder(dirFor(), 'release', [], []), profile).loaded.spec;
    // the name-built order equals the deploy's index table
    ISAACLAB_TO_MUJOCO.forEach((il, m) => expect(s.jointOrder.canonicalOf[il]).toBe(m));
    const byClass: Record<string, [number, number, number]> = {
      // kp, kd, scale: figures of the deploy's formulas (armature·ω², 2ζ·armature·ω, 0.25·effort/stiffness)
      '7520_22': [99.0984, 6.3088, 0.350661],
      '7520_14': [40.1792, 2.5579, 0.547546],
      '5020': [14.2506, 0.9072, 0.438577],
      '5020x2': [28.5012, 1.8144, 0.438577],
      '4010': [16.7783, 1.0681, 0.074501],
    };
    const cls = (n: string) =>
      /hip_pitch|hip_roll|knee/.test(n)
        ? '7520_22'
        : /hip_yaw|waist_yaw/.test(n)
          ? '7520_14'
          : /ankle|waist_roll|waist_pitch/.test(n)
            ? '5020x2'
            : /wrist_pitch|wrist_yaw/.test(n)
              ? '4010'
              : '5020';
    G1_JOINT_NAMES.forEach((n, c) => {
      const [kp, kd, sc] = byClass[cls(n)];
      expect(s.kp[c]).toBeCloseTo(kp, 3);
      expect(s.kd[c]).toBeCloseTo(kd, 3);
      expect(s.action.scale[c]).toBeCloseTo(sc, 5);
      expect(s.defaultJointPosRad[c]).toBe(DEFAULT_ANGLES[c]);
    });
  });
});

describe('SONIC: every entry the graphs receive, read back through them', () => {
  for (const variant of ['release', 'low_latency', 'v1_1'] as const)
    it(`${variant}: all ${SONIC_ENCODER_WIDTH[variant]} encoder entries (token → action), 4 steps incl. clamped future frames`, () => {
      const E = SONIC_ENCODER_WIDTH[variant];
      let worst = 0;
      for (let w = 0; w * 29 < E; w++)
        worst = Math.max(worst, probe(variant, window(w, 29, E), identity29, 'encoder', [0, 1, 2, 52]));
      console.log(
        `SONIC ${variant} encoder probe: ${E} entries × 4 steps, largest deviation ${worst.toExponential(2)}`,
      );
      expect(worst).toBeLessThan(2e-5);
    }, 60_000);

  it('release: all 994 decoder entries over 12 steps (the token, then 10-frame histories oldest first, zero-padded at the start)', () => {
    const enc = Array.from({ length: 64 }, (_, t) => 4 + t); // the token = the first 64 reference joint angles
    let worst = 0;
    const steps = Array.from({ length: 12 }, (_, k) => k);
    for (let w = 0; w * 29 < SONIC_DECODER_WIDTH; w++)
      worst = Math.max(worst, probe('release', enc, window(w, 29, SONIC_DECODER_WIDTH), 'decoder', steps));
    console.log(`SONIC decoder probe: 994 entries × 12 steps, largest deviation ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(2e-5);
  }, 60_000);

  it('negative control: a wrong joint order is seen in the encoder’s reference joint angles', () => {
    expect(probe('release', window(0, 29, 1762), identity29, 'encoder', [0, 1], 'wrong_joint_order')).toBeGreaterThan(
      0.05,
    );
  });

  it('target = default_angles + action[isaaclab→mujoco] · scale', () => {
    const plan = planPolicy(writeSonicFolder(dirFor(), 'release', [], []), profile);
    const ctrl = createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded });
    const out = createControlCommand();
    ctrl.step(makeObservation(movingReference(10), new Float64Array(29)), out);
    // zero weights: a = 0, the targets are the deploy's default angles
    expect(Array.from(out.jointTargetRad)).toEqual(DEFAULT_ANGLES);
    ctrl.dispose();
  });
});

describe('SONIC folders refused with the reason', () => {
  // The deploy looks every yaml name up exactly in its registry (g1_deploy_onnx_ref.cpp:1704-1794)
  // and throws on any other (:1818 decoder, :1861 encoder); it parses no names.
  it('an encoder term the deploy registry does not have', () => {
    const cfg = sonicObservationConfig('release', (t) =>
      t.map((n) => (n === 'vr_3point_local_target' ? 'vr_4point_local_target' : n)),
    );
    const dir = writeSonicFolder(dirFor(), 'release', [], [], { config: cfg });
    expectInputError(
      () => planPolicy(dir, profile),
      { key: 'encoder.encoder_observations[9]' },
      /"vr_4point_local_target" is not a name in the deploy's observation registry.*"Unknown encoder observation function", :1861/,
    );
  });

  it('a well-formed {base}_{N}frame_step{S} name the registry does not list is refused too, not parsed', () => {
    const enc = sonicObservationConfig('release', (t) =>
      t.map((n) => (n === 'motion_root_z_position_10frame_step5' ? 'motion_root_z_position_7frame_step3' : n)),
    );
    expectInputError(
      () => planPolicy(writeSonicFolder(dirFor(), 'release', [], [], { config: enc }), profile),
      { key: 'encoder.encoder_observations[3]' },
      /"motion_root_z_position_7frame_step3" is not a name in the deploy's observation registry/,
    );
    const dec = sonicObservationConfig('release').replace(
      'his_body_joint_positions_10frame_step1',
      'his_body_joint_positions_5frame_step1',
    );
    expectInputError(
      () => planPolicy(writeSonicFolder(dirFor(), 'release', [], [], { config: dec }), profile),
      { key: 'observations[2]' },
      /"his_body_joint_positions_5frame_step1" is not a name in the deploy's observation registry.*"Unknown observation function", :1818/,
    );
  });

  it('a registry term the g1 mode does not require is fed zeros at its registry width, whatever it is', () => {
    // vr_5point_local_target (15 values) instead of vr_3point_local_target (9): the encoder is 6 wider
    const cfg = sonicObservationConfig('release', (t) =>
      t.map((n) => (n === 'vr_3point_local_target' ? 'vr_5point_local_target' : n)),
    );
    const s = planPolicy(writeSonicFolder(dirFor(), 'release', [], [], { config: cfg, encoderWidth: 1768 }), profile)
      .loaded.spec;
    expect(s.encoder!.observationSize).toBe(1768);
    expect(s.encoder!.observation[9]).toEqual(
      expect.objectContaining({ name: 'vr_5point_local_target', kind: 'zeros', size: 15 }),
    );
  });

  it('a registry term the g1 mode requires but this adapter does not compute', () => {
    const cfg = sonicObservationConfig('release').replaceAll(
      'motion_anchor_orientation_10frame_step5',
      'motion_anchor_orientation_refheading_10frame_step5',
    );
    expectInputError(
      () => planPolicy(writeSonicFolder(dirFor(), 'release', [], [], { config: cfg }), profile),
      { key: 'encoder.encoder_observations[6]' },
      /the g1 mode requires "motion_anchor_orientation_refheading_10frame_step5", a term of the deploy's registry this adapter does not compute/,
    );
  });

  it('an encoder whose obs_dict is not the width the yaml builds', () => {
    const dir = writeSonicFolder(dirFor(), 'release', [], [], { encoderWidth: 1751 });
    expectInputError(() => planPolicy(dir, profile), { key: 'inputs.obs_dict' }, /\[1, 1751\].*builds 1762/);
  });

  // Wrong names and shapes at load: the deploy requires exactly one input and one output per graph
  // (encoder.hpp:101-168, control_policy.hpp:101-172) with the exporter's names and the widths
  // observation_config.yaml builds; the error names the .onnx file, the key and the reason.
  const encOf = (dir: string) => path.join(dir, 'model_encoder.onnx');
  const decOf = (dir: string) => path.join(dir, 'model_decoder.onnx');

  it('an encoder input named "obs" instead of "obs_dict"', () => {
    const dir = writeSonicFolder(dirFor(), 'release', [], [], { encoderInput: 'obs' });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: encOf(dir), key: 'inputs' },
      /the encoder must have exactly one input "obs_dict" \(the deploy refuses anything else\); it has obs \[1, 1762\]/,
    );
  });

  it('an encoder output named "tokens" instead of "encoded_tokens"', () => {
    const dir = writeSonicFolder(dirFor(), 'release', [], [], { encoderOutput: 'tokens' });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: encOf(dir), key: 'outputs' },
      /the encoder must have exactly one output "encoded_tokens"; it has tokens \[1, 64\]/,
    );
  });

  it('an encoder whose token is 32 wide while observation_config.yaml says encoder.dimension 64', () => {
    const dir = writeSonicFolder(dirFor(), 'release', [], [], { tokenWidth: 32 });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: encOf(dir), key: 'outputs.encoded_tokens' },
      /has shape \[1, 32\]; expected \[1, 64\]/,
    );
  });

  it('a decoder input named "obs" instead of "obs_dict"', () => {
    const dir = writeSonicFolder(dirFor(), 'release', [], [], { decoderInput: 'obs' });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: decOf(dir), key: 'inputs' },
      /the decoder must have exactly one input "obs_dict" \(the deploy refuses anything else\); it has obs \[1, 994\]/,
    );
  });

  it('a decoder output named "actions" instead of "action"', () => {
    const dir = writeSonicFolder(dirFor(), 'release', [], [], { decoderOutput: 'actions' });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: decOf(dir), key: 'outputs' },
      /the decoder must have exactly one output "action"; it has actions \[1, 29\]/,
    );
  });

  it('a decoder whose obs_dict is 993 wide (the yaml builds 994)', () => {
    const dir = writeSonicFolder(dirFor(), 'release', [], [], { decoderWidth: 993 });
    expectInputError(
      () => planPolicy(dir, profile),
      { file: decOf(dir), key: 'inputs.obs_dict' },
      /has shape \[1, 993\]; observation_config.yaml builds 994/,
    );
  });

  it('a folder with two encoders', () => {
    const dir = writeSonicFolder(dirFor(), 'release', [], []);
    fs.copyFileSync(path.join(dir, 'model_encoder.onnx'), path.join(dir, 'other_encoder.onnx'));
    expectInputError(() => planPolicy(dir, profile), {}, /2 encoder and 1 decoder/);
  });
});
