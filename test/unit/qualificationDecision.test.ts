// The admission decision on hand-made rollout summaries: every criterion of mb-admission/1 passes
// at its limit and fails just beyond it, with a reason that states the measured value, the limit
// and where; a rejection lists every failed criterion; missing evidence is a rejection, not a pass.
import { describe, expect, it } from 'vitest';
import { MB_METRICS_1, type EpisodeMetrics, type HardFailure } from '../../src/domain/metrics';
import type { CapabilityGroup } from '../../src/domain/motion/motionClip';
import {
  CRITERIA,
  decideAdmission,
  MB_ADMISSION_1,
  ROLLOUT_MEASURES_SCHEME,
  type BodyContactSummary,
  type PairEvidence,
  type RolloutEvidence,
  type RolloutMeasures,
} from '../../src/domain/qualification';

const ok = <T>(value: T) => ({ available: true as const, value });

function metrics(
  o: {
    failure?: HardFailure | null;
    progressSoft?: number;
    stop?: { frame: number; cause: 'hard_failure' | 'drift_xy' | 'drift_heading' } | null;
    mpjpe?: number;
  } = {},
): EpisodeMetrics {
  return {
    contract: MB_METRICS_1.id,
    K: 500,
    failure: ok(o.failure ?? null),
    progressSoft: ok(o.progressSoft ?? 1),
    progressStop: ok(o.stop ?? null),
    mpjpeLMm: ok(o.mpjpe ?? 30),
    jointPosRmseRad: ok(0.05),
    jointVelRmseRadS: ok(0.3),
    jointAccRmsRadS2: ok(5),
    jointAccP95RadS2: ok(10),
    jointJerkRmsRadS3: ok(100),
    jointJerkP95RadS3: ok(200),
  };
}

function measures(
  o: {
    rootDz?: number;
    angle?: number;
    eeDz?: number;
    eeBody?: string;
    sat?: number;
    contacts?: BodyContactSummary[];
    contactsKnown?: boolean;
  } = {},
): RolloutMeasures {
  const samples = 500 * 29;
  return {
    scheme: ROLLOUT_MEASURES_SCHEME,
    frames: 500,
    margins: {
      frames: 499,
      rootHeight: { maxM: o.rootDz ?? 0.05, frame: 100 },
      rootOrientation: { maxRad: o.angle ?? 0.1, frame: 150 },
      endEffectorHeight: { maxM: o.eeDz ?? 0.08, frame: 200, body: o.eeBody ?? 'left_wrist_yaw_link' },
    },
    saturation: {
      samples,
      saturated: Math.round((o.sat ?? 0) * samples),
      fraction: o.sat ?? 0,
      torqueSaturated: Math.round((o.sat ?? 0) * samples),
      targetSaturated: 0,
      worstJoint: o.sat ? { name: 'left_knee_joint', fraction: 0.49 } : null,
      jointsWithForceLimit: 29,
      framesWithoutCommand: 0,
    },
    floorContacts: o.contacts ?? [],
    contactsKnown: o.contactsKnown ?? true,
  };
}

function rollout(k: number, m: Partial<RolloutEvidence> = {}): RolloutEvidence {
  const failed = m.metrics?.failure.available && m.metrics.failure.value;
  return {
    rolloutIndex: k,
    runId: `sim-run-${k}`,
    seed: 1000 + k,
    outcome: failed ? 'hard_failure' : 'completed',
    reason: null,
    metrics: metrics(),
    measures: measures(),
    ...m,
  };
}

function pair(
  rollouts: RolloutEvidence[],
  group: CapabilityGroup = 'locomotion',
  unrunnable: PairEvidence['unrunnable'] = [],
): PairEvidence {
  return { clipName: 'clip', group, rollouts, unrunnable };
}

const decide = (ev: PairEvidence) => decideAdmission(MB_ADMISSION_1, MB_METRICS_1, ev);
const three = (patch: Partial<RolloutEvidence> = {}, which = 1) =>
  [0, 1, 2].map((k) => rollout(k, k === which ? patch : {}));
const failedIds = (d: ReturnType<typeof decide>) => d.criteria.filter((c) => !c.passed).map((c) => c.id);
const contact = (body: string, frames: number, first = 100, force = 300): BodyContactSummary => ({
  body,
  other: ['floor'],
  frames,
  runs: [[first, first + frames]],
  firstFrame: first,
  firstTimeS: first / 50,
  maxForceN: force,
});

describe('admission decision (mb-admission/1)', () => {
  it('admits a pair whose three rollouts pass every criterion, and says so for each', () => {
    const d = decide(pair(three()));
    expect(d.admitted).toBe(true);
    expect(d.reasons).toEqual([]);
    expect(d.criteria.map((c) => c.id)).toEqual([...CRITERIA]);
    expect(d.criteria.every((c) => c.passed)).toBe(true);
    expect(d.criteria.find((c) => c.id === 'success_rate')!.measured).toBe(1);
  });

  it('rollouts: a missing or unrunnable rollout rejects, naming it', () => {
    const missing = decide(pair([rollout(0), rollout(1)]));
    expect(missing.admitted).toBe(false);
    expect(failedIds(missing)).toEqual(['rollouts']);
    expect(missing.reasons[0]).toMatch(/^rollouts: 2 of 3 rollouts ran to an outcome \(rollout 2: not run\)/);
    const infra = decide(
      pair([rollout(0), rollout(1)], 'locomotion', [
        { rolloutIndex: 2, attempts: 3, reason: 'the simulation became unstable at t = 1.000 s' },
      ]),
    );
    expect(infra.reasons[0]).toContain(
      'rollout 2: infrastructure_error in 3 attempt(s), last: the simulation became unstable',
    );
  });

  it('success rate: one hard failure in three rejects with SR, the condition, body, value, threshold and time', () => {
    const fail: HardFailure = {
      frame: 151,
      timeS: 3.02,
      condition: 'root_height',
      body: 'pelvis',
      error: 0.3,
      threshold: 0.25,
    };
    const d = decide(
      pair(
        three({
          metrics: metrics({ failure: fail, progressSoft: 0.3, stop: { frame: 151, cause: 'hard_failure' } }),
          outcome: 'hard_failure',
        }),
      ),
    );
    expect(d.admitted).toBe(false);
    const sr = d.criteria.find((c) => c.id === 'success_rate')!;
    expect(sr.measured).toBeCloseTo(2 / 3, 12);
    expect(sr.text).toBe(
      'success_rate: SR 66.7% (2 of 3 rollouts without hard failure) < 100%: rollout 1: root_height of pelvis 0.300 m > 0.25 m at t = 3.02 s (frame 151)',
    );
    // Every failed criterion is listed, not only the first.
    expect(failedIds(d)).toEqual(['success_rate', 'progress_soft']);
    expect(d.reasons[1]).toBe(
      'progress_soft: min 0.300 < 1.000 (rollout 1: hard_failure at t = 3.02 s (frame 151 of 500))',
    );
  });

  it('consequences of a fall are marked as such: maxima and contacts after the hard failure', () => {
    const fail: HardFailure = {
      frame: 151,
      timeS: 3.02,
      condition: 'root_height',
      body: 'pelvis',
      error: 0.3,
      threshold: 0.25,
    };
    const d = decide(
      pair(
        three({
          outcome: 'hard_failure',
          metrics: metrics({ failure: fail, progressSoft: 0.3, stop: { frame: 151, cause: 'hard_failure' } }),
          measures: measures({ rootDz: 0.2, eeDz: 0.7, contacts: [contact('torso_link', 40, 160)] }),
        }),
      ),
    );
    const text = (id: string) => d.criteria.find((c) => c.id === id)!.text;
    expect(text('root_height_margin')).toBe(
      'root_height_margin: max |Δz_root| 0.200 m > 0.150 m (= 0.6 × 0.25 m) at t = 2.00 s in rollout 1',
    ); // frame 100: before the fall
    expect(text('end_effector_height_margin')).toMatch(
      /at t = 4\.00 s in rollout 1 \(after the hard failure at t = 3\.02 s\)$/,
    );
    expect(text('unexpected_contacts')).toMatch(/in rollout 1 \(after the hard failure at t = 3\.02 s\)$/);
  });

  it('progress-soft: drift without a failure rejects on progress alone', () => {
    const d = decide(
      pair(three({ metrics: metrics({ progressSoft: 0.98, stop: { frame: 489, cause: 'drift_xy' } }) })),
    );
    expect(failedIds(d)).toEqual(['progress_soft']);
    expect(d.reasons[0]).toContain('drift_xy at t = 9.78 s');
  });

  it('MPJPE-l: 80 mm passes, 80.1 mm rejects (worst rollout named)', () => {
    expect(decide(pair(three({ metrics: metrics({ mpjpe: 80 }) }))).admitted).toBe(true);
    const d = decide(pair(three({ metrics: metrics({ mpjpe: 80.1 }) }, 2)));
    expect(failedIds(d)).toEqual(['mpjpe_l']);
    expect(d.reasons[0]).toBe('mpjpe_l: max 80.1 mm > 80.0 mm (rollout 2)');
  });

  it('root height margin: 0.6 × 0.25 m = 0.150 m passes, 0.151 m rejects', () => {
    expect(decide(pair(three({ measures: measures({ rootDz: 0.15 }) }))).admitted).toBe(true);
    const d = decide(pair(three({ measures: measures({ rootDz: 0.151 }) })));
    expect(failedIds(d)).toEqual(['root_height_margin']);
    expect(d.reasons[0]).toBe(
      'root_height_margin: max |Δz_root| 0.151 m > 0.150 m (= 0.6 × 0.25 m) at t = 2.00 s in rollout 1',
    );
  });

  it('root orientation margin: 0.6 rad passes, 0.61 rad rejects', () => {
    expect(decide(pair(three({ measures: measures({ angle: 0.6 }) }))).admitted).toBe(true);
    const d = decide(pair(three({ measures: measures({ angle: 0.61 }) })));
    expect(failedIds(d)).toEqual(['root_orientation_margin']);
    expect(d.reasons[0]).toBe(
      'root_orientation_margin: max root orientation error 0.610 rad > 0.600 rad (= 0.6 × 1 rad) at t = 3.00 s in rollout 1',
    );
  });

  it('end-effector height margin rejects naming the body', () => {
    const d = decide(pair(three({ measures: measures({ eeDz: 0.193, eeBody: 'right_wrist_yaw_link' }) })));
    expect(failedIds(d)).toEqual(['end_effector_height_margin']);
    expect(d.reasons[0]).toBe(
      'end_effector_height_margin: max |Δz_ee| 0.193 m > 0.150 m (= 0.6 × 0.25 m), right_wrist_yaw_link at t = 4.00 s in rollout 1',
    );
  });

  it('actuator saturation: 2% passes, 2.72% rejects with the worst joint', () => {
    expect(decide(pair(three({ measures: measures({ sat: 0.02 }) }))).admitted).toBe(true);
    const d = decide(pair(three({ measures: measures({ sat: 0.0272 }) })));
    expect(failedIds(d)).toEqual(['actuator_saturation']);
    expect(d.reasons[0]).toMatch(
      /^actuator_saturation: 2\.72% of joint samples > 2\.0% \(rollout 1: 394 at ≥ 0\.95 × force limit, 0 with the target at its ctrlrange; worst joint left_knee_joint, saturated in 49% of frames\)$/,
    );
  });

  it('unexpected contacts: torso on the floor rejects anywhere; knees and hands only in low_posture clips', () => {
    const torso = three({
      measures: measures({ contacts: [contact('torso_link', 40, 200, 1331), contact('pelvis', 10, 230)] }),
    });
    const d = decide(pair(torso, 'dynamic'));
    expect(failedIds(d)).toEqual(['unexpected_contacts']);
    // Union of the bodies' frames: 200..239 and 230..239 → 40 frames.
    expect(d.criteria.find((c) => c.id === 'unexpected_contacts')!.measured).toBe(40);
    expect(d.reasons[0]).toBe(
      'unexpected_contacts: 40 frame(s) > 0 with a non-foot body on the floor (dynamic clip): torso_link in 40 frame(s) from t = 4.00 s (up to 1331 N), pelvis in 10 frame(s) from t = 4.60 s (up to 300 N) in rollout 1',
    );
    expect(decide(pair(torso, 'low_posture')).admitted).toBe(false);
    const kneel = three({
      measures: measures({ contacts: [contact('left_knee_link', 120), contact('right_wrist_yaw_link', 30, 300)] }),
    });
    expect(decide(pair(kneel, 'low_posture')).admitted).toBe(true);
    const inLoco = decide(pair(kneel, 'locomotion'));
    expect(inLoco.admitted).toBe(false);
    expect(inLoco.criteria.find((c) => c.id === 'unexpected_contacts')!.measured).toBe(150);
  });

  it('missing evidence rejects: contacts not sensed, measures not recorded, a reading unavailable', () => {
    const noContacts = decide(pair(three({ measures: measures({ contactsKnown: false }) })));
    expect(noContacts.reasons).toEqual([
      'unexpected_contacts: cannot be measured (rollout 1: the backend reported no contact data)',
    ]);
    const noMeasures = decide(pair(three({ measures: null })));
    expect(failedIds(noMeasures)).toEqual([
      'root_height_margin',
      'root_orientation_margin',
      'end_effector_height_margin',
      'actuator_saturation',
      'unexpected_contacts',
    ]);
    const m = metrics();
    const unavailable = decide(
      pair(three({ metrics: { ...m, failure: { available: false, reason: 'no global root position' } } })),
    );
    expect(unavailable.reasons[0]).toBe('success_rate: cannot be measured (rollout 1: no global root position)');
  });

  it('an outcome other than completed/hard_failure is not a run rollout', () => {
    const d = decide(pair(three({ outcome: 'aborted_by_operator', reason: 'stopped' })));
    expect(d.admitted).toBe(false);
    expect(d.reasons[0]).toBe('rollouts: 2 of 3 rollouts ran to an outcome (rollout 1: aborted_by_operator (stopped))');
  });

  it('no rollout at all: every criterion fails with the reason', () => {
    const d = decide(pair([]));
    expect(d.criteria.every((c) => !c.passed)).toBe(true);
    expect(d.reasons).toHaveLength(CRITERIA.length);
    expect(d.reasons[1]).toBe('success_rate: cannot be measured (no rollout ran to an outcome)');
  });
});
