import { G1_JOINT_NAMES } from '../robot/g1Joints';
import {
  drivenJointOrderFromNames,
  G1_ISAACLAB_JOINT_NAMES,
  jointOrderFromNames,
  type JointOrderMap,
} from '../robot/jointOrder';
import { termWidth, type TrackingPolicySpec, type TrackingTerm } from './trackingPolicy';

// Negative controls of a policy check: declared perturbations of how the harness READS the robot
// and the policy (never of the policy's weights), each simulating one common harness bug. A run
// under a control uses the same policy file, clip, physics and start as the normal reading; only
// the one reading named here differs. The normal reading never passes through this module.

export const READING_CONTROLS = [
  {
    name: 'joint_order_other',
    aspect: 'joint order',
    description:
      "joints read by position in the other common order instead of by name (Isaac Lab's breadth-first order for a canonical-order policy, the model's canonical order otherwise), in the observation and the action alike",
  },
  {
    name: 'joint_order_mirrored',
    aspect: 'joint order',
    description: 'every left_ joint read as its right_ counterpart and vice versa (the waist as it is)',
  },
  {
    name: 'quaternion_xyzw',
    aspect: 'quaternion order',
    description:
      'the measured root/IMU orientation handed over as (x, y, z, w) where (w, x, y, z) is expected: every term and the anchor pose built from it see the shuffled quaternion',
  },
  {
    name: 'history_reversed',
    aspect: 'history order',
    description:
      "every observation term with history > 1 written with its entries in the reverse of the family's order (newest first where the deploy code writes oldest first, and the other way round)",
  },
] as const;

export type ReadingControlName = (typeof READING_CONTROLS)[number]['name'];
export type ReadingName = 'normal' | ReadingControlName;

export interface ControlApplicability {
  name: ReadingControlName;
  applicable: boolean;
  /** Why not, when not applicable. */
  why: string | null;
}

const historyTerms = (terms: readonly TrackingTerm[]): TrackingTerm[] => terms.filter((t) => t.history > 1);

/** Which controls apply to this policy (a policy without history gets no history control). */
export function controlApplicability(
  spec: Pick<TrackingPolicySpec, 'observation' | 'encoder'>,
): ControlApplicability[] {
  return READING_CONTROLS.map((c) => {
    if (c.name !== 'history_reversed') return { name: c.name, applicable: true, why: null };
    const n = historyTerms(spec.observation).length + historyTerms(spec.encoder?.observation ?? []).length;
    return n > 0
      ? { name: c.name, applicable: true, why: null }
      : { name: c.name, applicable: false, why: 'no observation term has history > 1' };
  });
}

const mirrorName = (n: string): string =>
  n.startsWith('left_') ? `right_${n.slice(5)}` : n.startsWith('right_') ? `left_${n.slice(6)}` : n;

/** The joint table a control reads the policy's joints through. */
export function controlJointOrder(
  map: JointOrderMap,
  control: 'joint_order_other' | 'joint_order_mirrored',
): JointOrderMap {
  // A policy that drives a subset of the joints (the others held) keeps its subset.
  const subset = (map.held?.length ?? 0) > 0;
  if (control === 'joint_order_mirrored')
    return (subset ? drivenJointOrderFromNames : jointOrderFromNames)(map.policyNames.map(mirrorName));
  if (!subset) return jointOrderFromNames(map.label === 'canonical' ? G1_ISAACLAB_JOINT_NAMES : G1_JOINT_NAMES);
  // The subset taken in the first of the two common orders that differs from the policy's own.
  const driven = new Set(map.policyNames);
  const orders = [G1_ISAACLAB_JOINT_NAMES, G1_JOINT_NAMES].map((o) => o.filter((n) => driven.has(n)));
  const other = orders.find((o) => o.some((n, i) => n !== map.policyNames[i])) ?? orders[0];
  return drivenJointOrderFromNames(other);
}

/**
 * The spec the policy is read through under a joint-order control (everything else as loaded:
 * gains, scales and the default pose stay by name, as a harness with only this bug would have them).
 */
export function specUnderJointOrderControl(
  spec: TrackingPolicySpec,
  control: 'joint_order_other' | 'joint_order_mirrored',
): TrackingPolicySpec {
  return { ...spec, jointOrder: controlJointOrder(spec.jointOrder, control) };
}

/** A wxyz quaternion as a harness that hands over xyzw would deliver it: out = (x, y, z, w). */
export function quaternionAsXyzw(q: ArrayLike<number>, out: Float64Array): Float64Array {
  out[0] = q[1];
  out[1] = q[2];
  out[2] = q[3];
  out[3] = q[0];
  return out;
}

/**
 * Rewrites `observation` (laid out by `terms`) in place with the entries of every term of
 * history > 1 in the reverse of its order (the family's newest-first becomes oldest-first and back).
 * Terms of history 1 are untouched.
 */
export function reverseHistoryEntries(terms: readonly TrackingTerm[], observation: Float32Array): void {
  let o = 0;
  for (const t of terms) {
    const w = termWidth(t);
    if (t.history > 1) {
      const entry = w / t.history;
      for (let a = 0, b = t.history - 1; a < b; a++, b--) {
        const pa = o + a * entry;
        const pb = o + b * entry;
        for (let i = 0; i < entry; i++) {
          const v = observation[pa + i];
          observation[pa + i] = observation[pb + i];
          observation[pb + i] = v;
        }
      }
    }
    o += w;
  }
  if (o !== observation.length)
    throw new RangeError(`the terms lay out ${o} values; the observation holds ${observation.length}`);
}
