// The admission decision of one WBC binding × clip pair from its rollouts.
// Every criterion of the policy is evaluated — not only up to the first failure — so a rejection
// lists every reason, each with the measured value, the limit and where it happened:
//
//   "<criterion>: <what> <measured> <comparison> <limit> (<where>)"
//   e.g. "end_effector_height_margin: max |Δz| 0.193 m > 0.150 m (= 0.6 × 0.25 m), right_wrist_yaw_link
//         at t = 4.82 s in rollout 1"
//
// A criterion that cannot be evaluated (a reading unavailable, no contact sensing, a rollout
// that never ran) fails with the reason it could not be: admission needs evidence, not its
// absence.

import type { EpisodeOutcome } from '../backend/backend';
import type { MetricThresholds } from '../metrics/metricContract';
import type { EpisodeMetrics } from '../metrics/readings';
import type { CapabilityGroup } from '../motion/motionClip';
import { contactFramesUnion, type RolloutMeasures } from './measures';
import { floorContactAllowed, resolvedLimits, type AdmissionPolicy } from './policy';

export const CRITERIA = [
  'rollouts',
  'success_rate',
  'progress_soft',
  'mpjpe_l',
  'root_height_margin',
  'root_orientation_margin',
  'end_effector_height_margin',
  'actuator_saturation',
  'unexpected_contacts',
] as const;
export type CriterionId = (typeof CRITERIA)[number];

export const CRITERION_LABELS: Record<CriterionId, string> = {
  rollouts: 'all rollouts ran',
  success_rate: 'SR (no hard failure)',
  progress_soft: 'progress-soft in every rollout',
  mpjpe_l: 'MPJPE-l, worst rollout',
  root_height_margin: 'root height margin',
  root_orientation_margin: 'root orientation margin',
  end_effector_height_margin: 'end-effector height margin',
  actuator_saturation: 'actuator saturation',
  unexpected_contacts: 'unexpected floor contacts',
};

/** One settled rollout of the pair (finished, outcome other than infrastructure_error). */
export interface RolloutEvidence {
  rolloutIndex: number;
  runId: string;
  seed: number;
  outcome: EpisodeOutcome;
  reason: string | null;
  metrics: EpisodeMetrics | null;
  measures: RolloutMeasures | null;
}

/** A rollout that could not be run: infrastructure errors in every allowed attempt. */
export interface UnrunnableRollout {
  rolloutIndex: number;
  attempts: number;
  reason: string;
}

export interface PairEvidence {
  clipName: string;
  group: CapabilityGroup | null;
  rollouts: RolloutEvidence[];
  unrunnable: UnrunnableRollout[];
}

export interface CriterionResult {
  id: CriterionId;
  passed: boolean;
  /** The value judged (worst over rollouts); null when it could not be measured. */
  measured: number | null;
  limit: number;
  unit: string;
  /** How measured must relate to limit to pass. */
  comparison: '≤' | '≥';
  /** Rollout index of the worst value (null: none / all equal). */
  worstRollout: number | null;
  /** The reason line when failed; a short statement of the value when passed. */
  text: string;
}

export interface AdmissionDecision {
  admitted: boolean;
  /** One line per failed criterion (empty when admitted). */
  reasons: string[];
  criteria: CriterionResult[];
}

const f = (v: number, d: number): string => (Number.isFinite(v) ? v.toFixed(d) : String(v));
const pct = (v: number, d = 1): string => `${f(100 * v, d)}%`;
const at = (frame: number, rate: number): string => `t = ${f(frame / rate, 2)} s`;

/** " (after the hard failure at t = … s)" when `frame` comes after the rollout's hard failure: a consequence of the fall, not its cause. */
function afterFailure(r: RolloutEvidence, frame: number): string {
  const fr = r.metrics?.failure;
  return fr && fr.available && fr.value && frame > fr.value.frame
    ? ` (after the hard failure at t = ${f(fr.value.timeS, 2)} s)`
    : '';
}

function describeOutcome(r: RolloutEvidence): string {
  return `rollout ${r.rolloutIndex}: ${r.outcome}${r.reason ? ` (${r.reason})` : ''}`;
}

/** The decision for a pair under a policy and the contract's failure thresholds. */
export function decideAdmission(
  policy: AdmissionPolicy,
  contract: { id: string; rateHz: number; thresholds: MetricThresholds },
  ev: PairEvidence,
): AdmissionDecision {
  const P = policy.parameters;
  const N = P.rollouts;
  const rate = contract.rateHz;
  const lim = resolvedLimits(policy, contract.thresholds);
  const frac = P.marginFraction;
  const rolls = [...ev.rollouts].sort((a, b) => a.rolloutIndex - b.rolloutIndex);
  // Rollouts whose outcome says the motion ran (to its end, or to a fall).
  const judged = rolls.filter((r) => r.outcome === 'completed' || r.outcome === 'hard_failure');
  const other = rolls.filter((r) => !(r.outcome === 'completed' || r.outcome === 'hard_failure'));
  const out: CriterionResult[] = [];
  const noRollouts = 'no rollout ran to an outcome';

  // 1. rollouts
  {
    const problems = [
      ...ev.unrunnable.map(
        (u) => `rollout ${u.rolloutIndex}: infrastructure_error in ${u.attempts} attempt(s), last: ${u.reason}`,
      ),
      ...other.map(describeOutcome),
    ];
    const present = new Set(rolls.map((r) => r.rolloutIndex));
    for (let k = 0; k < N; k++)
      if (!present.has(k) && !ev.unrunnable.some((u) => u.rolloutIndex === k)) problems.push(`rollout ${k}: not run`);
    const passed = judged.length >= N && problems.length === 0;
    out.push({
      id: 'rollouts',
      passed,
      measured: judged.length,
      limit: N,
      unit: 'rollouts',
      comparison: '≥',
      worstRollout: null,
      text: passed
        ? `${judged.length} of ${N} rollouts ran`
        : `rollouts: ${judged.length} of ${N} rollouts ran to an outcome (${problems.join('; ')})`,
    });
  }

  // 2. success rate
  {
    const failures: string[] = [];
    let ok = 0;
    let known = 0;
    const unknown: string[] = [];
    for (const r of judged) {
      const fr = r.metrics?.failure;
      if (!fr || !fr.available) {
        unknown.push(`rollout ${r.rolloutIndex}: ${fr && !fr.available ? fr.reason : 'no metrics'}`);
        continue;
      }
      known++;
      if (fr.value === null) ok++;
      else {
        const h = fr.value;
        const unit = h.condition === 'root_orientation' ? 'rad' : 'm';
        failures.push(
          `rollout ${r.rolloutIndex}: ${h.condition} of ${h.body} ${f(h.error, 3)} ${unit} > ${h.threshold} ${unit} at ${at(h.frame, rate)} (frame ${h.frame})`,
        );
      }
    }
    const sr = judged.length > 0 && unknown.length === 0 ? ok / known : null;
    const passed = sr !== null && sr >= P.minSuccessRate;
    let text: string;
    if (sr === null)
      text = `success_rate: cannot be measured (${judged.length === 0 ? noRollouts : unknown.join('; ')})`;
    else if (passed) text = `SR ${pct(sr, 0)} (${ok} of ${known})`;
    else
      text = `success_rate: SR ${pct(sr, 1)} (${ok} of ${known} rollouts without hard failure) < ${pct(P.minSuccessRate, 0)}: ${failures.slice(0, 3).join('; ')}${failures.length > 3 ? `; and ${failures.length - 3} more` : ''}`;
    out.push({
      id: 'success_rate',
      passed,
      measured: sr,
      limit: P.minSuccessRate,
      unit: '1',
      comparison: '≥',
      worstRollout: null,
      text,
    });
  }

  // 3. progress-soft (min over rollouts)
  {
    let worst: RolloutEvidence | null = null;
    let min = Infinity;
    const unknown: string[] = [];
    for (const r of judged) {
      const p = r.metrics?.progressSoft;
      if (!p || !p.available) {
        unknown.push(`rollout ${r.rolloutIndex}: ${p && !p.available ? p.reason : 'no metrics'}`);
        continue;
      }
      if (p.value < min) {
        min = p.value;
        worst = r;
      }
    }
    const measured = judged.length > 0 && unknown.length === 0 ? min : null;
    const passed = measured !== null && measured >= P.minProgressSoft;
    let text: string;
    if (measured === null)
      text = `progress_soft: cannot be measured (${judged.length === 0 ? noRollouts : unknown.join('; ')})`;
    else if (passed) text = `min progress-soft ${f(measured, 3)}`;
    else {
      const stop = worst?.metrics?.progressStop;
      const why =
        stop && stop.available && stop.value
          ? `${stop.value.cause} at ${at(stop.value.frame, rate)} (frame ${stop.value.frame} of ${worst!.metrics!.K})`
          : '';
      text = `progress_soft: min ${f(measured, 3)} < ${f(P.minProgressSoft, 3)} (rollout ${worst!.rolloutIndex}${why ? `: ${why}` : ''})`;
    }
    out.push({
      id: 'progress_soft',
      passed,
      measured,
      limit: P.minProgressSoft,
      unit: '1',
      comparison: '≥',
      worstRollout: worst?.rolloutIndex ?? null,
      text,
    });
  }

  // 4. MPJPE-l (max over rollouts)
  {
    let worst: RolloutEvidence | null = null;
    let max = -Infinity;
    const unknown: string[] = [];
    for (const r of judged) {
      const m = r.metrics?.mpjpeLMm;
      if (!m || !m.available) {
        unknown.push(`rollout ${r.rolloutIndex}: ${m && !m.available ? m.reason : 'no metrics'}`);
        continue;
      }
      if (m.value > max) {
        max = m.value;
        worst = r;
      }
    }
    const measured = judged.length > 0 && unknown.length === 0 ? max : null;
    const passed = measured !== null && measured <= P.maxMpjpeLMm;
    const text =
      measured === null
        ? `mpjpe_l: cannot be measured (${judged.length === 0 ? noRollouts : unknown.join('; ')})`
        : passed
          ? `max MPJPE-l ${f(measured, 1)} mm`
          : `mpjpe_l: max ${f(measured, 1)} mm > ${f(P.maxMpjpeLMm, 1)} mm (rollout ${worst!.rolloutIndex})`;
    out.push({
      id: 'mpjpe_l',
      passed,
      measured,
      limit: P.maxMpjpeLMm,
      unit: 'mm',
      comparison: '≤',
      worstRollout: worst?.rolloutIndex ?? null,
      text,
    });
  }

  // 5–7. posture margins (max over rollouts of the per-episode maxima)
  const marginCriterion = (
    id: 'root_height_margin' | 'root_orientation_margin' | 'end_effector_height_margin',
    what: string,
    unit: string,
    limit: number,
    threshold: number,
    pick: (m: NonNullable<RolloutMeasures['margins']>) => { v: number; frame: number; body?: string },
  ) => {
    let worst: { r: RolloutEvidence; v: number; frame: number; body?: string } | null = null;
    const unknown: string[] = [];
    for (const r of judged) {
      const m = r.measures?.margins;
      if (!m) {
        unknown.push(
          `rollout ${r.rolloutIndex}: ${r.measures ? (r.measures.marginsUnavailable ?? 'no margins') : 'no measures recorded'}`,
        );
        continue;
      }
      const x = pick(m);
      if (!worst || x.v > worst.v) worst = { r, ...x };
    }
    const measured = judged.length > 0 && unknown.length === 0 && worst ? worst.v : null;
    const passed = measured !== null && measured <= limit;
    const lim = `${f(limit, 3)} ${unit} (= ${frac} × ${threshold} ${unit})`;
    const text =
      measured === null
        ? `${id}: cannot be measured (${judged.length === 0 ? noRollouts : unknown.join('; ')})`
        : passed
          ? `max ${what} ${f(measured, 3)} ${unit} ≤ ${lim}`
          : `${id}: max ${what} ${f(measured, 3)} ${unit} > ${lim}${worst!.body ? `, ${worst!.body}` : ''} at ${at(worst!.frame, rate)} in rollout ${worst!.r.rolloutIndex}${afterFailure(worst!.r, worst!.frame)}`;
    out.push({ id, passed, measured, limit, unit, comparison: '≤', worstRollout: worst?.r.rolloutIndex ?? null, text });
  };
  marginCriterion('root_height_margin', '|Δz_root|', 'm', lim.rootHeightM, contract.thresholds.rootHeightM, (m) => ({
    v: m.rootHeight.maxM,
    frame: m.rootHeight.frame,
  }));
  marginCriterion(
    'root_orientation_margin',
    'root orientation error',
    'rad',
    lim.rootOrientationRad,
    contract.thresholds.rootOrientationRad,
    (m) => ({ v: m.rootOrientation.maxRad, frame: m.rootOrientation.frame }),
  );
  marginCriterion(
    'end_effector_height_margin',
    '|Δz_ee|',
    'm',
    lim.endEffectorHeightM,
    contract.thresholds.endEffectorHeightM,
    (m) => ({
      v: m.endEffectorHeight.maxM,
      frame: m.endEffectorHeight.frame,
      body: m.endEffectorHeight.body,
    }),
  );

  // 8. actuator saturation (max over rollouts)
  {
    let worst: RolloutEvidence | null = null;
    const unknown: string[] = [];
    for (const r of judged) {
      const s = r.measures?.saturation;
      if (!s || s.samples === 0) {
        unknown.push(`rollout ${r.rolloutIndex}: ${r.measures ? 'no joint samples' : 'no measures recorded'}`);
        continue;
      }
      if (!worst || s.fraction > worst.measures!.saturation.fraction) worst = r;
    }
    const measured = judged.length > 0 && unknown.length === 0 && worst ? worst.measures!.saturation.fraction : null;
    const passed = measured !== null && measured <= P.maxSaturationFraction;
    let text: string;
    if (measured === null)
      text = `actuator_saturation: cannot be measured (${judged.length === 0 ? noRollouts : unknown.join('; ')})`;
    else {
      const s = worst!.measures!.saturation;
      const wj = s.worstJoint
        ? `; worst joint ${s.worstJoint.name}, saturated in ${pct(s.worstJoint.fraction, 0)} of frames`
        : '';
      text = passed
        ? `max saturation ${pct(measured, 2)} of joint samples`
        : `actuator_saturation: ${pct(measured, 2)} of joint samples > ${pct(P.maxSaturationFraction, 1)} (rollout ${worst!.rolloutIndex}: ${s.torqueSaturated} at ≥ ${P.measurement.saturationTorqueFraction} × force limit, ${s.targetSaturated} with the target at its ctrlrange${wj})`;
    }
    out.push({
      id: 'actuator_saturation',
      passed,
      measured,
      limit: P.maxSaturationFraction,
      unit: '1',
      comparison: '≤',
      worstRollout: worst?.rolloutIndex ?? null,
      text,
    });
  }

  // 9. unexpected floor contacts (max over rollouts of frames with any unexpected contact)
  {
    let worst: { r: RolloutEvidence; frames: number; bodies: RolloutMeasures['floorContacts'] } | null = null;
    const unknown: string[] = [];
    for (const r of judged) {
      const m = r.measures;
      if (!m || !m.contactsKnown) {
        unknown.push(
          `rollout ${r.rolloutIndex}: ${m ? 'the backend reported no contact data' : 'no measures recorded'}`,
        );
        continue;
      }
      const bodies = m.floorContacts.filter((c) => !floorContactAllowed(policy, ev.group, c.body));
      // Frames with at least one unexpected contact (union over the bodies).
      const frames = contactFramesUnion(bodies);
      if (!worst || frames > worst.frames) worst = { r, frames, bodies };
    }
    const measured = judged.length > 0 && unknown.length === 0 && worst ? worst.frames : null;
    const passed = measured !== null && measured <= P.maxUnexpectedContactFrames;
    let text: string;
    if (measured === null)
      text = `unexpected_contacts: cannot be measured (${judged.length === 0 ? noRollouts : unknown.join('; ')})`;
    else if (passed)
      text = measured === 0 ? 'no unexpected floor contact' : `unexpected floor contact in ${measured} frame(s)`;
    else {
      const list = [...worst!.bodies]
        .sort((a, b) => b.frames - a.frames || a.firstFrame - b.firstFrame)
        .slice(0, 4)
        .map((c) => `${c.body} in ${c.frames} frame(s) from ${at(c.firstFrame, rate)} (up to ${f(c.maxForceN, 0)} N)`)
        .join(', ');
      const more =
        worst!.bodies.length > 4
          ? `, and ${worst!.bodies.length - 4} more bod${worst!.bodies.length - 4 === 1 ? 'y' : 'ies'}`
          : '';
      const first = worst!.bodies.reduce((a, c) => Math.min(a, c.firstFrame), Infinity);
      text = `unexpected_contacts: ${measured} frame(s) > ${P.maxUnexpectedContactFrames} with a non-foot body on the floor${ev.group ? ` (${ev.group} clip)` : ''}: ${list}${more} in rollout ${worst!.r.rolloutIndex}${afterFailure(worst!.r, first)}`;
    }
    out.push({
      id: 'unexpected_contacts',
      passed,
      measured,
      limit: P.maxUnexpectedContactFrames,
      unit: 'frames',
      comparison: '≤',
      worstRollout: worst?.r.rolloutIndex ?? null,
      text,
    });
  }

  const reasons = out.filter((c) => !c.passed).map((c) => c.text);
  return { admitted: reasons.length === 0, reasons, criteria: out };
}
