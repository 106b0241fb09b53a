// Physical bounds on the per-joint numbers a released policy's files give (PD gains, action scale
// and offset, default pose, effort limits), checked where they enter (policyFamilies.ts,
// holomotionFamily.ts): a value outside is refused with the file, the key and the bound, so 1e300
// never reaches the simulator or a robot. Each bound is far above what any real G1 policy uses and
// says why; the G1's strongest actuator peaks at 139 N·m (knee, hip pitch) and every G1 joint's
// range lies within ±3.09 rad (assets/g1/g1.xml).

export interface ValueBound {
  /** Largest magnitude accepted. */
  maxAbs: number;
  /** Refuse negative values too. */
  nonNegative?: boolean;
  unit: string;
  /** Why this bound: stated in the refusal. */
  why: string;
}

export const POLICY_VALUE_BOUNDS = {
  /** The released G1 policies use 14–99 N·m/rad. */
  stiffness: {
    maxAbs: 5000,
    nonNegative: true,
    unit: 'N·m/rad',
    why: "at 5000 N·m/rad a 0.03 rad error already asks more than the G1's 139 N·m peak torque",
  },
  /** The released G1 policies use 0.9–6.3 N·m·s/rad. */
  damping: {
    maxAbs: 500,
    nonNegative: true,
    unit: 'N·m·s/rad',
    why: "at 500 N·m·s/rad a 0.3 rad/s velocity already asks more than the G1's 139 N·m peak torque",
  },
  /** The released G1 policies use 0.07–1 rad per unit action. */
  actionScale: {
    maxAbs: 10,
    unit: 'rad per unit action',
    why: 'a unit action would move a target by more than the widest G1 joint range (5.8 rad, the left shoulder pitch)',
  },
  /** Default pose and action offset. */
  jointAngle: {
    maxAbs: Math.PI,
    unit: 'rad',
    why: 'every G1 joint range lies within ±3.09 rad',
  },
  /** The released G1 policies use 5–139 N·m. */
  effortLimit: {
    maxAbs: 1000,
    nonNegative: true,
    unit: 'N·m',
    why: "more than 7 times the G1's strongest actuator (139 N·m)",
  },
} as const satisfies Record<string, ValueBound>;

/** Why `v` is refused under `b`, or null when it is within. */
export function valueBoundProblem(v: number, b: ValueBound): string | null {
  if (!Number.isFinite(v)) return `not a finite number: ${v}`;
  if (b.nonNegative && v < 0) return `negative (${v})`;
  if (Math.abs(v) > b.maxAbs)
    return `${v} ${b.unit} is beyond the bound ${b.nonNegative ? '' : '±'}${Number(b.maxAbs.toFixed(4))} ${b.unit} (${b.why})`;
  return null;
}
