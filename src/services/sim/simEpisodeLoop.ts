// One simulated episode, control step n = 0..N (N = (K − 1)·M control steps, K recorded frames
// at 50 Hz, M = control rate / 50, S = physics steps per control step):
//   mj_step1                 kinematics, collisions and position/velocity sensors of the state
//                            at t_n (the accelerometer reads the previous physics step's value)
//   read the state           into a preallocated StateFrame; record it when n is a 50 Hz frame
//                            (and push it to the streaming hard-failure detector)
//   controller.step          joint targets (+ optional PD gains) → ctrl (+ gainprm/biasprm)
//   root assist              (builtin binding) xfrc_applied on the pelvis, re-evaluated before
//                            every physics step with the reference pose interpolated at that step
//   mj_step2                 completes the first physics step; contacts and their forces of the
//                            recorded frame are read here
//   mj_step × (S − 1)        the rest of the control interval
// Time is k/rate (not accumulated) and nothing reads the wall clock.

import type { InitialState } from '../../domain/backend/backend';
import { createStateFrame, type StateFrame } from '../../domain/robot/stateFrame';
import { MB_METRICS_1, StreamingPoseMetrics, type HardFailure } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import { resampleClip } from '../../domain/motion/resample';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { initialStateFromClipFrame } from '../../domain/sim/initialState';
import type { PhysicsProfile } from '../../domain/robot/physicsProfile';
import { liftedRootPositions, referenceLiftOf } from '../../domain/sim/referencePlacement';
import { RootAssistController } from '../../domain/sim/rootAssist';
import {
  createControlCommand,
  type ControlCommand,
  type ControlObservation,
  type ControlReference,
  type Controller,
} from '../../domain/wbc/controller';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { LoadedMujocoModel } from '../mujoco/mujocoRuntime';
import { FrameBatcher } from './frameBatcher';
import type { SimData } from './simData';
import type { SimGeometry } from './simGeometry';
import { NBIAS, NGAIN, type SimModelMaps } from './simModelMaps';
import {
  STOP_NONE,
  STOP_OUTCOMES,
  type FrameBatch,
  type FrameLayout,
  type ResolvedInitialState,
  type WorkerEpisodeEnd,
} from './simProtocol';

/** The recording rate, Hz: the metric contract's common-timeline rate. */
export const RECORD_RATE_HZ = MB_METRICS_1.rateHz;

export interface EngineSink {
  /** Receives a batch of recorded frames; the buffers are handed over (the engine keeps none). */
  emit(batch: FrameBatch): void;
  /** A STOP_* code, checked at every control step (0 = go on). */
  stopRequested(): number;
  /** Called after every recorded frame with its index (fault injection, progress). */
  onFrame?(frame: number): void;
}

export interface EngineRunRequest {
  clip: Pick<MotionClip, 'fps' | 'frameCount' | 'rootPosM' | 'rootQuatWxyz' | 'jointPosRad'> & Partial<MotionClip>;
  binding: WbcBinding;
  controller: Controller;
  seed: number;
  initial: InitialState;
  framesPerBatch?: number;
  initialJointNoiseRad?: number;
}

/** What an episode needs of its engine. */
export interface EpisodeEngine {
  readonly mj: LoadedMujocoModel;
  readonly sim: SimData;
  readonly geometry: SimGeometry;
  readonly maps: SimModelMaps;
  readonly profile: RobotProfile;
  readonly layout: FrameLayout;
  readonly jointCount: number;
  readonly defaultJointPosRad: Float64Array;
  applyInitialState(initial: InitialState, seed?: number, noiseRad?: number): ResolvedInitialState;
}

type Pose = Parameters<StreamingPoseMetrics['pushPose']>[0];
type EpisodeEnd = Omit<WorkerEpisodeEnd, 'frames' | 'plannedFrames' | 'simSeconds' | 'failure' | 'referenceLiftM'>;

/** The rates and resampled references of an episode: M control steps per recorded frame, S physics steps per control step. */
interface EpisodePlan {
  controlRate: number;
  M: number;
  S: number;
  /** Recorded frames (K) and control steps (N). */
  K: number;
  N: number;
  clip: MotionClip;
  ref50: MotionClip;
  refCtl: MotionClip;
  reference: ControlReference;
  lastCtl: number;
}

/** The episode's plan; a binding whose control period is not whole recording and physics periods is a RangeError. */
function planEpisode(request: EngineRunRequest, dt: number, physics: PhysicsProfile | null): EpisodePlan {
  const { binding } = request;
  const controlRate = binding.controlRateHz;
  const M = Math.round(controlRate / RECORD_RATE_HZ);
  if (!(M >= 1 && Math.abs(M * RECORD_RATE_HZ - controlRate) < 1e-9)) {
    throw new RangeError(
      `binding ${binding.id}@${binding.version}: control rate ${controlRate} Hz is not a multiple of the ${RECORD_RATE_HZ} Hz recording rate`,
    );
  }
  const S = Math.round(1 / (controlRate * dt));
  if (!(S >= 1 && Math.abs(S * controlRate * dt - 1) < 1e-9)) {
    throw new RangeError(
      `binding ${binding.id}@${binding.version}: control period 1/${controlRate} s is not a whole number of ${dt} s physics steps`,
    );
  }
  if (physics && S !== physics.decimation) {
    throw new RangeError(
      `binding ${binding.id}@${binding.version}: ${S} physics steps per control step, its physics profile ${physics.id} says ${physics.decimation}`,
    );
  }
  const clip = {
    name: 'clip',
    id: 'clip',
    provenance: { file: '', format: 'motionbench-json', fileSha256: '', fpsSource: 'file' },
    warnings: [],
    ...request.clip,
  } as MotionClip;
  const ref50 = resampleClip(clip, RECORD_RATE_HZ);
  const refCtl = controlRate === RECORD_RATE_HZ ? ref50 : resampleClip(clip, controlRate);
  const K = ref50.frameCount;
  const reference: ControlReference = {
    rateHz: controlRate,
    frameCount: refCtl.frameCount,
    rootPosM: refCtl.rootPosM,
    rootQuatWxyz: refCtl.rootQuatWxyz,
    jointPosRad: refCtl.jointPosRad,
  };
  return { controlRate, M, S, K, N: (K - 1) * M, clip, ref50, refCtl, reference, lastCtl: refCtl.frameCount - 1 };
}

/**
 * Runs one episode synchronously from `request.initial` to the end of the clip (or a stop) on the
 * engine's current physics, handing recorded frames to the sink in batches.
 */
export function runEpisodeLoop(
  engine: EpisodeEngine,
  request: EngineRunRequest,
  sink: EngineSink,
  physics: PhysicsProfile | null,
): WorkerEpisodeEnd {
  const plan = planEpisode(request, engine.mj.model.opt.timestep, physics);
  // The reference as placed for this run (src/domain/sim/referencePlacement.ts): the floor solve
  // of its own frame 0, before (and independent of) the robot's start, which is set from scratch
  // next. The hard-failure test compares with it; the controller reads the clip unplaced.
  const referenceLiftM = referenceLiftOf(
    engine.applyInitialState(initialStateFromClipFrame(plan.clip, { withJointVelocities: false })).floorShiftM,
  );
  engine.applyInitialState(request.initial, request.seed, request.initialJointNoiseRad ?? 0);
  request.controller.reset();
  return new EpisodeRun(engine, request, sink, plan, referenceLiftM).run();
}

/** The state of one episode between control steps. */
class EpisodeRun {
  private readonly sf: StateFrame = createStateFrame(true);
  private readonly rootLinVel = new Float64Array(3);
  private readonly rootAngVel = new Float64Array(3);
  private readonly cmd: ControlCommand;
  private readonly obs: ControlObservation;
  private readonly assist: RootAssistController | null;
  private readonly wrench = new Float64Array(6);
  private readonly metrics: StreamingPoseMetrics;
  private readonly execPose: Pose;
  private readonly refPose: Pose;
  private readonly batcher: FrameBatcher;
  private readonly rootXfrc: number;
  private recorded = 0;

  constructor(
    private readonly engine: EpisodeEngine,
    private readonly request: EngineRunRequest,
    private readonly sink: EngineSink,
    private readonly plan: EpisodePlan,
    private readonly referenceLiftM: number,
  ) {
    const { binding } = request;
    const { sf, rootLinVel } = this;
    this.cmd = createControlCommand(engine.jointCount);
    this.obs = {
      step: 0,
      timeS: 0,
      state: sf,
      reference: plan.reference,
      referenceFrame: 0,
      defaultJointPosRad: engine.defaultJointPosRad,
      rootLinVelMps: rootLinVel,
    };
    this.assist =
      binding.kind === 'builtin' && binding.rootAssist && binding.rootAssist.kpNPerM > 0
        ? new RootAssistController(binding.rootAssist)
        : null;
    this.metrics = new StreamingPoseMetrics(MB_METRICS_1, engine.profile, undefined, { expectedFrames: plan.K });
    this.execPose = { rootPosM: sf.rootPosM!, rootQuatWxyz: sf.rootQuatWxyz!, jointPosRad: sf.jointPosRad };
    const { ref50 } = plan;
    this.refPose = {
      rootPosM: referenceLiftM === 0 ? ref50.rootPosM : liftedRootPositions(ref50.rootPosM, referenceLiftM),
      rootQuatWxyz: ref50.rootQuatWxyz,
      jointPosRad: ref50.jointPosRad,
    };
    const perBatch = Math.max(1, Math.floor(request.framesPerBatch ?? 10));
    this.batcher = new FrameBatcher(perBatch, engine.layout.width);
    this.rootXfrc = 6 * engine.maps.rootBody;
  }

  run(): WorkerEpisodeEnd {
    const { mujoco, model } = this.engine.mj;
    const { sim } = this.engine;
    const { sf, rootLinVel, rootAngVel, assist, wrench, rootXfrc, batcher, sink } = this;
    const { N, M, S, controlRate, lastCtl } = this.plan;
    const dt = model.opt.timestep;
    const data = sim.data;
    let end: EpisodeEnd | null = null;

    for (let n = 0; n <= N; n++) {
      sim.checkViews();
      const v = sim.views;
      mujoco.mj_step1(model, data);
      const expectedTime = n * S * dt;
      if (!(Math.abs(data.time - expectedTime) <= 1e-9 * Math.max(1, expectedTime))) {
        end = {
          outcome: 'infrastructure_error',
          reason: `the simulation became unstable at t = ${(n / controlRate).toFixed(3)} s (MuJoCo reset its state)`,
        };
        break;
      }
      sim.readState(sf, rootLinVel, rootAngVel);
      const record = n % M === 0;
      const k = n / M;
      const tS = n / controlRate;
      sf.timeS = tS;
      sf.tick = n;
      sf.referenceFrame = Math.min(n, lastCtl);
      if (!isFiniteState(sf, rootLinVel, rootAngVel)) {
        end = {
          outcome: 'infrastructure_error',
          reason: `the simulation produced a non-finite state at t = ${tS.toFixed(3)} s`,
        };
        break;
      }
      // Command (not after the last frame).
      if (n < N) {
        end = this.command(n, tS);
        if (end) break;
      }
      if (record) this.record(n, k);
      const stop = sink.stopRequested();
      if (n === N || stop !== STOP_NONE) {
        if (record) {
          mujoco.mj_forward(model, data);
          this.engine.geometry.readContacts(data, k, batcher.contacts);
        }
        if (stop !== STOP_NONE) end = { outcome: STOP_OUTCOMES[stop] ?? 'aborted_by_operator', reason: 'stopped' };
        if (record) {
          if (batcher.full) batcher.flush(sink);
          sink.onFrame?.(k);
        }
        break;
      }
      // Physics for this control interval.
      mujoco.mj_step2(model, data);
      if (record) {
        this.engine.geometry.readContacts(data, k, batcher.contacts);
        if (batcher.full) batcher.flush(sink);
        sink.onFrame?.(k);
      }
      for (let s = 1; s < S; s++) {
        if (assist) {
          assist.compute(s / S, v.qpos, v.qvel, wrench, 0);
          for (let c = 0; c < 6; c++) v.xfrc[rootXfrc + c] = wrench[c];
        }
        mujoco.mj_step(model, data);
      }
    }
    batcher.flush(sink);
    return this.end(end);
  }

  /** The controller's command for control step n applied to the servos (and the root assist); an end when it fails. */
  private command(n: number, tS: number): EpisodeEnd | null {
    const { sim, maps, profile, jointCount: J } = this.engine;
    const { obs, cmd, assist, wrench } = this;
    const { refCtl, lastCtl, controlRate } = this.plan;
    const v = sim.views;
    obs.step = n;
    obs.timeS = tS;
    obs.referenceFrame = Math.min(n, this.plan.lastCtl);
    try {
      this.request.controller.step(obs, cmd);
    } catch (err) {
      // A controller that cannot produce a command (a policy's non-finite action) ends the
      // episode as an infrastructure error; the simulator itself is sound.
      return {
        outcome: 'infrastructure_error',
        reason: `the controller failed at t = ${tS.toFixed(3)} s: ${(err as Error)?.message ?? String(err)}`,
      };
    }
    const tgt = cmd.jointTargetRad;
    let bad = -1;
    for (let j = 0; j < J; j++) if (!Number.isFinite(tgt[j])) bad = j;
    if (bad >= 0) {
      return {
        outcome: 'infrastructure_error',
        reason: `the controller produced a non-finite target for ${profile.joints[bad].name} at t = ${tS.toFixed(3)} s`,
      };
    }
    sim.applyGains(cmd.kp, cmd.kd);
    for (let j = 0; j < J; j++) v.ctrl[maps.actOfJoint[j]] = tgt[j];
    if (assist) {
      assist.setSegment(
        refCtl.rootPosM,
        refCtl.rootQuatWxyz,
        Math.min(n, lastCtl),
        Math.min(n + 1, lastCtl),
        controlRate,
      );
      assist.compute(0, v.qpos, v.qvel, wrench, 0);
      for (let c = 0; c < 6; c++) v.xfrc[this.rootXfrc + c] = wrench[c];
    }
    return null;
  }

  /** Recorded frame k (control step n): hard-failure detection and live metrics on the 50 Hz timeline, and its batch row. */
  private record(n: number, k: number): void {
    const { sim, maps, layout: L, jointCount: J } = this.engine;
    const { sf, rootLinVel, rootAngVel, cmd, assist, wrench, metrics } = this;
    const { N } = this.plan;
    const v = sim.views;
    metrics.pushPose(this.refPose, k, this.execPose, 0);
    const { batch, offset: o } = this.batcher.nextRow(k);
    batch[o + L.time] = k / RECORD_RATE_HZ + 0;
    for (let c = 0; c < 3; c++) {
      batch[o + L.rootPos + c] = sf.rootPosM![c] + 0;
      batch[o + L.rootLinVel + c] = rootLinVel[c] + 0;
      batch[o + L.rootAngVel + c] = rootAngVel[c] + 0;
      batch[o + L.gyro + c] = sf.imu.gyroRadS[c];
      batch[o + L.accel + c] = sf.imu.accelMS2[c];
    }
    for (let c = 0; c < 4; c++) {
      batch[o + L.rootQuat + c] = sf.rootQuatWxyz![c] + 0;
      batch[o + L.imuQuat + c] = sf.imu.quatWxyz[c];
    }
    const gp = v.gainprm;
    const bp = v.biasprm;
    for (let j = 0; j < J; j++) {
      batch[o + L.q + j] = sf.jointPosRad[j] + 0;
      batch[o + L.dq + j] = sf.jointVelRadS[j] + 0;
      batch[o + L.tau + j] = sf.jointTauNm[j];
      const a = maps.actOfJoint[j];
      batch[o + L.target + j] = n < N ? cmd.jointTargetRad[j] : v.ctrl[a];
      batch[o + L.kp + j] = gp[a * NGAIN];
      batch[o + L.kd + j] = -bp[a * NBIAS + 2];
    }
    batch[o + L.tick] = k;
    batch[o + L.refFrame] = k;
    for (let c = 0; c < 6; c++) batch[o + L.wrench + c] = assist && n < N ? wrench[c] : NaN;
    const live = metrics.reducer;
    batch[o + L.liveMpjpe] = live.frameMpjpeLMm ?? NaN;
    batch[o + L.liveJointRmse] = live.frameJointRmseRad ?? NaN;
    batch[o + L.liveFailFrame] = live.firstFailureFrame;
    this.batcher.commitRow();
    this.recorded = k + 1;
  }

  /** The episode's end: a stop or a fault as it happened, else a hard failure the metrics found, else completed. */
  private end(stopped: EpisodeEnd | null): WorkerEpisodeEnd {
    const result = this.metrics.result();
    const failure = result.failure.available ? result.failure.value : null;
    const end: EpisodeEnd =
      stopped ??
      (failure
        ? {
            outcome: 'hard_failure',
            reason: `hard failure at frame ${failure.frame} (t = ${failure.timeS.toFixed(2)} s): ${describeFailure(failure)}`,
          }
        : { outcome: 'completed', reason: 'reached the end of the clip' });
    const recorded = this.recorded;
    return {
      ...end,
      frames: recorded,
      plannedFrames: this.plan.K,
      simSeconds: recorded > 0 ? (recorded - 1) / RECORD_RATE_HZ : 0,
      failure,
      referenceLiftM: this.referenceLiftM,
    };
  }
}

export function describeFailure(f: HardFailure): string {
  const unit = f.condition === 'root_orientation' ? 'rad' : 'm';
  return `${f.condition} of ${f.body}: ${f.error.toFixed(3)} ${unit} > ${f.threshold} ${unit}`;
}

function isFiniteState(sf: StateFrame, lin: Float64Array, ang: Float64Array): boolean {
  let s = 0;
  for (let c = 0; c < 3; c++) s += sf.rootPosM![c] + lin[c] + ang[c];
  for (let c = 0; c < 4; c++) s += sf.rootQuatWxyz![c];
  for (let j = 0; j < sf.jointPosRad.length; j++) s += sf.jointPosRad[j] + sf.jointVelRadS[j];
  return Number.isFinite(s);
}
