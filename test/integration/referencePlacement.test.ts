// The reference as placed for a simulated run (src/domain/sim/referencePlacement.ts), on the real
// simulator, the real BeyondMimic Violin export and a core-v1 clip. Violin's baked motion starts
// with its ankles ~10 cm below z = 0, so the simulator lifts the robot ~0.154 m onto the floor:
// judged against the reference as given, its own policy tracking it with no failure showed a
// 0.15 m root-height error at t = 0 (qualification rejected it); against the reference lifted by
// the same amount it does not, while the trajectory itself is unchanged (pinned hash). Negative
// control: the same policy reading its joints in the wrong order falls, and the placed reference
// still catches it. A clip that stands on the floor has lift 0 and is judged on exactly the same
// numbers as without placement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClipPairEvaluator, MB_METRICS_1 } from '../../src/domain/metrics';
import { postureMargins } from '../../src/domain/qualification';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { placedClip } from '../../src/domain/sim/referencePlacement';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { SimEngine } from '../../src/services/sim/simEngine';
import { loadCoreV1 } from '../../src/services/workload/coreV1Frozen';
import { planPolicy, type PolicyPlan } from '../../src/services/wbc/policyRun';
import { createTrackingPolicyController } from '../../src/services/wbc/trackingPolicyController';
import { rolloutInThread } from '../helpers/policyRollout';
import { sharedData } from '../helpers/sharedData';
import { closeSimAndEngine, openSimAndEngine } from '../helpers/policyRollout';

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
let sim: EmbeddedSimulator;
let engine: SimEngine;
let violin: PolicyPlan;
beforeAll(async () => {
  ({ sim, engine } = await openSimAndEngine(DEFAULT_MODEL_FILE));
  violin = planPolicy(sharedData('policies/beyondmimic/Violin.onnx'), profile);
}, 60_000);
afterAll(async () => {
  await closeSimAndEngine(sim, engine);
});

/** Root-height margin of an executed run against `ref` (what qualification's root_height_margin reads). */
function rootMargin(
  ref: Parameters<ClipPairEvaluator['timeline']>[0],
  exec: Parameters<ClipPairEvaluator['timeline']>[1],
) {
  const ev = new ClipPairEvaluator(MB_METRICS_1, profile);
  const t = ev.timeline(ref, exec);
  return postureMargins(ev.layout, t.ref, t.exec, t.K)!.rootHeight;
}

describe('reference placement', () => {
  it('judges Violin, tracked by its own policy, against its reference lifted onto the floor', async () => {
    const clip = violin.baked!.clip;
    const r = await runSimEpisode(sim, { clip, binding: violin.binding, profile });
    const lift = r.end.referenceLiftM!;
    console.log(
      `  Violin: lift ${lift.toFixed(4)} m, outcome ${r.end.outcome}, MPJPE-l ${r.metrics.mpjpeLMm.available ? r.metrics.mpjpeLMm.value.toFixed(1) : 'n/a'} mm`,
    );
    expect(lift).toBeGreaterThan(0.15);
    expect(lift).toBeLessThan(0.16);
    // The lift is the floor solve of the reference's own frame 0, which here is the robot's start.
    expect(lift).toBe(r.end.initialState!.floorShiftM);
    // Placement changes the judging, not the run: the trajectory is the one measured without it.
    expect(r.end.trajectorySha256).toBe('a540f8d803b71b69aaefb2f697e2e73c753ba7193e15b922ef46ab3a43fcec3f');
    expect(r.end.outcome).toBe('completed');
    expect(r.metrics.failure.available && r.metrics.failure.value).toBe(null);
    const placed = rootMargin(placedClip(clip, lift), r.executed);
    const asGiven = rootMargin(clip, r.executed);
    console.log(
      `  root-height margin: placed ${placed.maxM.toFixed(3)} m (frame ${placed.frame}), as given ${asGiven.maxM.toFixed(3)} m (frame ${asGiven.frame})`,
    );
    expect(placed.maxM).toBeLessThan(0.6 * MB_METRICS_1.thresholds.rootHeightM);
    // Control: against the reference as given, the start alone exceeds qualification's 0.15 m margin.
    expect(asGiven.maxM).toBeGreaterThan(0.6 * MB_METRICS_1.thresholds.rootHeightM);
    expect(asGiven.frame).toBe(0);
  }, 120_000);

  it('still catches a fall: Violin with its joints read in the wrong order fails on the placed reference', () => {
    const clip = violin.baked!.clip;
    const bad = rolloutInThread(
      engine,
      violin.binding,
      createTrackingPolicyController(violin.binding, profile, { loaded: violin.loaded, fault: 'wrong_joint_order' }),
      clip,
    );
    console.log(`  wrong joint order: ${bad.outcome}, first failure frame ${bad.failureFrame}: ${bad.reason}`);
    expect(bad.outcome).toBe('hard_failure');
    expect(bad.failureFrame).not.toBeNull();
    expect(bad.failureFrame!).toBeLessThan(250);
  }, 120_000);

  it('leaves a clip that stands on the floor unplaced: the same numbers as without placement', async () => {
    const core = loadCoreV1({ verify: false });
    const clip = clipHead(
      core.clips.find((c) => c.name === 'ip_weight_shift')!,
      3,
    );
    const binding = await resolveBindingSpec('builtin');
    const r = await runSimEpisode(sim, { clip, binding, profile });
    expect(r.end.referenceLiftM).toBe(0);
    expect(placedClip(clip, 0)).toBe(clip);
    const unplaced = new ClipPairEvaluator(MB_METRICS_1, profile).evaluate(clip, r.executed).metrics;
    expect(r.metrics).toEqual(unplaced);
    // Negative control of the comparison itself: a 1 cm placement does change the height readings.
    const lifted = rootMargin(placedClip(clip, 0.01), r.executed);
    expect(Math.abs(lifted.maxM - rootMargin(clip, r.executed).maxM)).toBeGreaterThan(0.005);
  }, 120_000);
});
