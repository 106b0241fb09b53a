import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { jointOrderFromNames } from '../../src/domain/robot/jointOrder';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { SimEngine } from '../../src/services/sim/simEngine';
import { runPolicyCheck } from '../../src/services/policyCheck/policyCheckRun';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { motionbench } from '../helpers/runCli';
import { sharedData } from '../helpers/sharedData';

// `policy check` on a released policy that tracks (BeyondMimic Jump_wose, real ONNX, real
// MuJoCo): the normal reading must be the best and every control must fall; its normal run must
// be `motionbench sim`'s run (same metrics through the simulator worker). Then the check itself
// is checked: the same policy read through a deliberately wrong joint table (the harness bug the
// check exists to expose) must fall under the "normal" reading and the check must report that the
// joint-order control tracks better.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
const JUMP = sharedData('policies/beyondmimic/Jump_wose.onnx');
const PBHC = sharedData('policies/pbhc_horse_stance_pose');
let engine: SimEngine;
beforeAll(async () => {
  engine = await SimEngine.load(DEFAULT_MODEL_FILE);
});
afterAll(() => engine?.dispose());

describe('policy check', () => {
  it('Jump_wose: the normal reading tracks, every applicable control falls, the verdict says so; the normal run is sim’s', async () => {
    const r = await runPolicyCheck({ policyPath: JUMP, profile, engine });
    const line = r.runs.map(
      (x) =>
        `${x.reading}: ${x.failure ? `fails ${x.failure.timeS.toFixed(2)} s` : 'no failure'}, progress-soft ${x.progressSoft?.toFixed(3)}, MPJPE-l ${x.mpjpeLMm?.toFixed(1)} mm, ${x.wallSeconds.toFixed(1)} s wall`,
    );
    console.log(`Jump_wose check (${r.wallSeconds.toFixed(1)} s wall):\n  ${line.join('\n  ')}\n  ${r.verdict.line}`);
    const normal = r.runs[0];
    expect(normal.reading).toBe('normal');
    expect(normal.failure).toBeNull();
    const controls = r.runs.slice(1);
    expect(controls.map((c) => c.reading)).toEqual(['joint_order_other', 'joint_order_mirrored', 'quaternion_xyzw']);
    for (const c of controls) {
      expect(c.failure, c.reading).not.toBeNull();
      expect(c.mpjpeLMm!).toBeGreaterThan(3 * normal.mpjpeLMm!);
    }
    expect(r.controls.find((c) => c.name === 'history_reversed')).toMatchObject({ applicable: false });
    expect(r.verdict.kind).toBe('normal_reading_tracks');
    // Every term Jump_wose declares a bound for stays within it; velocities have none.
    expect(r.terms.filter((t) => t.status === 'out_of_range')).toEqual([]);
    expect(r.terms.find((t) => t.kind === 'joint_vel_rel')!.status).toBe('no_bound_declared');
    expect(r.firstAction.perJoint).toHaveLength(29);
    expect(r.firstAction.maxAbsRad).toBeLessThan(0.6);

    // The normal reading is what `sim` runs (the worker path): identical readings.
    const plan = planPolicy(JUMP, profile);
    const sim = new EmbeddedSimulator({ modelFile: DEFAULT_MODEL_FILE, workers: 1 });
    try {
      await sim.ready();
      const s = await runSimEpisode(sim, { clip: plan.baked!.clip, binding: plan.binding, profile, keepFrames: false });
      expect(s.metrics.mpjpeLMm.available && s.metrics.mpjpeLMm.value).toBe(normal.mpjpeLMm);
      expect(s.metrics.progressSoft.available && s.metrics.progressSoft.value).toBe(normal.progressSoft);
    } finally {
      await sim.close();
    }
  }, 120_000);

  it('a harness that reads Jump_wose’s joints in canonical order falls, and the check says the joint-order control tracks better', async () => {
    const plan = planPolicy(JUMP, profile);
    expect(plan.loaded.spec.jointOrder.label).toBe('isaaclab');
    // The deliberate harness bug: the policy's names ignored, its joints taken as the model's order.
    const misread = {
      ...plan,
      loaded: { ...plan.loaded, spec: { ...plan.loaded.spec, jointOrder: jointOrderFromNames(G1_JOINT_NAMES) } },
    };
    const r = await runPolicyCheck({ policyPath: JUMP, profile, engine, plan: misread, seconds: 2 });
    console.log(
      `mis-read harness: ${r.runs.map((x) => `${x.reading} ${x.failure ? `fails ${x.failure.timeS.toFixed(2)} s` : 'no failure'} ${x.mpjpeLMm?.toFixed(1)} mm`).join('; ')}\n  ${r.verdict.line}`,
    );
    expect(r.runs[0].failure).not.toBeNull();
    expect(r.verdict.kind).toBe('reading_tracks_better');
    expect(r.verdict.better.map((b) => b.reading)).toEqual(['joint_order_other']);
    expect(r.verdict.line).toMatch(/suspect the harness's joint order/);
  }, 120_000);

  it('a window shorter than the clip: the policy still sees the whole clip as its reference (KungfuBot’s motion phase is k / (frames − 1)), stopped at the window; every control falls within it', async () => {
    const r = await runPolicyCheck({ policyPath: PBHC, profile, engine, seconds: 5 });
    console.log(
      `KungfuBot check (5 s of ${r.clip.seconds.toFixed(2)} s): ${r.runs.map((x) => `${x.reading} ${x.outcome} ${x.failure ? `fails ${x.failure.timeS.toFixed(2)} s` : 'no failure'} ${x.mpjpeLMm?.toFixed(1)} mm`).join('; ')}`,
    );
    expect(r.clip.seconds).toBeGreaterThan(6);
    expect(r.seconds).toBeCloseTo(5, 1);
    const [normal, ...controls] = r.runs;
    // A clip cut to the window would tell the policy the motion ends at 5 s: it fell at 1.28 s so.
    expect(normal).toMatchObject({ reading: 'normal', outcome: 'completed', failure: null });
    expect(normal.mpjpeLMm!).toBeLessThan(40);
    expect(controls.map((c) => c.reading)).toContain('history_reversed');
    for (const c of controls) {
      expect(c.outcome, c.reading).toBe('hard_failure');
      expect(c.failure!.timeS, c.reading).toBeLessThanOrEqual(5);
    }
    expect(r.verdict.kind).toBe('normal_reading_tracks');
  }, 120_000);

  it('CLI: --json on a short window; refused input exits 1 with the file named, bad usage 2', async () => {
    const ok = await motionbench('policy', 'check', JUMP, '--seconds', '1', '--json');
    expect(ok.code).toBe(0);
    const doc = JSON.parse(ok.stdout) as { seconds: number; runs: unknown[]; verdict: { line: string } };
    expect(doc.seconds).toBeCloseTo(1);
    expect(doc.runs).toHaveLength(4);
    expect(doc.verdict.line.length).toBeGreaterThan(0);
    const missing = await motionbench('policy', 'check', sharedData('policies/no_such_policy.onnx'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no_such_policy/);
    const bad = await motionbench('policy', 'check', JUMP, '--seconds', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--seconds/);
  }, 120_000);
});
