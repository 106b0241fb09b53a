// Root assist of the builtin binding: a virtual gantry holding the pelvis to the reference root
// pose with a spring-damper wrench (DESIGN §9). Evaluated at physics rate: within a control
// interval from reference frame k to k+1 the target pose is interpolated (linear position,
// slerp orientation) at the fraction α of the interval, and the target velocity is that of the
// segment (constant over the interval). The wrench is in the world frame:
//   F = kp·(p_ref − p) + kd·(v_ref − v)
//   τ = kpR·rotvec(q_ref ⊗ q⁻¹) + kdR·(ω_ref − ω)
// with p, v the pelvis position and linear velocity (free-joint qpos/qvel), ω the pelvis angular
// velocity rotated to the world frame, rotvec the rotation vector (axis·angle, angle ≤ π).
// MuJoCo applies xfrc_applied at the body's centre of mass; the small offset of the pelvis COM
// from its frame origin is part of the gantry's definition. Nothing here allocates.

import { slerpWxyzInto } from '../motion/resample';
import type { RootAssist } from '../wbc/wbcBinding';

/** Rotation vector of the wxyz quaternion at q[o..o+4) into out[oo..oo+3). */
export function quatToRotvecInto(q: ArrayLike<number>, o: number, out: Float64Array, oo: number): void {
  let w = q[o];
  let x = q[o + 1];
  let y = q[o + 2];
  let z = q[o + 3];
  if (w < 0) {
    w = -w;
    x = -x;
    y = -y;
    z = -z;
  }
  const s = Math.sqrt(x * x + y * y + z * z);
  if (s < 1e-12) {
    out[oo] = 2 * x;
    out[oo + 1] = 2 * y;
    out[oo + 2] = 2 * z;
    return;
  }
  const k = (2 * Math.atan2(s, w)) / s;
  out[oo] = k * x;
  out[oo + 1] = k * y;
  out[oo + 2] = k * z;
}

export class RootAssistController {
  private readonly kp: number;
  private readonly kd: number;
  private readonly kpR: number;
  private readonly kdR: number;
  // current segment
  private readonly p0 = new Float64Array(3);
  private readonly dp = new Float64Array(3);
  private readonly q0 = new Float64Array(4);
  private readonly q1 = new Float64Array(4);
  private readonly vRef = new Float64Array(3);
  private readonly wRef = new Float64Array(3);
  // scratch
  private readonly qRef = new Float64Array(4);
  private readonly dq = new Float64Array(4);
  private readonly rv = new Float64Array(3);

  constructor(readonly gains: RootAssist) {
    this.kp = gains.kpNPerM;
    this.kd = gains.kdNsPerM;
    this.kpR = gains.kpNmPerRad;
    this.kdR = gains.kdNmsPerRad;
  }

  /**
   * Starts the interval from frame k0 to frame k1 of the reference (root positions N×3, wxyz
   * quaternions N×4) lasting 1/rateHz seconds. k1 = k0 holds the pose with zero velocity.
   */
  setSegment(rootPosM: Float64Array, rootQuatWxyz: Float64Array, k0: number, k1: number, rateHz: number): void {
    for (let c = 0; c < 3; c++) {
      this.p0[c] = rootPosM[3 * k0 + c];
      this.dp[c] = rootPosM[3 * k1 + c] - rootPosM[3 * k0 + c];
      this.vRef[c] = this.dp[c] * rateHz;
    }
    for (let c = 0; c < 4; c++) {
      this.q0[c] = rootQuatWxyz[4 * k0 + c];
      this.q1[c] = rootQuatWxyz[4 * k1 + c];
    }
    // ω_ref (world) = rotvec(q1 ⊗ q0⁻¹) · rate
    mulConjInto(this.q1, this.q0, this.dq);
    quatToRotvecInto(this.dq, 0, this.wRef, 0);
    for (let c = 0; c < 3; c++) this.wRef[c] *= rateHz;
  }

  /**
   * The wrench at fraction α ∈ [0, 1] of the segment for the free-joint state (qpos[0..7]:
   * position, wxyz; qvel[0..6]: world linear velocity, local angular velocity), written as
   * [Fx, Fy, Fz, τx, τy, τz] to out[oo..oo+6).
   */
  compute(alpha: number, qpos: ArrayLike<number>, qvel: ArrayLike<number>, out: Float64Array, oo: number): void {
    const qRef = this.qRef;
    slerpWxyzInto(qRef, 0, this.q0, 0, this.q1, 0, alpha);
    for (let c = 0; c < 3; c++) {
      const pRef = this.p0[c] + alpha * this.dp[c];
      out[oo + c] = this.kp * (pRef - qpos[c]) + this.kd * (this.vRef[c] - qvel[c]);
    }
    // orientation error rotvec(q_ref ⊗ q⁻¹), world frame
    const w = qpos[3];
    const x = qpos[4];
    const y = qpos[5];
    const z = qpos[6];
    const dq = this.dq;
    dq[0] = qRef[0] * w + qRef[1] * x + qRef[2] * y + qRef[3] * z;
    dq[1] = -qRef[0] * x + qRef[1] * w - qRef[2] * z + qRef[3] * y;
    dq[2] = -qRef[0] * y + qRef[1] * z + qRef[2] * w - qRef[3] * x;
    dq[3] = -qRef[0] * z - qRef[1] * y + qRef[2] * x + qRef[3] * w;
    quatToRotvecInto(dq, 0, this.rv, 0);
    // ω world = R(q) · ω local
    const lx = qvel[3];
    const ly = qvel[4];
    const lz = qvel[5];
    const tx = 2 * (y * lz - z * ly);
    const ty = 2 * (z * lx - x * lz);
    const tz = 2 * (x * ly - y * lx);
    // (MuJoCo keeps the free-joint quaternion unit)
    const wx = lx + w * tx + (y * tz - z * ty);
    const wy = ly + w * ty + (z * tx - x * tz);
    const wz = lz + w * tz + (x * ty - y * tx);
    out[oo + 3] = this.kpR * this.rv[0] + this.kdR * (this.wRef[0] - wx);
    out[oo + 4] = this.kpR * this.rv[1] + this.kdR * (this.wRef[1] - wy);
    out[oo + 5] = this.kpR * this.rv[2] + this.kdR * (this.wRef[2] - wz);
  }
}

/** out = a ⊗ b⁻¹ (b unit). */
function mulConjInto(a: Float64Array, b: Float64Array, out: Float64Array): void {
  const aw = a[0];
  const ax = a[1];
  const ay = a[2];
  const az = a[3];
  const bw = b[0];
  const bx = -b[1];
  const by = -b[2];
  const bz = -b[3];
  out[0] = aw * bw - ax * bx - ay * by - az * bz;
  out[1] = aw * bx + ax * bw + ay * bz - az * by;
  out[2] = aw * by - ax * bz + ay * bw + az * bx;
  out[3] = aw * bz + ax * by - ay * bx + az * bw;
}
