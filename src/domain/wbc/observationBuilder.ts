import type { ControlObservation } from './controller';
import type { ObservationTerm, PolicyInterface } from './wbcBinding';

// The observation/action side of an ONNX policy's declared interface (DESIGN §3):
// the flat float32 observation built from the declared terms, in order, each multiplied by its
// scale; and the action → joint-target mapping. Pure and allocation-free per step: buffers are
// created once by the caller and reused.
//
// Layout of each term (n = number of joints, 29 for the G1, canonical order):
//   joint_pos_rel_default   n        q − q_default
//   joint_vel               n        dq (rad/s)
//   base_ang_vel            3        IMU gyro, body frame (rad/s)
//   projected_gravity       3        world −z expressed in the body frame (from the IMU quaternion)
//   reference_joint_pos     frames·n reference angles of frames f, f+1, …, f+frames−1 with
//                                    f = referenceFrame + offset (offset default 1: the next
//                                    frame), each clamped to the last clip frame; frame-major
//                                    (all n joints of frame f first)
//   last_action             n        the previous raw action (after clipAction), 0 after reset

export type ObservationTermName = ObservationTerm['term'];

/** reference_joint_pos starts at referenceFrame + 1 unless the term declares an offset. */
export const DEFAULT_REFERENCE_OFFSET = 1;

export interface ObservationSegment {
  term: ObservationTermName;
  /** Offset of the term's first value in the flat observation. */
  offset: number;
  size: number;
  /** e.g. `joint_vel 29`, `reference_joint_pos 5×29`. */
  label: string;
}

/** Size of one term's slice of the observation. */
export function termSize(t: ObservationTerm, joints: number): number {
  switch (t.term) {
    case 'joint_pos_rel_default':
    case 'joint_vel':
    case 'last_action':
      return joints;
    case 'base_ang_vel':
    case 'projected_gravity':
      return 3;
    case 'reference_joint_pos':
      return t.frames * joints;
  }
}

function termLabel(t: ObservationTerm, joints: number): string {
  return t.term === 'reference_joint_pos' ? `${t.term} ${t.frames}×${joints}` : `${t.term} ${termSize(t, joints)}`;
}

export function observationLayout(iface: Pick<PolicyInterface, 'observation'>, joints = 29): ObservationSegment[] {
  const out: ObservationSegment[] = [];
  let offset = 0;
  for (const t of iface.observation) {
    const size = termSize(t, joints);
    out.push({ term: t.term, offset, size, label: termLabel(t, joints) });
    offset += size;
  }
  return out;
}

/** Length D of the flat observation the interface builds. */
export function observationSize(iface: Pick<PolicyInterface, 'observation'>, joints = 29): number {
  let n = 0;
  for (const t of iface.observation) n += termSize(t, joints);
  return n;
}

/** `joint_pos_rel_default 29 + joint_vel 29 + … ` — used in load-time mismatch messages. */
export function describeObservation(iface: Pick<PolicyInterface, 'observation'>, joints = 29): string {
  return iface.observation.map((t) => termLabel(t, joints)).join(' + ');
}

/** Expands a scalar-or-per-joint value to n joints. */
export function perJoint(v: number | readonly number[], n: number, what = 'value'): Float64Array {
  if (typeof v === 'number') return new Float64Array(n).fill(v);
  if (v.length !== n) throw new Error(`${what}: expected one number or ${n} (one per joint), got ${v.length}`);
  return Float64Array.from(v);
}

/**
 * Semantic checks of a declared interface that do not need the model: returns one message per
 * problem, each naming the field (empty when the interface is usable).
 */
export function policyInterfaceProblems(iface: PolicyInterface, joints = 29): string[] {
  const p: string[] = [];
  if (!iface.inputName) p.push('inputName: empty');
  if (!iface.outputName) p.push('outputName: empty');
  if (iface.observation.length === 0) p.push('observation: no terms declared');
  iface.observation.forEach((t, i) => {
    if (!Number.isFinite(t.scale)) p.push(`observation[${i}].scale: not a finite number`);
    if (t.term === 'reference_joint_pos') {
      if (!(Number.isInteger(t.frames) && t.frames >= 1))
        p.push(`observation[${i}].frames: expected an integer ≥ 1, got ${t.frames}`);
      if (t.offset !== undefined && !(Number.isInteger(t.offset) && t.offset >= 0))
        p.push(`observation[${i}].offset: expected an integer ≥ 0, got ${t.offset}`);
    }
  });
  const checkVec = (name: string, v: number | readonly number[] | undefined, nonNegative = false) => {
    if (v === undefined) return;
    const arr = typeof v === 'number' ? [v] : v;
    if (typeof v !== 'number' && v.length !== joints)
      p.push(`${name}: expected one number or ${joints} (one per joint), got ${v.length}`);
    arr.forEach((x, j) => {
      if (!Number.isFinite(x)) p.push(`${name}${typeof v === 'number' ? '' : `[${j}]`}: not a finite number`);
      else if (nonNegative && x < 0) p.push(`${name}${typeof v === 'number' ? '' : `[${j}]`}: negative (${x})`);
    });
  };
  checkVec('actionScale', iface.actionScale);
  checkVec('actionOffset', iface.actionOffset);
  checkVec('gains.kp', iface.gains.kp, true);
  checkVec('gains.kd', iface.gains.kd, true);
  if (iface.defaultJointPosRad !== undefined) {
    if (iface.defaultJointPosRad.length !== joints)
      p.push(`defaultJointPosRad: expected ${joints} values, got ${iface.defaultJointPosRad.length}`);
    else checkVec('defaultJointPosRad', iface.defaultJointPosRad);
  }
  for (const k of ['clipObservation', 'clipAction'] as const) {
    const c = iface[k];
    if (c !== undefined && !(Number.isFinite(c) && c > 0)) p.push(`${k}: expected a positive number, got ${c}`);
  }
  return p;
}

/**
 * World −z (gravity direction) expressed in the body frame whose orientation is q (wxyz, body →
 * world): g_b = R(q)ᵀ·(0, 0, −1). The quaternion need not be normalised. Writes out[o..o+2].
 */
export function writeProjectedGravity(q: ArrayLike<number>, out: Float32Array | Float64Array, o = 0, scale = 1): void {
  const w = q[0];
  const x = q[1];
  const y = q[2];
  const z = q[3];
  const n2 = w * w + x * x + y * y + z * z;
  const s = n2 > 0 ? 2 / n2 : 0;
  // Third row of R(q): [2(xz − wy), 2(yz + wx), 1 − 2(x² + y²)], negated.
  out[o] = -(s * (x * z - w * y)) * scale;
  out[o + 1] = -(s * (y * z + w * x)) * scale;
  out[o + 2] = -(1 - s * (x * x + y * y)) * scale;
}

/** Per-episode inputs of the observation that are not in the ControlObservation. */
export interface ObservationContext {
  /** The pose joint_pos_rel_default is relative to (the policy's, else the model's default). */
  defaultJointPosRad: ArrayLike<number>;
  /** The previous raw action (after clipAction); zeros after reset. */
  lastAction: ArrayLike<number>;
}

/**
 * Writes the flat observation for one control step into `out` (length observationSize) and
 * returns it. Terms in declared order, each value × its scale, then clipObservation if declared.
 * Allocation-free.
 */
export function buildObservation(
  iface: Pick<PolicyInterface, 'observation' | 'clipObservation'>,
  obs: ControlObservation,
  ctx: ObservationContext,
  out: Float32Array,
): Float32Array {
  const st = obs.state;
  const n = st.jointPosRad.length;
  let o = 0;
  for (let ti = 0; ti < iface.observation.length; ti++) {
    const t = iface.observation[ti];
    const s = t.scale;
    switch (t.term) {
      case 'joint_pos_rel_default': {
        const q = st.jointPosRad;
        const d = ctx.defaultJointPosRad;
        for (let j = 0; j < n; j++) out[o + j] = (q[j] - d[j]) * s;
        o += n;
        break;
      }
      case 'joint_vel': {
        const dq = st.jointVelRadS;
        for (let j = 0; j < n; j++) out[o + j] = dq[j] * s;
        o += n;
        break;
      }
      case 'base_ang_vel': {
        const g = st.imu.gyroRadS;
        out[o] = g[0] * s;
        out[o + 1] = g[1] * s;
        out[o + 2] = g[2] * s;
        o += 3;
        break;
      }
      case 'projected_gravity':
        writeProjectedGravity(st.imu.quatWxyz, out, o, s);
        o += 3;
        break;
      case 'reference_joint_pos': {
        const ref = obs.reference;
        const last = ref.frameCount - 1;
        const jp = ref.jointPosRad;
        const stride = jp.length / ref.frameCount;
        const first = obs.referenceFrame + (t.offset ?? DEFAULT_REFERENCE_OFFSET);
        for (let f = 0; f < t.frames; f++) {
          let k = first + f;
          if (k > last) k = last;
          if (k < 0) k = 0;
          const base = k * stride;
          for (let j = 0; j < n; j++) out[o + j] = jp[base + j] * s;
          o += n;
        }
        break;
      }
      case 'last_action': {
        const a = ctx.lastAction;
        for (let j = 0; j < n; j++) out[o + j] = a[j] * s;
        o += n;
        break;
      }
    }
  }
  if (o !== out.length)
    throw new Error(`buildObservation: the interface builds ${o} values, the buffer holds ${out.length}`);
  const c = iface.clipObservation;
  if (c !== undefined) {
    for (let i = 0; i < o; i++) {
      const v = out[i];
      if (v > c) out[i] = c;
      else if (v < -c) out[i] = -c;
    }
  }
  return out;
}

/** The action → joint-target mapping, expanded per joint once at load. */
export interface ActionMap {
  defaultJointPosRad: Float64Array;
  scale: Float64Array;
  offset: Float64Array;
  /** Symmetric clip of the raw action, or null. */
  clip: number | null;
}

export function createActionMap(
  iface: PolicyInterface,
  modelDefaultJointPosRad: ArrayLike<number>,
  joints = 29,
): ActionMap {
  const def = iface.defaultJointPosRad ?? Array.from(modelDefaultJointPosRad);
  if (def.length !== joints) throw new Error(`default joint pose: expected ${joints} values, got ${def.length}`);
  return {
    defaultJointPosRad: Float64Array.from(def),
    scale: perJoint(iface.actionScale, joints, 'actionScale'),
    offset: perJoint(iface.actionOffset, joints, 'actionOffset'),
    clip: iface.clipAction ?? null,
  };
}

/**
 * target_j = default_j + scale_j · a_j + offset_j with a = clip(raw action). Writes the clipped
 * action into `lastActionOut` (the next step's last_action) and the targets into `targetsOut`.
 * Returns false (writing nothing) when the action has a non-finite value.
 */
export function applyAction(
  raw: ArrayLike<number>,
  map: ActionMap,
  lastActionOut: Float64Array,
  targetsOut: Float64Array,
): boolean {
  const n = map.scale.length;
  for (let j = 0; j < n; j++) if (!Number.isFinite(raw[j])) return false;
  const c = map.clip;
  for (let j = 0; j < n; j++) {
    let a = raw[j];
    if (c !== null) a = a > c ? c : a < -c ? -c : a;
    lastActionOut[j] = a;
    targetsOut[j] = map.defaultJointPosRad[j] + map.scale[j] * a + map.offset[j];
  }
  return true;
}
