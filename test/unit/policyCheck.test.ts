import { describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { G1_ISAACLAB_JOINT_NAMES, jointOrderFromNames } from '../../src/domain/robot/jointOrder';
import {
  firstActionReport,
  impliedTermBound,
  ObservationRangeRecorder,
  policyCheckVerdict,
  termJudgement,
  tracksBetter,
  type BoundContext,
  type ReadingRun,
} from '../../src/domain/wbc/policyCheck';
import {
  controlApplicability,
  controlJointOrder,
  quaternionAsXyzw,
  READING_CONTROLS,
  reverseHistoryEntries,
} from '../../src/domain/wbc/readingControls';
import type { TrackingTerm } from '../../src/domain/wbc/trackingPolicy';

// The pure half of `policy check`: implied bounds and range flags per term, the reading controls'
// transforms, and the verdict's wording (which must never claim more than the runs show).

const term = (over: Partial<TrackingTerm> & Pick<TrackingTerm, 'kind' | 'size'>): TrackingTerm => ({
  name: over.kind,
  history: 1,
  scale: null,
  clip: null,
  checkedAgainst: 'test',
  ...over,
});

const n = 29;
const ctx: BoundContext = {
  jointOrder: jointOrderFromNames(G1_JOINT_NAMES),
  jointRangesRad: G1_JOINT_NAMES.map(() => [-1, 2] as const),
  defaultJointPosRad: new Float64Array(n).fill(0.5),
  actionClip: null,
};

describe('implied term bounds', () => {
  it('a scaled unit vector is bounded by |scale|, joint terms by the model ranges, a velocity by nothing', () => {
    const g = impliedTermBound(term({ kind: 'projected_gravity', size: 3, scale: [2, -2, 1] }), ctx)!;
    expect(Array.from(g.lo)).toEqual([-2, -2, -1]);
    expect(Array.from(g.hi)).toEqual([2, 2, 1]);
    expect(g.source).toMatch(/unit vector.*scale/);
    const q = impliedTermBound(term({ kind: 'joint_pos_rel', size: n }), ctx)!;
    expect(q.lo[0]).toBeCloseTo(-1.5);
    expect(q.hi[0]).toBeCloseTo(1.5);
    expect(impliedTermBound(term({ kind: 'base_ang_vel_b', size: 3 }), ctx)).toBeNull();
    expect(impliedTermBound(term({ kind: 'joint_vel_rel', size: n }), ctx)).toBeNull();
    expect(impliedTermBound(term({ kind: 'last_action', size: n }), ctx)).toBeNull();
    const a = impliedTermBound(term({ kind: 'last_action', size: n }), { ...ctx, actionClip: 10 })!;
    expect(a.hi[3]).toBe(10);
    const c = impliedTermBound(term({ kind: 'base_ang_vel_b', size: 3, clip: 5 }), ctx)!;
    expect(c.source).toMatch(/clip ±5/);
  });
});

describe('ObservationRangeRecorder', () => {
  const terms = [
    term({ kind: 'projected_gravity', size: 3 }),
    term({ kind: 'base_ang_vel_b', size: 3, name: 'gyro' }),
    term({ kind: 'joint_pos_rel', size: n, name: 'q' }),
  ];
  const obs = (gz: number, q3: number) => {
    const o = new Float32Array(3 + 3 + n);
    o[2] = gz;
    o[3] = 7;
    o[6 + 3] = q3;
    return o;
  };

  it('reports min/max/mean and says "no bound declared" where the files declare none', () => {
    const r = new ObservationRangeRecorder(terms, ctx);
    r.add(obs(-1, 0));
    r.add(obs(-0.5, 1));
    const [g, w, q] = r.ranges();
    expect(g.min).toBe(-1);
    expect(g.max).toBe(0);
    expect(g.mean).toBeCloseTo(-0.25);
    expect(g.status).toBe('within');
    expect(w.status).toBe('no_bound_declared');
    expect(w.max).toBe(7);
    expect(q.status).toBe('within');
  });

  it('flags a term out of its implied range, naming the worst joint (negative control of the above)', () => {
    const r = new ObservationRangeRecorder(terms, ctx);
    r.add(obs(-1, 0));
    r.add(obs(-3, 1.6)); // gravity of norm 3; q[3] beyond its range by 0.1 rad (> 0.05 tolerance)
    const [g, , q] = r.ranges();
    expect(g.status).toBe('out_of_range');
    expect(g.outOfRange!.worst.at).toBe(-3);
    expect(q.status).toBe('out_of_range');
    expect(q.outOfRange!.worst.value).toBe(G1_JOINT_NAMES[3]);
    expect(q.outOfRange!.fraction).toBeCloseTo(1 / (2 * n));
  });

  it('counts values at a declared clip', () => {
    const r = new ObservationRangeRecorder([term({ kind: 'base_ang_vel_b', size: 3, clip: 2 })], ctx);
    r.add(new Float32Array([2, 0, -2]));
    expect(r.ranges()[0].atClipFraction).toBeCloseTo(2 / 3);
  });
});

describe('reading controls', () => {
  it('each control is declared once with a description; history applies only to terms with history > 1', () => {
    expect(new Set(READING_CONTROLS.map((c) => c.name)).size).toBe(READING_CONTROLS.length);
    const flat = controlApplicability({ observation: [term({ kind: 'joint_pos_rel', size: n })], encoder: null });
    expect(flat.find((a) => a.name === 'history_reversed')).toMatchObject({ applicable: false });
    expect(flat.find((a) => a.name === 'history_reversed')!.why).toMatch(/history > 1/);
    const hist = controlApplicability({
      observation: [term({ kind: 'joint_pos_rel', size: n, history: 4 })],
      encoder: null,
    });
    expect(hist.every((a) => a.applicable)).toBe(true);
  });

  it('reverses history entries newest first and leaves history-1 terms alone', () => {
    const terms = [term({ kind: 'projected_gravity', size: 2, history: 3 }), term({ kind: 'constant', size: 1 })];
    const o = new Float32Array([1, 2, 3, 4, 5, 6, 9]);
    reverseHistoryEntries(terms, o);
    expect(Array.from(o)).toEqual([5, 6, 3, 4, 1, 2, 9]);
    expect(() => reverseHistoryEntries(terms, new Float32Array(8))).toThrow(/7 values/);
  });

  it('mirrors left and right, and swaps canonical with Isaac Lab order, by name', () => {
    const canon = jointOrderFromNames(G1_JOINT_NAMES);
    const m = controlJointOrder(canon, 'joint_order_mirrored');
    const li = G1_JOINT_NAMES.indexOf('left_knee_joint');
    expect(m.policyNames[li]).toBe('right_knee_joint');
    expect(m.policyNames[G1_JOINT_NAMES.indexOf('waist_yaw_joint')]).toBe('waist_yaw_joint');
    expect(controlJointOrder(canon, 'joint_order_other').label).toBe('isaaclab');
    expect(controlJointOrder(jointOrderFromNames(G1_ISAACLAB_JOINT_NAMES), 'joint_order_other').label).toBe(
      'canonical',
    );
    expect(Array.from(quaternionAsXyzw([1, 2, 3, 4], new Float64Array(4)))).toEqual([2, 3, 4, 1]);
  });
});

const run = (reading: ReadingRun['reading'], failureS: number | null, mpjpe: number): ReadingRun => ({
  reading,
  outcome: failureS === null ? 'completed' : 'hard_failure',
  failure: failureS === null ? null : { timeS: failureS, condition: 'root_height', body: 'pelvis' },
  progressSoft: 1,
  mpjpeLMm: mpjpe,
  simSeconds: 5,
  wallSeconds: 1,
});
const all = controlApplicability({
  observation: [term({ kind: 'joint_pos_rel', size: n, history: 2 })],
  encoder: null,
});

describe('verdict', () => {
  it('a normal reading that falls, with every control falling as early: consistent with a policy limit, not proven', () => {
    const v = policyCheckVerdict(
      [run('normal', 1.2, 90), run('joint_order_other', 0.4, 300), run('quaternion_xyzw', 1.5, 200)],
      all,
      5,
    );
    expect(v.kind).toBe('consistent_with_policy_limit');
    expect(v.line).toMatch(/^no alternative reading tracks better: consistent with a policy limit/);
    expect(v.line).toMatch(/not ruled out/);
    expect(v.line).not.toMatch(/proves|is a policy limit/);
  });

  it('a control that survives where the normal reading falls: suspect the harness, naming the aspect', () => {
    const v = policyCheckVerdict([run('normal', 0.6, 300), run('joint_order_mirrored', null, 40)], all, 5);
    expect(v.kind).toBe('reading_tracks_better');
    expect(v.line).toMatch(/^reading joint_order_mirrored tracks better .*suspect the harness's joint order$/);
    expect(v.better.map((b) => b.reading)).toEqual(['joint_order_mirrored']);
  });

  it('needs a margin: a failure 0.3 s later, or MPJPE-l 10 % lower, is not "better"', () => {
    expect(tracksBetter(run('quaternion_xyzw', 1.5, 200), run('normal', 1.2, 90))).toBeNull();
    expect(tracksBetter(run('quaternion_xyzw', 2.0, 200), run('normal', 1.2, 90))).toMatch(/2\.00 s/);
    expect(tracksBetter(run('quaternion_xyzw', null, 27), run('normal', null, 30))).toBeNull();
    expect(tracksBetter(run('quaternion_xyzw', null, 20), run('normal', null, 30))).toMatch(/MPJPE-l 20\.0 mm/);
    const v = policyCheckVerdict([run('normal', null, 30), run('joint_order_other', 0.4, 300)], all, 3.28);
    expect(v.kind).toBe('normal_reading_tracks');
    expect(v.line).toMatch(/first 3\.28 s/);
  });

  it('the first action is compared joint by joint with the reference pose at t = 0', () => {
    const r = firstActionReport([0, 0.5, -0.2], [0, 0.1, 0.1], ['a', 'b', 'c'], 2);
    expect(r.maxAbsRad).toBeCloseTo(0.4);
    expect(r.worst.map((w) => w.joint)).toEqual(['b', 'c']);
    expect(r.meanAbsRad).toBeCloseTo(0.7 / 3);
  });
});

describe('termJudgement (the command line and the Policy panel say the same)', () => {
  const base = { term: 'dof_pos', kind: 'joint_pos_rel', width: 23, min: -1.761, max: 1.503, mean: -0.106 };
  const bound = { lo: -3.289, hi: 2.98, source: 'the model’s joint ranges' };
  it('an out-of-range term names the worst value against its own bound, not the aggregate range', () => {
    const line = termJudgement({
      ...base,
      bound,
      status: 'out_of_range',
      outOfRange: { fraction: 0.0004, worst: { value: 'right_ankle_roll_joint', at: 0.313, lo: -0.262, hi: 0.262 } },
      atClipFraction: 0,
    });
    expect(line).toBe(
      'OUT OF RANGE: 0.0% of values; worst right_ankle_roll_joint = 0.313 outside [-0.262, 0.262] (the model’s joint ranges); 0.0% at the clip',
    );
    // Negative control: the aggregate range (which contains 0.313) is not what it quotes.
    expect(line).not.toContain('[-3.289, 2.980]');
  });
  it('within and unbounded terms', () => {
    expect(termJudgement({ ...base, bound, status: 'within', outOfRange: null, atClipFraction: null })).toBe(
      'within [-3.289, 2.980] (the model’s joint ranges)',
    );
    expect(
      termJudgement({ ...base, bound: null, status: 'no_bound_declared', outOfRange: null, atClipFraction: null }),
    ).toBe('no bound declared');
  });
});
