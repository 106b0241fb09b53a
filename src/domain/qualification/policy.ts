// The admission policy (DESIGN §1 step 2): when a WBC binding × clip pair is
// admitted for hardware trials. Every number the decision uses lives in ONE object, like the
// metric contract's thresholds; results store the policy id and version.
//
// Identity rule (the same as the metric contract's): `mb-admission/1` names exactly the
// parameters of MB_ADMISSION_1 below. A policy with any other value (e.g. `--rollouts 5`) gets
// the version `1+custom-<12 hex>`, the hex being the start of SHA-256 over the canonical JSON of
// its parameters (policyParametersJson). Two users who pick the same parameters get the same
// version; different parameters never share one; checkPolicy refuses a policy whose version does
// not match its parameters.
//
// The values and why (docs/QUALIFICATION.md has the long form):
//   rollouts 3            seeded rollouts per pair, each from a slightly perturbed start; SR must be
//                         100% over all of them (one fall in three is not "admitted")
//   perturbation          joint angles ±0.01 rad, root yaw ±0.01 rad, uniform, from the rollout's
//                         seed: an encoder-calibration-sized offset, not a push
//   MPJPE-l ≤ 80 mm       worst rollout. About a third of the 0.25 m failure thresholds; a
//                         tracker that follows the clip stays far below it (the builtin tracker
//                         with 3 kN/m assist: ≤ 49 mm on every core-v1 clip; without assist ≤ 25 mm
//                         on the clips it completes), an episode with a fall is at 120–400 mm
//   margins 0.6           max |Δz_root| and max |Δz_ee| ≤ 0.6 × 0.25 m = 0.15 m, root orientation
//                         error ≤ 0.6 × 1.0 rad over the whole episode (frames 0..K−2): 40% of
//                         the failure threshold stays in reserve for sim-to-real differences
//   saturation ≤ 2%       of joint samples (recorded frames × 29 joints) with |τ| ≥ 0.95 × the
//                         actuator's force limit or the target within 1 mrad of (or beyond) its
//                         ctrlrange: ≈ one joint at peak torque for more than half the clip, or
//                         all joints for 2% of it. Footfall peaks (a few frames) stay far below;
//                         a knee held at peak torque through a lunge (≈ 50% of its clip) does not
//   contacts 0 frames     no robot body but the feet touches the floor with ≥ 1 N, except knees
//                         and hands in low_posture clips (kneeling and floor reaches are part of
//                         those motions)

import { sha256HexOfString } from '../hash/sha256';
import type { MetricThresholds } from '../metrics/metricContract';
import type { CapabilityGroup } from '../motion/motionClip';
import { InputError } from '../problems';
import type { MeasurementParameters } from './measures';

export const ADMISSION_POLICY_ID = 'mb-admission';
export const ADMISSION_POLICY_BASE_VERSION = '1';

export interface PerturbationParameters {
  /** Each joint angle of the start offset by U(−x, x) rad (then clamped into the joint's range). */
  jointRad: number;
  /** The root rotated about world z by U(−x, x) rad. */
  rootYawRad: number;
}

export interface AdmissionPolicyParameters {
  /** Seeded rollouts per pair. */
  rollouts: number;
  perturbation: PerturbationParameters;
  /** Required share of rollouts without a hard failure (1 = all). */
  minSuccessRate: number;
  /** Required progress-soft in every rollout (1 = the whole clip without failure or drift). */
  minProgressSoft: number;
  /** Largest MPJPE-l of any rollout, mm. */
  maxMpjpeLMm: number;
  /** Root height, root orientation and end-effector height errors must stay ≤ this × the contract's failure threshold. */
  marginFraction: number;
  /** Largest share of saturated joint samples in any rollout (see MeasurementParameters). */
  maxSaturationFraction: number;
  /** Largest number of recorded frames with an unexpected floor contact, per rollout. */
  maxUnexpectedContactFrames: number;
  /** Floor contacts allowed per capability group: body-name patterns (case-insensitive substrings). Feet never count (the simulator does not report them). */
  allowedFloorContacts: Partial<Record<CapabilityGroup, string[]>>;
  /** A rollout that ends in infrastructure_error is rerun; after this many such attempts in a row the pair is decided without it. */
  maxInfrastructureAttempts: number;
  measurement: MeasurementParameters;
}

export interface AdmissionPolicy {
  readonly id: typeof ADMISSION_POLICY_ID;
  /** `1`, or `1+custom-<12 hex>` for changed parameters. */
  readonly version: string;
  readonly parameters: Readonly<AdmissionPolicyParameters>;
}

export const policyKey = (p: Pick<AdmissionPolicy, 'id' | 'version'>): string => `${p.id}/${p.version}`;

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o as object)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

const DEFAULT_PARAMETERS: AdmissionPolicyParameters = {
  rollouts: 3,
  perturbation: { jointRad: 0.01, rootYawRad: 0.01 },
  minSuccessRate: 1,
  minProgressSoft: 1,
  maxMpjpeLMm: 80,
  marginFraction: 0.6,
  maxSaturationFraction: 0.02,
  maxUnexpectedContactFrames: 0,
  allowedFloorContacts: { low_posture: ['knee', 'wrist', 'hand'] },
  maxInfrastructureAttempts: 3,
  measurement: { saturationTorqueFraction: 0.95, ctrlRangeMarginRad: 0.001, contactMinForceN: 1 },
};

/** The policy of DESIGN §1 step 2 with the values above. */
export const MB_ADMISSION_1: AdmissionPolicy = deepFreeze({
  id: ADMISSION_POLICY_ID,
  version: ADMISSION_POLICY_BASE_VERSION,
  parameters: structuredClone(DEFAULT_PARAMETERS),
});

/** Canonical JSON of the parameters (sorted keys): the input of a derived version. */
export function policyParametersJson(p: AdmissionPolicyParameters): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.keys(v as object)
          .sort()
          .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return JSON.stringify({ family: `${ADMISSION_POLICY_ID}/${ADMISSION_POLICY_BASE_VERSION}`, parameters: sort(p) });
}

export function policyVersionFor(p: AdmissionPolicyParameters): string {
  const json = policyParametersJson(p);
  if (json === policyParametersJson(MB_ADMISSION_1.parameters)) return ADMISSION_POLICY_BASE_VERSION;
  return `${ADMISSION_POLICY_BASE_VERSION}+custom-${sha256HexOfString(json).slice(0, 12)}`;
}

export type PolicyChanges = Partial<Omit<AdmissionPolicyParameters, 'perturbation' | 'measurement'>> & {
  perturbation?: Partial<PerturbationParameters>;
  measurement?: Partial<MeasurementParameters>;
};

/** mb-admission/1 with some parameters changed, under its derived version. */
export function customPolicy(changes: PolicyChanges): AdmissionPolicy {
  const base = MB_ADMISSION_1.parameters;
  const parameters: AdmissionPolicyParameters = {
    ...structuredClone(base),
    ...structuredClone(changes),
    perturbation: { ...base.perturbation, ...(changes.perturbation ?? {}) },
    measurement: { ...base.measurement, ...(changes.measurement ?? {}) },
    allowedFloorContacts: structuredClone(changes.allowedFloorContacts ?? base.allowedFloorContacts),
  } as AdmissionPolicyParameters;
  checkParameters(parameters);
  return deepFreeze({ id: ADMISSION_POLICY_ID, version: policyVersionFor(parameters), parameters });
}

const where = { file: 'admission policy' };

function checkParameters(p: AdmissionPolicyParameters): void {
  const num = (v: unknown, key: string, ok: (x: number) => boolean, what: string) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v))
      throw new InputError({ ...where, key }, `must be ${what}, got ${String(v)}`);
  };
  num(p.rollouts, 'rollouts', (x) => Number.isInteger(x) && x >= 1 && x <= 100, 'an integer in 1..100');
  num(p.perturbation.jointRad, 'perturbation.jointRad', (x) => x >= 0 && x <= 0.5, 'in [0, 0.5] rad');
  num(p.perturbation.rootYawRad, 'perturbation.rootYawRad', (x) => x >= 0 && x <= Math.PI, 'in [0, π] rad');
  num(p.minSuccessRate, 'minSuccessRate', (x) => x >= 0 && x <= 1, 'in [0, 1]');
  num(p.minProgressSoft, 'minProgressSoft', (x) => x >= 0 && x <= 1, 'in [0, 1]');
  num(p.maxMpjpeLMm, 'maxMpjpeLMm', (x) => x > 0, 'a positive number of mm');
  num(p.marginFraction, 'marginFraction', (x) => x > 0 && x <= 1, 'in (0, 1]');
  num(p.maxSaturationFraction, 'maxSaturationFraction', (x) => x >= 0 && x <= 1, 'in [0, 1]');
  num(
    p.maxUnexpectedContactFrames,
    'maxUnexpectedContactFrames',
    (x) => Number.isInteger(x) && x >= 0,
    'an integer ≥ 0',
  );
  num(
    p.maxInfrastructureAttempts,
    'maxInfrastructureAttempts',
    (x) => Number.isInteger(x) && x >= 1 && x <= 20,
    'an integer in 1..20',
  );
  num(
    p.measurement.saturationTorqueFraction,
    'measurement.saturationTorqueFraction',
    (x) => x > 0 && x <= 1,
    'in (0, 1]',
  );
  num(p.measurement.ctrlRangeMarginRad, 'measurement.ctrlRangeMarginRad', (x) => x >= 0 && x < 0.5, 'in [0, 0.5) rad');
  num(p.measurement.contactMinForceN, 'measurement.contactMinForceN', (x) => x >= 0, '≥ 0 N');
  for (const [g, pats] of Object.entries(p.allowedFloorContacts ?? {})) {
    if (!Array.isArray(pats) || pats.some((s) => typeof s !== 'string' || s.trim() === ''))
      throw new InputError(
        { ...where, key: `allowedFloorContacts.${g}` },
        'must be a list of non-empty body-name patterns',
      );
  }
}

/** Throws unless the policy is well formed and its version is the one its parameters give. */
export function checkPolicy(p: AdmissionPolicy): void {
  if (p.id !== ADMISSION_POLICY_ID)
    throw new InputError({ ...where, key: 'id' }, `unknown admission policy "${String(p.id)}"`);
  checkParameters(p.parameters);
  const expected = policyVersionFor(p.parameters);
  if (p.version !== expected)
    throw new InputError(
      { ...where, key: 'version' },
      `version "${p.version}" does not match its parameters (expected "${expected}")`,
    );
}

/** The limits in force for a contract: margin fraction × the contract's failure thresholds. */
export interface ResolvedLimits {
  rootHeightM: number;
  rootOrientationRad: number;
  endEffectorHeightM: number;
}

export function resolvedLimits(
  p: AdmissionPolicy,
  t: Pick<MetricThresholds, 'rootHeightM' | 'rootOrientationRad' | 'endEffectorHeightM'>,
): ResolvedLimits {
  const f = p.parameters.marginFraction;
  return {
    rootHeightM: f * t.rootHeightM,
    rootOrientationRad: f * t.rootOrientationRad,
    endEffectorHeightM: f * t.endEffectorHeightM,
  };
}

/**
 * Fingerprint of what makes a rollout reusable under this policy: the perturbation and the
 * measurement parameters (and the seed scheme). Rollouts recorded under another fingerprint are
 * not reused; changing only a decision limit (e.g. the MPJPE-l limit) re-decides from the stored
 * rollouts without simulating again.
 */
export function rolloutProtocolKey(p: AdmissionPolicy): string {
  const json = JSON.stringify({
    seeds: SEED_SCHEME,
    perturbation: p.parameters.perturbation,
    measurement: p.parameters.measurement,
  });
  return `rp-${sha256HexOfString(json).slice(0, 16)}`;
}

/** How rollout seeds are derived (see rolloutSeed). */
export const SEED_SCHEME = 'mb-qual-seed/1';

/**
 * The seed of rollout k of a pair: the first 12 hex digits (48 bits) of
 * sha256("mb-qual-seed/1\n<parent trace id>\n<k>"). Reproducible, different for every pair and
 * rollout, and a safe integer.
 */
export function rolloutSeed(parentTraceId: string, rollout: number): number {
  return parseInt(sha256HexOfString(`${SEED_SCHEME}\n${parentTraceId}\n${rollout}`).slice(0, 12), 16);
}

/** Whether a body's floor contact is allowed in a clip of this group under the policy. */
export function floorContactAllowed(p: AdmissionPolicy, group: CapabilityGroup | null, body: string): boolean {
  if (!group) return false;
  const pats = p.parameters.allowedFloorContacts[group] ?? [];
  const b = body.toLowerCase();
  return pats.some((s) => b.includes(s.toLowerCase()));
}
