import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlCommand, ControlObservation, Controller } from '../../src/domain/wbc/controller';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { toCanonical } from '../../src/domain/robot/jointOrder';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { SimEngine } from '../../src/services/sim/simEngine';
import { fsmConfiguredMotion, loadTrackingPolicy } from '../../src/services/wbc/loadPolicy';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { createTrackingPolicyController } from '../../src/services/wbc/trackingPolicyController';
import { rolloutInThread } from '../helpers/policyRollout';
import { sharedData } from '../helpers/sharedData';
import { closeSimAndEngine, openSimAndEngine } from '../helpers/policyRollout';

// unitree_rl_lab's dance_102 mimic policy (Isaac Lab trained, Unitree's own sim2real release) in
// real MuJoCo on its own 60 Hz motion, as the console reads it:
//  1. it tracks the whole 29.1 s motion (measured: no hard failure, progress-soft 1.000,
//     MPJPE-l 22 mm; thresholds 0.95 and 35 mm);
//  2. negative control: the reading that made it fall (deploy.yaml's SDK-order stiffness/damping
//     placed through joint_ids_map as if in policy order) falls within 5 s (measured: frame 154,
//     3.08 s); the Isaac Lab joint order read as canonical falls too (measured: 0.26 s);
//  3. the observation the console feeds, term by term, against an independent recomputation
//     from unitree_rl_lab's deploy code (State_Mimic.cpp, motion_command.h MotionLoader,
//     motion_observations.h, observations.h, unitree_articulation.h) on the same simulated states;
//  4. the robot FSM configuration's motion_file and fps, read from a Unitree deploy tree.

const POLICY = sharedData('policies', 'unitree_rl_lab_mimic_dance_102');
const CSV = path.join(POLICY, 'params', 'G1_Take_102.bvh_60hz.csv');
const CSV_FPS = 60; // deploy/robots/g1_29dof/config/config.yaml FSM.Mimic_Dance_102.fps
const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
let sim: EmbeddedSimulator;
let engine: SimEngine;
beforeAll(async () => ({ sim, engine } = await openSimAndEngine(DEFAULT_MODEL_FILE)));
afterAll(() => closeSimAndEngine(sim, engine));

const clip = () => loadClipFile(CSV, { fps: CSV_FPS });
/** The clip's first `seconds` (the negative controls and the observation capture need no more). */
const firstSeconds = (seconds: number) => {
  const c = clip();
  const F = seconds * CSV_FPS + 1;
  return {
    ...c,
    frameCount: F,
    rootPosM: c.rootPosM.slice(0, 3 * F),
    rootQuatWxyz: c.rootQuatWxyz.slice(0, 4 * F),
    jointPosRad: c.jointPosRad.slice(0, 29 * F),
  };
};

describe('unitree_rl_lab dance_102 in the embedded simulator', () => {
  it('tracks its own motion; the old gains reading and the wrong joint order fall', async () => {
    const plan = planPolicy(POLICY, profile);
    expect(plan.binding.family).toBe('unitree-rl-lab');
    expect(plan.binding.physicsId).toBe('unitree-rl-lab-g1/1@5ms×4');
    const c = clip();
    const r = await runSimEpisode(sim, { clip: c, binding: plan.binding, profile, keepFrames: false });
    const m = r.metrics;
    const mp = m.mpjpeLMm.available ? m.mpjpeLMm.value : NaN;
    const ps = m.progressSoft.available ? m.progressSoft.value : NaN;
    console.log(
      `dance_102: ${r.end.frames}/${r.end.plannedFrames} frames, ${r.end.outcome}, first failure ${r.end.failure ? `frame ${r.end.failure.frame} (${r.end.failure.timeS.toFixed(2)} s)` : 'none'}, progress-soft ${ps.toFixed(3)}, MPJPE-l ${mp.toFixed(1)} mm`,
    );
    expect(r.end.outcome).toBe('completed');
    expect(r.end.failure).toBe(null);
    expect(ps).toBeGreaterThan(0.95);
    expect(mp).toBeLessThan(35);

    // Negative controls, in-thread with the same engine code.
    const d = plan.loaded.spec;
    const oldGains = {
      ...plan.loaded,
      spec: {
        ...d,
        // stiffness/damping (SDK order in the file) taken as policy order: the mjlab-deploy/1 reading.
        kp: toCanonical(
          d.jointOrder,
          Array.from(G1_JOINT_NAMES, (_, i) => d.kp[i]),
        ),
        kd: toCanonical(
          d.jointOrder,
          Array.from(G1_JOINT_NAMES, (_, i) => d.kd[i]),
        ),
      },
    };
    // The controls run the first 10 s (the released reading fell at 3.08 s).
    const c10 = firstSeconds(10);
    const good = rolloutInThread(
      engine,
      plan.binding,
      createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded }),
      c10,
    );
    const old = rolloutInThread(
      engine,
      plan.binding,
      createTrackingPolicyController(plan.binding, profile, { loaded: oldGains }),
      c10,
    );
    const order = rolloutInThread(
      engine,
      plan.binding,
      createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded, fault: 'wrong_joint_order' }),
      c10,
    );
    // The deploy program's timing: the reference one control step ahead (State_Mimic reads the
    // motion at t = (k+1)·step_dt). Measured, not asserted: the closing figures in docs/POLICIES.md.
    const lead = createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded });
    const leadWrap: Controller = {
      binding: lead.binding,
      physics: lead.physics,
      needs: lead.needs,
      reset: () => lead.reset(),
      step: (o, out) => lead.step({ ...o, referenceFrame: o.referenceFrame + 1 }, out),
    };
    const ahead = rolloutInThread(engine, plan.binding, leadWrap, c10);
    const at = (f: number | null) => (f === null ? 'none' : `frame ${f} (${(f / 50).toFixed(2)} s)`);
    console.log(
      `  intact: failure ${at(good.failureFrame)}, mean live MPJPE-l ${good.meanLiveMpjpeMm.toFixed(1)} mm; old gains reading: failure ${at(old.failureFrame)}, ${old.meanLiveMpjpeMm.toFixed(1)} mm; wrong joint order: failure ${at(order.failureFrame)}, ${order.meanLiveMpjpeMm.toFixed(1)} mm; reference one step ahead (deploy timing): failure ${at(ahead.failureFrame)}, ${ahead.meanLiveMpjpeMm.toFixed(1)} mm`,
    );
    expect(good.failureFrame).toBe(null);
    expect(old.failureFrame).not.toBe(null);
    expect(old.failureFrame!).toBeLessThan(250);
    expect(order.failureFrame).not.toBe(null);
    expect(order.failureFrame!).toBeLessThan(250);
  }, 180_000);
});

// ---------------------------------------------------------------- independent recomputation

type Quat = [number, number, number, number]; // w, x, y, z
const qmul = (a: Quat, b: Quat): Quat => [
  a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
  a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
  a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
  a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
];
const qconj = (q: Quat): Quat => [q[0], -q[1], -q[2], -q[3]];
const axisAngle = (axis: 0 | 1 | 2, a: number): Quat => {
  const q: Quat = [Math.cos(a / 2), 0, 0, 0];
  q[1 + axis] = Math.sin(a / 2);
  return q;
};
/** isaaclab::yawQuaternion (motion_command.h). */
const yawQuat = (q: Quat): Quat => {
  const [w, x, y, z] = q;
  const yaw = Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
  return [Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2)];
};
const rotm = (q: Quat): number[][] => {
  const n = Math.hypot(...q);
  const [w, x, y, z] = q.map((v) => v / n);
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
  ];
};
/** Eigen's Quaternion::slerp(t, other) for t in any range (used with the blend the loader computes). */
const slerp = (a: Quat, b: Quat, t: number): Quat => {
  let d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  const s = d < 0 ? -1 : 1;
  d = Math.abs(d);
  if (d > 1 - 1e-6) return a.map((v, i) => (1 - t) * v + t * s * b[i]) as Quat;
  const th = Math.acos(d);
  const k0 = Math.sin((1 - t) * th) / Math.sin(th);
  const k1 = (s * Math.sin(t * th)) / Math.sin(th);
  return a.map((v, i) => k0 * v + k1 * b[i]) as Quat;
};
/** State_Mimic.cpp torso_quat_w / anchor_quat_w: root · Rz(q12) · Rx(q13) · Ry(q14), SDK indices. */
const torso = (root: Quat, sdkQ: ArrayLike<number>): Quat =>
  qmul(qmul(qmul(root, axisAngle(2, sdkQ[12])), axisAngle(0, sdkQ[13])), axisAngle(1, sdkQ[14]));

/** isaaclab::MotionLoader (motion_command.h) over the raw CSV rows: x, y, z, qx, qy, qz, qw, 29 SDK joints. */
class DeployMotionLoader {
  readonly rows: number[][];
  readonly vel: number[][];
  readonly dt: number;
  readonly duration: number;
  private i0 = 0;
  private i1 = 0;
  private blend = 0;
  constructor(text: string, fps: number) {
    this.rows = text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => l.split(',').map(Number));
    this.dt = 1 / fps;
    this.duration = this.rows.length * this.dt;
    const dof = this.rows.map((r) => r.slice(7));
    this.vel = dof.slice(0, -1).map((p, i) => p.map((v, j) => (dof[i + 1][j] - v) / this.dt));
    this.vel.push(this.vel[this.vel.length - 1]);
    this.update(0);
  }
  update(t: number): void {
    const n = this.rows.length;
    const phase = Math.min(1, Math.max(0, t / this.duration));
    this.i0 = Math.round(phase * (n - 1));
    this.i1 = Math.min(this.i0 + 1, n - 1);
    this.blend = Math.round(((t - this.i0 * this.dt) / this.dt) * 1e5) / 1e5;
  }
  jointPos(): number[] {
    const a = this.rows[this.i0].slice(7);
    const b = this.rows[this.i1].slice(7);
    return a.map((v, j) => v * (1 - this.blend) + b[j] * this.blend);
  }
  jointVel(): number[] {
    return this.vel[this.i0].map((v, j) => v * (1 - this.blend) + this.vel[this.i1][j] * this.blend);
  }
  rootQuat(): Quat {
    const q = (r: number[]): Quat => [r[6], r[3], r[4], r[5]];
    return slerp(q(this.rows[this.i0]), q(this.rows[this.i1]), this.blend);
  }
}

/** The motion as a term sees it at one control step: SDK-order joint angles and velocities, root quaternion. */
interface MotionSample {
  jp: number[];
  jv: number[];
  rootQuat: Quat;
}

/**
 * The training pairing (unitree_rl_lab scripts/mimic/csv_to_npz.py): the CSV interpolated at
 * t = k / 50 (lerp, slerp between frames floor(t·fps) and the next), velocities by
 * torch.gradient at 50 Hz (central inside, one-sided at the ends); MotionCommand reads frame k.
 */
function trainingSamples(loader: DeployMotionLoader, fps: number, steps: number): MotionSample[] {
  const n = loader.rows.length;
  const K = Math.min(steps + 1, Math.floor(((n - 1) / fps) * 50 + 1e-9) + 1);
  const at = (k: number): { jp: number[]; q: Quat } => {
    const f = (k * fps) / 50;
    const i0 = Math.min(Math.floor(f), n - 1);
    const i1 = Math.min(i0 + 1, n - 1);
    const a = f - i0;
    const r0 = loader.rows[i0];
    const r1 = loader.rows[i1];
    return {
      jp: r0.slice(7).map((v, j) => v + (r1[7 + j] - v) * a),
      q: slerp([r0[6], r0[3], r0[4], r0[5]], [r1[6], r1[3], r1[4], r1[5]], a),
    };
  };
  const frames = Array.from({ length: K }, (_, k) => at(k));
  return frames.map((fr, k) => {
    const a = frames[Math.max(0, k - 1)];
    const b = frames[Math.min(K - 1, k + 1)];
    const span = (Math.min(K - 1, k + 1) - Math.max(0, k - 1)) * 0.02;
    return { jp: fr.jp, jv: fr.jp.map((_, j) => (b.jp[j] - a.jp[j]) / span), rootQuat: fr.q };
  });
}

/** The deploy program's pairing: isaaclab::MotionLoader::update(t) read as is. */
function deploySample(loader: DeployMotionLoader, t: number): MotionSample {
  loader.update(t);
  return { jp: loader.jointPos(), jv: loader.jointVel(), rootQuat: loader.rootQuat() };
}

interface Captured {
  obs: Float32Array;
  sdkQ: Float64Array;
  sdkDq: Float64Array;
  rootQuat: Quat;
  gyro: Float64Array;
  prevAction: Float32Array;
}

/** The deploy code's observation (deploy.yaml order) for one captured state with the motion at time t. */
function deployObservation(
  s: Captured,
  m: MotionSample,
  initQuat: Quat,
  ids: number[],
  def: number[],
): Record<string, number[]> {
  const { jp, jv } = m;
  const real = torso(s.rootQuat, s.sdkQ);
  const ref = torso(m.rootQuat, jp);
  const rel = qmul(qconj(qmul(initQuat, ref)), real);
  const R = rotm(rel);
  const rot = [0, 1, 2].map((i) => [0, 1, 2].map((j) => R[j][i])); // transpose
  return {
    motion_command: [...ids.map((m) => jp[m]), ...ids.map((m) => jv[m])],
    motion_anchor_ori_b: [rot[0][0], rot[0][1], rot[1][0], rot[1][1], rot[2][0], rot[2][1]],
    base_ang_vel: Array.from(s.gyro),
    joint_pos_rel: ids.map((m, i) => s.sdkQ[m] - def[i]),
    joint_vel_rel: ids.map((m) => s.sdkDq[m]),
    last_action: Array.from(s.prevAction),
  };
}

describe('dance_102 observation, term by term, against the deploy code recomputed independently', () => {
  it('every term matches the deploy rules; motion_command differs only by the motion timing the docs state', () => {
    const plan = planPolicy(POLICY, profile);
    const inner = createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded });
    const STEPS = 250; // 5 s
    const caps: Captured[] = [];
    const wrap: Controller = {
      binding: inner.binding,
      physics: inner.physics,
      needs: inner.needs,
      reset: () => inner.reset(),
      step(o: ControlObservation, out: ControlCommand) {
        const prev = Float32Array.from(inner.lastAction);
        inner.step(o, out);
        if (caps.length < STEPS) {
          const st = o.state;
          const q = st.rootQuatWxyz ?? st.imu.quatWxyz;
          caps.push({
            obs: Float32Array.from(inner.observation),
            sdkQ: Float64Array.from(st.jointPosRad), // canonical order = SDK motor order
            sdkDq: Float64Array.from(st.jointVelRadS),
            rootQuat: [q[0], q[1], q[2], q[3]],
            gyro: Float64Array.from(st.imu.gyroRadS),
            prevAction: prev,
          });
        }
      },
    };
    const roll = rolloutInThread(engine, plan.binding, wrap, firstSeconds(6));
    expect(roll.failureFrame).toBe(null);

    const yamlText = fs.readFileSync(path.join(POLICY, 'params', 'deploy.yaml'), 'utf8');
    const cfg = loadTrackingPolicy(POLICY); // only for term widths, checked below against the YAML keys
    const doc = JSON.parse(JSON.stringify(cfg.spec.observation.map((t) => [t.name, t.size * t.history])));
    expect(doc.map((x: [string, number]) => x[0])).toEqual([
      'motion_command',
      'motion_anchor_ori_b',
      'base_ang_vel',
      'joint_pos_rel',
      'joint_vel_rel',
      'last_action',
    ]);
    // joint_ids_map and default_joint_pos straight from the YAML text (flow lists).
    const list = (key: string): number[] => {
      const m = new RegExp(`^${key}: \\[([^\\]]*)\\]`, 'm').exec(yamlText);
      if (!m) throw new Error(`deploy.yaml: no ${key}`);
      return m[1].split(',').map((v) => Number(v.trim()));
    };
    const ids = list('joint_ids_map');
    const def = list('default_joint_pos');
    expect(ids).toHaveLength(29);
    expect(def).toHaveLength(29);

    const loader = new DeployMotionLoader(fs.readFileSync(CSV, 'utf8'), CSV_FPS);
    // State_Mimic::enter: init_quat = yaw(robot torso) · yaw(motion root at t = 0)ᵀ, at the start.
    loader.update(0);
    const initQuat = qmul(yawQuat(torso(caps[0].rootQuat, caps[0].sdkQ)), qconj(yawQuat(loader.rootQuat())));
    const names = doc.map((x: [string, number]) => x[0]) as string[];
    const widths = doc.map((x: [string, number]) => x[1]) as number[];
    const worst = (sample: (k: number) => MotionSample) => {
      const out: Record<string, number> = {};
      for (const n of names) out[n] = 0;
      out.motion_command_pos = 0;
      out.motion_command_vel = 0;
      caps.forEach((s, k) => {
        const want = deployObservation(s, sample(k), initQuat, ids, def);
        let o = 0;
        names.forEach((n, ti) => {
          const w = want[n];
          expect(w).toHaveLength(widths[ti]);
          for (let i = 0; i < w.length; i++) {
            const e = Math.abs(s.obs[o + i] - w[i]);
            out[n] = Math.max(out[n], e);
            if (n === 'motion_command') {
              const part = i < 29 ? 'motion_command_pos' : 'motion_command_vel';
              out[part] = Math.max(out[part], e);
            }
          }
          o += w.length;
        });
      });
      return out;
    };
    // The console's pairing is training's: frame k at t = k·step_dt, 50 Hz central differences.
    // The deploy program's loader at the same t, and at t = (k+1)·step_dt as State_Mimic steps.
    const train = trainingSamples(loader, CSV_FPS, caps.length);
    const asTrained = worst((k) => train[k]);
    const loaderSameT = worst((k) => deploySample(loader, k * 0.02));
    const asDeployed = worst((k) => deploySample(loader, (k + 1) * 0.02));
    const fmt = (r: Record<string, number>) =>
      Object.entries(r)
        .map(([k, v]) => `${k} ${v.toExponential(2)}`)
        .join(', ');
    console.log(
      `max |console − recomputed|, ${caps.length} steps, motion as trained (t = k·0.02 s, 50 Hz gradient): ${fmt(asTrained)}`,
    );
    console.log(
      `  deploy MotionLoader at t = k·0.02 s (rounded index, 60 Hz forward differences): ${fmt(loaderSameT)}`,
    );
    console.log(`  deploy MotionLoader at t = (k+1)·0.02 s (as State_Mimic steps): ${fmt(asDeployed)}`);
    // Every term, recomputed by the deploy code's rules with the motion sampled as trained,
    // equals the console's to float32 rounding (the anchor: FK of the model against the deploy's
    // root·Rz·Rx·Ry composition).
    for (const n of ['base_ang_vel', 'joint_pos_rel', 'joint_vel_rel', 'last_action', 'motion_command_pos'])
      expect(asTrained[n], n).toBeLessThan(1e-4);
    expect(asTrained.motion_command_vel).toBeLessThan(1e-3);
    expect(asTrained.motion_anchor_ori_b).toBeLessThan(1e-4);
    // The deploy program's own motion sampling differs from training's (docs/POLICIES.md gives
    // the figures): these must be visibly larger, or the comparison could not tell them apart.
    expect(loaderSameT.motion_command_vel).toBeGreaterThan(100 * asTrained.motion_command_vel);
    expect(asDeployed.motion_command_pos).toBeGreaterThan(100 * asTrained.motion_command_pos);
  }, 120_000);
});

// ---------------------------------------------------------------- FSM configuration

describe('the motion and fps of the robot FSM configuration (State_Mimic reads motion_file, fps)', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-rl-lab-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  // A Unitree deploy tree: <proj>/config/config.yaml and <proj>/config/policy/mimic/dance_102/
  // (the shared files linked, not copied).
  const proj = path.join(tmp, 'g1_29dof');
  const pol = path.join(proj, 'config', 'policy', 'mimic', 'dance_102');
  fs.mkdirSync(path.join(pol, 'params'), { recursive: true });
  fs.mkdirSync(path.join(pol, 'exported'), { recursive: true });
  for (const f of ['params/deploy.yaml', 'params/G1_Take_102.bvh_60hz.csv', 'exported/policy.onnx'])
    fs.symlinkSync(path.join(POLICY, f), path.join(pol, f));
  const writeConfig = (fps: string) =>
    fs.writeFileSync(
      path.join(proj, 'config', 'config.yaml'),
      [
        'FSM:',
        '  Velocity:',
        '    policy_dir: config/policy/velocity',
        '  Mimic_Dance_102:',
        `    fps: ${fps}`,
        '    motion_file: config/policy/mimic/dance_102/params/G1_Take_102.bvh_60hz.csv',
        '    policy_dir: config/policy/mimic/dance_102/',
        '',
      ].join('\n'),
    );

  it('finds the state naming this policy_dir and reads its motion_file and fps', () => {
    writeConfig('60');
    const found = fsmConfiguredMotion(pol);
    expect(found).not.toBe(null);
    expect(found!.motion.fps).toBe(60);
    expect(found!.motion.file).toBe(path.join(pol, 'params', 'G1_Take_102.bvh_60hz.csv'));
    expect(found!.motion.source).toMatch(/config\.yaml FSM\.Mimic_Dance_102$/);
    const p = loadTrackingPolicy(pol);
    expect(p.spec.family).toBe('unitree-rl-lab');
    expect(p.spec.configuredMotion?.fps).toBe(60);
    expect(p.files).toContain(path.join(proj, 'config', 'config.yaml'));
  });

  it('negative control: the shared folder alone has no configuration, so no motion is claimed', () => {
    expect(fsmConfiguredMotion(POLICY)).toBe(null);
    expect(loadTrackingPolicy(POLICY).spec.configuredMotion ?? null).toBe(null);
  });

  it('an unusable fps is refused with its key', () => {
    writeConfig('"sixty"');
    expect(() => fsmConfiguredMotion(pol)).toThrow(/FSM\.Mimic_Dance_102\.fps|frame rate/);
    writeConfig('60');
  });
});
