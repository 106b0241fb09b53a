import { FrameSeriesBuilder } from '../../../src/domain/metrics/frameSeries';
import { MB_METRICS_1 } from '../../../src/domain/metrics/metricContract';
import { metricLayoutFor, type MetricFrames, type MetricLayout } from '../../../src/domain/metrics/metricLayout';
import { bodyPositions } from '../../../src/domain/metrics/clipPairMetrics';
import { commonTimelineFrameCount, resampleFrames } from '../../../src/domain/motion/resample';
import type { MotionClip } from '../../../src/domain/motion/motionClip';
import type { ForwardKinematics } from '../../../src/domain/robot/forwardKinematics';
import { InputError } from '../../../src/domain/problems';
import type { RobotProfile } from '../../../src/domain/robot/robotProfile';
import { useClipStore } from '../playback/clipStore';
import { runTrajectory } from '../overlay/overlayEngine';
import { overlayStore } from '../overlay/overlayStore';
import { useRunStore } from '../overlay/runStore';
import type { RunTrajectory } from '../overlay/runTrajectory';
import { useRobotStore } from '../robot/robotStore';

// The per-frame mb-metrics/1 series of an overlaid run, for its plots over time. The reference
// clip is resampled to the contract rate once per clip (with FK body positions, as the metrics
// do); the run's trajectory is sampled at the same t_k = k/r (RunTrajectory.sampleAt: linear in
// positions and joint angles, slerp in orientation — the contract's resampling), put through FK on
// the same RobotProfile, and pushed frame by frame into the domain's FrameSeriesBuilder. Nothing
// here re-derives a metric.
//
// Incremental: a live run's series grows with its trajectory (only frames whose t_k the
// trajectory has passed; the newest sample of a live run can still be replaced, so its frame
// waits); a trajectory replaced by a recorded episode (its generation changed) starts over.

export const PLOT_CONTRACT = MB_METRICS_1;

interface ReferenceTimeline {
  clip: MotionClip;
  profile: RobotProfile;
  K: number;
  frames: MetricFrames;
  /** The reference's root position per frame: where a run without a global root is placed (as drawn). */
  rootPosM: Float64Array;
}

interface RunSeriesEntry {
  trajectory: RunTrajectory;
  generation: number;
  builder: FrameSeriesBuilder;
}

let reference: ReferenceTimeline | null = null;
let layout: { profile: RobotProfile; layout: MetricLayout } | null = null;
const entries = new Map<string, RunSeriesEntry>();
const exec: MetricFrames = {
  rootQuatWxyz: new Float64Array(4),
  jointPosRad: new Float64Array(0),
  bodyPosM: new Float64Array(0),
};
const execRootPosM = new Float64Array(3);
let execQuatScratch = new Float64Array(0);

function referenceFor(clip: MotionClip, profile: RobotProfile, fk: ForwardKinematics): ReferenceTimeline {
  if (reference && reference.clip === clip && reference.profile === profile) return reference;
  const r = PLOT_CONTRACT.rateHz;
  const K = commonTimelineFrameCount(r, clip);
  const R = resampleFrames(clip, r, K);
  reference = {
    clip,
    profile,
    K,
    frames: { rootQuatWxyz: R.rootQuatWxyz, jointPosRad: R.jointPosRad, bodyPosM: bodyPositions(fk, R, K) },
    rootPosM: R.rootPosM,
  };
  entries.clear();
  return reference;
}

function layoutFor(profile: RobotProfile): MetricLayout {
  if (!layout || layout.profile !== profile) layout = { profile, layout: metricLayoutFor(PLOT_CONTRACT, profile) };
  return layout.layout;
}

export interface RunSeriesInput {
  runId: string;
  trajectory: RunTrajectory;
  /** No more samples will arrive (the newest one is final). */
  ended: boolean;
  clip: MotionClip;
  profile: RobotProfile;
  fk: ForwardKinematics;
}

/**
 * The run's series, extended to what its trajectory holds now. Throws InputError when the model
 * lacks a body the contract needs (a user's MJCF without the end-effectors).
 */
export function runSeries(input: RunSeriesInput): FrameSeriesBuilder {
  const { trajectory: traj, clip, profile, fk } = input;
  const ref = referenceFor(clip, profile, fk);
  const lay = layoutFor(profile);
  let e = entries.get(input.runId);
  // What the source provides is known from its first sample on (RunTrajectory.hasRoot…).
  const caps = {
    hasGlobalRootPosition: traj.hasRootPosition === true,
    hasGlobalRootHeading: traj.hasRootOrientation === true,
  };
  if (
    !e ||
    e.trajectory !== traj ||
    e.generation !== traj.generation ||
    e.builder.capabilities.hasGlobalRootPosition !== caps.hasGlobalRootPosition ||
    e.builder.capabilities.hasGlobalRootHeading !== caps.hasGlobalRootHeading
  ) {
    e = { trajectory: traj, generation: traj.generation, builder: new FrameSeriesBuilder(PLOT_CONTRACT, lay, caps) };
    entries.set(input.runId, e);
  }
  if (traj.count === 0) return e.builder;
  const r = PLOT_CONTRACT.rateHz;
  const last = traj.lastTimeS;
  // K = floor(r·min(D_R, D_E) + 1e-9) + 1, D_E the run's duration from the reference's frame 0.
  const K = Math.min(ref.K, Math.floor(r * last + 1e-9) + 1);
  const J = lay.jointCount;
  const B = lay.bodyCount;
  if (exec.jointPosRad.length !== J) exec.jointPosRad = new Float64Array(J);
  if (exec.bodyPosM.length !== 3 * B) {
    exec.bodyPosM = new Float64Array(3 * B);
    execQuatScratch = new Float64Array(4 * B);
  }
  const b = e.builder;
  for (let k = b.count; k < K; k++) {
    const t = k / r;
    if (!input.ended && t >= last) break; // the newest live sample may still be replaced
    traj.sampleAt(t, execRootPosM, exec.rootQuatWxyz, exec.jointPosRad);
    if (traj.hasRootPosition !== true) execRootPosM.set(ref.rootPosM.subarray(3 * k, 3 * k + 3));
    if (traj.hasRootOrientation !== true) exec.rootQuatWxyz.set(ref.frames.rootQuatWxyz.subarray(4 * k, 4 * k + 4));
    fk.compute(execRootPosM, exec.rootQuatWxyz, exec.jointPosRad, exec.bodyPosM, execQuatScratch);
    b.push(ref.frames, k, exec, 0);
  }
  return b;
}

/** Calls `changed` whenever a run's series may have changed: its trajectory (overlay) or its metadata (run list). */
export function subscribeRunData(changed: () => void): () => void {
  const offOverlay = overlayStore.subscribe(changed);
  const offRuns = useRunStore.subscribe(changed);
  return () => {
    offOverlay();
    offRuns();
  };
}

export interface CurrentRunSeries {
  series: FrameSeriesBuilder;
  /** Changes exactly when the series does (run, trajectory generation, frames, ended). */
  key: string;
}

/**
 * The series of overlaid run `runId` against the clip on display, extended to now; null when
 * there is no such run of that clip, no robot model, or a model the contract cannot be evaluated on. Series of runs no longer overlaid are
 * dropped on the way.
 */
export function currentRunSeries(runId: string): CurrentRunSeries | null {
  const { runs, clipId } = useRunStore.getState();
  for (const id of [...entries.keys()]) if (!runs.some((r) => r.id === id)) entries.delete(id);
  const meta = runs.find((r) => r.id === runId);
  const trajectory = runTrajectory(runId);
  const clip = useClipStore.getState().loaded?.clip;
  const { profile, fk } = useRobotStore.getState();
  if (!meta || !trajectory || !clip || clip.id !== clipId || !profile || !fk) return null;
  let series: FrameSeriesBuilder;
  try {
    series = runSeries({ runId, trajectory, ended: !meta.live, clip, profile, fk });
  } catch (err) {
    // A model the contract cannot be evaluated on (no end-effector bodies): RunPlots says why.
    if (err instanceof InputError) return null;
    throw err;
  }
  return { series, key: `${runId}:${trajectory.generation}:${series.count}:${meta.live}` };
}
