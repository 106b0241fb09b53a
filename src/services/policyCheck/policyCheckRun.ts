import { MB_METRICS_1, ClipPairEvaluator } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import { InputError } from '../../domain/problems';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { initialStateFromClipFrame } from '../../domain/sim/initialState';
import { withStep, type ControlObservation } from '../../domain/wbc/controller';
import {
  firstActionReport,
  ObservationRangeRecorder,
  POLICY_CHECK_DEFAULT_SECONDS,
  POLICY_CHECK_MAX_SECONDS,
  policyCheckVerdict,
  type PolicyCheckReport,
  type ReadingRun,
} from '../../domain/wbc/policyCheck';
import {
  controlApplicability,
  quaternionAsXyzw,
  READING_CONTROLS,
  reverseHistoryEntries,
  specUnderJointOrderControl,
  type ControlApplicability,
  type ReadingName,
} from '../../domain/wbc/readingControls';
import type { TrackingPolicySpec } from '../../domain/wbc/trackingPolicy';
import { loadClipFile } from '../motion/loadClipFile';
import { RECORD_RATE_HZ, SimEngine } from '../sim/simEngine';
import { STOP_ABORTED, STOP_NONE, type FrameBatch } from '../sim/simProtocol';
import { checkClipMatchesBaked, planPolicy, type PolicyPlan } from '../wbc/policyRun';
import { createTrackingPolicyController, type TrackingControllerOptions } from '../wbc/trackingPolicyController';

// A policy check: the first `seconds` of the policy's own motion in the embedded MuJoCo engine
// (this thread; the same engine code and start as `motionbench sim`: the clip's first frame
// placed on the floor, the family's physics), once with the normal reading and once per
// applicable reading control (src/domain/wbc/readingControls.ts), then the report of
// src/domain/wbc/policyCheck.ts. The normal reading is the controller `sim` builds, unwrapped
// but for a recorder that reads its observation after each step; a control's perturbation is
// applied at the controller's boundary (the spec it is built from, the state handed to it, or the
// built observation before inference).

export interface PolicyCheckRequest {
  policyPath: string;
  clipFile?: string;
  fps?: number;
  /** A clip already read (the console's clip cache), instead of clipFile. */
  clip?: MotionClip;
  seconds?: number;
  profile: RobotProfile;
  /** A declared preset (policyPresets.ts) for an export that does not carry its own interface. */
  preset?: string | null;
  /** A policy already planned (its spec may be replaced to test the check itself). */
  plan?: PolicyPlan;
  /** An engine loaded on `profile`'s model (else one is loaded and disposed). */
  engine?: SimEngine;
}

/** The clip the policy runs on, as `motionbench sim` chooses it (given, baked, or configured). */
export function policyCheckClip(
  plan: PolicyPlan,
  profile: RobotProfile,
  clipFile?: string,
  fps?: number,
  given?: MotionClip,
): MotionClip {
  const limits = { jointLimitsRad: profile.joints.map((j) => j.rangeRad) };
  if (given) {
    if (plan.baked) checkClipMatchesBaked(given, plan.baked.clip, plan.loaded.modelFile);
    return given;
  }
  if (clipFile !== undefined) {
    const clip = loadClipFile(clipFile, { ...(fps !== undefined ? { fps } : {}), ...limits });
    if (plan.baked) checkClipMatchesBaked(clip, plan.baked.clip, plan.loaded.modelFile);
    return clip;
  }
  if (plan.baked) return plan.baked.clip;
  const m = plan.loaded.spec.configuredMotion;
  if (m) {
    if (fps !== undefined && fps !== m.fps)
      throw new InputError({ file: m.source }, `gives this policy's motion ${m.file} at ${m.fps} fps, not ${fps}`);
    return loadClipFile(m.file, { fps: m.fps, ...limits });
  }
  throw new InputError(
    { file: plan.loaded.policyPath },
    'this policy carries no reference motion and no configuration names one: give the motion to track (--clip <file>, or a clip opened in the console)',
  );
}

/** The clip's frames up to `seconds` (whole source frames; the resampled timeline is unchanged up to there). */
export function clipFirstSeconds(clip: MotionClip, seconds: number): MotionClip {
  const n = Math.min(clip.frameCount, Math.floor(seconds * clip.fps + 1e-9) + 1);
  if (n === clip.frameCount) return clip;
  const cut = (a: Float64Array, w: number) => a.slice(0, n * w);
  const J = clip.jointPosRad.length / clip.frameCount;
  return {
    ...clip,
    name: `${clip.name} (first ${seconds} s)`,
    frameCount: n,
    rootPosM: cut(clip.rootPosM, 3),
    rootQuatWxyz: cut(clip.rootQuatWxyz, 4),
    jointPosRad: cut(clip.jointPosRad, J),
    ...(clip.jointVelRadS ? { jointVelRadS: cut(clip.jointVelRadS, J) } : {}),
    ...(clip.bodyPosW
      ? { bodyPosW: { bodyCount: clip.bodyPosW.bodyCount, data: cut(clip.bodyPosW.data, 3 * clip.bodyPosW.bodyCount) } }
      : {}),
  };
}

/** The spec, controller options and state shuffle of one reading (the normal one: the spec as loaded, nothing else). */
export function readingSetup(
  reading: ReadingName,
  spec: TrackingPolicySpec,
): { spec: TrackingPolicySpec; options: TrackingControllerOptions; shuffleQuaternion: boolean } {
  switch (reading) {
    case 'normal':
      return { spec, options: {}, shuffleQuaternion: false };
    case 'joint_order_other':
    case 'joint_order_mirrored':
      return { spec: specUnderJointOrderControl(spec, reading), options: {}, shuffleQuaternion: false };
    case 'quaternion_xyzw':
      return { spec, options: {}, shuffleQuaternion: true };
    case 'history_reversed':
      return {
        spec,
        options: {
          rewriteObservation: (o, stage) =>
            reverseHistoryEntries(stage === 'encoder' ? spec.encoder!.observation : spec.observation, o),
        },
        shuffleQuaternion: false,
      };
  }
}

/** The measured state as a harness with the quaternion-order bug hands it over. */
function withShuffledQuaternion(obs: ControlObservation): ControlObservation {
  const st = obs.state;
  return {
    ...obs,
    state: {
      ...st,
      rootQuatWxyz: st.rootQuatWxyz ? quaternionAsXyzw(st.rootQuatWxyz, new Float64Array(4)) : null,
      imu: { ...st.imu, quatWxyz: quaternionAsXyzw(st.imu.quatWxyz, new Float64Array(4)) },
    },
  };
}

interface RunResult {
  run: ReadingRun;
  firstTargets: Float64Array | null;
}

/**
 * One reading's run: the engine runs the WHOLE clip as the policy's reference (a policy whose
 * observation depends on the clip's length, such as HumanoidVerse's motion phase k / (frames − 1),
 * must see the clip it was given) and is stopped after the window's last frame; the metrics are
 * those of the window (`window`, the clip's first seconds).
 */
function runReading(
  engine: SimEngine,
  plan: PolicyPlan,
  profile: RobotProfile,
  clip: MotionClip,
  window: MotionClip,
  reading: ReadingName,
  recorder: ObservationRangeRecorder | null,
): RunResult {
  const setup = readingSetup(reading, plan.loaded.spec);
  const inner = createTrackingPolicyController(plan.binding, profile, {
    loaded: setup.spec === plan.loaded.spec ? plan.loaded : { ...plan.loaded, spec: setup.spec },
    ...setup.options,
  });
  let firstTargets: Float64Array | null = null;
  const controller = withStep(inner, (obs, out) => {
    inner.step(setup.shuffleQuaternion ? withShuffledQuaternion(obs) : obs, out);
    if (firstTargets === null) firstTargets = Float64Array.from(out.jointTargetRad);
    recorder?.add(inner.observation);
  });
  const L = engine.layout;
  const J = engine.jointCount;
  const batches: FrameBatch[] = [];
  const t0 = performance.now();
  // Control steps up to the window's last recorded frame (the engine records every M-th step at
  // RECORD_RATE_HZ and asks stopRequested once per control step, after recording).
  const M = Math.round(plan.binding.controlRateHz / RECORD_RATE_HZ);
  const windowFrames = Math.floor(((window.frameCount - 1) / window.fps) * RECORD_RATE_HZ + 1e-9) + 1;
  const lastStep = (windowFrames - 1) * M;
  const cutShort = window.frameCount < clip.frameCount;
  let step = -1;
  let stoppedAtWindow = false;
  let end;
  try {
    end = engine.run(
      { clip, binding: plan.binding, controller, seed: 0, initial: initialStateFromClipFrame(clip) },
      {
        emit: (b) => batches.push(b),
        stopRequested: () => {
          step++;
          if (!cutShort || step < lastStep) return STOP_NONE;
          stoppedAtWindow = true;
          return STOP_ABORTED;
        },
      },
    );
  } finally {
    inner.dispose();
  }
  const wallSeconds = (performance.now() - t0) / 1000;
  const n = end.frames;
  const rootPosM = new Float64Array(3 * n);
  const rootQuatWxyz = new Float64Array(4 * n);
  const jointPosRad = new Float64Array(J * n);
  for (const b of batches)
    for (let i = 0; i < b.count; i++) {
      const k = b.firstFrame + i;
      if (k >= n) continue;
      const o = i * L.width;
      rootPosM.set(b.data.subarray(o + L.rootPos, o + L.rootPos + 3), 3 * k);
      rootQuatWxyz.set(b.data.subarray(o + L.rootQuat, o + L.rootQuat + 4), 4 * k);
      jointPosRad.set(b.data.subarray(o + L.q, o + L.q + J), J * k);
    }
  const metrics =
    n >= 2
      ? new ClipPairEvaluator(MB_METRICS_1, profile).evaluate(window, {
          fps: MB_METRICS_1.rateHz,
          frameCount: n,
          rootPosM,
          rootQuatWxyz,
          jointPosRad,
        }).metrics
      : null;
  const f = end.failure;
  return {
    run: {
      reading,
      // The window's end is the run's planned end: judged there as the engine judges a clip's end.
      outcome:
        stoppedAtWindow && end.outcome === 'aborted_by_operator' ? (f ? 'hard_failure' : 'completed') : end.outcome,
      failure: f ? { timeS: f.timeS, condition: f.condition, body: f.body } : null,
      progressSoft: metrics?.progressSoft.available ? metrics.progressSoft.value : null,
      mpjpeLMm: metrics?.mpjpeLMm.available ? metrics.mpjpeLMm.value : null,
      simSeconds: end.simSeconds,
      wallSeconds,
    },
    firstTargets,
  };
}

/** Runs the check (synchronously on this thread once the engine is loaded). */
export async function runPolicyCheck(req: PolicyCheckRequest): Promise<PolicyCheckReport> {
  const t0 = performance.now();
  const seconds = req.seconds ?? POLICY_CHECK_DEFAULT_SECONDS;
  if (!(Number.isFinite(seconds) && seconds > 0 && seconds <= POLICY_CHECK_MAX_SECONDS))
    throw new RangeError(`seconds: expected a number in (0, ${POLICY_CHECK_MAX_SECONDS}], got ${seconds}`);
  const profile = req.profile;
  const plan = req.plan ?? planPolicy(req.policyPath, profile, req.preset ?? null);
  const full = policyCheckClip(plan, profile, req.clipFile, req.fps, req.clip);
  if (full.frameCount < 2) throw new InputError({ file: full.provenance.file }, 'the clip has fewer than 2 frames');
  const clip = clipFirstSeconds(full, seconds);
  const run = (reading: ReadingName, rec: ObservationRangeRecorder | null) =>
    runReading(engine, plan, profile, full, clip, reading, rec);
  const engine = req.engine ?? (await SimEngine.load(profile.sourceFile));
  try {
    const spec = plan.loaded.spec;
    const applicability: ControlApplicability[] = controlApplicability(spec);
    const recorder = new ObservationRangeRecorder(spec.observation, {
      jointOrder: spec.jointOrder,
      jointRangesRad: profile.joints.map((j) => j.rangeRad),
      defaultJointPosRad: spec.defaultJointPosRad,
      actionClip: spec.action.clip,
    });
    const normal = run('normal', recorder);
    const runs: ReadingRun[] = [normal.run];
    for (const a of applicability) if (a.applicable) runs.push(run(a.name, null).run);
    const J = profile.joints.length;
    return {
      policy: {
        path: plan.loaded.policyPath,
        family: spec.family,
        adapter: spec.adapter,
        jointOrder: spec.jointOrder.label,
        controlRateHz: spec.controlRateHz,
      },
      clip: {
        file: full.provenance.file,
        name: full.name,
        fps: full.fps,
        frames: full.frameCount,
        seconds: (full.frameCount - 1) / full.fps,
      },
      seconds: (clip.frameCount - 1) / clip.fps,
      firstAction: firstActionReport(
        normal.firstTargets ?? new Float64Array(J).fill(NaN),
        clip.jointPosRad.subarray(0, J),
        profile.joints.map((j) => j.name),
      ),
      terms: recorder.ranges(),
      controls: READING_CONTROLS.map((c) => {
        const a = applicability.find((x) => x.name === c.name)!;
        return { name: c.name, aspect: c.aspect, description: c.description, applicable: a.applicable, why: a.why };
      }),
      runs,
      verdict: policyCheckVerdict(runs, applicability, (clip.frameCount - 1) / clip.fps),
      wallSeconds: (performance.now() - t0) / 1000,
    };
  } finally {
    if (!req.engine) engine.dispose();
  }
}
