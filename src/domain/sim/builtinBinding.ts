// The `builtin` WBC binding: a reference tracker, not a policy (DESIGN §9). Joint PD to the
// reference angles through the model's position actuators, plus an optional root-assist wrench
// on the pelvis (a virtual gantry). Everything that changes its behaviour — joint gains, assist
// gains, control rate — enters its version, so results of different gains never mix.
//
// Root assist from one number (`builtin:assist=<N/m>`): the translational stiffness kp. The
// other three gains follow from it by fixed rules, independent of the robot model, so the same
// spec always names the same binding:
//   kd  = 2·sqrt(kp · 35 kg)              N·s/m    critical damping of a 35 kg body (the G1 is
//                                                  33–35 kg) on that spring
//   kpR = kp · 0.2 m²/rad                 N·m/rad  rotational stiffness: 3 kN/m → 600 N·m/rad,
//                                                  about 2.5× the G1's gravity toppling stiffness
//                                                  m·g·h ≈ 35·9.81·0.7 ≈ 240 N·m/rad
//   kdR = 2·sqrt(kpR · 3 kg·m²)           N·m·s/rad critical damping of a 3 kg·m² rotor (the G1's
//                                                  pitch/roll inertia about the pelvis, roughly)

import { sha256HexOfString } from '../hash/sha256';
import type { BuiltinBinding, JointGains, RootAssist } from '../wbc/wbcBinding';

export const BUILTIN_BINDING_ID = 'builtin';
export const BUILTIN_LABEL = 'reference tracker, not a policy';
export const BUILTIN_CONTROL_RATE_HZ = 50;
/** Nominal mass and rotational inertia behind the assist damping rule. */
export const ASSIST_NOMINAL_MASS_KG = 35;
export const ASSIST_NOMINAL_INERTIA_KGM2 = 3;
/** Rotational stiffness per unit translational stiffness, m²/rad. */
export const ASSIST_ROTATIONAL_RATIO = 0.2;

/** The four assist gains from the translational stiffness (see the file header). */
export function rootAssistFromStiffness(kpNPerM: number): RootAssist {
  if (!(Number.isFinite(kpNPerM) && kpNPerM >= 0))
    throw new RangeError(`root-assist stiffness must be a finite number ≥ 0 N/m, got ${kpNPerM}`);
  const kpR = kpNPerM * ASSIST_ROTATIONAL_RATIO;
  return {
    kpNPerM,
    kdNsPerM: 2 * Math.sqrt(kpNPerM * ASSIST_NOMINAL_MASS_KG),
    kpNmPerRad: kpR,
    kdNmsPerRad: 2 * Math.sqrt(kpR * ASSIST_NOMINAL_INERTIA_KGM2),
  };
}

export interface BuiltinBindingSpec {
  /** Default 'builtin'. */
  id?: string;
  /** A prefix of the version; the gains' fingerprint is always appended. */
  versionPrefix?: string;
  label?: string;
  controlRateHz?: number;
  /** null = the model's actuator gains. */
  gains?: JointGains | null;
  /** null or kp = 0 = no assist. */
  rootAssist?: RootAssist | null;
}

const round = (v: number): number => Number(v.toPrecision(12));
const canonGain = (g: number | readonly number[]): number | number[] =>
  typeof g === 'number' ? round(g) : g.map(round);

/**
 * The canonical JSON of what determines a builtin binding's behaviour (numbers rounded to 12
 * significant digits, fixed key order): the input of its version fingerprint.
 */
export function builtinBehaviourJson(b: Pick<BuiltinBinding, 'controlRateHz' | 'gains' | 'rootAssist'>): string {
  const a = b.rootAssist && b.rootAssist.kpNPerM > 0 ? b.rootAssist : null;
  return JSON.stringify({
    kind: 'builtin',
    tracker: 'joint-pd-to-reference/1',
    control_rate_hz: round(b.controlRateHz),
    gains: b.gains ? { kp: canonGain(b.gains.kp), kd: canonGain(b.gains.kd) } : 'model',
    root_assist: a
      ? {
          kp_n_per_m: round(a.kpNPerM),
          kd_ns_per_m: round(a.kdNsPerM),
          kp_nm_per_rad: round(a.kpNmPerRad),
          kd_nms_per_rad: round(a.kdNmsPerRad),
        }
      : null,
  });
}

/** Builds a builtin binding; its version is `<prefix>+<10 hex>` (or `pd1-<10 hex>`) of the behaviour JSON. */
export function makeBuiltinBinding(spec: BuiltinBindingSpec = {}): BuiltinBinding {
  const controlRateHz = spec.controlRateHz ?? BUILTIN_CONTROL_RATE_HZ;
  const rootAssist = spec.rootAssist && spec.rootAssist.kpNPerM > 0 ? { ...spec.rootAssist } : null;
  const gains = spec.gains ? { kp: spec.gains.kp, kd: spec.gains.kd } : null;
  const fingerprint = sha256HexOfString(builtinBehaviourJson({ controlRateHz, gains, rootAssist })).slice(0, 10);
  const assistText = rootAssist ? ` (root assist ${formatGain(rootAssist.kpNPerM)} N/m)` : '';
  return {
    kind: 'builtin',
    id: spec.id ?? BUILTIN_BINDING_ID,
    version: spec.versionPrefix ? `${spec.versionPrefix}+${fingerprint}` : `pd1-${fingerprint}`,
    controlRateHz,
    // Whatever the user calls it, a builtin binding is always labelled as what it is.
    label: spec.label
      ? spec.label.includes(BUILTIN_LABEL)
        ? spec.label
        : `${spec.label} (${BUILTIN_LABEL})`
      : `${BUILTIN_LABEL}${assistText}`,
    gains,
    rootAssist,
    checkpointHash: null,
  };
}

const formatGain = (v: number): string => (Number.isInteger(v) ? String(v) : v.toPrecision(6).replace(/\.?0+$/, ''));
