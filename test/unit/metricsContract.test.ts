import { describe, expect, it } from 'vitest';
import {
  checkContract,
  contractIdFor,
  contractParametersJson,
  customContract,
  MB_METRICS_1,
  type MetricContract,
} from '../../src/domain/metrics/metricContract';
import { metricLayoutFor } from '../../src/domain/metrics/metricLayout';
import { percentileLinearInPlace } from '../../src/domain/metrics/percentile';
import { episodeMetricsJson } from '../../src/domain/metrics/readings';
import { InputError } from '../../src/domain/problems';
import { sha256HexOfString } from '../../src/domain/hash/sha256';
import { batch, moving, profile, standing, value } from './metricsHelpers';
import { MENAGERIE_G1 } from '../helpers/sharedData';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';

describe('contract mb-metrics/1', () => {
  it('holds the numbers of DESIGN §4', () => {
    expect(MB_METRICS_1.id).toBe('mb-metrics/1');
    expect(MB_METRICS_1.rateHz).toBe(50);
    expect(MB_METRICS_1.thresholds).toEqual({
      rootHeightM: 0.25,
      rootOrientationRad: 1.0,
      endEffectorHeightM: 0.25,
      driftXyM: 0.5,
      driftHeadingRad: 0.5,
    });
    expect(MB_METRICS_1.endEffectorBodies).toEqual([
      'left_ankle_roll_link',
      'right_ankle_roll_link',
      'left_wrist_yaw_link',
      'right_wrist_yaw_link',
    ]);
    expect(MB_METRICS_1.bodySet).toBe('all_bodies');
    expect(MB_METRICS_1.definitions.jointJerk).toMatch(/k = 1\.\.K−3/);
    expect(Object.isFrozen(MB_METRICS_1.thresholds)).toBe(true);
    expect(() => checkContract(MB_METRICS_1)).not.toThrow();
  });

  it('resolves its end-effectors and all 30 bodies on both G1 models', () => {
    for (const p of [profile, loadRobotProfile(MENAGERIE_G1)]) {
      const l = metricLayoutFor(MB_METRICS_1, p);
      expect(l.bodyCount).toBe(30);
      expect(l.jointCount).toBe(29);
      expect(l.bodyNames[l.rootBodyIndex]).toBe('pelvis');
      expect([...l.endEffectorBodyIndices].map((i) => l.bodyNames[i])).toEqual([...MB_METRICS_1.endEffectorBodies]);
    }
  });

  it('refuses a model without one of its end-effectors, naming the body and the model', () => {
    const c = customContract({ endEffectorBodies: ['left_ankle_roll_link', 'left_palm_link'] });
    expect(() => metricLayoutFor(c, profile)).toThrow(InputError);
    expect(() => metricLayoutFor(c, profile)).toThrow(/g1\.xml.*no body "left_palm_link"/);
  });

  it('every result carries the contract id', () => {
    const m = batch(standing(5), standing(5));
    expect(m.contract).toBe('mb-metrics/1');
    expect(episodeMetricsJson(m).contract).toBe('mb-metrics/1');
  });
});

describe('user-defined contracts', () => {
  it('get a derived id from the hash of their parameters', () => {
    const c = customContract({ thresholds: { rootHeightM: 0.3 } });
    const expected = `mb-metrics/1+custom-${sha256HexOfString(contractParametersJson(c)).slice(0, 12)}`;
    expect(c.id).toBe(expected);
    expect(c.id).toMatch(/^mb-metrics\/1\+custom-[0-9a-f]{12}$/);
    expect(c.thresholds.rootHeightM).toBe(0.3);
    expect(c.thresholds.rootOrientationRad).toBe(1);
    expect(() => checkContract(c)).not.toThrow();
    // Deterministic: the same parameters give the same id; different ones a different id.
    expect(customContract({ thresholds: { rootHeightM: 0.3 } }).id).toBe(c.id);
    expect(customContract({ thresholds: { rootHeightM: 0.31 } }).id).not.toBe(c.id);
    expect(customContract({ rateHz: 100 }).id).not.toBe(c.id);
    expect(customContract({ endEffectorBodies: ['left_wrist_yaw_link', 'right_wrist_yaw_link'] }).id).toMatch(
      /\+custom-/,
    );
  });

  it('with the standard values keep mb-metrics/1', () => {
    expect(customContract({}).id).toBe('mb-metrics/1');
    expect(customContract({ thresholds: { rootHeightM: 0.25 } }).id).toBe('mb-metrics/1');
    expect(contractIdFor(MB_METRICS_1)).toBe('mb-metrics/1');
  });

  it('cannot reuse mb-metrics/1 (or another id) with different values', () => {
    const forged: MetricContract = { ...MB_METRICS_1, thresholds: { ...MB_METRICS_1.thresholds, rootHeightM: 0.3 } };
    expect(() => checkContract(forged)).toThrow(/names fixed parameters.*mb-metrics\/1\+custom-/);
    const c = customContract({ thresholds: { driftXyM: 1 } });
    expect(() => checkContract({ ...c, thresholds: { ...c.thresholds, driftXyM: 2 } })).toThrow(
      /does not match its parameters/,
    );
  });

  it('reject nonsense parameters', () => {
    expect(() => customContract({ thresholds: { rootHeightM: -1 } })).toThrow(InputError);
    expect(() => customContract({ thresholds: { rootOrientationRad: 4 } })).toThrow(/≤ π/);
    expect(() => customContract({ rateHz: 0 })).toThrow(/rateHz/);
    expect(() => customContract({ endEffectorBodies: ['a', 'a'] })).toThrow(/twice/);
  });

  it('are applied by the reducers and named in their results', () => {
    // A 0.26 m drop fails under mb-metrics/1 but not with a 0.3 m root/end-effector threshold.
    const ref = moving(101, 2);
    const exec = standing(101);
    exec.rootPosM.set(ref.rootPosM);
    exec.rootQuatWxyz.set(ref.rootQuatWxyz);
    exec.jointPosRad.set(ref.jointPosRad);
    exec.bodyPosM.set(ref.bodyPosM);
    for (let k = 50; k < 101; k++) for (let b = 0; b < 30; b++) exec.bodyPosM[90 * k + 3 * b + 2] -= 0.26;
    const lenient = customContract({ thresholds: { rootHeightM: 0.3, endEffectorHeightM: 0.3 } });
    expect(value(batch(ref, exec).failure)).toMatchObject({ frame: 50, condition: 'root_height' });
    const m = batch(ref, exec, undefined, lenient);
    expect(value(m.failure)).toBeNull();
    expect(m.contract).toBe(lenient.id);
  });
});

describe('P95: numpy percentile, method linear', () => {
  const p = (xs: number[], q: number) => percentileLinearInPlace(Float64Array.from(xs), xs.length, q);

  it('worked examples by hand', () => {
    // 1..10: index 0.95·9 = 8.55 → 9 + 0.55·(10 − 9) = 9.55
    expect(p([10, 3, 1, 7, 2, 9, 4, 8, 6, 5], 95)).toBeCloseTo(9.55, 14);
    // 1..20: index 0.95·19 = 18.05 → 19.05
    expect(
      p(
        Array.from({ length: 20 }, (_, i) => 20 - i),
        95,
      ),
    ).toBeCloseTo(19.05, 13);
    // [0, 10]: index 0.95 → 9.5; one value: itself; median of 4: (2 + 3)/2
    expect(p([10, 0], 95)).toBe(9.5);
    expect(p([4.25], 95)).toBe(4.25);
    expect(p([4, 1, 3, 2], 50)).toBe(2.5);
    expect(p([5, 1, 3], 0)).toBe(1);
    expect(p([5, 1, 3], 100)).toBe(5);
    expect(p([2, 2, 2, 2, 2], 95)).toBe(2);
  });

  it('equals numpy.percentile bit for bit on the values numpy gave (numpy 2.4.6)', () => {
    // x_i = (i·7919 mod 1000)/7 for i = 0..1999; numpy.percentile(x, q) for q = 95, 37.3, 99.9:
    const xs = Array.from({ length: 2000 }, (_, i) => ((i * 7919) % 1000) / 7);
    expect(p(xs, 95)).toBe(135.57857142857142);
    expect(p(xs, 37.3)).toBe(53.232428571428564);
    expect(p(xs, 99.9)).toBe(142.57157142857147);
  });

  it('selection handles sorted, reversed and heavily repeated inputs', () => {
    const n = 5001;
    const asc = Array.from({ length: n }, (_, i) => i);
    // index 0.95·5000 = 4750 exactly
    expect(p(asc, 95)).toBe(4750);
    expect(p([...asc].reverse(), 95)).toBe(4750);
    const rep = Array.from({ length: n }, (_, i) => i % 3);
    expect(p(rep, 95)).toBe(2);
    expect(p(rep, 30)).toBe(0);
  });
});
