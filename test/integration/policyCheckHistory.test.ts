import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createControlCommand } from '../../src/domain/wbc/controller';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { readingSetup, runPolicyCheck } from '../../src/services/policyCheck/policyCheckRun';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { createTrackingPolicyController } from '../../src/services/wbc/trackingPolicyController';
import {
  encodeHoloMotionProbe,
  holomotionConfigYaml,
  holomotionMetadata,
  writeHoloMotionFolder,
} from '../helpers/holomotionFixture';
import { makeObservation } from '../helpers/onnxBuilder';
import { movingReference } from '../helpers/referenceTestMath';
import { sharedData } from '../helpers/sharedData';

// The history-order control on a policy with history: a HoloMotion MLP export whose terms keep 4
// entries (the fixture's probe graph copies chosen observation entries into its action, so the
// test reads what the graph received). Under `history_reversed` the graph must receive the
// newest entry where the normal reading puts the oldest, and vice versa; the check lists the
// control as applicable and runs it.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-check-history-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const CONTEXT = 4;
// actor_ref_gravity_projection_cur is the first term: 3 values × 4 entries, oldest first.
const OLDEST_X = 0;
const NEWEST_X = 3 * (CONTEXT - 1);

function probeFolder(): string {
  const cfg = holomotionConfigYaml({ contextLength: CONTEXT, actorType: 'MLP' });
  const index = Array.from({ length: 29 }, (_, a) => (a === 0 ? OLDEST_X : a === 1 ? NEWEST_X : -1));
  const model = encodeHoloMotionProbe({
    D: 134 * CONTEXT + 470,
    kvDims: null,
    probe: { kind: 'obs', index },
    metadata: holomotionMetadata(undefined, null),
  });
  return writeHoloMotionFolder(path.join(tmp, 'mlp'), model, cfg);
}

describe('history_reversed control', () => {
  const dir = probeFolder();
  const plan = planPolicy(dir, profile);

  it('the graph receives the newest entry in the oldest slot (and back); the normal reading is oldest first', () => {
    expect(plan.loaded.spec.observation[0].history).toBe(CONTEXT);
    const ref = movingReference(20);
    const seen: Record<'normal' | 'history_reversed', [number, number][]> = { normal: [], history_reversed: [] };
    for (const reading of ['normal', 'history_reversed'] as const) {
      const setup = readingSetup(reading, plan.loaded.spec);
      const ctrl = createTrackingPolicyController(plan.binding, profile, {
        loaded: { ...plan.loaded, spec: setup.spec },
        ...setup.options,
      });
      const out = createControlCommand();
      for (let k = 0; k < 6; k++) {
        const obs = makeObservation(ref, profile.defaultPose.jointPosRad, 7 + k, k);
        ctrl.step(obs, out);
        seen[reading].push([ctrl.lastAction[0], ctrl.lastAction[1]]);
      }
      ctrl.dispose();
    }
    const n = seen.normal;
    const r = seen.history_reversed;
    // At reset every entry is the first value: oldest = newest under both readings.
    expect(n[0][0]).toBe(n[0][1]);
    // Later the reference pitches: oldest ≠ newest, and the control swaps them.
    for (let k = CONTEXT; k < 6; k++) {
      expect(Math.abs(n[k][0] - n[k][1])).toBeGreaterThan(1e-4);
      expect(r[k][0]).toBe(n[k][1]);
      expect(r[k][1]).toBe(n[k][0]);
    }
  });

  it('the check lists it as applicable and runs it beside the other controls', async () => {
    const report = await runPolicyCheck({
      policyPath: dir,
      plan,
      profile,
      clipFile: sharedData('policies/wbc_mjlab/clips/idle_02.npz'),
      seconds: 1,
    });
    expect(report.controls.every((c) => c.applicable)).toBe(true);
    expect(report.runs.map((x) => x.reading)).toEqual([
      'normal',
      'joint_order_other',
      'joint_order_mirrored',
      'quaternion_xyzw',
      'history_reversed',
    ]);
    console.log(`history fixture check: ${report.verdict.line} (${report.wallSeconds.toFixed(1)} s wall)`);
  }, 60_000);
});
