// Sanity check that core-v1 clips are trackable in physics: the builtin reference tracker (joint
// PD + root assist, a reference tracker, not a policy) runs a few clips in the embedded MuJoCo
// simulator on our G1 without a hard failure; without the assist it falls on a walk, as DESIGN §9
// says a plain PD tracker does — the kind of pair qualification must reject.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reading } from '../../src/domain/metrics';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { generateCoreV1 } from '../../src/domain/workload/coreV1';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';

const profile = loadRobotProfile();
const names = ['ub_boxing_jabs', 'ip_heel_raise', 'loco_walk_forward', 'dyn_small_jumps', 'lp_kneel_like'];
const { clips } = generateCoreV1(profile, { only: names, withFileSha256: false });
const clip = (n: string) => clips.find((c) => c.name === n)!;
/** The value of an available reading (fails the test when it is unavailable). */
function value<T>(r: Reading<T>): T {
  if (!r.available) throw new Error(`reading unavailable: ${r.reason}`);
  return r.value;
}

describe('core-v1 under the builtin tracker (embedded MuJoCo, our G1, 1 worker)', () => {
  let sim: EmbeddedSimulator;
  beforeAll(async () => {
    sim = new EmbeddedSimulator({ modelFile: DEFAULT_MODEL_FILE, workers: 1 });
    await sim.ready();
  });
  afterAll(async () => {
    await sim?.close();
  });

  it.each(names)('%s completes with root assist 3000 N/m: no hard failure, full progress', async (name) => {
    const r = await runSimEpisode(sim, {
      clip: clip(name),
      binding: makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) }),
      profile,
      keepFrames: false,
    });
    expect(r.end.outcome).toBe('completed');
    expect(value(r.metrics.failure)).toBeNull();
    expect(value(r.metrics.progressSoft)).toBe(1);
    expect(value(r.metrics.mpjpeLMm)).toBeLessThan(60);
  });

  it('without assist the PD tracker falls while walking (hard failure)', async () => {
    const r = await runSimEpisode(sim, {
      clip: clip('loco_walk_forward'),
      binding: makeBuiltinBinding(),
      profile,
      keepFrames: false,
    });
    expect(value(r.metrics.failure)).not.toBeNull();
    expect(value(r.metrics.progressSoft)).toBeLessThan(1);
  });
});
