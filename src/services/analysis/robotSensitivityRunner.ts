// Start-state sensitivity of a pair on the robot emulator: the
// same perturbations as the simulator's study (sensitivityRunner.ts), each one a real trial.
//
// For every perturbation δ the emulator's control channel puts the robot down at the calibrated
// start moved by δ (`place`: the human of a real lab cannot set a joint to a milliradian, so a
// real robot is refused), and the clip's first seconds run as a real-robot trial of the matched
// sim/real session (runMatchedPair): the safety gate and the armed interlock behind every start,
// the start-pose check, the recording. The prefix is a clip of its own, qualified in the
// simulator before the robot runs it, and everything is recorded in a campaign of its own
// (`recordDir`): the pair's own trials must never mix with trials from a perturbed start. A
// session holds at most MAX_TRIALS trials, so the runs go in batches, each a matched pair whose
// calibration is a fresh capture of the robot placed at the unperturbed start.
//
// The robot settles where its stand PD and gravity leave it, not exactly at δ: the perturbation
// counted is the one reached, measured by the trial's own start-pose capture against the pair's
// calibration (reachedPerturbation), and the Gram is fitted by least squares on those
// (leastSquaresGram), per scale, on that scale's axis runs. Held-out runs are measured from the
// mean of the unperturbed runs. Repeats of the unperturbed run give the robot's replay audit: an
// emulator with sensor noise is not bit-identical, and its ICC says how close.

import type { SensitivityDocument } from '../../api/contract';
import {
  directionAngleDeg,
  gramDiscrepancy,
  gramGeometry,
  heldOutDirections,
  heldOutWape,
  leastSquaresGram,
} from '../../domain/analysis/sensitivity';
import {
  axisPerturbation,
  perturbedInitialState,
  reachedPerturbation,
  responseVectors,
  timedFramesOnTimeline,
  type MeasuredStart,
  type SensitivityAxis,
} from '../../domain/analysis/sensitivityPlan';
import { MB_METRICS_1 } from '../../domain/metrics/metricContract';
import { commonTimelineFrameCount } from '../../domain/motion/resample';
import { ForwardKinematics } from '../../domain/robot/forwardKinematics';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { PlaceAction } from '../../domain/robotEmulator/emulatorControl';
import { icc } from '../../domain/stats/icc';
import type { EpisodeOutcome } from '../../domain/backend/backend';
import { CALIBRATION_CHECK, MAX_TRIALS } from '../../domain/trial/trialChecks';
import { buildSnapshot, type LoadedWorkload } from '../../domain/workload/snapshot';
import { readEpisodeFile } from '../episode/episodeReader';
import { runQualification } from '../qualification/runQualification';
import { EmulatorControlError, sendEmulatorControl } from '../robotEmulator/emulatorControlClient';
import type { EmbeddedSimulator } from '../sim/embeddedSimulator';
import { openCampaign, type CampaignStore } from '../trace';
import { listAdmittedPairs } from '../trial/admittedPairs';
import type { InterlockFeed } from '../trial/interlockFeed';
import { runMatchedPair } from '../trial/matchedTrialRunner';
import { captureRobotCalibration } from '../trial/robotCalibration';
import type { TrialRobot, TrialProgressEvent } from '../trial/trialTypes';
import {
  r6,
  runSensitivity,
  scaleDoc,
  sensitivityJson,
  sensitivitySetup,
  type GramAtScale,
  type SensitivityOptions,
  type SensitivityResult,
  type SensitivitySetup,
} from './sensitivityRunner';

export class RobotSensitivityRefused extends Error {
  override readonly name = 'RobotSensitivityRefused';
}

export interface RobotSensitivityOptions extends SensitivityOptions {
  /** The robot emulator's g1-bridge/1 endpoint: its control channel places the robot. */
  robotUrl: string;
  /**
   * Opens the robot link and the interlock; called once the simulator's runs and the prefix's
   * qualification are done, so that the heartbeats never share the main thread with a batch.
   */
  connect: () => Promise<{ link: TrialRobot; interlock: InterlockFeed }>;
  /** The campaign the robot's runs are recorded in (created; never the pair's own campaign). */
  recordDir: string;
  onTrialProgress?: (e: TrialProgressEvent) => void;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

/** The largest perturbation of a plan, against what the trial's start-pose check lets start. */
export function perturbationLimitProblems(axes: readonly SensitivityAxis[], scales: readonly number[]): string[] {
  const h = Math.max(...scales);
  const out: string[] = [];
  for (const a of axes) {
    const limit = a.kind === 'joint' ? CALIBRATION_CHECK.maxJointDiffRad : CALIBRATION_CHECK.maxAttitudeDiffRad;
    // A robot settles a little away from where it is put: keep a fifth of the limit in hand.
    if (h * a.sigma > 0.8 * limit)
      out.push(
        `${a.name}: ${h} σ is ${(h * a.sigma).toFixed(4)} rad, beyond 80 % of the ${limit} rad the start-pose check allows`,
      );
  }
  return out;
}

type RunKind =
  | { kind: 'base' }
  | { kind: 'axis'; scale: number; axis: number; sign: 1 | -1 }
  | { kind: 'held'; scale: number; k: number };

interface PlannedRun {
  what: RunKind;
  /** Asked-for perturbation, σ units per axis. */
  delta: Float64Array;
}

interface RobotRun extends PlannedRun {
  runId: string;
  outcome: EpisodeOutcome;
  /** The perturbation reached (σ units), from the trial's start-pose capture. */
  reached: Float64Array;
  body: Float64Array;
  joint: Float64Array;
  /** Recorded frames on the contract timeline (fewer than the prefix's: it ended early). */
  frames: number;
}

export interface RobotSensitivityResult {
  sim: SensitivityResult;
  robot: {
    url: string;
    robotUnit: string;
    recordDir: string;
    qualificationPairId: string;
    prefixClip: { id: string; name: string };
    runs: number;
    batches: number;
    outcomes: Record<string, number>;
    shortRuns: number;
    /** |reached − asked| per run, RMS over the axes, σ: median and largest. */
    reachError: { medianSigma: number; maxSigma: number };
    /**
     * Per axis and scale, how much of an asked-for offset the robot kept once it stood:
     * (reached(+h) − reached(−h)) / 2h along that axis (1: all of it; the rest went elsewhere).
     */
    kept: { axis: string; scale: number; share: number }[];
    responses: {
      name: 'body_position_mm' | 'joint_position_rad';
      scales: (GramAtScale & { residualShare: number; runs: number })[];
    }[];
    replay: { repeats: number; bitIdentical: boolean; icc: number | null; iccCi: [number, number] | null };
  };
  /** Simulator against robot, per response and scale: D_G and the angle between dominant directions. */
  simVsRobot: { response: string; scale: number; dG: number; angleDeg: number }[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function planRuns(d: number, scales: readonly number[], heldOut: number, repeats: number, seed: number): PlannedRun[] {
  const runs: PlannedRun[] = Array.from({ length: repeats }, () => ({
    what: { kind: 'base' } as const,
    delta: new Float64Array(d),
  }));
  const directions = heldOutDirections(d, heldOut, seed);
  for (const h of scales) {
    for (const sign of [1, -1] as const)
      for (let i = 0; i < d; i++)
        runs.push({ what: { kind: 'axis', scale: h, axis: i, sign }, delta: axisPerturbation(d, i, sign * h) });
    directions.forEach((u, k) => runs.push({ what: { kind: 'held', scale: h, k }, delta: u.map((v) => v * h) }));
  }
  return runs;
}

function placeAction(
  profile: RobotProfile,
  initial: { jointPosRad: readonly number[]; rootQuatWxyz: readonly number[] },
): PlaceAction {
  const [w, x, y, z] = initial.rootQuatWxyz;
  return {
    action: 'place',
    joint_pos_rad: Object.fromEntries(profile.joints.map((j, i) => [j.name, initial.jointPosRad[i]])),
    root_quat_wxyz: [w, x, y, z],
  };
}

export async function runRobotSensitivity(
  store: CampaignStore,
  sim: EmbeddedSimulator,
  profile: RobotProfile,
  opts: RobotSensitivityOptions,
  /** The pair's setup, made before the interlock and the robot link opened (it may regenerate a workload). */
  setup: SensitivitySetup = sensitivitySetup(store, profile, opts),
): Promise<RobotSensitivityResult> {
  const say = opts.progress ?? (() => {});
  const repeats = Math.max(2, opts.repeats ?? 3);
  const heldOut = opts.heldOut ?? 8;
  const seed = opts.seed ?? 1;
  const { pair, prefix, binding, cal, base, axes } = setup;
  const d = axes.length;
  const tooFar = perturbationLimitProblems(axes, opts.scales);
  if (tooFar.length > 0)
    throw new RobotSensitivityRefused(
      `the robot would refuse to start from these perturbations (docs/TRIALS.md, start-pose check): ${tooFar.join('; ')}`,
    );

  // 1. The simulator's study of the same axes, scales and held-out directions.
  const simResult = await runSensitivity(store, sim, profile, opts, setup);

  // 2. The robot must be an emulator that can be placed (checked by placing it at the start).
  const place = async (delta: ArrayLike<number>, why: string): Promise<void> => {
    const action = placeAction(profile, perturbedInitialState(base, axes, delta));
    let answer;
    try {
      answer = await sendEmulatorControl(opts.robotUrl, action);
    } catch (err) {
      if (err instanceof EmulatorControlError)
        throw new RobotSensitivityRefused(
          `the robot's start cannot be set: ${err.message}. A sensitivity run puts the robot down at each perturbed start through the robot emulator's control channel; no human places a real robot to a milliradian`,
        );
      throw err;
    }
    if (!answer.ok) throw new RobotSensitivityRefused(`placing the robot (${why}) was refused: ${answer.message}`);
  };
  await place(new Float64Array(d), 'the unperturbed start');

  // 3. The prefix qualified in the simulator, in the record campaign.
  const workload: LoadedWorkload = {
    snapshot: buildSnapshot('sensitivity-prefix', '1', 'folder', [prefix]),
    clips: [prefix],
  };
  say(`qualifying ${prefix.name} × ${pair.bindingName} in ${opts.recordDir}`);
  const q = await runQualification({
    campaignDir: opts.recordDir,
    workload,
    bindings: [binding],
    profile,
    simulator: sim,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const outcome = q.pairs[0];
  if (!outcome || outcome.admitted !== true)
    throw new RobotSensitivityRefused(
      `${prefix.name} × ${pair.bindingName} is not admitted for the robot: ${outcome?.reasons.join('; ') || 'not decided'}`,
    );
  const { link, interlock } = await opts.connect();
  const rec = await openCampaign(opts.recordDir);
  try {
    const qualPair = listAdmittedPairs(rec).find((p) => p.clipId === prefix.id && p.admitted);
    if (!qualPair) throw new Error(`the record campaign has no admitted pair of ${prefix.name}`);

    // 4. The runs, in batches of at most MAX_TRIALS trials.
    const plan = planRuns(d, opts.scales, heldOut, repeats, seed);
    const fk = new ForwardKinematics(profile);
    const K = commonTimelineFrameCount(MB_METRICS_1.rateHz, prefix);
    const baseMeasured: MeasuredStart = cal.record.measured;
    const done: RobotRun[] = [];
    let batches = 0;
    for (let from = 0; from < plan.length; from += MAX_TRIALS) {
      const batch = plan.slice(from, from + MAX_TRIALS);
      batches++;
      say(`robot batch ${batches}: runs ${from + 1}–${from + batch.length} of ${plan.length}`);
      await place(new Float64Array(d), 'the unperturbed start, for the batch calibration');
      const capture = await captureRobotCalibration({
        link,
        profile,
        clip: prefix,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      if (!capture.ok)
        throw new RobotSensitivityRefused(`the robot did not hold still at the unperturbed start: ${capture.message}`);
      const calibrationId = rec.putCalibration(capture.record).id;
      await place(batch[0].delta, `run ${from + 1}`);
      const r = await runMatchedPair({
        store: rec,
        link,
        interlock,
        sim,
        profile,
        pairId: qualPair.pairId,
        trials: batch.length,
        calibrationId,
        workload,
        operator: {
          // The operator confirmed every trial of the study when starting it (--yes).
          confirmTrial: async () => true,
          confirmReset: async (info) => {
            const run = batch[info.trialIndex];
            await place(run.delta, `run ${from + info.trialIndex + 1}`);
            return `sensitivity: robot placed at perturbation ${from + info.trialIndex + 1} of ${plan.length} by the emulator's control channel`;
          },
        },
        ...(opts.onTrialProgress ? { onProgress: opts.onTrialProgress } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.log ? { log: opts.log } : {}),
      });
      if (r.stoppedEarly)
        throw new RobotSensitivityRefused(
          `the robot's session stopped early in batch ${batches}: ${r.stoppedEarly} (what ran is recorded in ${opts.recordDir})`,
        );
      for (const t of r.real) {
        const run = batch[t.trialIndex];
        // A trial the gate or the operator ended is not the robot's response to its start.
        if (t.outcome !== 'completed' && t.outcome !== 'hard_failure')
          throw new RobotSensitivityRefused(
            `run ${from + t.trialIndex + 1} (${t.runId}) ended ${t.outcome}: ${t.reason}; its frames are not the robot's response to its start (what ran is recorded in ${opts.recordDir})`,
          );
        done.push(await robotRun(rec, run, t.runId, t.outcome, baseMeasured, axes, fk, K));
      }
    }
    return assemble(simResult, done, axes, opts, {
      url: opts.robotUrl,
      robotUnit: link.robotUnit,
      recordDir: opts.recordDir,
      qualificationPairId: qualPair.pairId,
      prefixClip: { id: prefix.id, name: prefix.name },
      batches,
      K,
    });
  } finally {
    rec.close();
  }
}

/** A finished trial read back: its reached start (fresh calibration) and its recorded frames. */
async function robotRun(
  rec: CampaignStore,
  run: PlannedRun,
  runId: string,
  outcome: EpisodeOutcome,
  base: MeasuredStart,
  axes: readonly SensitivityAxis[],
  fk: ForwardKinematics,
  K: number,
): Promise<RobotRun> {
  const ep = rec.getEpisode(runId);
  const freshId = (ep?.meta as { matchedPair?: { freshCalibrationId?: string } } | undefined)?.matchedPair
    ?.freshCalibrationId;
  const fresh = freshId ? rec.getCalibration(freshId) : null;
  if (!ep || !fresh) throw new Error(`trial ${runId}: its episode or its start-pose capture is not stored`);
  const file = await readEpisodeFile(rec.episodeFile(runId));
  const n = file.executed.length;
  if (n === 0) throw new Error(`trial ${runId}: no frame was recorded`);
  const J = file.executed[0].jointPosRad.length;
  const timeS = new Float64Array(n);
  const jointPosRad = new Float64Array(n * J);
  const rootQuatWxyz = new Float64Array(n * 4);
  file.executed.forEach((m, i) => {
    timeS[i] = m.timeS;
    jointPosRad.set(m.jointPosRad, i * J);
    // Motion capture's root attitude when the robot has it (what the simulator's runs use), else the IMU's.
    rootQuatWxyz.set(m.rootQuatWxyz ?? m.imu.quatWxyz, i * 4);
  });
  const exec = timedFramesOnTimeline({ timeS, jointPosRad, rootQuatWxyz }, MB_METRICS_1.rateHz, K);
  const v = responseVectors(exec, K, fk.bodyCount, fk.jointCount, (a, b, c, d, e, f, g, h) =>
    fk.compute(a, b, c, d, e, f, g, h),
  );
  const covered = Math.min(K, Math.floor(timeS[n - 1] * MB_METRICS_1.rateHz + 1e-9) + 1);
  return {
    ...run,
    runId,
    outcome,
    reached: reachedPerturbation(base, fresh.record.measured, axes),
    body: v.bodyMm,
    joint: v.jointRad,
    frames: covered,
  };
}

function assemble(
  sim: SensitivityResult,
  runs: RobotRun[],
  axes: readonly SensitivityAxis[],
  opts: RobotSensitivityOptions,
  meta: {
    url: string;
    robotUnit: string;
    recordDir: string;
    qualificationPairId: string;
    prefixClip: { id: string; name: string };
    batches: number;
    K: number;
  },
): RobotSensitivityResult {
  const names = axes.map((a) => a.name);
  const baseRuns = runs.filter((r) => r.what.kind === 'base');
  const d = axes.length;
  const mean = (xs: Float64Array[]) => {
    const out = new Float64Array(xs[0].length);
    for (const x of xs) for (let i = 0; i < x.length; i++) out[i] += x[i] / xs.length;
    return out;
  };
  const u0 = mean(baseRuns.map((r) => r.reached));
  const responses = (['body', 'joint'] as const).map((key) => {
    const y0 = mean(baseRuns.map((r) => r[key]));
    const scales = opts.scales.map((h) => {
      const onAxes = runs.filter((r) => r.what.kind === 'axis' && r.what.scale === h);
      const g = leastSquaresGram(
        onAxes.map((r) => r.reached),
        onAxes.map((r) => r[key]),
        h,
        names,
      );
      const held = runs.filter((r) => r.what.kind === 'held' && r.what.scale === h);
      const dirs: Float64Array[] = [];
      const measured: number[] = [];
      for (const r of held) {
        const du = r.reached.map((v, i) => v - u0[i]);
        const norm = Math.hypot(...du);
        let s = 0;
        for (let t = 0; t < y0.length; t++) s += (r[key][t] - y0[t]) ** 2;
        dirs.push(du.map((v) => v / norm));
        measured.push(Math.sqrt(s) / norm);
      }
      return {
        scale: h,
        gram: g.gram,
        trace: g.trace,
        geometry: gramGeometry(g.gram, names),
        heldOut: heldOutWape(g.gram, dirs, measured),
        residualShare: g.residualShare,
        runs: g.runs,
      };
    });
    return { name: key === 'body' ? ('body_position_mm' as const) : ('joint_position_rad' as const), scales };
  });
  // Replay audit of the robot: the unperturbed runs' joint responses, frame by frame.
  const table = Array.from(baseRuns[0].joint, (_, t) => baseRuns.map((r) => r.joint[t]));
  const rel = icc(table);
  const iccA1 = rel.available && rel.iccA1.available ? rel.iccA1 : null;
  const bitIdentical = baseRuns.every((r) => r.joint.every((v, t) => Object.is(v, baseRuns[0].joint[t])));
  const reachErrors = runs.map((r) => Math.sqrt(r.reached.reduce((s, v, i) => s + (v - r.delta[i]) ** 2, 0) / d));
  const kept = opts.scales.flatMap((h) =>
    axes.map((a, i) => {
      const at = (sign: 1 | -1) =>
        runs.find((r) => r.what.kind === 'axis' && r.what.scale === h && r.what.axis === i && r.what.sign === sign)!
          .reached[i];
      return { axis: a.name, scale: h, share: (at(1) - at(-1)) / (2 * h) };
    }),
  );
  const outcomes: Record<string, number> = {};
  for (const r of runs) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
  const simVsRobot = responses.flatMap((x) => {
    const s = sim.responses.find((y) => y.name === x.name)!;
    return x.scales.map((rs) => {
      const ss = s.scales.find((v) => v.scale === rs.scale)!;
      return {
        response: x.name,
        scale: rs.scale,
        dG: gramDiscrepancy(ss.gram, rs.gram),
        angleDeg: directionAngleDeg(ss.geometry.dominant, rs.geometry.dominant),
      };
    });
  });
  return {
    sim,
    robot: {
      url: meta.url,
      robotUnit: meta.robotUnit,
      recordDir: meta.recordDir,
      qualificationPairId: meta.qualificationPairId,
      prefixClip: meta.prefixClip,
      runs: runs.length,
      batches: meta.batches,
      outcomes,
      shortRuns: runs.filter((r) => r.frames < meta.K).length,
      reachError: { medianSigma: median(reachErrors), maxSigma: Math.max(...reachErrors) },
      kept,
      responses,
      replay: {
        repeats: baseRuns.length,
        bitIdentical,
        icc: iccA1 ? iccA1.estimate : null,
        iccCi: iccA1 && iccA1.lo !== null && iccA1.hi !== null ? [iccA1.lo, iccA1.hi] : null,
      },
    },
    simVsRobot,
  };
}

/** motionbench-sensitivity/1 with the robot's part (domain `simulation_and_robot`). */
export function robotSensitivityJson(r: RobotSensitivityResult): SensitivityDocument {
  const simDoc = sensitivityJson(r.sim);
  const rb = r.robot;
  return {
    ...simDoc,
    domain: 'simulation_and_robot',
    robot: {
      url: rb.url,
      robot_unit: rb.robotUnit,
      record_campaign: rb.recordDir,
      qualification_pair_id: rb.qualificationPairId,
      prefix_clip: rb.prefixClip,
      runs: rb.runs,
      batches: rb.batches,
      outcomes: rb.outcomes,
      short_runs: rb.shortRuns,
      reach_error_sigma: { median: r6(rb.reachError.medianSigma), max: r6(rb.reachError.maxSigma) },
      kept: rb.kept.map((k) => ({ axis: k.axis, scale_sigma: k.scale, share: r6(k.share) })),
      responses: rb.responses.map((x) => ({
        response: x.name,
        scales: x.scales.map((s) => ({ ...scaleDoc(s), runs: s.runs, residual_share: r6(s.residualShare) })),
      })),
      replay: {
        repeats: rb.replay.repeats,
        bit_identical: rb.replay.bitIdentical,
        icc: rb.replay.icc === null ? null : r6(rb.replay.icc),
        icc_ci: rb.replay.iccCi ? [r6(rb.replay.iccCi[0]), r6(rb.replay.iccCi[1])] : null,
      },
    },
    sim_vs_robot: r.simVsRobot.map((c) => ({
      response: c.response,
      scale_sigma: c.scale,
      d_g: r6(c.dG),
      angle_deg: r6(c.angleDeg),
    })),
  };
}

export function robotSensitivityText(r: RobotSensitivityResult, simText: string): string {
  const rb = r.robot;
  const out = [simText, `## The robot (${rb.robotUnit}, ${rb.url})`, ''];
  out.push(
    `${rb.runs} real trials of ${rb.prefixClip.name} in ${rb.batches} session(s), recorded in ${rb.recordDir} (qualification pair ${rb.qualificationPairId}); outcomes ${Object.entries(
      rb.outcomes,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}${rb.shortRuns ? `; ${rb.shortRuns} ended before the prefix's end (last frame held)` : ''}.`,
    `Reached vs asked-for perturbation (RMS over the axes): median ${rb.reachError.medianSigma.toFixed(2)} σ, largest ${rb.reachError.maxSigma.toFixed(2)} σ; the Grams are fitted by least squares on the reached ones.`,
    `Kept of the asked-for offset once standing: ${rb.kept.map((k) => `${k.axis} ${(100 * k.share).toFixed(0)} %${r.robot.kept.length > rb.kept.filter((x) => x.scale === k.scale).length ? ` at ${k.scale} σ` : ''}`).join(', ')}.`,
    `Replay audit: ${rb.replay.repeats} unperturbed runs ${rb.replay.bitIdentical ? 'bit-identical' : 'not bit-identical (sensor noise)'}; ICC(A,1) ${rb.replay.icc === null ? '—' : rb.replay.icc.toFixed(3)}${rb.replay.iccCi ? ` [${rb.replay.iccCi[0].toFixed(3)}, ${rb.replay.iccCi[1].toFixed(3)}]` : ''}.`,
    '',
  );
  for (const x of rb.responses) {
    out.push(`### Robot Gram of ${x.name}`, '');
    out.push(
      '| scale (σ) | runs | 1 − R² | trace | condition | dominant direction (top 4) | held-out WAPE | isotropic WAPE |',
    );
    out.push('|---|---|---|---|---|---|---|---|');
    for (const s of x.scales)
      out.push(
        `| ${s.scale} | ${s.runs} | ${s.residualShare.toFixed(3)} | ${s.trace.toPrecision(3)} | ${s.geometry.condition === null ? '∞' : s.geometry.condition.toPrecision(3)} | ${s.geometry.dominantAxes
          .slice(0, 4)
          .map((a) => `${a.axis} ${a.weight.toFixed(2)}`)
          .join(', ')} | ${(100 * s.heldOut.wape).toFixed(1)} % | ${(100 * s.heldOut.wapeIsotropic).toFixed(1)} % |`,
      );
    out.push('');
  }
  out.push('### Simulator vs robot (the sim-to-real geometry gap)', '');
  for (const c of r.simVsRobot)
    out.push(
      `- ${c.response} at ${c.scale} σ: D_G ${c.dG.toFixed(3)}, dominant directions ${c.angleDeg.toFixed(1)}° apart`,
    );
  out.push('');
  return out.join('\n');
}
