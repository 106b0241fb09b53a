import { G1_JOINT_NAMES } from './g1Joints';

// Joint order at a policy boundary, always built from names (never from a width or a position):
// the policy file names its joints, we look every name up in the model's canonical order and
// keep the table. A name the model does not have, a model joint the policy does not name, or a
// repeated name is refused with the list.
//
// Isaac Lab orders an articulation's joints breadth-first through the kinematic tree; for the
// G1 that is the list below, exactly as the BeyondMimic exports' `joint_names` metadata spell it
// (HybridRobotics/whole_body_tracking, utils/exporter.py attaches `joint_names` from the
// articulation). It is named here only to label an order ('isaaclab') and for the NPZ reader's
// order check; every policy is remapped through its own names.

export const G1_ISAACLAB_JOINT_NAMES = [
  'left_hip_pitch_joint',
  'right_hip_pitch_joint',
  'waist_yaw_joint',
  'left_hip_roll_joint',
  'right_hip_roll_joint',
  'waist_roll_joint',
  'left_hip_yaw_joint',
  'right_hip_yaw_joint',
  'waist_pitch_joint',
  'left_knee_joint',
  'right_knee_joint',
  'left_shoulder_pitch_joint',
  'right_shoulder_pitch_joint',
  'left_ankle_pitch_joint',
  'right_ankle_pitch_joint',
  'left_shoulder_roll_joint',
  'right_shoulder_roll_joint',
  'left_ankle_roll_joint',
  'right_ankle_roll_joint',
  'left_shoulder_yaw_joint',
  'right_shoulder_yaw_joint',
  'left_elbow_joint',
  'right_elbow_joint',
  'left_wrist_roll_joint',
  'right_wrist_roll_joint',
  'left_wrist_pitch_joint',
  'right_wrist_pitch_joint',
  'left_wrist_yaw_joint',
  'right_wrist_yaw_joint',
] as const;

export type JointOrderLabel = 'canonical' | 'isaaclab' | 'custom';

export interface JointOrderMap {
  /** The policy's joint names, in its own order. */
  policyNames: readonly string[];
  /** Canonical index of policy joint i. */
  canonicalOf: Int32Array;
  label: JointOrderLabel;
  /**
   * Canonical joints the policy does not drive (its robot has them locked), which the robot side
   * holds at their default pose; absent or empty when the policy drives every joint.
   */
  held?: readonly string[];
}

export class JointOrderError extends Error {
  override readonly name = 'JointOrderError';
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The table from the policy's names to the canonical order; throws JointOrderError naming every bad name. */
export function jointOrderFromNames(
  policyNames: readonly string[],
  canonicalNames: readonly string[] = G1_JOINT_NAMES,
): JointOrderMap {
  const index = new Map(canonicalNames.map((n, i) => [n, i]));
  const unknown: string[] = [];
  const seen = new Set<string>();
  const repeated: string[] = [];
  const canonicalOf = new Int32Array(policyNames.length);
  policyNames.forEach((n, i) => {
    const c = index.get(n);
    if (c === undefined) unknown.push(n);
    else canonicalOf[i] = c;
    if (seen.has(n)) repeated.push(n);
    seen.add(n);
  });
  const missing = canonicalNames.filter((n) => !seen.has(n));
  const problems: string[] = [];
  if (unknown.length) problems.push(`the model has no joint named ${unknown.map((n) => `"${n}"`).join(', ')}`);
  if (repeated.length) problems.push(`named twice: ${repeated.join(', ')}`);
  if (missing.length) problems.push(`the policy does not name ${missing.join(', ')}`);
  if (problems.length)
    throw new JointOrderError(
      `joint names do not match the model's ${canonicalNames.length} joints: ${problems.join('; ')}`,
    );
  const label: JointOrderLabel = sameList(policyNames, canonicalNames)
    ? 'canonical'
    : sameList(policyNames, G1_ISAACLAB_JOINT_NAMES)
      ? 'isaaclab'
      : 'custom';
  return { policyNames: [...policyNames], canonicalOf, label };
}

/**
 * The table for a policy that drives a subset of the model's joints: every name must be a model
 * joint named once; the joints it does not name are returned as `held`, in canonical order.
 */
export function drivenJointOrderFromNames(
  policyNames: readonly string[],
  canonicalNames: readonly string[] = G1_JOINT_NAMES,
): JointOrderMap {
  const named = new Set(policyNames);
  const held = canonicalNames.filter((n) => !named.has(n));
  // Validate names and repeats against the model with the held joints appended, then drop them.
  const full = jointOrderFromNames([...policyNames, ...held], canonicalNames);
  return {
    policyNames: [...policyNames],
    canonicalOf: full.canonicalOf.slice(0, policyNames.length),
    label: held.length === 0 ? full.label : 'custom',
    held,
  };
}

/** Number of canonical joints of the model the table maps into (driven and held). */
export const canonicalCount = (map: JointOrderMap): number => map.canonicalOf.length + (map.held?.length ?? 0);

/** Policy-order values → canonical order (out[canonicalOf[i]] = src[i]). */
export function policyToCanonical(
  map: JointOrderMap,
  src: ArrayLike<number>,
  out: Float64Array | Float32Array,
  srcOffset = 0,
  outOffset = 0,
): void {
  const c = map.canonicalOf;
  for (let i = 0; i < c.length; i++) out[outOffset + c[i]] = src[srcOffset + i];
}

/** Canonical values → policy order (out[i] = src[canonicalOf[i]]). */
export function canonicalToPolicy(
  map: JointOrderMap,
  src: ArrayLike<number>,
  out: Float64Array | Float32Array,
  srcOffset = 0,
  outOffset = 0,
): void {
  const c = map.canonicalOf;
  for (let i = 0; i < c.length; i++) out[outOffset + i] = src[srcOffset + c[i]];
}

/** A per-joint list given in policy order, returned in canonical order. */
export function toCanonical(map: JointOrderMap, values: readonly number[]): Float64Array {
  const out = new Float64Array(canonicalCount(map));
  policyToCanonical(map, values, out);
  return out;
}
