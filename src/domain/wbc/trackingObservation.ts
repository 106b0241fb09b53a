import { rotateInto } from '../math/quat';
import { canonicalToPolicy, type JointOrderMap } from '../robot/jointOrder';
import type { TrackingReference } from './trackingReference';
import { termWidth, type ReferenceAlignment, type TrackingPolicySpec, type TrackingTerm } from './trackingPolicy';

// Builds a tracking policy's flat float32 observation, term by term, as its family's deploy code
// does (the formulas are on TrackingTermKind in ./trackingPolicy.ts; each term names the peer
// file it was checked against). Joint terms are written in the policy's joint order through the
// name-built table. History: per term, oldest entry first; on the first step after reset every
// entry is the current value (Isaac Lab's CircularBuffer fills an empty buffer with the first
// push), unless the term declares its padding (SONIC's deploy pads with zero entries). A term
// whose historyLayout is 'past_newest_first' writes the previous steps' values instead, latest
// first, zeros before there are any (HumanoidVerse's HistoryHandler). A policy may drive a subset
// of the joints (jointOrder.held): joint terms have the policy's width, reference and robot
// joint arrays keep the model's canonical width. A term
// read at frame offsets writes each frame's values in turn (future reference frames). The reference is aligned to the robot once, at the first step (the deploy codes do it
// when the policy starts), and kept for the episode. Allocation-free per step.

export interface TrackingRobotState {
  /** Canonical order. */
  jointPosRad: ArrayLike<number>;
  jointVelRadS: ArrayLike<number>;
  /** Root (pelvis) orientation, world, wxyz. */
  rootQuatWxyz: ArrayLike<number>;
  /** Root position, world, m (needed only by translation alignment). */
  rootPosM: ArrayLike<number>;
  /** Root linear velocity, world frame, m/s; null when the backend has no state estimate. */
  rootLinVelMps: ArrayLike<number> | null;
  /** Root angular velocity in the root frame (pelvis IMU gyro), rad/s. */
  gyroRadS: ArrayLike<number>;
  /** Anchor body pose (world), from forward kinematics of the measured state. */
  anchorPosM: ArrayLike<number>;
  anchorQuatWxyz: ArrayLike<number>;
}

type Q = Float64Array;

function quatMulInto(a: ArrayLike<number>, ao: number, b: ArrayLike<number>, bo: number, out: Q): void {
  const aw = a[ao],
    ax = a[ao + 1],
    ay = a[ao + 2],
    az = a[ao + 3];
  const bw = b[bo],
    bx = b[bo + 1],
    by = b[bo + 2],
    bz = b[bo + 3];
  out[0] = aw * bw - ax * bx - ay * by - az * bz;
  out[1] = aw * bx + ax * bw + ay * bz - az * by;
  out[2] = aw * by - ax * bz + ay * bw + az * bx;
  out[3] = aw * bz + ax * by - ay * bx + az * bw;
}

/** v' = R(q)ᵀ·v (q wxyz, unit): a world vector in the frame q. */
function rotateInv(
  q: ArrayLike<number>,
  qo: number,
  vx: number,
  vy: number,
  vz: number,
  out: Float32Array | Float64Array,
  o: number,
  s: readonly number[] | null,
): void {
  const w = q[qo],
    x = -q[qo + 1],
    y = -q[qo + 2],
    z = -q[qo + 3];
  // t = 2·(u × v); v' = v + w·t + u × t, with u = (x, y, z) of the conjugate.
  const tx = 2 * (y * vz - z * vy);
  const ty = 2 * (z * vx - x * vz);
  const tz = 2 * (x * vy - y * vx);
  out[o] = (vx + w * tx + (y * tz - z * ty)) * (s ? s[0] : 1);
  out[o + 1] = (vy + w * ty + (z * tx - x * tz)) * (s ? s[1] : 1);
  out[o + 2] = (vz + w * tz + (x * ty - y * tx)) * (s ? s[2] : 1);
}

function rotate(q: ArrayLike<number>, vx: number, vy: number, vz: number, out: Q, o: number): void {
  rotateInto(q[0], q[1], q[2], q[3], vx, vy, vz, out, o);
}

/** The yaw-only part of q (rotation about world z with the same heading). */
function headingOf(q: ArrayLike<number>, qo: number): number {
  const w = q[qo],
    x = q[qo + 1],
    y = q[qo + 2],
    z = q[qo + 3];
  return Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
}

function yawOf(q: ArrayLike<number>, qo: number, out: Q): void {
  const yaw = headingOf(q, qo);
  out[0] = Math.cos(yaw / 2);
  out[1] = 0;
  out[2] = 0;
  out[3] = Math.sin(yaw / 2);
}

export class TrackingObservationBuilder {
  readonly observation: Float32Array;
  /** The reference alignment applied this episode: q_align (wxyz) and t_align (m). */
  readonly alignQuat = new Float64Array([1, 0, 0, 0]);
  readonly alignPos = new Float64Array(3);
  private aligned = false;
  /** The encoder's output this step, read by a `policy_token` term (two-stage policies). */
  readonly token: Float32Array | null;
  /** Joints the policy drives (its joint terms' width). */
  private readonly joints: number;
  /** Joints of the model (canonical arrays' width). */
  private readonly canonicalJoints: number;
  private readonly current: Float32Array[];
  /** Per term, one view of `current` per frame offset it is read at. */
  private readonly frameViews: { offset: number; view: Float32Array }[][];
  private readonly history: Float32Array[];
  private readonly filled: boolean[];
  private readonly scratchJ: Float64Array;
  private readonly q1 = new Float64Array(4);
  private readonly q2 = new Float64Array(4);
  private readonly q3 = new Float64Array(4);
  private readonly v1 = new Float64Array(3);

  constructor(
    private readonly spec: Pick<
      TrackingPolicySpec,
      'observation' | 'observationSize' | 'jointOrder' | 'defaultJointPosRad' | 'alignment'
    >,
  ) {
    this.joints = spec.jointOrder.canonicalOf.length;
    this.canonicalJoints = spec.defaultJointPosRad.length;
    this.observation = new Float32Array(spec.observationSize);
    this.current = spec.observation.map((t) => new Float32Array(t.size * (t.frameOffsets?.length ?? 1)));
    this.frameViews = spec.observation.map((t, i) =>
      (t.frameOffsets ?? [0]).map((offset, j) => ({
        offset,
        view: this.current[i].subarray(j * t.size, (j + 1) * t.size),
      })),
    );
    this.history = spec.observation.map((t) => new Float32Array(termWidth(t)));
    this.filled = spec.observation.map(() => false);
    this.scratchJ = new Float64Array(this.canonicalJoints);
    const tokenTerm = spec.observation.find((t) => t.kind === 'policy_token');
    this.token = tokenTerm ? new Float32Array(tokenTerm.size) : null;
  }

  reset(): void {
    this.aligned = false;
    this.alignQuat.set([1, 0, 0, 0]);
    this.alignPos.fill(0);
    this.filled.fill(false);
  }

  /** Fixes the reference alignment from the robot's state and the reference's first frame. */
  private align(a: ReferenceAlignment, robot: TrackingRobotState, ref: TrackingReference, frame: number): void {
    const rq = a.robotBody === 'anchor' ? robot.anchorQuatWxyz : robot.rootQuatWxyz;
    const rp = a.robotBody === 'anchor' ? robot.anchorPosM : robot.rootPosM;
    const mq = a.referenceBody === 'anchor' ? ref.anchorQuatWxyz : ref.rootQuatWxyz;
    const mp = a.referenceBody === 'anchor' ? ref.anchorPosM : ref.rootPosM;
    if (a.rotation === 'yaw') {
      yawOf(rq, 0, this.q1);
      yawOf(mq, 4 * frame, this.q2);
      this.q2[3] = -this.q2[3]; // inverse of a yaw
      quatMulInto(this.q1, 0, this.q2, 0, this.alignQuat);
    }
    if (a.translation !== 'none') {
      rotate(this.alignQuat, mp[3 * frame], mp[3 * frame + 1], mp[3 * frame + 2], this.v1, 0);
      this.alignPos[0] = rp[0] - this.v1[0];
      this.alignPos[1] = rp[1] - this.v1[1];
      this.alignPos[2] = a.translation === 'xyz' ? rp[2] - this.v1[2] : 0;
    }
    this.aligned = true;
  }

  private toPolicy(
    map: JointOrderMap,
    canonical: ArrayLike<number>,
    offset: number,
    out: Float32Array,
    o: number,
    scale: readonly number[] | null,
    subtract: ArrayLike<number> | null,
  ): void {
    const s = this.scratchJ;
    if (subtract) {
      for (let j = 0; j < this.canonicalJoints; j++) s[j] = canonical[offset + j] - subtract[j];
      canonicalToPolicy(map, s, out, 0, o);
    } else canonicalToPolicy(map, canonical, out, offset, o);
    if (scale) for (let j = 0; j < this.joints; j++) out[o + j] *= scale[j];
  }

  private writeTerm(
    t: TrackingTerm,
    out: Float32Array,
    robot: TrackingRobotState,
    ref: TrackingReference,
    f: number,
    lastAction: ArrayLike<number>,
    current: number,
  ): void {
    const n = this.joints;
    const nc = this.canonicalJoints;
    const map = this.spec.jointOrder;
    const sc = t.scale;
    switch (t.kind) {
      case 'ref_joint_pos_vel':
        this.toPolicy(map, ref.jointPosRad, f * nc, out, 0, sc ? sc.slice(0, n) : null, null);
        this.toPolicy(map, ref.jointVelRadS, f * nc, out, n, sc ? sc.slice(n) : null, null);
        return;
      case 'ref_joint_pos':
        this.toPolicy(map, ref.jointPosRad, f * nc, out, 0, sc, null);
        return;
      case 'ref_joint_vel':
        this.toPolicy(map, ref.jointVelRadS, f * nc, out, 0, sc, null);
        return;
      case 'ref_motion_phase':
        out[0] = (ref.frames > 1 ? f / (ref.frames - 1) : 0) * (sc ? sc[0] : 1);
        return;
      case 'constant':
        out.set(t.values!);
        return;
      case 'zeros':
        out.fill(0);
        return;
      case 'policy_token':
        out.set(this.token!);
        return;
      case 'joint_pos_rel':
        this.toPolicy(map, robot.jointPosRad, 0, out, 0, sc, this.spec.defaultJointPosRad);
        return;
      case 'joint_vel_rel':
        this.toPolicy(map, robot.jointVelRadS, 0, out, 0, sc, null);
        return;
      case 'last_action':
        for (let i = 0; i < n; i++) out[i] = lastAction[i] * (sc ? sc[i] : 1);
        return;
      case 'base_ang_vel_b':
        for (let c = 0; c < 3; c++) out[c] = robot.gyroRadS[c] * (sc ? sc[c] : 1);
        return;
      case 'base_lin_vel_b': {
        const v = robot.rootLinVelMps;
        if (!v) throw new Error('base_lin_vel needs a state estimate of the root velocity; this backend has none');
        rotateInv(robot.rootQuatWxyz, 0, v[0], v[1], v[2], out, 0, sc);
        return;
      }
      case 'projected_gravity':
        rotateInv(robot.rootQuatWxyz, 0, 0, 0, -1, out, 0, sc);
        return;
      case 'ref_anchor_pos_b': {
        // aligned reference anchor − robot anchor, in the robot anchor frame
        rotate(this.alignQuat, ref.anchorPosM[3 * f], ref.anchorPosM[3 * f + 1], ref.anchorPosM[3 * f + 2], this.v1, 0);
        const dx = this.v1[0] + this.alignPos[0] - robot.anchorPosM[0];
        const dy = this.v1[1] + this.alignPos[1] - robot.anchorPosM[1];
        const dz = this.v1[2] + this.alignPos[2] - robot.anchorPosM[2];
        rotateInv(robot.anchorQuatWxyz, 0, dx, dy, dz, out, 0, sc);
        return;
      }
      case 'ref_anchor_ori_b':
      case 'ref_anchor_ori_heading_b': {
        // q = q_robot⁻¹ ⊗ (q_align ⊗ q_ref); out = columns 0, 1 of R(q), row-major (the heading
        // variant takes only the robot's yaw)
        quatMulInto(this.alignQuat, 0, ref.anchorQuatWxyz, 4 * f, this.q1);
        let r: ArrayLike<number> = robot.anchorQuatWxyz;
        if (t.kind === 'ref_anchor_ori_heading_b') {
          yawOf(robot.anchorQuatWxyz, 0, this.q3);
          r = this.q3;
        }
        this.q2[0] = r[0];
        this.q2[1] = -r[1];
        this.q2[2] = -r[2];
        this.q2[3] = -r[3];
        quatMulInto(this.q2, 0, this.q1, 0, this.q1); // in place: quatMulInto reads both operands first
        const w = this.q1[0],
          x = this.q1[1],
          y = this.q1[2],
          z = this.q1[3];
        const nn = w * w + x * x + y * y + z * z;
        const s2 = nn > 0 ? 2 / nn : 0;
        out[0] = 1 - s2 * (y * y + z * z); // R00
        out[1] = s2 * (x * y - w * z); // R01
        out[2] = s2 * (x * y + w * z); // R10
        out[3] = 1 - s2 * (x * x + z * z); // R11
        out[4] = s2 * (x * z - w * y); // R20
        out[5] = s2 * (y * z + w * x); // R21
        if (sc) for (let c = 0; c < 6; c++) out[c] *= sc[c];
        return;
      }
      case 'ref_anchor_height':
        out[0] = ref.anchorPosM[3 * f + 2] * (sc ? sc[0] : 1);
        return;
      case 'ref_anchor_lin_vel_b': {
        const v = ref.anchorLinVelMps;
        rotateInv(ref.anchorQuatWxyz, 4 * f, v[3 * f], v[3 * f + 1], v[3 * f + 2], out, 0, sc);
        return;
      }
      case 'ref_anchor_ang_vel_b': {
        const v = ref.anchorAngVelRadS;
        rotateInv(ref.anchorQuatWxyz, 4 * f, v[3 * f], v[3 * f + 1], v[3 * f + 2], out, 0, sc);
        return;
      }
      case 'ref_gravity_b':
        rotateInv(ref.anchorQuatWxyz, 4 * f, 0, 0, -1, out, 0, sc);
        return;
      case 'ref_yaw_error_sin_cos': {
        // the aligned reference's heading: the alignment is a yaw, so headings add
        const e =
          headingOf(this.alignQuat, 0) + headingOf(ref.anchorQuatWxyz, 4 * f) - headingOf(robot.anchorQuatWxyz, 0);
        out[0] = Math.sin(e) * (sc ? sc[0] : 1);
        out[1] = Math.cos(e) * (sc ? sc[1] : 1);
        return;
      }
      case 'ref_yaw_delta_sin_cos': {
        const d = headingOf(ref.anchorQuatWxyz, 4 * f) - headingOf(ref.anchorQuatWxyz, 4 * current);
        out[0] = Math.sin(d) * (sc ? sc[0] : 1);
        out[1] = Math.cos(d) * (sc ? sc[1] : 1);
        return;
      }
    }
  }

  /**
   * Writes the observation for reference frame `frame` (clamped to the reference) and returns
   * it. `lastAction` is the previous raw action in policy order (zeros after reset).
   */
  build(robot: TrackingRobotState, ref: TrackingReference, frame: number, lastAction: ArrayLike<number>): Float32Array {
    const f = Math.max(0, Math.min(ref.frames - 1, frame));
    if (!this.aligned) this.align(this.spec.alignment, robot, ref, f);
    const terms = this.spec.observation;
    let o = 0;
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i];
      const cur = this.current[i];
      const views = this.frameViews[i];
      for (let v = 0; v < views.length; v++)
        this.writeTerm(t, views[v].view, robot, ref, Math.min(ref.frames - 1, f + views[v].offset), lastAction, f);
      if (t.clip !== null) for (let c = 0; c < cur.length; c++) cur[c] = Math.max(-t.clip, Math.min(t.clip, cur[c]));
      const h = this.history[i];
      if (t.history === 1) this.observation.set(cur, o);
      else if (t.historyLayout === 'past_newest_first') {
        // [v(k−1), …, v(k−H)]: zeros after reset; then the current value goes in front
        if (!this.filled[i]) h.fill(0);
        this.observation.set(h, o);
        h.copyWithin(cur.length, 0, (t.history - 1) * cur.length);
        h.set(cur, 0);
      } else {
        if (!this.filled[i]) {
          for (let k = 0; k < t.history - 1; k++) h.set(t.historyPad ?? cur, k * cur.length);
          h.set(cur, (t.history - 1) * cur.length);
        } else {
          h.copyWithin(0, cur.length);
          h.set(cur, (t.history - 1) * cur.length);
        }
        this.observation.set(h, o);
      }
      this.filled[i] = true;
      o += termWidth(t);
    }
    return this.observation;
  }
}
