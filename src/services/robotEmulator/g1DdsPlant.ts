import type { InitialState } from '../../domain/backend/backend';
import { createStateFrame, copySensorReadings, type StateFrame } from '../../domain/robot/stateFrame';
import type { PlaceAction } from '../../domain/robotEmulator/emulatorControl';
import { placedStartState, standingStartState } from '../../domain/robotEmulator/startStates';
import { latencySteps, type RobotEmulatorProfile } from '../../domain/robotEmulator/robotEmulatorProfile';
import { applySensorModel } from '../../domain/robotEmulator/sensorModel';
import { GaussianNoise } from '../../domain/robotEmulator/sensorNoise';
import { emptyLowState, type LowCmd, type LowState } from '../../domain/robotLink/unitreeHgWire';
import { DEFAULT_MODEL_FILE } from '../robot/loadRobotProfile';
import { SimEngine } from '../sim/simEngine';
import type { ResolvedInitialState } from '../sim/simProtocol';

// The emulated G1's body and motor drivers, without a wall clock (the real-time loop and the DDS
// face are g1DdsEmulator.ts): one MuJoCo G1 (a SimEngine of its own) stepped one physics step
// (2 ms) at a time, with the declared differences of a RobotEmulatorProfile (sensor noise, actuator
// latency, PD gain and friction mismatch).
//
// Motor order: LowCmd_/LowState_ motor slot i is the model's joint i, which is Unitree's SDK joint
// order 0..28 (assets/g1/g1.xml); slots 29..34 are not motors of a 29-DoF G1: commands there are
// ignored and their state is zero.
//
// Each step k (LowState_.tick = k):
//   mj_step1                 kinematics and sensors of the state at step k
//   the measured state       the profile's sensor model on the true state → the LowState_ of k
//   the motor command        the LowCmd_ that was the latest one `latencySteps` steps ago
//   motor drivers            per motor i of 0..28, when its MotorCmd_.mode is 1 (enabled):
//                              tau = kp'·(q_des − q) + kd'·(dq_des − dq) + tau_ff
//                            with kp' = kp·kpScale, kd' = kd·kdScale (the gain mismatch), clamped
//                            to the motor's effort limit (the model's actuator force range);
//                            mode 0: no torque. q and dq are the true joint state of this step.
//   gantry                   (when lifted) a spring-damper on the pelvis holding it upright above
//                            the floor
//   mj_step2                 actuation, constraints, integration
//
// What the drivers do without a command:
//   - before the first LowCmd_: damping (kp 0, kd = the profile's damping kd on every motor), as a
//     G1 stands in damping mode when a low-level program takes over (our choice: the G1's own
//     behaviour before its first command is not published);
//   - when LowCmd_ stop arriving: the last command keeps being applied, unchanged, for as long as
//     none comes. No Unitree document or example states a timeout of the G1's motor drivers, so
//     the emulator assumes none: a runner must damp before it stops.
// A LowCmd_ is refused (not applied, counted) when its mode_pr is not 0: the emulated ankles are
// serial pitch/roll joints (mode_pr 0, "PR"), the parallel A/B mode (mode_pr 1) is not emulated;
// and when any value of an enabled motor is not finite.

/** LowState_.mode_machine of a G1 29-DoF (rev 1.0): unitree_ros robots/g1_description/README.md. */
export const G1_29DOF_MODE_MACHINE = 5;
/** LowState_.mode_pr the emulated G1 reports and accepts: 0, pitch/roll ankles (unitree_sdk2 G1 examples, Mode::PR). */
export const G1_MODE_PR = 0;
/** How far above its standing height the gantry lifts the pelvis, m. */
export const GANTRY_LIFT_M = 0.25;
/** Motor temperature reported in LowState_ (both sensors), °C: a constant, not modelled. */
const MOTOR_TEMPERATURE_C = 35;

const STANDARD_GRAVITY_MS2 = 9.80665;
const GANTRY = { kpNPerM: 5000, kdNsPerM: 600, kpNmPerRad: 300, kdNmsPerRad: 15 };

export interface G1DdsPlantOptions {
  profile: RobotEmulatorProfile;
  modelFile?: string;
  seed?: number;
  modeMachine?: number;
}

export interface G1DdsPlantCounters {
  /** LowCmd_ handed to the drivers (the newest one is applied after the latency). */
  accepted: number;
  /** Refused: mode_pr not 0. */
  refusedModePr: number;
  /** Refused: a non-finite value on an enabled motor. */
  refusedNonFinite: number;
}

export class G1DdsPlant {
  readonly dtS: number;
  readonly latencySteps: number;
  readonly jointCount: number;
  readonly effortLimitNm: Float64Array;
  readonly modeMachine: number;
  private _tick = 0;
  private latest: LowCmd | null = null;
  /** The latest command at each of the last latencySteps + 1 steps (ring). */
  private readonly ring: (LowCmd | null)[];
  private head = 0;
  private estopped = false;
  private gantry: { x: number; y: number; z: number; qw: number; qz: number } | null = null;
  /** The robot's weight, N: the gantry carries it (feed-forward) besides its spring. */
  private readonly weightN: number;
  private readonly counts: G1DdsPlantCounters = { accepted: 0, refusedModePr: 0, refusedNonFinite: 0 };
  private readonly trueSf = createStateFrame(true);
  private readonly measured = createStateFrame(true);
  private readonly lin = new Float64Array(3);
  private readonly ang = new Float64Array(3);
  private readonly noise: GaussianNoise;
  private readonly qDes: Float64Array;
  private readonly kp: Float64Array;
  private readonly kd: Float64Array;
  private readonly bias: Float64Array;
  private readonly wrench = new Float64Array(6);
  private readonly state: LowState = emptyLowState();
  private disposed = false;

  private constructor(
    readonly engine: SimEngine,
    readonly profile: RobotEmulatorProfile,
    seed: number,
    modeMachine: number,
  ) {
    this.dtS = engine.timestepS;
    this.jointCount = engine.jointCount;
    this.latencySteps = latencySteps(profile, this.dtS);
    this.ring = new Array<LowCmd | null>(this.latencySteps + 1).fill(null);
    this.effortLimitNm = engine.jointEffortLimitNm();
    this.modeMachine = modeMachine;
    this.weightN = engine.profile.bodies.reduce((m, b) => m + b.massKg, 0) * STANDARD_GRAVITY_MS2;
    const friction = engine.jointFrictionLoss().map((f) => f * profile.frictionScale + profile.frictionExtraNm);
    engine.setJointFrictionLoss(friction);
    this.noise = new GaussianNoise(seed);
    const J = this.jointCount;
    this.qDes = new Float64Array(J);
    this.kp = new Float64Array(J);
    this.kd = new Float64Array(J);
    this.bias = new Float64Array(J);
    this.state.modePr = G1_MODE_PR;
    this.state.modeMachine = modeMachine;
    this.state.temperature.fill(MOTOR_TEMPERATURE_C, 0, 2 * J);
    this.humanReset();
  }

  static async create(options: G1DdsPlantOptions): Promise<G1DdsPlant> {
    const engine = await SimEngine.load(options.modelFile ?? DEFAULT_MODEL_FILE);
    return new G1DdsPlant(
      engine,
      options.profile,
      options.seed ?? options.profile.seed,
      options.modeMachine ?? G1_29DOF_MODE_MACHINE,
    );
  }

  /** The tick of the next step. */
  get tick(): number {
    return this._tick;
  }

  get commanded(): boolean {
    return this.latest !== null;
  }

  get isEstopped(): boolean {
    return this.estopped;
  }

  get onGantry(): boolean {
    return this.gantry !== null;
  }

  counters(): G1DdsPlantCounters {
    return { ...this.counts };
  }

  /** The true pelvis height above the floor, m (for tests and the status answer; a G1 does not report it). */
  rootHeightM(): number {
    return this.engine.liveQposQvel().qpos[2];
  }

  /**
   * A LowCmd_ received (CRC already checked): the drivers apply it from latencySteps steps on, and
   * keep applying it until a newer one comes. Returns the refusal, or null when accepted.
   */
  command(cmd: LowCmd): string | null {
    if (cmd.modePr !== G1_MODE_PR) {
      this.counts.refusedModePr++;
      return `mode_pr ${cmd.modePr} refused: the emulated G1 has pitch/roll ankles (mode_pr 0)`;
    }
    for (let j = 0; j < this.jointCount; j++) {
      if (cmd.mode[j] !== 1) continue;
      if (!(
        Number.isFinite(cmd.q[j]) &&
        Number.isFinite(cmd.dq[j]) &&
        Number.isFinite(cmd.tau[j]) &&
        Number.isFinite(cmd.kp[j]) &&
        Number.isFinite(cmd.kd[j])
      )) {
        this.counts.refusedNonFinite++;
        return `motor ${j}: a non-finite value on an enabled motor; command refused`;
      }
    }
    this.counts.accepted++;
    this.latest = cmd;
    return null;
  }

  /** The standing start pose: the model's default pose at the origin, feet on the floor, at rest. */
  standingStart(): InitialState {
    return standingStartState(this.engine.profile);
  }

  /** The start state of a `place`: joints by name, root orientation as given, feet on the floor, at rest. */
  placedStart(a: PlaceAction): InitialState {
    return placedStartState(this.engine.profile, a);
  }

  /**
   * The human puts the robot down at `initial` (default the standing start pose), at rest, off the
   * gantry. The motors keep doing what the last command says; the tick keeps counting.
   */
  humanReset(initial: InitialState = this.standingStart()): ResolvedInitialState {
    const r = this.engine.applyInitialState(initial);
    this.gantry = null;
    this.engine.liveRootWrench(null);
    return r;
  }

  /** Lifts the pelvis onto the gantry (upright, GANTRY_LIFT_M above standing height, yaw kept), or lowers it off. */
  setGantry(lift: boolean): void {
    if (!lift) {
      this.gantry = null;
      this.engine.liveRootWrench(null);
      return;
    }
    const { qpos } = this.engine.liveQposQvel();
    const [w, , , z] = [qpos[3], qpos[4], qpos[5], qpos[6]];
    const n = Math.hypot(w, z) || 1;
    this.gantry = {
      x: qpos[0],
      y: qpos[1],
      z: this.engine.profile.defaultPose.rootPosM[2] + GANTRY_LIFT_M,
      qw: w / n,
      qz: z / n,
    };
  }

  /** The G1's e-stop: the motors damp (kp 0, the profile's damping kd) whatever LowCmd_ says, until released. */
  setEstop(pressed: boolean): void {
    this.estopped = pressed;
  }

  /** The LowState_ of the last step (reused by the next step). */
  lastState(): LowState {
    return this.state;
  }

  /** One physics step; returns the LowState_ of the state at its start (reused: copy it to keep it). */
  step(): LowState {
    if (this.disposed) throw new Error('the emulated G1 is disposed');
    const eng = this.engine;
    const J = this.jointCount;
    eng.liveStep1();
    eng.liveReadState(this.trueSf, this.lin, this.ang);
    const m = this.measured;
    copySensorReadings(this.trueSf, m);
    applySensorModel(m, this.profile, this.noise);
    this.fillLowState(m);

    // The command that reaches the drivers now: the latest one latencySteps steps ago.
    const n = this.ring.length;
    this.ring[this.head] = this.latest;
    this.head = (this.head + 1) % n;
    const cmd = this.ring[this.head];
    const q = this.trueSf.jointPosRad;
    const p = this.profile;
    for (let j = 0; j < J; j++) {
      if (this.estopped || cmd === null) {
        this.qDes[j] = q[j];
        this.kp[j] = 0;
        this.kd[j] = p.dampKdNmsPerRad;
        this.bias[j] = 0;
      } else if (cmd.mode[j] === 1) {
        const kd = cmd.kd[j] * p.kdScale;
        this.qDes[j] = cmd.q[j];
        this.kp[j] = cmd.kp[j] * p.kpScale;
        this.kd[j] = kd;
        this.bias[j] = kd * cmd.dq[j] + cmd.tau[j];
      } else {
        this.qDes[j] = q[j];
        this.kp[j] = 0;
        this.kd[j] = 0;
        this.bias[j] = 0;
      }
    }
    eng.liveMotorDrive(this.qDes, this.kp, this.kd, this.bias);
    if (this.gantry) this.gantryWrench();
    eng.liveStep2();
    this._tick++;
    return this.state;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.engine.dispose();
  }

  // -------------------------------------------------------------------------------------------

  private fillLowState(m: StateFrame): void {
    const s = this.state;
    const J = this.jointCount;
    s.tick = this._tick >>> 0;
    for (let j = 0; j < J; j++) {
      s.q[j] = m.jointPosRad[j];
      s.dq[j] = m.jointVelRadS[j];
      s.tauEst[j] = m.jointTauNm[j];
      const c = this.latest;
      s.mode[j] = this.estopped || c === null ? 0 : c.mode[j];
    }
    const qt = m.imu.quatWxyz;
    s.imu.quaternion.set(qt);
    s.imu.gyroscope.set(m.imu.gyroRadS);
    s.imu.accelerometer.set(m.imu.accelMS2);
    const [w, x, y, z] = qt;
    s.imu.rpy[0] = Math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y));
    s.imu.rpy[1] = Math.asin(Math.max(-1, Math.min(1, 2 * (w * y - z * x))));
    s.imu.rpy[2] = Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
    s.imu.temperature = MOTOR_TEMPERATURE_C;
  }

  /** The gantry: a spring-damper on the pelvis position and orientation (world frame), as xfrc_applied. */
  private gantryWrench(): void {
    const g = this.gantry!;
    const { qpos, qvel } = this.engine.liveQposQvel();
    const f = this.wrench;
    f[0] = GANTRY.kpNPerM * (g.x - qpos[0]) - GANTRY.kdNsPerM * qvel[0];
    f[1] = GANTRY.kpNPerM * (g.y - qpos[1]) - GANTRY.kdNsPerM * qvel[1];
    f[2] = this.weightN + GANTRY.kpNPerM * (g.z - qpos[2]) - GANTRY.kdNsPerM * qvel[2];
    // Orientation error: q_err = q_target ⊗ conj(q), as a rotation vector ≈ 2·sign(w)·vec(q_err).
    const [w, x, y, z] = [qpos[3], qpos[4], qpos[5], qpos[6]];
    const tw = g.qw;
    const tz = g.qz;
    // q_target = (tw, 0, 0, tz); conj(q) = (w, −x, −y, −z)
    const ew = tw * w + tz * z;
    const ex = -tw * x + tz * y;
    const ey = -tw * y - tz * x;
    const ez = -tw * z + tz * w;
    const sgn = ew < 0 ? -2 : 2;
    // The free joint's angular velocity is in the body frame: rotate it to the world frame.
    const [bx, by, bz] = [qvel[3], qvel[4], qvel[5]];
    const wx = (1 - 2 * (y * y + z * z)) * bx + 2 * (x * y - w * z) * by + 2 * (x * z + w * y) * bz;
    const wy = 2 * (x * y + w * z) * bx + (1 - 2 * (x * x + z * z)) * by + 2 * (y * z - w * x) * bz;
    const wz = 2 * (x * z - w * y) * bx + 2 * (y * z + w * x) * by + (1 - 2 * (x * x + y * y)) * bz;
    f[3] = GANTRY.kpNmPerRad * sgn * ex - GANTRY.kdNmsPerRad * wx;
    f[4] = GANTRY.kpNmPerRad * sgn * ey - GANTRY.kdNmsPerRad * wy;
    f[5] = GANTRY.kpNmPerRad * sgn * ez - GANTRY.kdNmsPerRad * wz;
    this.engine.liveRootWrench(f);
  }
}
