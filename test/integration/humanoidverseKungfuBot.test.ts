import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import type { TrackingPolicySpec } from '../../src/domain/wbc/trackingPolicy';
import { policyInfo } from '../../src/cli/commands/policyInfoCommand';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { SimEngine } from '../../src/services/sim/simEngine';
import { loadTrackingPolicy } from '../../src/services/wbc/loadPolicy';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { createTrackingPolicyController } from '../../src/services/wbc/trackingPolicyController';
import { rolloutInThread } from '../helpers/policyRollout';
import { sharedData } from '../helpers/sharedData';
import { closeSimAndEngine, openSimAndEngine } from '../helpers/policyRollout';

// PBHC's KungfuBot horse-stance policy (HumanoidVerse, the ASAP code base) read from its
// config.yaml alone and run in real MuJoCo on its own motion (the .pkl beside it):
//  1. policy info: family humanoidverse, 23 driven joints in config order, the six wrist joints
//     held, the 380-wide observation in HumanoidVerse's sorted order, its own motion configured;
//  2. it tracks its whole 7 s motion with no hard failure (measured: progress-soft 1.000,
//     MPJPE-l 22 mm), the held wrists stay at their default pose;
//  3. negative controls, each a plausible harness bug, fall: the history read oldest first with
//     the current step (Isaac Lab's layout; measured 1.82 s), the terms in file order instead of
//     sorted (0.22 s), the 23 joints taken in alphabetical order (0.42 s) or in Isaac Lab's order
//     (the controller's wrong_joint_order fault);
//  4. files the tests have not seen: the config with its terms re-ordered loads to the same
//     layout; a different history length, mismatched widths and an alias bomb are refused.

const POLICY = sharedData('policies', 'pbhc_horse_stance_pose');
const PKL = path.join(POLICY, 'Horse-stance_pose.pkl');
const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
let sim: EmbeddedSimulator;
let engine: SimEngine;
let tmp: string;
beforeAll(async () => {
  ({ sim, engine } = await openSimAndEngine(DEFAULT_MODEL_FILE));
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-hv-'));
});
afterAll(async () => {
  await closeSimAndEngine(sim, engine);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const CONFIG_DOF_NAMES = [
  ...G1_JOINT_NAMES.slice(0, 19), // legs, waist, left shoulder and elbow
  ...G1_JOINT_NAMES.slice(22, 26), // right shoulder and elbow
];
const WRISTS = G1_JOINT_NAMES.filter((n) => n.includes('wrist'));

/** A copy of the policy folder with config.yaml rewritten by `edit` (the .onnx and .pkl copied as they are). */
function variant(name: string, edit: (text: string) => string): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(path.join(dir, 'exported'), { recursive: true });
  fs.copyFileSync(path.join(POLICY, 'exported', 'model_50000.onnx'), path.join(dir, 'exported', 'model_50000.onnx'));
  fs.copyFileSync(PKL, path.join(dir, 'Horse-stance_pose.pkl'));
  fs.writeFileSync(path.join(dir, 'config.yaml'), edit(fs.readFileSync(path.join(POLICY, 'config.yaml'), 'utf8')));
  return dir;
}
const refusal = (dir: string): string => {
  try {
    loadTrackingPolicy(dir);
  } catch (e) {
    return (e as Error).message;
  }
  return 'loaded';
};

describe('HumanoidVerse / PBHC KungfuBot horse stance', () => {
  it('policy info reads config.yaml: driven joints in action order, held wrists, sorted terms, its own motion', () => {
    const plan = planPolicy(POLICY, profile);
    const info = policyInfo(plan);
    expect(info.family).toBe('humanoidverse');
    expect(info.adapter).toBe('humanoidverse/1');
    expect(info.driven_joints).toEqual(CONFIG_DOF_NAMES);
    expect(info.held_joints).toEqual(WRISTS);
    expect(info.observation_size).toBe(380);
    const terms = (info.observation as { term: string; history: number; history_layout: string | null }[]).map(
      (t) => `${t.term}${t.history > 1 ? `×${t.history}:${t.history_layout}` : ''}`,
    );
    expect(terms).toEqual([
      'actions',
      'base_ang_vel',
      'dof_pos',
      'dof_vel',
      'history_actor.actions×4:past_newest_first',
      'history_actor.base_ang_vel×4:past_newest_first',
      'history_actor.dof_pos×4:past_newest_first',
      'history_actor.dof_vel×4:past_newest_first',
      'history_actor.projected_gravity×4:past_newest_first',
      'history_actor.ref_motion_phase×4:past_newest_first',
      'projected_gravity',
      'ref_motion_phase',
    ]);
    expect(info.control_rate_hz).toBe(50);
    expect(plan.binding.physicsId).toBe('humanoidverse-g1/1@2ms×10');
    const s = plan.loaded.spec;
    const at = (n: string) => G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number]);
    // stiffness by name part (knee 150, elbow 50, waist 400), wrists held with locked_kp 40 / kd 1
    expect([s.kp[at('left_knee_joint')], s.kp[at('right_elbow_joint')], s.kp[at('waist_pitch_joint')]]).toEqual([
      150, 50, 400,
    ]);
    expect(WRISTS.map((n) => [s.kp[at(n)], s.kd[at(n)], s.defaultJointPosRad[at(n)]])).toEqual(
      WRISTS.map(() => [40, 1, 0]),
    );
    expect(s.action.clip).toBe(100);
    expect(s.action.scale[at('left_knee_joint')]).toBe(0.25);
    expect(s.observation.find((t) => t.name === 'dof_vel')!.scale![0]).toBe(0.05);
    expect(s.observation.every((t) => t.clip === 100)).toBe(true);
    expect(info.configured_motion).toMatchObject({ file: PKL, fps: 30 });
  });

  it('tracks its own motion in MuJoCo; reversed history, file-order terms and alphabetical joints fall', async () => {
    const plan = planPolicy(POLICY, profile);
    const clip = loadClipFile(plan.loaded.spec.configuredMotion!.file, { fps: plan.loaded.spec.configuredMotion!.fps });
    const t0 = Date.now();
    const r = await runSimEpisode(sim, { clip, binding: plan.binding, profile, keepFrames: false });
    const m = r.metrics;
    const mp = m.mpjpeLMm.available ? m.mpjpeLMm.value : NaN;
    const ps = m.progressSoft.available ? m.progressSoft.value : NaN;
    console.log(
      `horse stance: ${r.end.frames}/${r.end.plannedFrames} frames, ${r.end.outcome}, failure ${r.end.failure ? `${r.end.failure.timeS.toFixed(2)} s` : 'none'}, progress-soft ${ps.toFixed(3)}, MPJPE-l ${mp.toFixed(1)} mm, ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    expect(r.end.outcome).toBe('completed');
    expect(r.end.failure).toBe(null);
    expect(ps).toBeGreaterThan(0.95);
    expect(mp).toBeLessThan(35);

    const run = (spec: TrackingPolicySpec) =>
      rolloutInThread(
        engine,
        plan.binding,
        createTrackingPolicyController(plan.binding, profile, { loaded: { ...plan.loaded, spec } }),
        clip,
      );
    const d = plan.loaded.spec;
    const good = run(d);
    // the wrists are held at 0 rad by the robot side throughout
    const J = G1_JOINT_NAMES.length;
    let wristMax = 0;
    for (let k = 0; k < good.frames; k++)
      for (const n of WRISTS)
        wristMax = Math.max(wristMax, Math.abs(good.q[k * J + G1_JOINT_NAMES.indexOf(n as never)]));
    const oldest = run({
      ...d,
      observation: d.observation.map((t) => (t.history > 1 ? { ...t, historyLayout: 'current_oldest_first' } : t)),
    });
    const byName = (n: string) => d.observation.filter((t) => t.name === n || t.name.startsWith(`${n}.`));
    const fileOrder = run({
      ...d,
      observation: [
        'base_ang_vel',
        'projected_gravity',
        'dof_pos',
        'dof_vel',
        'actions',
        'ref_motion_phase',
        'history_actor',
      ].flatMap(byName),
    });
    const names = d.jointOrder.policyNames;
    const alphabetical = [...names].sort();
    const joints = run({
      ...d,
      jointOrder: {
        ...d.jointOrder,
        canonicalOf: Int32Array.from(alphabetical.map((n) => d.jointOrder.canonicalOf[names.indexOf(n)])),
      },
    });
    // the controller's own fault: the 23 joints in Isaac Lab's order
    const isaac = rolloutInThread(
      engine,
      plan.binding,
      createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded, fault: 'wrong_joint_order' }),
      clip,
    );
    const at = (f: number | null) => (f === null ? 'none' : `${(f / 50).toFixed(2)} s`);
    console.log(
      `  intact ${at(good.failureFrame)} (${good.meanLiveMpjpeMm.toFixed(1)} mm, wrists within ${wristMax.toFixed(3)} rad); history oldest first ${at(oldest.failureFrame)}; terms in file order ${at(fileOrder.failureFrame)}; joints alphabetical ${at(joints.failureFrame)}; joints in Isaac Lab order ${at(isaac.failureFrame)}`,
    );
    expect(good.failureFrame).toBe(null);
    expect(wristMax).toBeLessThan(0.1);
    for (const bad of [oldest, fileOrder, joints, isaac]) {
      expect(bad.failureFrame).not.toBe(null);
      expect(bad.failureFrame!).toBeLessThan(150);
    }
  }, 180_000);

  it('a config with its terms re-ordered in the file loads to the same layout', () => {
    const base = loadTrackingPolicy(POLICY).spec;
    const dir = variant('reordered', (t) =>
      t
        .replace(
          / {4}actor_obs:\n {4}- base_ang_vel\n {4}- projected_gravity\n {4}- dof_pos\n {4}- dof_vel\n {4}- actions\n {4}- ref_motion_phase\n {4}- history_actor\n/,
          '    actor_obs:\n    - history_actor\n    - ref_motion_phase\n    - dof_vel\n    - actions\n    - projected_gravity\n    - base_ang_vel\n    - dof_pos\n',
        )
        .replace(
          / {4}history_actor:\n {6}base_ang_vel: 4\n {6}projected_gravity: 4\n {6}dof_pos: 4\n {6}dof_vel: 4\n {6}actions: 4\n {6}ref_motion_phase: 4\n/,
          '    history_actor:\n      ref_motion_phase: 4\n      dof_vel: 4\n      actions: 4\n      base_ang_vel: 4\n      projected_gravity: 4\n      dof_pos: 4\n',
        ),
    );
    expect(fs.readFileSync(path.join(dir, 'config.yaml'), 'utf8')).toContain(
      '    - history_actor\n    - ref_motion_phase',
    );
    const s = loadTrackingPolicy(dir).spec;
    expect(s.observation.map((t) => [t.name, t.size, t.history])).toEqual(
      base.observation.map((t) => [t.name, t.size, t.history]),
    );
    expect(s.configuredMotion?.file).toBe(path.join(dir, 'Horse-stance_pose.pkl'));
    // a .pkl not named by robot.motion.motion_file is not taken as the policy's own motion
    fs.renameSync(path.join(dir, 'Horse-stance_pose.pkl'), path.join(dir, 'other.pkl'));
    expect(loadTrackingPolicy(dir).spec.configuredMotion).toBe(null);
  });

  it('refuses a different history length, mismatched widths and an alias bomb, naming the field', () => {
    const hist5 = variant('hist5', (t) =>
      t.replace(/( {4}history_actor:\n(?: {6}\w+: 4\n)+)/, (b) => b.replace(/: 4\n/g, ': 5\n')),
    );
    expect(refusal(hist5)).toMatch(/model_50000\.onnx \[inputs\.actor_obs\].*has width 380.*builds 456/);

    const dims = variant('dims', (t) => t.replace('  - dof_vel: ${robot.dof_obs_size}', '  - dof_vel: 24'));
    expect(refusal(dims)).toMatch(/config\.yaml:\d+:\d+ \[obs\.obs_dims\[4\]\.dof_vel\]: is 24, but dof_vel/);

    const fewer = variant('fewer', (t) => t.replace('  dof_names:\n  - left_hip_pitch_joint\n', '  dof_names:\n'));
    expect(refusal(fewer)).toMatch(/config\.yaml:\d+:\d+ \[robot\.actions_dim\]: is 23, but robot\.dof_names lists 22/);

    const unknown = variant('unknown', (t) =>
      t.replace(
        '    - ref_motion_phase\n    - history_actor\n    critic_obs',
        '    - ref_motion_phase\n    - base_lin_vel\n    - history_actor\n    critic_obs',
      ),
    );
    expect(refusal(unknown)).toMatch(
      /\[obs\.obs_dict\.actor_obs\[\d\]\]: observation term "base_lin_vel" is not one the humanoidverse adapter knows/,
    );

    const bomb = variant('bomb', (t) =>
      [
        'a: &a [x, x, x, x, x, x, x, x, x, x]',
        'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
        'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
        'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
        t,
      ].join('\n'),
    );
    expect(refusal(bomb)).toMatch(/config\.yaml:2:\d+: its aliases expand .* alias bomb/);

    const hostilePkl = variant('hostile-pkl', (t) => t);
    // a pickle that names os.system in place of the motion beside the config: refused, never run
    fs.writeFileSync(
      path.join(hostilePkl, 'Horse-stance_pose.pkl'),
      Buffer.from('\x80\x04cos\nsystem\n\x8c\x05touch\x85R.', 'latin1'),
    );
    expect(refusal(hostilePkl)).toMatch(
      /Horse-stance_pose\.pkl \[pickle\]: the pickle names the global os\.system, which is not allowed.*\(at byte 2 of the pickle\)$/,
    );
  });
});
