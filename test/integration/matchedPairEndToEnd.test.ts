import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MB_METRICS_1 } from '../../src/domain/metrics';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import { readEpisodeFile } from '../../src/services/episode/episodeReader';
import { TRACK_WORLD_POSITION_BOUND_M } from '../../src/services/episode/trackPrecision';
import { buildGapSection } from '../../src/services/report/gapSection';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { openCampaign, type CampaignStore } from '../../src/services/trace';
import { listAdmittedPairs } from '../../src/services/trial';
import { openInterlockFeed, type InterlockFeed } from '../../src/services/trial/interlockFeed';
import { openTrialRobot } from '../../src/services/trial/openTrialRobot';
import { loadWorkload } from '../../src/services/workload';
import { CampaignTemplate } from '../helpers/campaignTemplate';
import { checkAfterClip } from '../helpers/afterClipEvidence';
import { messagesOf, treeError } from '../helpers/episodeReadBack';
import { runPairOnEmulator } from '../helpers/matchedPairOnRig';
import { makePtyPair, type TestPtyPair } from '../helpers/ptyPair';
import { qualifyWavePair, WAVE_CLIP } from '../helpers/qualifiedWavePair';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/robotEmulatorProcess';

// The matched pair end to end: robot emulator (a separate process, declared perturbations,
// motion capture on) + interlock emulator on a real socat PTY + the embedded simulator: qualify a clip, capture
// the pair calibration from the live robot, run a matched pair (1 sim + 3 real), and the report's
// Table 11 gaps point the way the emulator's perturbations push them (latency, lower PD gains and
// more joint friction track worse: positive joint-error and MPJPE-l gaps). That the sign is the
// perturbations' doing, not a bias of the pipeline, is shown where the emulator is tested: with
// every perturbation zero its physics equal the simulator's exactly
// (test/integration/robotEmulator.test.ts).
//
// Run with both named profiles (docs/ROBOT_EMULATOR.md §4 has the tables this
// prints; measured: g1-plausible jerk RMS −10.1 %, exaggerated +2,976 %): the default
// `g1-plausible` keeps jerk RMS near the simulator's, while `exaggerated` (1e-3 rad encoder noise,
// point-sampled at 50 Hz by the contract) makes it many times the simulator's.
//
// Slow on purpose (a whole-system run): per profile, a pair calibration, the simulation branch and
// three real trials of the 8.5 s clip at real time with a human reset between them, then every
// episode read back from its file with FK checked on every transform tree. The 8.5 s is under test
// (> 4,000 frames per trial at 500 Hz), so the clip is not shortened; the pair is qualified once and
// its campaign copied for each profile.

const profile = loadRobotProfile();
const CLIP = WAVE_CLIP;

let pty: TestPtyPair;
let sim: EmbeddedSimulator;
let root: string;
/** The clip's pair, qualified once (on first use) and copied for each profile's trials. */
let qualified: CampaignTemplate;
let pairsDecided = 0;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'mb-e2e-pair-'));
  pty = await makePtyPair();
  sim = new EmbeddedSimulator({ modelFile: profile.sourceFile, workers: 1 });
  await sim.ready();
  qualified = new CampaignTemplate(root, async (campaignDir) => {
    pairsDecided = (await qualifyWavePair(campaignDir, { simulator: sim })).summary.pairsDecided;
  });
}, 60_000);

afterAll(async () => {
  await sim?.close();
  await pty?.dispose();
  if (root) await rm(root, { recursive: true, force: true });
});

interface ProfileCase {
  profile: string;
  /** What jerk RMS does sim → real under this profile. */
  jerk: (gapPercent: number) => void;
}

const CASES: ProfileCase[] = [
  // Not noise: within ±50 % of the simulator (the earlier default was +2,933 %). Its sign — below
  // the simulator's, as Table 11's real robot — is checked where it is deterministic, on the same
  // clip without a wall clock (test/integration/robotEmulator.test.ts): here the simulator starts
  // from the calibration and each trial from a human reset, which moves jerk RMS by several per cent
  // (−10.1 % here against −2.7 % from the same standing start).
  { profile: 'g1-plausible', jerk: (g) => expect(Math.abs(g)).toBeLessThan(50) },
  // Encoder noise point-sampled at 50 Hz: σ·sqrt(20)·50³ ≈ 560 rad/s³ of jerk from noise alone.
  { profile: 'exaggerated', jerk: (g) => expect(g).toBeGreaterThan(1000) },
];

describe.each(CASES)('matched pair end to end (emulator --profile $profile + interlock + embedded simulator)', (c) => {
  let emu: EmulatorProcess;
  let interlock: InterlockFeed;
  let store: CampaignStore;

  beforeAll(async () => {
    emu = await startEmulatorProcess(['--interlock', pty.devicePath, '--mocap', '--seed', '7', '--profile', c.profile]);
    interlock = await openInterlockFeed({ path: pty.consolePath, log: () => {} });
  }, 60_000);

  afterAll(async () => {
    await interlock?.close().catch(() => {});
    await emu?.stop();
  });

  it('qualifies, calibrates, runs 1 sim + 3 real trials, and reports gaps with the perturbations’ sign', async () => {
    const workload = loadWorkload('core-v1');
    const dir = await qualified.copy();
    expect(pairsDecided).toBe(1);
    store = await openCampaign(dir);
    const pair = listAdmittedPairs(store).find((p) => p.clipName === CLIP)!;
    expect(pair.admitted).toBe(true);

    const link = await openTrialRobot(emu.url, { robotUnit: 'g1-emulated-001' });
    try {
      const rig = { store, link, interlock, sim, profile };
      const { r, events, resets } = await runPairOnEmulator(emu, rig, pair, { trials: 3, workload });
      expect(r.stoppedEarly).toBeNull();
      expect(r.sim.outcome).toBe('completed');
      // The perturbed robot may fall out of the tracking thresholds on a trial (a hard failure is an
      // outcome of the trial, not a trip); it must not trip, and the pair must be complete.
      expect(r.real).toHaveLength(3);
      console.log(
        `e2e real trials (${c.profile}): ${r.real.map((t) => `${t.outcome} (${t.frames} frames)`).join(', ')}`,
      );
      for (const t of r.real) expect(['completed', 'hard_failure'], JSON.stringify(t)).toContain(t.outcome);
      // One reset before each trial after the first (more when a start-pose check failed and the
      // operator was asked again), each a human_reset trace event with the operator's note.
      expect(resets.length).toBeGreaterThanOrEqual(2);
      // 500 Hz recording: an 8.5 s clip gives ~4,250 frames per trial.
      for (const t of r.real) expect(t.frames).toBeGreaterThan(4000);
      // Live readings came at the contract rate while the trials ran.
      expect(events.filter((e) => e.type === 'live').length).toBeGreaterThan(3 * 400);

      // The trace: one matched parent trace with its calibration, both branches, the human resets.
      const parent = store.getParentTrace(r.parentTraceId)!;
      expect(parent.identity.calibrationId).toBe(r.calibrationId);
      const cal = store.getCalibration(r.calibrationId)!.record;
      expect(cal.residuals.settledVsMeasured).not.toBeNull();
      expect(cal.residuals.measuredVsClipStart).not.toBeNull();
      expect(cal.measured.rootPosM).not.toBeNull(); // motion capture on
      expect(store.listEvents({ parentTraceId: r.parentTraceId, kind: 'human_reset' })).toHaveLength(resets.length);

      // Each trial's episode, read from the file alone: motionbench.RobotState with the
      // emulator's float32 lowstate stored exactly (no double copies), the same frames our reader
      // gives, and the executed tree equal to FK of its frame to the bound the 3D tracks are stored at.
      const fk = new ForwardKinematics(profile);
      const fkPos = new Float64Array(3 * profile.bodies.length);
      const fkQuat = new Float64Array(4 * profile.bodies.length);
      for (const t of r.real) {
        const file = store.episodeFile(t.runId);
        const executed = await messagesOf(file, '/executed/state');
        expect(new Set(executed.map((m) => m.schema))).toEqual(new Set(['motionbench.RobotState']));
        expect(executed.filter((m) => m.msg.exact !== null).length).toBe(0);
        const ours = await readEpisodeFile(file);
        expect(ours.metadata.episode).toMatchObject({ format: 'motionbench-episode/2', measured_precision: 'float32' });
        expect(executed.map((m) => m.msg.jointPosRad)).toEqual(ours.executed.map((m) => m.jointPosRad));
        const trees = await messagesOf(file, '/exec/transforms');
        expect(trees.length).toBeGreaterThan(t.frames / 11); // ≤ 50 Hz of a 500 Hz stream
        let worst = 0;
        for (const { msg, logTime } of trees) {
          // the executed frame at the tree's time (log times are the episode clock, in ns)
          const tS = Number(logTime - ours.startNs!) / 1e9;
          // (after the clip's end, the tree follows the robot's after-clip state)
          const f = [...ours.executed, ...ours.afterClip].find((m) => Math.abs(m.timeS - tS) < 1e-6)!;
          fk.compute(f.rootPosM!, f.rootQuatWxyz!, f.jointPosRad, fkPos, fkQuat);
          worst = Math.max(worst, treeError(msg, profile, 'exec', 'world', fkPos, fkQuat).posM);
        }
        // drawing needs no more (docs/EPISODE_FORMAT.md §3); the joint state above is exact
        expect(worst).toBeLessThan(TRACK_WORLD_POSITION_BOUND_M);
        expect((await messagesOf(file, '/ref/scene')).length).toBe(1);
        const after = await checkAfterClip(store, t);
        console.log(
          `e2e real trial ${t.trialIndex + 1} after the clip: ${after.verdict}, ${after.samples} samples over ${after.lastS.toFixed(2)} s, tilt at most ${after.maxTiltDeg.toFixed(1)}°`,
        );
        const bytes = store.getEpisode(t.runId)!.mcapBytes!;
        console.log(
          `e2e real episode (${c.profile}): ${executed.length} frames, ${bytes} B = ${(bytes / executed.length).toFixed(0)} B per 500 Hz frame, 3D tracks and reference included`,
        );
      }

      // Table 11: positive gaps on tracking error.
      const gap = buildGapSection(store, { contract: MB_METRICS_1.id });
      const wbc = gap.report.wbcs[0];
      const row = (key: string) => wbc.rows.find((x) => x.key === key)!;
      const jointRmse = row('jointPosRmseRad');
      const mpjpe = row('mpjpeLMm');
      console.log(
        `e2e gap table (${CLIP}, profile ${c.profile}): ` +
          wbc.rows
            .map(
              (x) =>
                `${x.key} sim ${x.sim.available ? x.sim.value.toPrecision(4) : 'n/a'} real ${x.real.available ? x.real.value.toPrecision(4) : 'n/a'} gap ${x.gapPercent.available ? x.gapPercent.value.toFixed(1) + ' %' : 'n/a'}`,
            )
            .join('; '),
      );
      for (const x of [jointRmse, mpjpe]) expect(x.gapPercent.available, `${x.key}: ${JSON.stringify(x)}`).toBe(true);
      expect(jointRmse.gapPercent.available && jointRmse.gapPercent.value).toBeGreaterThan(5);
      expect(mpjpe.gapPercent.available && mpjpe.gapPercent.value).toBeGreaterThan(0);
      const jerk = row('jointJerkRmsRadS3');
      expect(jerk.gapPercent.available, JSON.stringify(jerk)).toBe(true);
      if (jerk.gapPercent.available) c.jerk(jerk.gapPercent.value);
    } finally {
      await link.close();
      store?.close();
    }
  }, 240_000);
});
