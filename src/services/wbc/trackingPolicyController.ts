import { Tensor } from 'onnxruntime-node';
import { InputError } from '../../domain/problems';
import { ForwardKinematics } from '../../domain/robot/forwardKinematics';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { PhysicsProfile } from '../../domain/robot/physicsProfile';
import { specUnderJointOrderControl } from '../../domain/wbc/readingControls';
import { bakedMotion, type BakedMotionResult } from '../../domain/wbc/bakedMotion';
import type { ControlCommand, ControlObservation, Controller } from '../../domain/wbc/controller';
import { TrackingObservationBuilder, type TrackingRobotState } from '../../domain/wbc/trackingObservation';
import type { TrackingPolicySpec } from '../../domain/wbc/trackingPolicy';
import { trackingReferenceFromClip, type TrackingReference } from '../../domain/wbc/trackingReference';
import { presetIdOf } from '../../domain/wbc/policyPresets';
import type { PolicyBinding } from '../../domain/wbc/wbcBinding';
import { loadTrackingPolicy, type LoadedPolicy } from './loadPolicy';
import { createOnnxSession, type OnnxSession } from './onnxPolicySession';
import { PolicyRecurrence } from './policyRecurrence';

// The controller of a released tracking policy (any family): per control step it computes the
// robot anchor pose by forward kinematics of the measured state, builds the family's
// observation (src/domain/wbc/trackingObservation.ts), runs the network once (onnxruntime-node,
// the same fixed single-threaded options as every policy: deterministic), and maps the raw
// action to joint targets with the policy's PD gains:
//   default_offset      target = offset + scale · a
//   reference_residual  target = reference joint angles of this frame + scale · a
// Policies that carry their reference observe it (the exporter's values, indexed by the frame);
// the others observe the clip the episode runs, by FK and central differences. The frame at
// control step k is k (the training pairing of every family; see TrackingPolicySpec.notes).

export class TrackingPolicyError extends Error {
  override readonly name = 'TrackingPolicyError';
}

export interface TrackingPolicyController extends Controller {
  readonly binding: PolicyBinding;
  readonly physics: PhysicsProfile;
  readonly spec: TrackingPolicySpec;
  readonly baked: BakedMotionResult | null;
  /** The observation fed at the latest step (reused). */
  readonly observation: Float32Array;
  /** The latest raw action, policy order. */
  readonly lastAction: Float32Array;
  /** The encoder's observation of the latest step (two-stage policies), else null. */
  readonly encoderObservation: Float32Array | null;
  /** The graph's carried state (key/value cache, step counter); empty for feed-forward policies. */
  readonly recurrence: PolicyRecurrence;
  step(obs: ControlObservation, out: ControlCommand): void;
  dispose(): void;
}

export interface TrackingControllerOptions {
  /** A policy already read (its hash is still checked against the binding). */
  loaded?: LoadedPolicy;
  /**
   * Deliberate faults for negative controls in tests, never set in production paths:
   * wrong_joint_order is the policy check's joint_order_other reading (the other common order,
   * src/domain/wbc/readingControls.ts; a policy driving a subset keeps its subset), in the
   * observation and the action alike;
   * anchor_zeroed feeds the robot anchor as the identity pose at the origin.
   */
  fault?: 'wrong_joint_order' | 'anchor_zeroed';
  /**
   * A policy check's reading control (src/domain/wbc/readingControls.ts): rewrites each built
   * observation in place before inference (`stage` says which graph's). Never set on a normal run.
   */
  rewriteObservation?: (observation: Float32Array, stage: 'encoder' | 'policy') => void;
}

/**
 * Loads the policy's session (by path, so external weights resolve) and runs one trial inference
 * on a zero observation at frame 0: the action must be `joints` finite values, else InputError
 * naming the .onnx. The feeds wrap `observation` and a one-value time buffer, reused per step.
 */
export function openPolicySession(
  modelFile: string,
  spec: Pick<
    TrackingPolicySpec,
    'obsInput' | 'timeInput' | 'actionOutput' | 'observationSize' | 'recurrent' | 'stepCounter'
  >,
  observation: Float32Array = new Float32Array(spec.observationSize),
  joints = 29,
): {
  session: OnnxSession;
  feeds: Record<string, Tensor>;
  timeBuf: Float32Array;
  recurrence: PolicyRecurrence;
  fetch: readonly string[];
} {
  let session: OnnxSession;
  try {
    session = createOnnxSession({ path: modelFile });
  } catch (e) {
    throw new InputError({ file: modelFile }, `onnxruntime cannot load the model (${(e as Error).message})`);
  }
  const feeds: Record<string, Tensor> = {
    [spec.obsInput]: new Tensor('float32', observation, [1, spec.observationSize]),
  };
  const timeBuf = new Float32Array(1);
  if (spec.timeInput) feeds[spec.timeInput] = new Tensor('float32', timeBuf, [1, 1]);
  const recurrence = new PolicyRecurrence(spec, feeds);
  const fetch = [spec.actionOutput, ...recurrence.outputs];
  try {
    const outs = session.runMany(feeds, fetch);
    for (const r of spec.recurrent) {
      const got = outs[r.output].dims.join(',');
      if (got !== r.dims.join(','))
        throw new InputError(
          { file: modelFile },
          `output "${r.output}" has shape [${got}] at run time; its input "${r.input}" is [${r.dims.join(', ')}]`,
        );
    }
    const out = outs[spec.actionOutput];
    if (out.size !== joints)
      throw new InputError(
        { file: modelFile },
        `output "${spec.actionOutput}" has ${out.size} values at run time; expected ${joints}`,
      );
    const d = out.data as Float32Array;
    for (let j = 0; j < joints; j++)
      if (!Number.isFinite(d[j]))
        throw new InputError({ file: modelFile }, `a trial inference gave a non-finite action (joint ${j}: ${d[j]})`);
  } catch (e) {
    session.release();
    throw e instanceof InputError
      ? e
      : new InputError({ file: modelFile }, `a trial inference failed (${(e as Error).message})`);
  }
  return { session, feeds, timeBuf, recurrence, fetch };
}

/** The policy the binding names, checked to still be the one bound. */
function boundPolicy(binding: PolicyBinding, options: TrackingControllerOptions): LoadedPolicy {
  const loaded = options.loaded ?? loadTrackingPolicy(binding.policyPath, presetIdOf(binding.preset));
  if (loaded.contentHash !== binding.checkpointHash)
    throw new InputError(
      { file: binding.policyPath },
      `the policy files hash to ${loaded.contentHash.slice(0, 12)}…, the binding was made for ${binding.checkpointHash.slice(0, 12)}…; they changed since`,
    );
  return loaded;
}

/**
 * The joints the policy drives (its action width) and the model joints it holds: the held ones
 * (jointOrder.held) stay at the default pose with the spec's gains, as the family's robot side does.
 */
function drivenJoints(
  spec: TrackingPolicySpec,
  profile: RobotProfile,
  policyPath: string,
): { P: number; held: number[] } {
  const J = profile.joints.length;
  const P = spec.jointOrder.canonicalOf.length;
  const held = (spec.jointOrder.held ?? []).map((n) => profile.joints.findIndex((j) => j.name === n));
  if (P + held.length !== J || held.some((c) => c < 0))
    throw new InputError(
      { file: policyPath },
      `the policy drives ${P} joints and holds ${held.length}; the model has ${J}`,
    );
  return { P, held };
}

/** The model body the policy anchors to. */
function anchorBodyIndex(spec: TrackingPolicySpec, profile: RobotProfile, policyPath: string): number {
  const anchor = profile.bodies.findIndex((b) => b.name === spec.anchorBody);
  if (anchor < 0)
    throw new InputError(
      { file: policyPath },
      `the model ${profile.sourceFile} has no body "${spec.anchorBody}" (the policy's anchor)`,
    );
  return anchor;
}

type PolicyEncoder = ReturnType<typeof openPolicySession> & {
  stage: NonNullable<TrackingPolicySpec['encoder']>;
  builder: TrackingObservationBuilder;
};

/** A two-stage policy (SONIC): the encoder's session and observation, run before the decoder. */
function openEncoder(spec: TrackingPolicySpec): PolicyEncoder | null {
  const e = spec.encoder;
  if (!e) return null;
  const b = new TrackingObservationBuilder({
    ...spec,
    observation: e.observation,
    observationSize: e.observationSize,
  });
  const opened = openPolicySession(
    e.modelFile,
    {
      obsInput: e.input,
      actionOutput: e.output,
      observationSize: e.observationSize,
      timeInput: null,
      recurrent: [],
      stepCounter: null,
    },
    b.observation,
    e.tokenSize,
  );
  return { stage: e, builder: b, ...opened };
}

/** Opens the policy the binding names and checks it still is the one bound. */
export function createTrackingPolicyController(
  binding: PolicyBinding,
  profile: RobotProfile,
  options: TrackingControllerOptions = {},
): TrackingPolicyController {
  const loaded = boundPolicy(binding, options);
  const spec: TrackingPolicySpec =
    options.fault === 'wrong_joint_order' ? specUnderJointOrderControl(loaded.spec, 'joint_order_other') : loaded.spec;
  const { P, held } = drivenJoints(spec, profile, binding.policyPath);
  const fk = new ForwardKinematics(profile);
  const anchor = anchorBodyIndex(spec, profile, binding.policyPath);
  const baked = spec.baked ? bakedMotion(loaded.info, spec, profile, fk, loaded.name, loaded.contentHash) : null;
  const builder = new TrackingObservationBuilder(spec);
  const encoder = openEncoder(spec);
  let opened: ReturnType<typeof openPolicySession>;
  try {
    opened = openPolicySession(loaded.modelFile, spec, builder.observation, P);
  } catch (e) {
    encoder?.session.release();
    throw e;
  }
  return new TrackingPolicyRunner(binding, profile, options, {
    modelFile: loaded.modelFile,
    spec,
    P,
    held,
    fk,
    anchor,
    baked,
    builder,
    encoder,
    opened,
  });
}

/** The opened controller: per step, the robot anchor by FK, the observation, inference, the joint targets. */
class TrackingPolicyRunner implements TrackingPolicyController {
  readonly physics: PhysicsProfile;
  readonly needs: TrackingPolicySpec['needs'];
  readonly spec: TrackingPolicySpec;
  readonly baked: BakedMotionResult | null;
  readonly observation: Float32Array;
  readonly lastAction: Float32Array;
  readonly recurrence: PolicyRecurrence;
  readonly encoderObservation: Float32Array | null;
  private readonly J: number;
  /** Body poses of the measured state (FK), world frame. */
  private readonly pos: Float64Array;
  private readonly quat: Float64Array;
  private clipReference: TrackingReference | null = null;
  private disposed = false;
  private readonly anchorPos = new Float64Array(3);
  private readonly anchorQuat = new Float64Array(4);
  private readonly zeroPos = new Float64Array(3);
  private readonly robot: TrackingRobotState;

  constructor(
    readonly binding: PolicyBinding,
    profile: RobotProfile,
    private readonly options: TrackingControllerOptions,
    private readonly parts: {
      modelFile: string;
      spec: TrackingPolicySpec;
      P: number;
      held: number[];
      fk: ForwardKinematics;
      anchor: number;
      baked: BakedMotionResult | null;
      builder: TrackingObservationBuilder;
      encoder: PolicyEncoder | null;
      opened: ReturnType<typeof openPolicySession>;
    },
  ) {
    const { spec, fk } = parts;
    this.spec = spec;
    this.physics = spec.physics;
    this.needs = spec.needs;
    this.baked = parts.baked;
    this.observation = parts.builder.observation;
    this.lastAction = new Float32Array(parts.P);
    this.recurrence = parts.opened.recurrence;
    this.encoderObservation = parts.encoder ? parts.encoder.builder.observation : null;
    this.J = profile.joints.length;
    this.pos = new Float64Array(3 * fk.bodyCount);
    this.quat = new Float64Array(4 * fk.bodyCount);
    this.robot = {
      jointPosRad: new Float64Array(this.J),
      jointVelRadS: new Float64Array(this.J),
      rootQuatWxyz: new Float64Array(4),
      rootPosM: this.zeroPos,
      rootLinVelMps: null,
      gyroRadS: new Float64Array(3),
      anchorPosM: this.anchorPos,
      anchorQuatWxyz: this.anchorQuat,
    };
  }

  reset(): void {
    this.lastAction.fill(0);
    this.parts.builder.reset();
    this.parts.encoder?.builder.reset();
    this.recurrence.reset();
    this.clipReference = null;
  }

  step(obs: ControlObservation, out: ControlCommand): void {
    if (this.disposed) throw new TrackingPolicyError(`${this.parts.modelFile}: step after dispose`);
    const { spec, builder } = this.parts;
    const ref = this.referenceFor(obs);
    this.measureRobot(obs);
    const f = Math.min(obs.referenceFrame, ref.frames - 1);
    if (this.parts.encoder) this.runEncoder(this.parts.encoder, ref, f, obs.step);
    builder.build(this.robot, ref, f, this.lastAction);
    this.options.rewriteObservation?.(this.observation, 'policy');
    const { session, feeds, timeBuf, fetch } = this.parts.opened;
    timeBuf[0] = f;
    this.recurrence.beforeRun();
    const outs = session.runMany(feeds, fetch);
    this.recurrence.afterRun(outs);
    const a = outs[spec.actionOutput].data as Float32Array;
    for (let i = 0; i < this.parts.P; i++)
      if (!Number.isFinite(a[i]))
        throw new TrackingPolicyError(
          `${this.parts.modelFile}: the policy produced a non-finite action (${a[i]} for ${spec.jointOrder.policyNames[i]}) at control step ${obs.step}`,
        );
    this.applyAction(a, ref, f, out);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.parts.opened.session.release();
    this.parts.encoder?.session.release();
  }

  private referenceFor(obs: ControlObservation): TrackingReference {
    if (this.parts.baked) return this.parts.baked.reference;
    if (!this.clipReference) {
      const r = obs.reference;
      if (Math.abs(r.rateHz - this.spec.controlRateHz) > 1e-9)
        throw new TrackingPolicyError(
          `the reference is on a ${r.rateHz} Hz timeline; the policy steps at ${this.spec.controlRateHz} Hz`,
        );
      this.clipReference = trackingReferenceFromClip(r, this.parts.fk, this.parts.anchor);
    }
    return this.clipReference;
  }

  /** The measured state and the robot anchor pose (FK of the measured state) into the robot state the builder reads. */
  private measureRobot(obs: ControlObservation): void {
    const { fk, anchor } = this.parts;
    const { pos, quat, anchorPos, anchorQuat, robot } = this;
    const st = obs.state;
    const rq = st.rootQuatWxyz ?? st.imu.quatWxyz;
    const rp = st.rootPosM ?? this.zeroPos;
    fk.compute(rp, rq, st.jointPosRad, pos, quat);
    for (let c = 0; c < 3; c++) anchorPos[c] = pos[3 * anchor + c];
    for (let c = 0; c < 4; c++) anchorQuat[c] = quat[4 * anchor + c];
    if (this.options.fault === 'anchor_zeroed') {
      anchorPos.fill(0);
      anchorQuat.set([1, 0, 0, 0]);
    }
    (robot.jointPosRad as Float64Array).set(st.jointPosRad);
    (robot.jointVelRadS as Float64Array).set(st.jointVelRadS);
    (robot.rootQuatWxyz as Float64Array).set(rq);
    robot.rootPosM = rp;
    (robot.gyroRadS as Float64Array).set(st.imu.gyroRadS);
    robot.rootLinVelMps = obs.rootLinVelMps;
  }

  /** Runs the encoder stage and hands its token to the decoder's observation. */
  private runEncoder(encoder: PolicyEncoder, ref: TrackingReference, f: number, step: number): void {
    encoder.builder.build(this.robot, ref, f, this.lastAction);
    this.options.rewriteObservation?.(encoder.builder.observation, 'encoder');
    const token = encoder.session.run(encoder.feeds, encoder.stage.output).data as Float32Array;
    for (let i = 0; i < token.length; i++)
      if (!Number.isFinite(token[i]))
        throw new TrackingPolicyError(
          `${encoder.stage.modelFile}: the encoder produced a non-finite token (${token[i]} at ${i}) at control step ${step}`,
        );
    this.parts.builder.token!.set(token);
  }

  /** Maps the raw action to joint targets (held joints at their offset) with the policy's PD gains. */
  private applyAction(a: Float32Array, ref: TrackingReference, f: number, out: ControlCommand): void {
    const { spec, P, held } = this.parts;
    const { canonicalOf } = spec.jointOrder;
    const { scale, offset, mode, clip } = spec.action;
    const J = this.J;
    const tgt = out.jointTargetRad;
    const J2 = J * f;
    for (const c of held) tgt[c] = offset[c];
    for (let i = 0; i < P; i++) {
      let v = a[i];
      if (clip !== null) v = v > clip ? clip : v < -clip ? -clip : v;
      this.lastAction[i] = v;
      const c = canonicalOf[i];
      const base = mode === 'default_offset' ? offset[c] : ref.jointPosRad[J2 + c];
      tgt[c] = base + scale[c] * v;
    }
    if (out.kp === null || out.kp.length !== J) out.kp = new Float64Array(J);
    if (out.kd === null || out.kd.length !== J) out.kd = new Float64Array(J);
    out.kp.set(spec.kp);
    out.kd.set(spec.kd);
  }
}
