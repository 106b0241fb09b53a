// The robot model as the workload generator and the physical checks see it: forward kinematics
// of a RobotProfile, the foot contact spheres (the collision spheres of left/right_ankle_roll_link),
// the lowest point of every collision geom, and a damped Newton leg IK (6 joints → 6-DoF foot pose).

import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import { ForwardKinematics } from '../robot/forwardKinematics';
import type { GeomSpec, RobotProfile } from '../robot/robotProfile';
import { qmul, type Quat, type Vec3 } from './rotation';

export type Side = 0 | 1; // 0 = left, 1 = right
export const SIDES: readonly Side[] = [0, 1];

/** Canonical index of a joint by name (throws on an unknown name). */
export function jointIndex(name: string): number {
  const i = (G1_JOINT_NAMES as readonly string[]).indexOf(name);
  if (i < 0) throw new Error(`unknown G1 joint "${name}"`);
  return i;
}

/** First canonical index of each leg's 6 joints (hip pitch, hip roll, hip yaw, knee, ankle pitch, ankle roll). */
export const LEG_JOINT0: readonly [number, number] = [
  jointIndex('left_hip_pitch_joint'),
  jointIndex('right_hip_pitch_joint'),
];

interface CollisionGeom {
  body: number;
  type: GeomSpec['type'];
  pos: Vec3;
  quat: Quat;
  size: number[];
  isFoot: boolean;
  label: string;
}

export interface FootTarget {
  /** Origin of the ankle_roll_link, world, metres. */
  pos: Vec3;
  /** Orientation of the ankle_roll_link, wxyz. */
  quat: Quat;
}

/** A leg IK that did not reach its target: a generator design error, not a user input problem. */
export class IkError extends Error {
  override readonly name = 'IkError';
}

export class BodyModel {
  readonly profile: RobotProfile;
  readonly fk: ForwardKinematics;
  readonly bodyCount: number;
  /** World body positions / orientations after the last `forward` call. */
  readonly pos: Float64Array;
  readonly quat: Float64Array;
  readonly lowerLimit: Float64Array;
  readonly upperLimit: Float64Array;
  /** Body index of left/right ankle_roll_link. */
  readonly footBody: readonly [number, number];
  /** Foot contact spheres per side: [x, y, z, r] in the foot frame. */
  readonly footSpheres: readonly [number[][], number[][]];
  /** Height of the foot frame origin above the floor when the foot is flat on it. */
  readonly soleHeight: number;
  /** The toe line (front contact spheres' centres) in the foot frame: [x, z]. */
  readonly toeLine: readonly [number, number];
  /** The heel line (rear contact spheres' centres) in the foot frame: [x, z]. */
  readonly heelLine: readonly [number, number];
  private readonly geoms: CollisionGeom[];
  /** Per leg: the 6 hinge bodies, their local axes and anchors. */
  private readonly legBodies: [number[], number[]];
  private readonly q = new Float64Array(G1_NUM_JOINTS);

  constructor(profile: RobotProfile) {
    if (profile.joints.length !== G1_NUM_JOINTS)
      throw new Error(`the workload generator needs the 29-joint G1; the model has ${profile.joints.length} joints`);
    this.profile = profile;
    this.fk = new ForwardKinematics(profile);
    this.bodyCount = this.fk.bodyCount;
    this.pos = new Float64Array(3 * this.bodyCount);
    this.quat = new Float64Array(4 * this.bodyCount);
    this.lowerLimit = new Float64Array(G1_NUM_JOINTS).fill(-Infinity);
    this.upperLimit = new Float64Array(G1_NUM_JOINTS).fill(Infinity);
    for (const j of profile.joints) {
      if (j.rangeRad) {
        this.lowerLimit[j.index] = j.rangeRad[0];
        this.upperLimit[j.index] = j.rangeRad[1];
      }
    }
    const bodyIdx = (name: string) => {
      const i = profile.bodies.findIndex((b) => b.name === name);
      if (i < 0) throw new Error(`the model has no body "${name}"`);
      return i;
    };
    this.footBody = [bodyIdx('left_ankle_roll_link'), bodyIdx('right_ankle_roll_link')];
    this.geoms = [];
    const spheres: [number[][], number[][]] = [[], []];
    profile.bodies.forEach((b, bi) => {
      b.geoms.forEach((g, gi) => {
        if (!g.collides || g.type === 'plane' || g.type === 'mesh') return;
        const side = this.footBody.indexOf(bi);
        const isFoot = side >= 0 && g.type === 'sphere';
        if (isFoot) spheres[side].push([g.posM[0], g.posM[1], g.posM[2], g.size[0]]);
        this.geoms.push({
          body: bi,
          type: g.type,
          pos: [...g.posM],
          quat: [...g.quatWxyz],
          size: g.size,
          isFoot,
          label: g.name ?? `${b.name}#${gi}`,
        });
      });
    });
    if (spheres[0].length === 0 || spheres[1].length === 0)
      throw new Error('the model has no foot contact spheres on left/right_ankle_roll_link');
    this.footSpheres = spheres;
    let sole = Infinity;
    let toeX = -Infinity;
    let heelX = Infinity;
    for (const s of spheres[0]) {
      sole = Math.min(sole, s[2] - s[3]);
      toeX = Math.max(toeX, s[0]);
      heelX = Math.min(heelX, s[0]);
    }
    this.soleHeight = -sole;
    const toe = spheres[0].find((s) => s[0] === toeX) as number[];
    const heel = spheres[0].find((s) => s[0] === heelX) as number[];
    this.toeLine = [toe[0], toe[2]];
    this.heelLine = [heel[0], heel[2]];
    this.legBodies = [[], []];
    for (const side of SIDES) {
      for (let k = 0; k < 6; k++) {
        const ji = LEG_JOINT0[side] + k;
        this.legBodies[side].push(profile.joints[ji].bodyIndex);
      }
    }
  }

  /** FK of a pose into `pos` / `quat`. */
  forward(rootPos: ArrayLike<number>, rootQuat: ArrayLike<number>, joints: ArrayLike<number>): void {
    this.fk.compute(rootPos, rootQuat, joints, this.pos, this.quat);
  }

  /** Lowest point (z) of one foot's contact spheres, after `forward`. */
  footLowest(side: Side): number {
    const b = this.footBody[side];
    let m = Infinity;
    for (const s of this.footSpheres[side]) {
      const z = this.worldZ(b, s[0], s[1], s[2]) - s[3];
      if (z < m) m = z;
    }
    return m;
  }

  /** World z of the point (x, y, z) of body b's frame, after `forward`. */
  worldZ(b: number, x: number, y: number, z: number): number {
    const o = 4 * b;
    const w = this.quat[o];
    const qx = this.quat[o + 1];
    const qy = this.quat[o + 2];
    const qz = this.quat[o + 3];
    // z row of the rotation matrix
    return (
      this.pos[3 * b + 2] + 2 * (qx * qz - w * qy) * x + 2 * (qy * qz + w * qx) * y + (1 - 2 * (qx * qx + qy * qy)) * z
    );
  }

  /** World position of a point of body b's frame, after `forward`. */
  worldPoint(b: number, x: number, y: number, z: number): Vec3 {
    const o = 4 * b;
    const w = this.quat[o];
    const qx = this.quat[o + 1];
    const qy = this.quat[o + 2];
    const qz = this.quat[o + 3];
    const tx = 2 * (qy * z - qz * y);
    const ty = 2 * (qz * x - qx * z);
    const tz = 2 * (qx * y - qy * x);
    return [
      this.pos[3 * b] + x + w * tx + (qy * tz - qz * ty),
      this.pos[3 * b + 1] + y + w * ty + (qz * tx - qx * tz),
      this.pos[3 * b + 2] + z + w * tz + (qx * ty - qy * tx),
    ];
  }

  /** Lowest point over every collision geom that is not a foot contact sphere: [z, geom label]. */
  lowestNonFootGeom(): [number, string] {
    let m = Infinity;
    let label = '';
    for (const g of this.geoms) {
      if (g.isFoot) continue;
      const z = this.geomLowest(g);
      if (z < m) {
        m = z;
        label = g.label;
      }
    }
    return [m, label];
  }

  private geomLowest(g: CollisionGeom): number {
    const b = g.body;
    const c = this.worldZ(b, g.pos[0], g.pos[1], g.pos[2]);
    const q = qmul(this.quat.subarray(4 * b, 4 * b + 4), g.quat);
    // z components of the geom's x, y, z axes in the world
    const [w, x, y, z] = q;
    const zx = 2 * (x * z - w * y);
    const zy = 2 * (y * z + w * x);
    const zz = 1 - 2 * (x * x + y * y);
    const s = g.size;
    switch (g.type) {
      case 'sphere':
        return c - s[0];
      case 'capsule':
        return c - Math.abs(zz) * s[1] - s[0];
      case 'cylinder':
        return c - Math.abs(zz) * s[1] - s[0] * Math.sqrt(Math.max(0, 1 - zz * zz));
      case 'box':
        return c - Math.abs(zx) * s[0] - Math.abs(zy) * s[1] - Math.abs(zz) * s[2];
      case 'ellipsoid': {
        const ex = zx * s[0];
        const ey = zy * s[1];
        const ez = zz * s[2];
        return c - Math.sqrt(ex * ex + ey * ey + ez * ez);
      }
      default:
        return Infinity;
    }
  }

  /**
   * Leg IK: sets the 6 joints of `side` in `joints` (canonical 29-vector, other entries kept) so
   * that the foot frame reaches `target` with the root at (rootPos, rootQuat). Damped Newton
   * steps from the angles already in `joints` (warm start), clamped to the joint limits.
   * Returns the final residual (position m + orientation rad, Euclidean).
   */
  solveLeg(
    side: Side,
    rootPos: ArrayLike<number>,
    rootQuat: ArrayLike<number>,
    joints: Float64Array,
    target: FootTarget,
    maxIter = 50,
  ): number {
    const j0 = LEG_JOINT0[side];
    const fb = this.footBody[side];
    const bodies = this.legBodies[side];
    const q = this.q;
    q.set(joints);
    const J = new Float64Array(36); // row-major 6×6: rows = [ex, ey, ez, rx, ry, rz], cols = joints
    const e = new Float64Array(6);
    const A = new Float64Array(36);
    const rhs = new Float64Array(6);
    let residual = Infinity;
    for (let it = 0; it <= maxIter; it++) {
      this.forward(rootPos, rootQuat, q);
      const px = this.pos[3 * fb];
      const py = this.pos[3 * fb + 1];
      const pz = this.pos[3 * fb + 2];
      e[0] = target.pos[0] - px;
      e[1] = target.pos[1] - py;
      e[2] = target.pos[2] - pz;
      // orientation error: log(q_target ⊗ q_current⁻¹)
      const o = 4 * fb;
      const cw = this.quat[o];
      const cx = -this.quat[o + 1];
      const cy = -this.quat[o + 2];
      const cz = -this.quat[o + 3];
      const t = target.quat;
      let ew = t[0] * cw - t[1] * cx - t[2] * cy - t[3] * cz;
      let ex = t[0] * cx + t[1] * cw + t[2] * cz - t[3] * cy;
      let ey = t[0] * cy - t[1] * cz + t[2] * cw + t[3] * cx;
      let ez = t[0] * cz + t[1] * cy - t[2] * cx + t[3] * cw;
      if (ew < 0) {
        ew = -ew;
        ex = -ex;
        ey = -ey;
        ez = -ez;
      }
      const vn = Math.sqrt(ex * ex + ey * ey + ez * ez);
      const scale = vn < 1e-12 ? 2 : (2 * Math.atan2(vn, ew)) / vn;
      e[3] = ex * scale;
      e[4] = ey * scale;
      e[5] = ez * scale;
      residual = Math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3] + e[4] * e[4] + e[5] * e[5]);
      if (residual < 1e-12 || it === maxIter) break;
      // Jacobian columns: world axis a, a × (p_foot − anchor)
      for (let k = 0; k < 6; k++) {
        const b = bodies[k];
        const bj = this.profile.bodies[b].joint;
        if (!bj || bj.kind !== 'hinge') throw new Error(`body ${this.profile.bodies[b].name} has no hinge joint`);
        const [ax, ay, az] = rotateBy(this.quat, 4 * b, bj.axis);
        const anc = bj.anchorM;
        let wx = this.pos[3 * b];
        let wy = this.pos[3 * b + 1];
        let wz = this.pos[3 * b + 2];
        if (anc[0] !== 0 || anc[1] !== 0 || anc[2] !== 0) {
          const r = rotateBy(this.quat, 4 * b, anc);
          wx += r[0];
          wy += r[1];
          wz += r[2];
        }
        const dx = px - wx;
        const dy = py - wy;
        const dz = pz - wz;
        J[k] = ay * dz - az * dy;
        J[6 + k] = az * dx - ax * dz;
        J[12 + k] = ax * dy - ay * dx;
        J[18 + k] = ax;
        J[24 + k] = ay;
        J[30 + k] = az;
      }
      // (JᵀJ + μI) Δ = Jᵀ e
      const mu = 1e-10;
      for (let r = 0; r < 6; r++) {
        let s = 0;
        for (let i = 0; i < 6; i++) s += J[6 * i + r] * e[i];
        rhs[r] = s;
        for (let c = 0; c < 6; c++) {
          let a = 0;
          for (let i = 0; i < 6; i++) a += J[6 * i + r] * J[6 * i + c];
          A[6 * r + c] = a + (r === c ? mu : 0);
        }
      }
      solve6(A, rhs);
      // limit the step (keeps Newton stable far from the solution)
      let maxStep = 0;
      for (let k = 0; k < 6; k++) maxStep = Math.max(maxStep, Math.abs(rhs[k]));
      const f = maxStep > 0.3 ? 0.3 / maxStep : 1;
      for (let k = 0; k < 6; k++) {
        const ji = j0 + k;
        let v = q[ji] + f * rhs[k];
        if (v < this.lowerLimit[ji]) v = this.lowerLimit[ji];
        if (v > this.upperLimit[ji]) v = this.upperLimit[ji];
        q[ji] = v;
      }
    }
    for (let k = 0; k < 6; k++) joints[j0 + k] = q[j0 + k];
    return residual;
  }
}

function rotateBy(quat: Float64Array, o: number, v: readonly number[]): Vec3 {
  const w = quat[o];
  const x = quat[o + 1];
  const y = quat[o + 2];
  const z = quat[o + 3];
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}

/** Solves the 6×6 system A x = b in place (b ← x) by Gaussian elimination with partial pivoting. */
function solve6(A: Float64Array, b: Float64Array): void {
  const n = 6;
  for (let c = 0; c < n; c++) {
    let p = c;
    let best = Math.abs(A[n * c + c]);
    for (let r = c + 1; r < n; r++) {
      const v = Math.abs(A[n * r + c]);
      if (v > best) {
        best = v;
        p = r;
      }
    }
    if (p !== c) {
      for (let k = 0; k < n; k++) {
        const tmp = A[n * c + k];
        A[n * c + k] = A[n * p + k];
        A[n * p + k] = tmp;
      }
      const tb = b[c];
      b[c] = b[p];
      b[p] = tb;
    }
    const d = A[n * c + c];
    for (let r = c + 1; r < n; r++) {
      const f = A[n * r + c] / d;
      if (f === 0) continue;
      for (let k = c; k < n; k++) A[n * r + k] -= f * A[n * c + k];
      b[r] -= f * b[c];
    }
  }
  for (let c = n - 1; c >= 0; c--) {
    let s = b[c];
    for (let k = c + 1; k < n; k++) s -= A[n * c + k] * b[k];
    b[c] = s / A[n * c + c];
  }
}
