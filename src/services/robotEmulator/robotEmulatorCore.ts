import type { EpisodeOutcome, InitialState } from '../../domain/backend/backend';
import { cloneStateFrame, copySensorReadings, createStateFrame, type StateFrame } from '../../domain/robot/stateFrame';
import type { MotionClip } from '../../domain/motion/motionClip';
import { resampleClip } from '../../domain/motion/resample';
import { ActuatorDelayLine, type ActuatorCommand } from '../../domain/robotEmulator/actuatorDelayLine';
import type { PlaceAction } from '../../domain/robotEmulator/emulatorControl';
import { placedStartState, standingStartState } from '../../domain/robotEmulator/startStates';
import { latencySteps, type RobotEmulatorProfile } from '../../domain/robotEmulator/robotEmulatorProfile';
import { applySensorModel } from '../../domain/robotEmulator/sensorModel';
import { GaussianNoise } from '../../domain/robotEmulator/sensorNoise';
import { RootAssistController } from '../../domain/sim/rootAssist';
import {
  createControlCommand,
  type ControlObservation,
  type ControlReference,
  type Controller,
} from '../../domain/wbc/controller';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import { DEFAULT_MODEL_FILE } from '../robot/loadRobotProfile';
import { RECORD_RATE_HZ, SimEngine } from '../sim/simEngine';
import type { ResolvedInitialState } from '../sim/simProtocol';

// The robot emulator's physics, without a wall clock: one MuJoCo G1 (a SimEngine of its own)
// stepped one physics step (2 ms) at a time, with the declared dynamics differences of a
// RobotEmulatorProfile. The real-time loop (robotEmulator.ts) calls step() at 500 Hz; tests
// and benchmarks call it as fast as it runs.
//
// Each step k (the robot's sample counter, `tick`):
//   mj_step1                      kinematics and sensors of the state at step k
//   read the true state           → the measured frame: the profile's sensor model (encoder noise
//                                   and quantisation, IMU noise: sensorModel.ts); root position
//                                   only with motion capture
//   the motor command of step k   standing: joint PD to the held pose; damping: kp 0, small kd;
//                                   tracking: the binding's command, renewed at its control rate
//                                   from the measured state (reference time 0 = episode start),
//                                   gains × (kpScale, kdScale)
//   actuator delay line           the command issued latency steps ago reaches the servos
//   root assist                   (builtin binding) the virtual gantry, evaluated every step as
//                                   the simulator does (not delayed: it is not an actuator)
//   mj_step2                      actuation, constraints, integration
//
// With ZERO_PERTURBATION_PROFILE this issues the same commands at the same steps as
// SimEngine.run(), so an episode started right after humanReset(initial) reproduces the
// simulator's trajectory for that initial state and binding (test/integration/robotEmulator.test.ts).
// The core does not know the metric contract: an episode ends `completed` at the clip's end, or
// with the outcome it is stopped with; judging hard failures is the console's business.

export type MotorMode = 'stand' | 'damp' | 'tracking';

export interface CoreEpisodeRequest {
  runId: string;
  clip: MotionClip;
  binding: WbcBinding;
  controller: Controller;
}

export interface CoreEpisodeEnd {
  runId: string;
  outcome: EpisodeOutcome;
  reason: string;
  /** Physics steps the episode lasted (its first step to its last published sample). */
  steps: number;
  /** Episode time of its last sample, s. */
  simSeconds: number;
}

export interface CoreStepResult {
  /** The published sample (measured): reused by the next step, clone it to keep it. */
  frame: StateFrame;
  /** The true state of the same step (for tests; reused). */
  trueFrame: StateFrame;
  /** The episode that ended at this step (its last sample is `frame`), if any. */
  episodeEnd: CoreEpisodeEnd | null;
}

interface Episode {
  runId: string;
  clip: MotionClip;
  binding: WbcBinding;
  controller: Controller;
  startTick: number;
  /** Physics steps per control step. */
  S: number;
  /** Last control step (the clip's end on the 50 Hz timeline). */
  N: number;
  rateHz: number;
  reference: ControlReference;
  lastCtl: number;
  assist: RootAssistController | null;
  obs: ControlObservation;
  /** Restores the model's own physics after a controller with a physics profile (null: none applied). */
  restorePhysics: (() => void) | null;
}

export interface RobotEmulatorCoreOptions {
  profile: RobotEmulatorProfile;
  /** MJCF scene with a floor (default our G1). */
  modelFile?: string;
  /** Seed of the noise (default the profile's). */
  seed?: number;
}

export class RobotEmulatorCore {
  readonly dtS: number;
  readonly latencySteps: number;
  readonly modelKp: Float64Array;
  readonly modelKd: Float64Array;
  private _tick = 0;
  private _mode: MotorMode = 'stand';
  private episode: Episode | null = null;
  private readonly J: number;
  private readonly delay: ActuatorDelayLine;
  /** The command of the current step (before the delay line). */
  private readonly cmd: ActuatorCommand;
  private readonly ctlCmd = createControlCommand(29);
  private readonly noise: GaussianNoise;
  private readonly trueSf = createStateFrame(true);
  private readonly measured: StateFrame;
  private readonly ctlSf = createStateFrame(true);
  private readonly lin = new Float64Array(3);
  private readonly ang = new Float64Array(3);
  private readonly wrench = new Float64Array(6);
  private wrenchOn = false;
  private disposed = false;

  private constructor(
    readonly engine: SimEngine,
    readonly profile: RobotEmulatorProfile,
    seed: number,
  ) {
    this.J = engine.jointCount;
    this.dtS = engine.timestepS;
    this.latencySteps = latencySteps(profile, this.dtS);
    const g = engine.modelJointGains();
    this.modelKp = g.kp;
    this.modelKd = g.kd;
    const friction = engine.jointFrictionLoss().map((f) => f * profile.frictionScale + profile.frictionExtraNm);
    engine.setJointFrictionLoss(friction);
    this.delay = new ActuatorDelayLine(this.J, this.latencySteps);
    this.cmd = { targetRad: new Float64Array(this.J), kp: new Float64Array(this.J), kd: new Float64Array(this.J) };
    this.noise = new GaussianNoise(seed);
    this.measured = createStateFrame(profile.mocap);
    this.humanReset();
  }

  static async create(options: RobotEmulatorCoreOptions): Promise<RobotEmulatorCore> {
    const engine = await SimEngine.load(options.modelFile ?? DEFAULT_MODEL_FILE);
    return new RobotEmulatorCore(engine, options.profile, options.seed ?? options.profile.seed);
  }

  /** Samples produced so far: the tick of the next step. */
  get tick(): number {
    return this._tick;
  }

  get mode(): MotorMode {
    return this._mode;
  }

  /** Run id of the running episode, null when none. */
  get episodeRunId(): string | null {
    return this.episode?.runId ?? null;
  }

  /** Tick of the running episode's time 0, null when none. */
  get episodeStartTick(): number | null {
    return this.episode?.startTick ?? null;
  }

  /** The standing start pose: the model's default pose at the origin, feet on the floor, at rest. */
  standingStart(): InitialState {
    return standingStartState(this.engine.profile);
  }

  /**
   * The start state of a `place` (emulatorControl.ts): the joints mapped by name onto the model's
   * joint order, the root orientation as given (w, x, y, z), at the origin with the feet put on the
   * floor, at rest.
   */
  placedStart(a: PlaceAction): InitialState {
    return placedStartState(this.engine.profile, a);
  }

  /**
   * The human puts the robot back: teleport to `initial` (default the standing start pose on the
   * floor), zero velocity unless given, and stand there. Refused while an episode runs. The
   * sample counter keeps counting.
   */
  humanReset(initial: InitialState = this.standingStart()): ResolvedInitialState {
    if (this.episode) throw new Error(`cannot reset the robot while episode ${this.episode.runId} runs`);
    const r = this.engine.applyInitialState(initial);
    this.wrenchOn = false;
    this.setStandCommand(Float64Array.from(r.jointPosRad));
    this.delay.prime(this.cmd);
    this._mode = 'stand';
    return r;
  }

  /** Joint PD on the current (true) joint angles. Ends nothing: stop the episode first. */
  hold(): void {
    if (this.episode) throw new Error(`hold: episode ${this.episode.runId} is running; end it first`);
    this.engine.liveJointPosRad(this.cmd.targetRad);
    this.setStandCommand(this.cmd.targetRad);
    this._mode = 'stand';
  }

  /** Damping at once (also cutting what is in the delay line): kp 0, the profile's small kd. */
  damp(): void {
    this.engine.liveJointPosRad(this.cmd.targetRad);
    this.cmd.kp.fill(0);
    this.cmd.kd.fill(this.profile.dampKdNmsPerRad);
    this.delay.prime(this.cmd);
    this._mode = 'damp';
  }

  /**
   * Starts an episode at the next step (its time 0): the binding runs at its control rate from
   * the measured state. Returns the tick of time 0.
   */
  beginEpisode(req: CoreEpisodeRequest): number {
    if (this.episode) throw new Error(`episode ${this.episode.runId} is already running`);
    const { binding, clip } = req;
    const rate = binding.controlRateHz;
    const M = Math.round(rate / RECORD_RATE_HZ);
    if (!(M >= 1 && Math.abs(M * RECORD_RATE_HZ - rate) < 1e-9)) {
      throw new RangeError(
        `binding ${binding.id}@${binding.version}: control rate ${rate} Hz is not a multiple of the ${RECORD_RATE_HZ} Hz recording rate`,
      );
    }
    const S = Math.round(1 / (rate * this.dtS));
    if (!(S >= 1 && Math.abs(S * rate * this.dtS - 1) < 1e-9)) {
      throw new RangeError(
        `binding ${binding.id}@${binding.version}: control period 1/${rate} s is not a whole number of ${this.dtS} s physics steps`,
      );
    }
    // The same timelines as SimEngine.run: the clip's end on the 50 Hz timeline, the reference at the control rate.
    const K = resampleClip(clip, RECORD_RATE_HZ).frameCount;
    const refCtl = resampleClip(clip, rate);
    const reference: ControlReference = {
      rateHz: rate,
      frameCount: refCtl.frameCount,
      rootPosM: refCtl.rootPosM,
      rootQuatWxyz: refCtl.rootQuatWxyz,
      jointPosRad: refCtl.jointPosRad,
    };
    req.controller.reset();
    // A released policy brings its physics (armature, effort limits, friction). The emulator's
    // physics step stays its own (the lowstate clock), so the policy's PD runs at that rate.
    const physics = req.controller.physics;
    const restorePhysics = physics ? this.engine.applyPhysics({ ...physics, timestepS: this.dtS }) : null;
    this.episode = {
      runId: req.runId,
      clip,
      binding,
      controller: req.controller,
      startTick: this._tick,
      S,
      N: (K - 1) * M,
      rateHz: rate,
      reference,
      lastCtl: refCtl.frameCount - 1,
      assist:
        binding.kind === 'builtin' && binding.rootAssist && binding.rootAssist.kpNPerM > 0
          ? new RootAssistController(binding.rootAssist)
          : null,
      obs: {
        step: 0,
        timeS: 0,
        state: this.ctlSf,
        reference,
        referenceFrame: 0,
        defaultJointPosRad: this.engine.defaultJointPosRad,
        rootLinVelMps: null,
      },
      restorePhysics,
    };
    this._mode = 'tracking';
    return this._tick;
  }

  /**
   * Ends the running episode now with `outcome`; the robot holds its pose (or stays damped).
   * Returns its end, or null when none ran.
   */
  endEpisode(outcome: EpisodeOutcome, reason: string): CoreEpisodeEnd | null {
    const ep = this.episode;
    if (!ep) return null;
    this.episode = null;
    ep.restorePhysics?.();
    this.clearWrench();
    if (this._mode === 'tracking') this.hold();
    const steps = Math.max(0, this._tick - 1 - ep.startTick);
    return { runId: ep.runId, outcome, reason, steps, simSeconds: steps * this.dtS };
  }

  /** One physics step; returns the sample of the state at its start. */
  step(): CoreStepResult {
    if (this.disposed) throw new Error('the emulator core is disposed');
    const eng = this.engine;
    const tick = this._tick;
    eng.liveStep1();
    eng.liveReadState(this.trueSf, this.lin, this.ang);
    this.trueSf.tick = tick;
    this.trueSf.timeS = tick * this.dtS;
    const m = this.measure();
    let end: CoreEpisodeEnd | null = null;
    const ep = this.episode;
    if (ep) {
      const i = tick - ep.startTick;
      const tEp = i * this.dtS;
      m.referenceFrame = Math.min(ep.clip.frameCount - 1, Math.round(tEp * ep.clip.fps));
      // (Damped during an episode — a damp before its stop — the binding no longer drives the motors.)
      if (this._mode === 'tracking' && i % ep.S === 0) {
        const n = i / ep.S;
        if (n >= ep.N) {
          // The clip's end: this sample is the episode's last; the robot holds the last target.
          end = this.finish(ep, 'completed', 'reached the end of the clip', i);
        } else {
          end = this.control(ep, n, i);
        }
      }
      if (!end && ep.assist && this._mode === 'tracking') {
        const { qpos, qvel } = eng.liveQposQvel();
        ep.assist.compute((i % ep.S) / ep.S, qpos, qvel, this.wrench, 0);
        eng.liveRootWrench(this.wrench);
        this.wrenchOn = true;
      }
    } else {
      m.referenceFrame = null;
    }
    if (this._mode !== 'tracking') this.clearWrench();
    const applied = this.delay.push(this.cmd);
    eng.liveActuate(applied.targetRad, applied.kp, applied.kd);
    eng.liveStep2();
    this._tick++;
    return { frame: m, trueFrame: this.trueSf, episodeEnd: end };
  }

  /** Steps `n` times (no wall clock); returns the last result. */
  stepMany(n: number): CoreStepResult {
    let r!: CoreStepResult;
    for (let k = 0; k < n; k++) r = this.step();
    return r;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.engine.dispose();
  }

  // -------------------------------------------------------------------------------------------

  private control(ep: Episode, n: number, i: number): CoreEpisodeEnd | null {
    const J = this.J;
    const sf = this.ctlSf;
    // The binding sees what the robot measures (noisy joints and IMU) and the root pose of the
    // robot's own state estimator, taken as exact. No observation term of the bindings this
    // console runs reads the global root (projected gravity comes from the noisy IMU attitude);
    // the builtin tracker's root assist is a gantry in the physics, not an estimate.
    copySensorReadings(this.measured, sf);
    sf.rootPosM!.set(this.trueSf.rootPosM!);
    sf.rootQuatWxyz!.set(this.trueSf.rootQuatWxyz!);
    const tS = n / ep.rateHz;
    sf.timeS = tS;
    sf.tick = n;
    sf.referenceFrame = Math.min(n, ep.lastCtl);
    const obs = ep.obs;
    obs.step = n;
    obs.timeS = tS;
    obs.referenceFrame = sf.referenceFrame;
    try {
      ep.controller.step(obs, this.ctlCmd);
    } catch (err) {
      return this.finish(
        ep,
        'infrastructure_error',
        `the controller failed at t = ${tS.toFixed(3)} s: ${(err as Error)?.message ?? String(err)}`,
        i,
      );
    }
    const tgt = this.ctlCmd.jointTargetRad;
    for (let j = 0; j < J; j++) {
      if (!Number.isFinite(tgt[j]))
        return this.finish(
          ep,
          'infrastructure_error',
          `the controller produced a non-finite target for ${this.engine.profile.joints[j].name} at t = ${tS.toFixed(3)} s`,
          i,
        );
    }
    const kp = this.ctlCmd.kp ?? this.modelKp;
    const kd = this.ctlCmd.kd ?? this.modelKd;
    const c = this.cmd;
    for (let j = 0; j < J; j++) {
      c.targetRad[j] = tgt[j];
      c.kp[j] = this.profile.kpScale === 1 ? kp[j] : kp[j] * this.profile.kpScale;
      c.kd[j] = this.profile.kdScale === 1 ? kd[j] : kd[j] * this.profile.kdScale;
    }
    if (ep.assist)
      ep.assist.setSegment(
        ep.reference.rootPosM,
        ep.reference.rootQuatWxyz,
        Math.min(n, ep.lastCtl),
        Math.min(n + 1, ep.lastCtl),
        ep.rateHz,
      );
    return null;
  }

  private finish(ep: Episode, outcome: EpisodeOutcome, reason: string, i: number): CoreEpisodeEnd {
    this.episode = null;
    ep.restorePhysics?.();
    this.clearWrench();
    if (outcome === 'completed') {
      // done: hold the last target (already in the command), at the robot's stand gains.
      this.setStandCommand(this.cmd.targetRad);
    } else if (this._mode === 'tracking') {
      this.engine.liveJointPosRad(this.cmd.targetRad);
      this.setStandCommand(this.cmd.targetRad);
    }
    if (this._mode === 'tracking') this._mode = 'stand';
    return { runId: ep.runId, outcome, reason, steps: i, simSeconds: i * this.dtS };
  }

  private clearWrench(): void {
    if (!this.wrenchOn) return;
    this.engine.liveRootWrench(null);
    this.wrenchOn = false;
  }

  /** Joint PD to `target` with the model's gains × the profile's mismatch. */
  private setStandCommand(target: Float64Array): void {
    const c = this.cmd;
    if (target !== c.targetRad) c.targetRad.set(target);
    for (let j = 0; j < this.J; j++) {
      c.kp[j] = this.modelKp[j] * this.profile.kpScale;
      c.kd[j] = this.modelKd[j] * this.profile.kdScale;
    }
  }

  /** The measured sample of the true state: noise on the sensors, root only with motion capture. */
  private measure(): StateFrame {
    const t = this.trueSf;
    const m = this.measured;
    const p = this.profile;
    m.tick = t.tick;
    m.timeS = t.timeS;
    copySensorReadings(t, m);
    applySensorModel(m, p, this.noise);
    if (m.rootPosM) m.rootPosM.set(t.rootPosM!);
    m.rootQuatWxyz!.set(m.rootPosM ? t.rootQuatWxyz! : m.imu.quatWxyz);
    m.contacts = null;
    return m;
  }
}

/** A copy of a step's published sample, to keep beyond the next step. */
export const keepFrame = (f: StateFrame): StateFrame => cloneStateFrame(f);
