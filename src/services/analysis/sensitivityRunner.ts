// Start-state sensitivity of a pair in the embedded simulator: the pair's
// calibrated start moved along each axis (sensitivityPlan.ts) at each scale, ±, plus seeded
// held-out directions, each run over the clip's first seconds. Two responses, each a signed
// trajectory (so that a perturbation and its opposite move it in opposite directions, which the
// central-difference Gram needs): the root-relative body positions MPJPE-l compares, and the joint
// angles joint-position RMSE compares (responseVectors). A reading itself (an error norm) would not
// do: near a well-tracked start, MPJPE-l grows with |u| whatever its sign, an even function that
// central differences cannot see (measured: held-out WAPE 90 % on ub_wave_right). The
// unperturbed run is repeated: the repeats must be bit-identical (the replay audit), reported as
// ICC(A,1) = 1 over the frames, or as the first differing frame.

import type { SensitivityDocument, SensitivityScaleDoc } from '../../api/contract';
import type { InitialState } from '../../domain/backend/backend';
import {
  directionAngleDeg,
  finiteDifferenceGram,
  gramDiscrepancy,
  gramGeometry,
  heldOutDirections,
  heldOutWape,
  type GramGeometry,
  type HeldOutCheck,
} from '../../domain/analysis/sensitivity';
import {
  axisPerturbation,
  perturbedInitialState,
  responseMagnitude,
  responseVectors,
  sensitivityAxes,
  type SensitivityAxis,
} from '../../domain/analysis/sensitivityPlan';
import type { Matrix } from '../../domain/analysis/linearAlgebra';
import { MB_METRICS_1 } from '../../domain/metrics/metricContract';
import { computeClipId } from '../../domain/motion/clipCommon';
import type { MotionClip } from '../../domain/motion/motionClip';
import { commonTimelineFrameCount } from '../../domain/motion/resample';
import { ForwardKinematics } from '../../domain/robot/forwardKinematics';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { icc } from '../../domain/stats/icc';
import { bindingName } from '../../domain/wbc/bindingName';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { EmbeddedSimulator } from '../sim/embeddedSimulator';
import { runSimEpisode } from '../sim/runSimEpisode';
import type { CampaignStore } from '../trace';
import { latestCalibration } from './calibratedPairs';
import type { AdmittedPair } from '../trial/admittedPairs';
import { clipForPairId } from '../trial/pairClip';
import { initialStateOf } from '../trial/simBranch';

export const SENSITIVITY_FORMAT_ID = 'motionbench-sensitivity/1' as const;

export interface SensitivityOptions {
  pairId: string;
  scales: readonly number[];
  /** Seconds of the clip each run covers (default 2). */
  seconds?: number;
  /** Held-out directions per scale (default 8). */
  heldOut?: number;
  /** Repeats of the unperturbed run for the replay audit (default 3, at least 2). */
  repeats?: number;
  seed?: number;
  /** Only these axes (names as sensitivityAxes gives them), in this order; default every one. */
  axes?: readonly string[];
  progress?: (line: string) => void;
}

export interface GramAtScale {
  readonly scale: number;
  readonly gram: Matrix;
  readonly trace: number;
  readonly geometry: GramGeometry;
  readonly heldOut: HeldOutCheck;
}

export interface SensitivityResult {
  pair: { id: string; clipName: string; binding: string; bindingName: string };
  calibration: { id: string; capturedAt: string; robotUnit: string };
  seconds: number;
  frames: number;
  /** Runs that ended before the prefix's end (their last frame is held). */
  shortRuns: number;
  axes: SensitivityAxis[];
  seed: number;
  runs: number;
  /** Per response (per-frame MPJPE-l, per-frame joint RMSE): one Gram per scale. */
  responses: {
    name: 'body_position_mm' | 'joint_position_rad';
    unit: string;
    scales: GramAtScale[];
    /** Between consecutive scales: D_G and the angle between dominant directions. */
    acrossScales: { from: number; to: number; dG: number; angleDeg: number }[];
  }[];
  replay: { repeats: number; bitIdentical: boolean; firstDifference: string | null; icc: number | null };
}

/**
 * The clip's first `seconds` (whole frames): a clip of its own, with its content id and a name
 * that says what it is (the robot's runs qualify and record it as such, never as the whole clip).
 */
export function clipPrefix(clip: MotionClip, seconds: number): MotionClip {
  const n = Math.min(clip.frameCount, Math.max(2, Math.round(seconds * clip.fps) + 1));
  const J = clip.jointPosRad.length / clip.frameCount;
  // Stored reference body positions cover the whole clip; the prefix's come from FK.
  const { bodyPosW: _whole, ...rest } = clip;
  const rootPosM = clip.rootPosM.slice(0, 3 * n);
  const rootQuatWxyz = clip.rootQuatWxyz.slice(0, 4 * n);
  const jointPosRad = clip.jointPosRad.slice(0, J * n);
  return {
    ...rest,
    id: computeClipId(clip.fps, n, rootPosM, rootQuatWxyz, jointPosRad),
    name: `${clip.name} (first ${((n - 1) / clip.fps).toFixed(2)} s)`,
    frameCount: n,
    rootPosM,
    rootQuatWxyz,
    jointPosRad,
    ...(clip.jointVelRadS ? { jointVelRadS: clip.jointVelRadS.slice(0, J * n) } : {}),
  };
}

/** The axes a run perturbs: every leg, waist and root axis, or only the named ones (in that order). */
export function selectAxes(all: readonly SensitivityAxis[], names?: readonly string[]): SensitivityAxis[] {
  if (!names || names.length === 0) return [...all];
  return names.map((n) => {
    const a = all.find((x) => x.name === n);
    if (!a) throw new RangeError(`axis "${n}" is not perturbed; the axes are ${all.map((x) => x.name).join(', ')}`);
    return a;
  });
}

/** What a sensitivity run of a pair starts from: its clip, binding, latest calibration and axes. */
export interface SensitivitySetup {
  pair: AdmittedPair;
  clip: MotionClip;
  prefix: MotionClip;
  binding: WbcBinding;
  cal: ReturnType<typeof latestCalibration>;
  base: InitialState;
  axes: SensitivityAxis[];
}

export function sensitivitySetup(
  store: CampaignStore,
  profile: RobotProfile,
  opts: Pick<SensitivityOptions, 'pairId' | 'seconds' | 'axes'>,
): SensitivitySetup {
  const { pair, clip } = clipForPairId(store, opts.pairId);
  const parent = store.getParentTrace(pair.pairId)!;
  const binding: WbcBinding | null =
    store.getBinding(parent.identity.bindingId, parent.identity.bindingVersion)?.binding ?? null;
  if (!binding)
    throw new RangeError(`pair ${pair.pairId}: its binding ${pair.bindingKey} is not stored in the campaign`);
  const cal = latestCalibration(store, pair.pairId);
  const axes = selectAxes(
    sensitivityAxes(
      profile.joints.map((j) => j.name),
      cal.record.stillness,
    ),
    opts.axes,
  );
  return {
    pair,
    clip,
    prefix: clipPrefix(clip, opts.seconds ?? 2),
    binding,
    cal,
    base: initialStateOf(cal.record),
    axes,
  };
}

interface Response {
  body: Float64Array;
  joint: Float64Array;
  executed: Float64Array;
  /** Frames the run executed (fewer than the prefix: it ended early, e.g. fell). */
  frames: number;
}

export async function runSensitivity(
  store: CampaignStore,
  sim: EmbeddedSimulator,
  profile: RobotProfile,
  opts: SensitivityOptions,
  /** The pair's setup when the caller has it (loading a built-in workload regenerates it). */
  setup: SensitivitySetup = sensitivitySetup(store, profile, opts),
): Promise<SensitivityResult> {
  const say = opts.progress ?? (() => {});
  const heldOutCount = opts.heldOut ?? 8;
  const repeats = Math.max(2, opts.repeats ?? 3);
  const seed = opts.seed ?? 1;
  if (opts.scales.length === 0 || opts.scales.some((s) => !(s > 0)))
    throw new RangeError(`scales must be positive numbers, got ${opts.scales.join(',')}`);
  const { pair, clip, prefix, binding, cal, base, axes } = setup;
  const d = axes.length;
  const fk = new ForwardKinematics(profile);

  // Frames on the contract's timeline that the prefix covers (the rate runSimEpisode's executed trajectory is on).
  const K = commonTimelineFrameCount(MB_METRICS_1.rateHz, prefix);
  let runs = 0;
  let shortRuns = 0;
  const run = async (delta: ArrayLike<number>): Promise<Response> => {
    const r = await runSimEpisode(sim, {
      clip: prefix,
      binding,
      profile,
      initial: perturbedInitialState(base, axes, delta),
      seed: 0,
      keepFrames: false,
    });
    runs++;
    const v = responseVectors(r.executed, K, fk.bodyCount, fk.jointCount, (a, b, c, d, e, f, g, h) =>
      fk.compute(a, b, c, d, e, f, g, h),
    );
    if (r.executed.frameCount < K) shortRuns++;
    return { body: v.bodyMm, joint: v.jointRad, executed: r.executed.jointPosRad, frames: r.executed.frameCount };
  };
  // Runs go to the simulator's workers concurrently (runSimEpisode waits for a free one).
  const all = <T>(xs: T[], f: (x: T) => Promise<Response>) => Promise.all(xs.map(f));

  say(
    `pair ${pair.pairId}: ${clip.name} × ${bindingName(binding)}, calibration ${cal.id}; ${d} axes, scales ${opts.scales.join(', ')} σ`,
  );
  const baseRuns = await all(
    Array.from({ length: repeats }, () => new Float64Array(d)),
    run,
  );
  const y0 = baseRuns[0];
  let firstDifference: string | null = null;
  for (let k = 1; k < repeats && firstDifference === null; k++) {
    const a = y0.executed;
    const b = baseRuns[k].executed;
    const i = a.length !== b.length ? 0 : a.findIndex((v, t) => !Object.is(v, b[t]));
    if (a.length !== b.length || i >= 0)
      firstDifference = `repeat ${k + 1}: executed joint value ${i} differs (${a[i]} vs ${b[i]})`;
  }
  const replayTable = Array.from(y0.joint, (_, t) => baseRuns.map((r) => r.joint[t]));
  const rel = icc(replayTable);
  const replayIcc = rel.available && rel.iccA1.available ? rel.iccA1.estimate : null;

  const directions = heldOutDirections(d, heldOutCount, seed);
  const perScale = [] as { scale: number; plus: Response[]; minus: Response[]; held: Response[] }[];
  for (const h of opts.scales) {
    say(`scale ${h} σ: ${2 * d} axis runs and ${heldOutCount} held-out directions`);
    const plus = await all(
      axes.map((_, i) => axisPerturbation(d, i, h)),
      run,
    );
    const minus = await all(
      axes.map((_, i) => axisPerturbation(d, i, -h)),
      run,
    );
    const held = await all(
      directions.map((u) => u.map((v) => v * h)),
      run,
    );
    perScale.push({ scale: h, plus, minus, held });
  }

  const responses = (['body', 'joint'] as const).map((key) => {
    const scales: GramAtScale[] = perScale.map((s) => {
      const g = finiteDifferenceGram(
        s.plus.map((r) => r[key]),
        s.minus.map((r) => r[key]),
        s.scale,
      );
      const measured = s.held.map((r) => responseMagnitude(r[key], y0[key], s.scale));
      return {
        scale: s.scale,
        gram: g.gram,
        trace: g.trace,
        geometry: gramGeometry(
          g.gram,
          axes.map((a) => a.name),
        ),
        heldOut: heldOutWape(g.gram, directions, measured),
      };
    });
    const acrossScales = scales.slice(1).map((s, i) => ({
      from: scales[i].scale,
      to: s.scale,
      dG: gramDiscrepancy(scales[i].gram, s.gram),
      angleDeg: directionAngleDeg(scales[i].geometry.dominant, s.geometry.dominant),
    }));
    return key === 'body'
      ? {
          name: 'body_position_mm' as const,
          unit: 'RMS root-relative body displacement, mm per σ',
          scales,
          acrossScales,
        }
      : { name: 'joint_position_rad' as const, unit: 'RMS joint displacement, rad per σ', scales, acrossScales };
  });

  return {
    pair: { id: pair.pairId, clipName: clip.name, binding: pair.bindingKey, bindingName: bindingName(binding) },
    calibration: { id: cal.id, capturedAt: cal.record.capturedAt, robotUnit: cal.record.robotUnit },
    seconds: (prefix.frameCount - 1) / prefix.fps,
    frames: K,
    shortRuns,
    axes,
    seed,
    runs,
    responses,
    replay: { repeats, bitIdentical: firstDifference === null, firstDifference, icc: replayIcc },
  };
}

export const r6 = (v: number) => Number(v.toPrecision(6));

/** One Gram at one scale as motionbench-sensitivity/1 writes it (6 significant digits). */
export function scaleDoc(s: GramAtScale): SensitivityScaleDoc {
  return {
    scale_sigma: s.scale,
    trace: r6(s.trace),
    eigenvalues: [...s.geometry.eigenvalues].map(r6),
    condition_number: s.geometry.condition === null ? null : r6(s.geometry.condition),
    dominant_share: r6(s.geometry.dominantShare),
    dominant_direction: s.geometry.dominantAxes.map((a) => ({ axis: a.axis, weight: r6(a.weight) })),
    held_out: {
      directions: s.heldOut.directions,
      wape: r6(s.heldOut.wape),
      wape_isotropic: r6(s.heldOut.wapeIsotropic),
    },
    gram: Array.from({ length: s.gram.rows }, (_, i) =>
      [...s.gram.data.subarray(i * s.gram.cols, (i + 1) * s.gram.cols)].map(r6),
    ),
  };
}

export function sensitivityJson(r: SensitivityResult): SensitivityDocument {
  return {
    format: SENSITIVITY_FORMAT_ID,
    domain: 'simulation',
    pair: r.pair,
    calibration: r.calibration,
    seconds: r.seconds,
    frames: r.frames,
    short_runs: r.shortRuns,
    seed: r.seed,
    runs: r.runs,
    axes: r.axes.map((a) => ({ axis: a.name, sigma_rad: a.sigma, sigma_source: a.sigmaSource })),
    responses: r.responses.map((x) => ({
      response: x.name,
      unit: x.unit,
      scales: x.scales.map(scaleDoc),
      across_scales: x.acrossScales.map((a) => ({ from: a.from, to: a.to, d_g: r6(a.dG), angle_deg: r6(a.angleDeg) })),
    })),
    replay: {
      repeats: r.replay.repeats,
      bit_identical: r.replay.bitIdentical,
      first_difference: r.replay.firstDifference,
      icc: r.replay.icc,
    },
  };
}

export function sensitivityText(r: SensitivityResult): string {
  const out: string[] = [];
  out.push(`# Start-state sensitivity: ${r.pair.clipName} × ${r.pair.bindingName}`, '');
  out.push(
    `Simulation, calibration ${r.calibration.id} (${r.calibration.robotUnit}, ${r.calibration.capturedAt}); first ${r.seconds.toFixed(2)} s (${r.frames} frames); ${r.axes.length} axes (${r.axes.filter((a) => a.sigmaSource === 'floor').length} joint σ at the ${r.axes.find((a) => a.sigmaSource === 'floor')?.sigma ?? '—'} rad floor; roll/pitch σ ${r.axes.find((a) => a.kind !== 'joint')?.sigma ?? '—'} rad); ${r.runs} runs${r.shortRuns ? ` (${r.shortRuns} ended early; their last frame is held)` : ''}; held-out seed ${r.seed}.`,
    '',
  );
  out.push(
    `Replay audit: ${r.replay.repeats} repeats of the unperturbed run ${r.replay.bitIdentical ? 'bit-identical' : `differ (${r.replay.firstDifference})`}; ICC(A,1) ${r.replay.icc === null ? '—' : r.replay.icc.toFixed(3)}.`,
    '',
  );
  for (const x of r.responses) {
    out.push(`## Gram of ${x.name} (${x.unit})`, '');
    out.push(
      '| scale (σ) | trace | condition | dominant share | dominant direction (top 4) | held-out WAPE | isotropic WAPE |',
    );
    out.push('|---|---|---|---|---|---|---|');
    for (const s of x.scales) {
      const top = s.geometry.dominantAxes
        .slice(0, 4)
        .map((a) => `${a.axis} ${a.weight.toFixed(2)}`)
        .join(', ');
      out.push(
        `| ${s.scale} | ${s.trace.toPrecision(3)} | ${s.geometry.condition === null ? '∞' : s.geometry.condition.toPrecision(3)} | ${(100 * s.geometry.dominantShare).toFixed(1)} % | ${top} | ${(100 * s.heldOut.wape).toFixed(1)} % | ${(100 * s.heldOut.wapeIsotropic).toFixed(1)} % |`,
      );
    }
    out.push('');
    for (const a of x.acrossScales)
      out.push(
        `- ${a.from} σ → ${a.to} σ: D_G ${a.dG.toFixed(3)}, dominant directions ${a.angleDeg.toFixed(1)}° apart`,
      );
    out.push('');
  }
  return out.join('\n');
}
