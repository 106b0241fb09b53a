// The metric contract (DESIGN §4): every number the reducers use — timeline rate, failure and
// drift thresholds, the end-effector and body sets — lives in this object, not in code paths.
// Every result carries the contract id.
//
// Identity rule. `mb-metrics/1` names exactly the parameters of MB_METRICS_1 below. A contract
// with any other parameter value gets a derived id `mb-metrics/1+custom-<12 hex>`, where the hex
// digits are the start of SHA-256 over the canonical JSON of its parameters
// (contractParametersJson). The id is therefore a function of the numbers: two users who pick the
// same thresholds get the same id, different thresholds can never share an id, and checkContract
// refuses an object whose id does not match its parameters (e.g. `mb-metrics/1` with a 0.3 m
// root-height threshold). The definitions (timeline, differentiation rules, P95, SR, MPJPE-l,
// progress-soft) are those of the `mb-metrics/1` family and are not parameters: a contract that
// changes them is a new family (`mb-metrics/2`) and new code.

import { sha256HexOfString } from '../hash/sha256';
import { InputError } from '../problems';

export const MB_METRICS_1_ID = 'mb-metrics/1';
const CUSTOM_PREFIX = `${MB_METRICS_1_ID}+custom-`;

export interface MetricThresholds {
  /** Hard failure when |z_root(E) − z_root(R)| > this, metres. */
  rootHeightM: number;
  /** Hard failure when the angle of q_root(R)⁻¹·q_root(E) > this, radians. */
  rootOrientationRad: number;
  /** Hard failure when |z_b(E) − z_b(R)| > this for an end-effector b, metres. */
  endEffectorHeightM: number;
  /** Global drift (stops progress-soft) when the root xy distance > this, metres. */
  driftXyM: number;
  /** Global drift when |heading(E) − heading(R)| wrapped to (−π, π] > this, radians. */
  driftHeadingRad: number;
}

export interface MetricContract {
  /** `mb-metrics/1`, or `mb-metrics/1+custom-<hash>` for changed parameters. */
  readonly id: string;
  /** The definitions this contract follows. */
  readonly family: typeof MB_METRICS_1_ID;
  /** Common-timeline rate r, Hz: E and R are both resampled to it before anything else. */
  readonly rateHz: number;
  readonly thresholds: Readonly<MetricThresholds>;
  /** End-effector bodies (names in the robot model), in the order failures are checked. */
  readonly endEffectorBodies: readonly string[];
  /** Bodies of MPJPE-l: every body of the model, the root (pelvis) included. */
  readonly bodySet: 'all_bodies';
  /** Fixed definitions of the family, stated for readers of stored results. */
  readonly definitions: {
    readonly timeline: string;
    readonly hardFailureFrames: string;
    readonly jointVelocity: string;
    readonly jointAcceleration: string;
    readonly jointJerk: string;
    readonly percentile: string;
  };
}

/** Parameters a user may change; anything left out keeps the mb-metrics/1 value. */
export interface ContractChanges {
  rateHz?: number;
  thresholds?: Partial<MetricThresholds>;
  endEffectorBodies?: readonly string[];
}

const DEFINITIONS: MetricContract['definitions'] = {
  timeline:
    'E and R resampled to r Hz: t_k = k/r, k = 0..K−1, K = floor(r·min(D_R, D_E) + 1e-9) + 1, D = (N − 1)/fps; ' +
    'source position f = t_k·fps, linear between floor(f) and floor(f)+1 (positions, joint angles), shortest-arc slerp (quaternions), last frame as is',
  hardFailureFrames: 'frames 0..K−2 (a failure on the last frame does not count); the first failing frame is reported',
  jointVelocity: '(q[k+1] − q[k−1])·r/2 at k = 1..K−2, for both E and R',
  jointAcceleration: '(q[k+1] − 2q[k] + q[k−1])·r² at k = 1..K−2, E only',
  jointJerk: '(q[k+2] − 3q[k+1] + 3q[k] − q[k−1])·r³ at k = 1..K−3, E only',
  percentile: 'P95 of |value| over frames × joints, linear interpolation between order statistics (numpy default)',
};

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o as object)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** The contract of DESIGN §4. */
export const MB_METRICS_1: MetricContract = deepFreeze({
  id: MB_METRICS_1_ID,
  family: MB_METRICS_1_ID,
  rateHz: 50,
  thresholds: {
    rootHeightM: 0.25,
    rootOrientationRad: 1.0,
    endEffectorHeightM: 0.25,
    driftXyM: 0.5,
    driftHeadingRad: 0.5,
  },
  endEffectorBodies: ['left_ankle_roll_link', 'right_ankle_roll_link', 'left_wrist_yaw_link', 'right_wrist_yaw_link'],
  bodySet: 'all_bodies',
  definitions: DEFINITIONS,
});

/**
 * Canonical JSON of a contract's parameters (fixed key order, numbers in JavaScript's shortest
 * round-trip form): the input of the derived id.
 */
export function contractParametersJson(c: Pick<MetricContract, 'rateHz' | 'thresholds' | 'endEffectorBodies'>): string {
  const t = c.thresholds;
  return JSON.stringify({
    family: MB_METRICS_1_ID,
    rate_hz: c.rateHz,
    thresholds: {
      root_height_m: t.rootHeightM,
      root_orientation_rad: t.rootOrientationRad,
      end_effector_height_m: t.endEffectorHeightM,
      drift_xy_m: t.driftXyM,
      drift_heading_rad: t.driftHeadingRad,
    },
    end_effector_bodies: [...c.endEffectorBodies],
  });
}

/** The id a contract with these parameters must carry. */
export function contractIdFor(c: Pick<MetricContract, 'rateHz' | 'thresholds' | 'endEffectorBodies'>): string {
  const json = contractParametersJson(c);
  if (json === contractParametersJson(MB_METRICS_1)) return MB_METRICS_1_ID;
  return CUSTOM_PREFIX + sha256HexOfString(json).slice(0, 12);
}

const where = { file: 'metric contract' };

function checkPositive(v: unknown, key: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new InputError({ ...where, key }, `must be a positive finite number, got ${String(v)}`);
  }
  return v;
}

/** A user-defined contract: mb-metrics/1 with the given parameters changed, under its derived id. */
export function customContract(changes: ContractChanges): MetricContract {
  const thresholds: MetricThresholds = { ...MB_METRICS_1.thresholds, ...(changes.thresholds ?? {}) };
  const body = {
    rateHz: changes.rateHz ?? MB_METRICS_1.rateHz,
    thresholds,
    endEffectorBodies: [...(changes.endEffectorBodies ?? MB_METRICS_1.endEffectorBodies)],
  };
  const draft: MetricContract = {
    id: '',
    family: MB_METRICS_1_ID,
    ...body,
    bodySet: 'all_bodies',
    definitions: DEFINITIONS,
  };
  checkParameters(draft);
  return deepFreeze({ ...draft, id: contractIdFor(body) });
}

function checkParameters(c: MetricContract): void {
  checkPositive(c.rateHz, 'rateHz');
  if (c.rateHz > 1000) throw new InputError({ ...where, key: 'rateHz' }, `must be ≤ 1000 Hz, got ${c.rateHz}`);
  for (const k of ['rootHeightM', 'rootOrientationRad', 'endEffectorHeightM', 'driftXyM', 'driftHeadingRad'] as const) {
    checkPositive(c.thresholds[k], `thresholds.${k}`);
  }
  if (c.thresholds.rootOrientationRad > Math.PI)
    throw new InputError(
      { ...where, key: 'thresholds.rootOrientationRad' },
      'must be ≤ π (a rotation angle is in [0, π])',
    );
  if (c.thresholds.driftHeadingRad > Math.PI)
    throw new InputError(
      { ...where, key: 'thresholds.driftHeadingRad' },
      'must be ≤ π (a wrapped heading difference is in (−π, π])',
    );
  const names = c.endEffectorBodies;
  if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || n === '')) {
    throw new InputError({ ...where, key: 'endEffectorBodies' }, 'must be a list of body names');
  }
  if (new Set(names).size !== names.length)
    throw new InputError({ ...where, key: 'endEffectorBodies' }, 'names a body twice');
}

/**
 * Throws unless the contract is well formed and its id is the one its parameters give: refuses
 * `mb-metrics/1` (or any derived id) carrying different values.
 */
export function checkContract(c: MetricContract): void {
  if (c.family !== MB_METRICS_1_ID)
    throw new InputError({ ...where, key: 'family' }, `unknown contract family "${String(c.family)}"`);
  checkParameters(c);
  const expected = contractIdFor(c);
  if (c.id !== expected) {
    throw new InputError(
      { ...where, key: 'id' },
      c.id === MB_METRICS_1_ID
        ? `"${MB_METRICS_1_ID}" names fixed parameters; changed parameters get their own id (${expected}): use customContract()`
        : `id "${c.id}" does not match its parameters (expected "${expected}")`,
    );
  }
}
