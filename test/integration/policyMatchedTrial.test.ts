import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MB_METRICS_1 } from '../../src/domain/metrics';
import { runQualification } from '../../src/services/qualification';
import { buildGapSection } from '../../src/services/report/gapSection';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { openCampaign, type CampaignStore } from '../../src/services/trace';
import { listAdmittedPairs } from '../../src/services/trial';
import { openInterlockFeed, type InterlockFeed } from '../../src/services/trial/interlockFeed';
import { openTrialRobot } from '../../src/services/trial/openTrialRobot';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { policyMotionsWorkload } from '../../src/services/workload/policyWorkload';
import { checkAfterClip } from '../helpers/afterClipEvidence';
import { runPairOnEmulator } from '../helpers/matchedPairOnRig';
import { makePtyPair, type TestPtyPair } from '../helpers/ptyPair';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/robotEmulatorProcess';
import { sharedData } from '../helpers/sharedData';
import { startTogether } from '../helpers/startTogether';

// A real released policy end to end. BeyondMimic's Jump_wose export (no
// state estimation: it needs nothing the G1 does not stream) is qualified on its own baked
// motion in the embedded simulator, then run as a matched pair: the robot emulator (a separate
// process, default declared perturbations, motion capture on) runs the policy ONBOARD at its own
// 50 Hz, as a robot PC would, the interlock emulator sits on a real socat PTY, and the report's
// Table 11 compares the simulation branch with the three real trials of that policy.
//
// Slow on purpose (a whole-system run): the policy is qualified, then the simulation branch and
// three real trials run at real time with the policy onboard the emulated robot.

const profile = loadRobotProfile();
const POLICY = sharedData('policies/beyondmimic/Jump_wose.onnx');

let dir: string;
let pty: TestPtyPair;
let emu: EmulatorProcess;
let interlock: InterlockFeed;
let sim: EmbeddedSimulator;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mb-e2e-policy-pair-'));
  // The robot (its own process, the box on the pty) and the simulator start together; both are
  // kept for afterAll even when one fails.
  sim = new EmbeddedSimulator({ modelFile: profile.sourceFile, workers: 1 });
  await startTogether(
    makePtyPair().then(async (p) => {
      pty = p;
      emu = await startEmulatorProcess(['--interlock', pty.devicePath, '--mocap', '--seed', '7']);
      interlock = await openInterlockFeed({ path: pty.consolePath, log: () => {} });
    }),
    sim.ready(),
  );
}, 60_000);

afterAll(async () => {
  await interlock?.close().catch(() => {});
  await emu?.stop();
  await sim?.close();
  await pty?.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('a released policy as a matched pair (emulator running it onboard + interlock + embedded simulator)', () => {
  let store: CampaignStore;

  it('qualifies Jump_wose on its own motion, calibrates, runs 1 sim + 3 real trials with the policy onboard, and reports Table 11', async () => {
    const plan = planPolicy(POLICY, profile);
    const workload = policyMotionsWorkload([plan], profile);
    const binding = plan.binding;
    const q = await runQualification({ campaignDir: dir, workload, bindings: [binding], profile, simulator: sim });
    expect(q.pairsDecided).toBe(1);
    console.log(
      `qualification of ${binding.id}: ${q.pairs.map((p) => `${p.clipName} ${p.admitted ? 'admitted' : `rejected (${p.reasons.join('; ')})`}`).join(', ')}`,
    );
    store = await openCampaign(dir);
    const pair = listAdmittedPairs(store).find((p) => p.clipId === plan.baked!.clip.id)!;
    expect(pair.admitted).toBe(true);

    const link = await openTrialRobot(emu.url, { robotUnit: 'g1-emulated-001' });
    try {
      const rig = { store, link, interlock, sim, profile };
      const { r } = await runPairOnEmulator(emu, rig, pair, { trials: 3, workload });
      // On a failure, what the robot saw: its loop's lateness and the motors' changes, with causes.
      expect(r.stoppedEarly, `emulator stderr:\n${emu.stderr().slice(-3000)}`).toBeNull();
      expect(r.binding.id).toBe('beyondmimic/Jump_wose');
      expect(r.sim.outcome).toBe('completed');
      console.log(
        `policy e2e real trials: ${r.real.map((t) => `${t.outcome} (${t.frames} frames${t.outcome === 'completed' ? '' : `: ${t.reason}`})`).join(', ')}`,
      );
      expect(r.real).toHaveLength(3);
      for (const t of r.real) expect(['completed', 'hard_failure']).toContain(t.outcome);
      // 500 Hz recording of a 3.3 s motion: ~1,640 frames per trial.
      for (const t of r.real) expect(t.frames).toBeGreaterThan(1500);
      // After the clip the emulated robot holds its last pose: the console watched it, and the
      // outcome agrees with the tilts in the episode file (a fall is a hard_failure).
      for (const t of r.real) {
        const after = await checkAfterClip(store, t);
        console.log(
          `policy e2e trial ${t.trialIndex + 1} after the clip: ${after.verdict}, ${after.samples} samples over ${after.lastS.toFixed(2)} s, tilt at most ${after.maxTiltDeg.toFixed(1)}° (${t.outcome}: ${t.reason})`,
        );
      }

      // Table 11 of a real policy: every tracking row has a sim and a real value and a gap.
      const gap = buildGapSection(store, { contract: MB_METRICS_1.id });
      const wbc = gap.report.wbcs.find((w) => w.rows.length > 0)!;
      console.log(
        `policy e2e gap table (${pair.clipName} × ${binding.id}): ` +
          wbc.rows
            .map(
              (x) =>
                `${x.key} sim ${x.sim.available ? x.sim.value.toPrecision(4) : 'n/a'} real ${x.real.available ? x.real.value.toPrecision(4) : 'n/a'} gap ${x.gapPercent.available ? x.gapPercent.value.toFixed(1) + ' %' : 'n/a'}`,
            )
            .join('; '),
      );
      for (const key of ['jointPosRmseRad', 'mpjpeLMm']) {
        const x = wbc.rows.find((row) => row.key === key)!;
        expect(x.sim.available && x.real.available, `${key}: ${JSON.stringify(x)}`).toBe(true);
      }
    } finally {
      await link.close();
      store?.close();
    }
  }, 240_000);
});
