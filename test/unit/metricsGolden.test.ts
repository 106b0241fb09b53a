import { describe, expect, it } from 'vitest';
import { ClipPairEvaluator } from '../../src/domain/metrics/clipPairMetrics';
import { MB_METRICS_1 } from '../../src/domain/metrics/metricContract';
import {
  episodeFailed,
  episodeMetricsJson,
  NO_MOTION_CAPTURE,
  type EpisodeMetrics,
} from '../../src/domain/metrics/readings';
import { successRate } from '../../src/domain/metrics/aggregate';
import type { TimedFrames } from '../../src/domain/motion/resample';
import {
  B,
  batch,
  bodyIndex,
  edit,
  fk,
  J,
  jointIndex,
  moving,
  profile,
  RATE,
  standing,
  stream,
  value,
  withBodies,
  yawRoot,
  type Frames,
} from './metricsHelpers';

// Golden tests: expectations computed by hand (closed forms) for the readings of DESIGN §4.
// Each scenario is also run through the streaming form, which must agree exactly.
const h = 1 / RATE;

function both(ref: Frames, exec: Frames, caps = undefined as Parameters<typeof batch>[2]): EpisodeMetrics {
  const b = batch(ref, exec, caps);
  expect(stream(ref, exec, caps)).toEqual(b);
  return b;
}

const rel = (a: number, b: number): number => Math.abs(a - b) / Math.abs(b);

/** Every number finite; every null reading explained under `unavailable`. */
function expectHonestJson(doc: Record<string, unknown>): void {
  const reasons = (doc.unavailable ?? {}) as Record<string, string>;
  for (const [key, v] of Object.entries(doc)) {
    if (typeof v === 'number') expect(Number.isFinite(v), key).toBe(true);
    if (v === null && key !== 'failure') expect(typeof reasons[key], key).toBe('string');
  }
}

describe('joint readings (golden)', () => {
  it('a constant offset δ on all joints: joint-position RMSE = δ, joint-velocity RMSE = 0', () => {
    const ref = moving(251, 3);
    const delta = 0.05;
    const exec = edit(ref, 0, ref.K, (k, f) => {
      for (let j = 0; j < J; j++) f.jointPosRad[J * k + j] += delta;
    });
    const m = both(ref, exec);
    expect(rel(value(m.jointPosRmseRad), delta)).toBeLessThan(1e-12);
    expect(value(m.jointVelRmseRadS)).toBeLessThan(1e-12);
    // E's own derivatives are R's: the offset does not change them.
    const self = both(ref, ref);
    expect(rel(value(m.jointAccRmsRadS2), value(self.jointAccRmsRadS2))).toBeLessThan(1e-9);
    expect(rel(value(m.jointJerkRmsRadS3), value(self.jointJerkRmsRadS3))).toBeLessThan(1e-9);
    expect(value(m.mpjpeLMm)).toBeGreaterThan(1);
    expect(value(m.failure)).toBeNull();
    expect(value(self.mpjpeLMm)).toBe(0);
    expect(value(self.jointPosRmseRad)).toBe(0);
  });

  describe('a sinusoid q_j = A sin(ωt + 2πj/29)', () => {
    // With 29 phases spread evenly over 2π, Σ_j sin²(θ + 2πj/29) = 29/2 at every θ, so the mean of
    // sin² over frames × joints is exactly 1/2 for any K: the RMS values have closed forms.
    const A = 0.4;
    const omega = 2 * Math.PI * 1.3;
    const K = 400;
    const exec = standing(K);
    for (let k = 0; k < K; k++)
      for (let j = 0; j < J; j++) exec.jointPosRad[J * k + j] = A * Math.sin(omega * k * h + (2 * Math.PI * j) / J);
    const ref = standing(K);
    for (let k = 0; k < K; k++) for (let j = 0; j < J; j++) ref.jointPosRad[J * k + j] = 0;
    const m = both(withBodies(ref), withBodies(exec));
    // Finite-difference gains: the central second difference of sin(ωt) is −(2 − 2cos ωh)/h²·sin(ωt);
    // the third difference (q[k+2] − 3q[k+1] + 3q[k] − q[k−1]) is −(2 sin(ωh/2)/h)³·cos(ω(t + h/2));
    // the central first difference is sin(ωh)/h·cos(ωt).
    const c1 = Math.sin(omega * h) / h;
    const c2 = (2 - 2 * Math.cos(omega * h)) / (h * h);
    const c3 = ((2 * Math.sin((omega * h) / 2)) / h) ** 3;

    it('joint-position RMSE = A/√2 and joint-velocity RMSE = A·sin(ωh)/(h√2) against R = 0', () => {
      expect(rel(value(m.jointPosRmseRad), A / Math.SQRT2)).toBeLessThan(1e-12);
      expect(rel(value(m.jointVelRmseRadS), (A * c1) / Math.SQRT2)).toBeLessThan(1e-12);
    });

    it('acceleration RMS = A(2 − 2cos ωh)/h²/√2 exactly, and Aω²/√2 within the discretisation error', () => {
      const acc = value(m.jointAccRmsRadS2);
      expect(rel(acc, (A * c2) / Math.SQRT2)).toBeLessThan(1e-11);
      // (2 − 2cos ωh)/h² = ω²(1 − (ωh)²/12 + …): the relative error is about (ωh)²/12 = 2.2e-3.
      const e = rel(acc, (A * omega * omega) / Math.SQRT2);
      expect(e).toBeGreaterThan(0.5 * ((omega * h) ** 2 / 12));
      expect(e).toBeLessThan(1.1 * ((omega * h) ** 2 / 12));
    });

    it('jerk RMS = A(2 sin(ωh/2)/h)³/√2 exactly, and Aω³/√2 within the discretisation error', () => {
      const jerk = value(m.jointJerkRmsRadS3);
      expect(rel(jerk, (A * c3) / Math.SQRT2)).toBeLessThan(1e-10);
      // (2 sin(ωh/2)/h)³ = ω³(1 − (ωh)²/8 + …).
      const e = rel(jerk, (A * omega ** 3) / Math.SQRT2);
      expect(e).toBeGreaterThan(0.5 * ((omega * h) ** 2 / 8));
      expect(e).toBeLessThan(1.1 * ((omega * h) ** 2 / 8));
    });

    it('P95 of |acceleration| and |jerk|: the 95th percentile of the analytic values, ≈ sin(0.95·π/2) of the amplitude', () => {
      const accAbs: number[] = [];
      const jerkAbs: number[] = [];
      for (let k = 1; k <= K - 2; k++)
        for (let j = 0; j < J; j++) accAbs.push(A * c2 * Math.abs(Math.sin(omega * k * h + (2 * Math.PI * j) / J)));
      for (let k = 1; k <= K - 3; k++)
        for (let j = 0; j < J; j++)
          jerkAbs.push(A * c3 * Math.abs(Math.cos(omega * (k + 0.5) * h + (2 * Math.PI * j) / J)));
      const p95 = (xs: number[]): number => {
        const s = [...xs].sort((a, b) => a - b);
        const i = 0.95 * (s.length - 1);
        const lo = Math.floor(i);
        return s[lo] + (s[lo + 1] - s[lo]) * (i - lo);
      };
      expect(rel(value(m.jointAccP95RadS2), p95(accAbs))).toBeLessThan(1e-9);
      expect(rel(value(m.jointJerkP95RadS3), p95(jerkAbs))).toBeLessThan(1e-9);
      // For phases spread uniformly, P95 of |sin| is sin(0.95·π/2) = 0.99692.
      expect(rel(value(m.jointAccP95RadS2), A * c2 * Math.sin(0.95 * (Math.PI / 2)))).toBeLessThan(2e-3);
      expect(rel(value(m.jointJerkP95RadS3), A * c3 * Math.sin(0.95 * (Math.PI / 2)))).toBeLessThan(2e-3);
    });
  });
});

describe('hard failure (golden)', () => {
  const K = 251;
  const ref = moving(K, 5);

  it('a root drop of 0.26 m from frame k fails at k with condition root_height (body pelvis)', () => {
    const k0 = 100;
    const exec = edit(ref, k0, K, (k, f) => (f.rootPosM[3 * k + 2] -= 0.26));
    const m = both(ref, exec);
    const f = value(m.failure)!;
    expect(f).toMatchObject({ frame: k0, condition: 'root_height', body: 'pelvis', threshold: 0.25 });
    expect(f.error).toBeCloseTo(0.26, 12);
    expect(f.timeS).toBeCloseTo(k0 / RATE, 12);
    expect(value(episodeFailed(m))).toBe(true);
    expect(value(m.progressSoft)).toBe(k0 / (K - 1));
    expect(value(m.progressStop)).toEqual({ frame: k0, cause: 'hard_failure' });
    expect(episodeMetricsJson(m)).toMatchObject({
      failed: true,
      failure: { frame: k0, condition: 'root_height', body: 'pelvis' },
    });
  });

  it('a drop of 0.24 m is within the threshold: no failure', () => {
    const exec = edit(ref, 100, K, (k, f) => (f.rootPosM[3 * k + 2] -= 0.24));
    const m = both(ref, exec);
    expect(value(m.failure)).toBeNull();
    expect(value(m.progressSoft)).toBe(1);
  });

  it('the same drop only on the last frame is no failure; on frame K−2 it is', () => {
    const last = both(
      ref,
      edit(ref, K - 1, K, (k, f) => (f.rootPosM[3 * k + 2] -= 0.26)),
    );
    expect(value(last.failure)).toBeNull();
    expect(value(episodeFailed(last))).toBe(false);
    expect(value(last.progressSoft)).toBe(1);
    expect(value(last.progressStop)).toBeNull();
    const beforeLast = both(
      ref,
      edit(ref, K - 2, K - 1, (k, f) => (f.rootPosM[3 * k + 2] -= 0.26)),
    );
    expect(value(beforeLast.failure)).toMatchObject({ frame: K - 2, condition: 'root_height' });
    expect(value(beforeLast.progressSoft)).toBe((K - 2) / (K - 1));
  });

  it('a 1.1 rad yaw of the root fails with root_orientation; 0.9 rad only drifts in heading', () => {
    const k0 = 60;
    const m = both(
      ref,
      edit(ref, k0, K, (k, f) => yawRoot(f, k, 1.1)),
    );
    const f = value(m.failure)!;
    expect(f).toMatchObject({ frame: k0, condition: 'root_orientation', body: 'pelvis', threshold: 1 });
    expect(f.error).toBeCloseTo(1.1, 12);
    expect(value(m.progressStop)).toEqual({ frame: k0, cause: 'hard_failure' });
    // A yaw about world z moves no body up or down, so only the orientation condition fires.
    const m09 = both(
      ref,
      edit(ref, k0, K, (k, f) => yawRoot(f, k, 0.9)),
    );
    expect(value(m09.failure)).toBeNull();
    expect(value(m09.progressStop)).toEqual({ frame: k0, cause: 'drift_heading' });
    expect(value(m09.progressSoft)).toBe(k0 / (K - 1));
    // Yaw also rotates the body offsets from the root: MPJPE-l sees it (no rotational alignment).
    expect(value(m09.mpjpeLMm)).toBeGreaterThan(10);
  });

  it('an end-effector lifted 0.3 m (left shoulder pitch, by FK) fails naming left_wrist_yaw_link', () => {
    // Bisection on the left shoulder pitch of the standing pose for a 0.3 m rise of the left
    // wrist_yaw_link (the hand end-effector) in the world frame.
    const wrist = bodyIndex('left_wrist_yaw_link');
    const sp = jointIndex('left_shoulder_pitch_joint');
    const pose = profile.defaultPose;
    const pos = new Float64Array(3 * B);
    const quat = new Float64Array(4 * B);
    const zAt = (a: number, out = pos): number => {
      const q = [...pose.jointPosRad];
      q[sp] = a;
      fk.compute(pose.rootPosM, pose.rootQuatWxyz, q, out, quat);
      return out[3 * wrist + 2];
    };
    const z0 = zAt(pose.jointPosRad[sp]);
    let lo = -1.5; // rise > 0.3 m here (arm raised forward)
    let hi = pose.jointPosRad[sp];
    expect(zAt(lo) - z0).toBeGreaterThan(0.3);
    for (let i = 0; i < 80; i++) {
      const mid = (lo + hi) / 2;
      if (zAt(mid) - z0 > 0.3) lo = mid;
      else hi = mid;
    }
    const angle = (lo + hi) / 2;
    const lifted = new Float64Array(3 * B);
    expect(zAt(angle, lifted) - z0).toBeCloseTo(0.3, 9);
    zAt(pose.jointPosRad[sp]);
    // Only the left arm moved: the other end-effectors and the root keep their heights.
    for (const other of ['left_ankle_roll_link', 'right_ankle_roll_link', 'right_wrist_yaw_link', 'pelvis']) {
      const b = bodyIndex(other);
      expect(lifted[3 * b + 2]).toBe(pos[3 * b + 2]);
    }

    const K2 = 101;
    const still = standing(K2);
    const k0 = 40;
    const exec = edit(still, k0, K2, (k, f) => (f.jointPosRad[J * k + sp] = angle));
    const m = both(still, exec);
    const f = value(m.failure)!;
    expect(f).toMatchObject({
      frame: k0,
      condition: 'end_effector_height',
      body: 'left_wrist_yaw_link',
      threshold: 0.25,
    });
    expect(f.error).toBeCloseTo(0.3, 9);
    // Same on the right arm (mirror joint), naming the right hand.
    const rsp = jointIndex('right_shoulder_pitch_joint');
    const mr = both(
      still,
      edit(still, k0, K2, (k, f2) => (f2.jointPosRad[J * k + rsp] = angle)),
    );
    expect(value(mr.failure)).toMatchObject({
      frame: k0,
      condition: 'end_effector_height',
      body: 'right_wrist_yaw_link',
    });
  });

  it('conditions on one frame are reported in the order root_height, root_orientation, end-effector', () => {
    // Dropping the root drops every body: root_height is reported, not the end-effectors.
    const m = both(
      ref,
      edit(ref, 30, K, (k, f) => {
        f.rootPosM[3 * k + 2] -= 0.4;
        yawRoot(f, k, 1.5);
      }),
    );
    expect(value(m.failure)).toMatchObject({ frame: 30, condition: 'root_height', body: 'pelvis' });
  });
});

describe('progress-soft (golden)', () => {
  it('a root drift reaching 0.6 m stops progress where it passes 0.5 m; SR is unaffected', () => {
    const K = 201;
    const ref = moving(K, 7);
    // E's root drifts linearly in x: 0.6·k/(K − 1) m, passing 0.5 m after k = 166.67.
    const exec = edit(ref, 0, K, (k, f) => (f.rootPosM[3 * k] += (0.6 * k) / (K - 1)));
    const m = both(ref, exec);
    expect(value(m.progressStop)).toEqual({ frame: 167, cause: 'drift_xy' });
    expect(value(m.progressSoft)).toBe(167 / 200);
    expect(value(m.failure)).toBeNull();
    expect(value(successRate([m]))).toBe(1);
    // Root translation is subtracted: MPJPE-l does not see the drift.
    expect(value(m.mpjpeLMm)).toBeLessThan(1e-9);
  });

  it('drift in y counts the same (xy distance)', () => {
    const K = 101;
    const ref = moving(K, 8);
    const m = both(
      ref,
      edit(ref, 50, K, (k, f) => (f.rootPosM[3 * k + 1] -= 0.6)),
    );
    expect(value(m.progressStop)).toEqual({ frame: 50, cause: 'drift_xy' });
    expect(value(m.progressSoft)).toBe(0.5);
  });
});

describe('availability', () => {
  const layoutRoot = profile.rootBodyIndex;
  const K = 120;
  const ref = moving(K, 9);
  const exec = edit(ref, 0, K, (k, f) => {
    for (let j = 0; j < J; j++) f.jointPosRad[J * k + j] += 0.02 * Math.sin(k + j);
    f.rootPosM[3 * k + 2] -= k > 80 ? 0.3 : 0;
  });

  it('without motion capture: failure, SR, progress-soft and MPJPE-l are unavailable with reasons; joint readings are unchanged', () => {
    const full = both(ref, exec);
    const m = both(ref, exec, NO_MOTION_CAPTURE);
    for (const key of ['failure', 'progressSoft', 'progressStop', 'mpjpeLMm'] as const) {
      const r = m[key];
      expect(r.available).toBe(false);
      if (!r.available) expect(r.reason).toMatch(/global/);
    }
    expect(episodeFailed(m).available).toBe(false);
    expect(successRate([full, m]).available).toBe(false);
    for (const key of [
      'jointPosRmseRad',
      'jointVelRmseRadS',
      'jointAccRmsRadS2',
      'jointAccP95RadS2',
      'jointJerkRmsRadS3',
      'jointJerkP95RadS3',
    ] as const) {
      expect(m[key]).toEqual(full[key]);
    }
    const json = episodeMetricsJson(m);
    expect(json).toMatchObject({ failed: null, failure: null, progress_soft: null, mpjpe_l_mm: null });
    expect(Object.keys(json.unavailable as object).sort()).toEqual([
      'failed',
      'failure',
      'mpjpe_l_mm',
      'progress_soft',
    ]);
    expectHonestJson(json);
  });

  it('MPJPE-l needs the root heading but not the root position', () => {
    const full = both(ref, exec);
    // Heading known, position unknown: MPJPE-l is available and the same number.
    const m = both(ref, exec, { hasGlobalRootPosition: false, hasGlobalRootHeading: true });
    expect(m.failure.available).toBe(false);
    expect(value(m.mpjpeLMm)).toBe(value(full.mpjpeLMm));
    // Proof of independence from the root position: replace E's root positions with anything.
    const wild = edit(exec, 0, K, (k, f) => {
      f.rootPosM[3 * k] = 100 * Math.sin(k);
      f.rootPosM[3 * k + 1] = -50 + k;
      f.rootPosM[3 * k + 2] = 3 * Math.cos(k);
    });
    expect(Math.abs(value(both(ref, wild).mpjpeLMm) - value(full.mpjpeLMm))).toBeLessThan(1e-9);
    // ... but a heading error (a yaw of the whole executed motion) changes it.
    const turned = edit(exec, 0, K, (k, f) => yawRoot(f, k, 0.3));
    expect(value(both(ref, turned).mpjpeLMm) - value(full.mpjpeLMm)).toBeGreaterThan(20);
  });

  it('readings needing more frames than there are say so', () => {
    const one = both(standing(1), standing(1));
    expect(value(one.jointPosRmseRad)).toBe(0);
    expect(value(one.mpjpeLMm)).toBe(0);
    for (const r of [one.failure, one.progressSoft, one.jointVelRmseRadS, one.jointAccP95RadS2, one.jointJerkRmsRadS3])
      expect(r.available).toBe(false);
    const three = both(standing(3), standing(3));
    expect(value(three.failure)).toBeNull();
    expect(value(three.jointAccRmsRadS2)).toBe(0);
    expect(three.jointJerkP95RadS3.available).toBe(false);
    const four = both(standing(4), standing(4));
    expect(value(four.jointJerkP95RadS3)).toBe(0);
    const none = both(standing(0), standing(0));
    expect(none.jointPosRmseRad).toEqual({ available: false, reason: 'no frames on the common timeline' });
  });

  it('NaN in the executed frames gives unavailable readings, never NaN', () => {
    const bad = edit(exec, 0, K, () => undefined);
    bad.jointPosRad[J * 10 + 3] = NaN;
    bad.bodyPosM[3 * B * 20 + 5] = NaN; // a body the failure tests do not look at
    const m = both(ref, bad);
    expect(m.jointPosRmseRad.available).toBe(false);
    expect(m.jointJerkP95RadS3.available).toBe(false);
    expect(m.mpjpeLMm.available).toBe(false);
    expect(value(m.failure)).toMatchObject({ frame: 81, condition: 'root_height' });
    bad.bodyPosM[3 * B * 30 + 3 * layoutRoot + 2] = NaN; // the root's height
    const m2 = both(ref, bad);
    expect(m2.failure.available).toBe(false);
    expect(m2.progressSoft.available).toBe(false);
    expectHonestJson(episodeMetricsJson(m));
    expectHonestJson(episodeMetricsJson(m2));
  });
});

describe('resampling 30 fps and 60 fps inputs to the 50 Hz timeline (golden)', () => {
  const evaluator = new ClipPairEvaluator(MB_METRICS_1, profile);
  const pose = profile.defaultPose;
  /** N frames at fps: joints q(i), root yaw y(i), root at the standing pose. */
  function clip(
    fps: number,
    N: number,
    q: (i: number, j: number) => number,
    yaw: (i: number) => number = () => 0,
  ): TimedFrames {
    const rootPosM = new Float64Array(3 * N);
    const rootQuatWxyz = new Float64Array(4 * N);
    const jointPosRad = new Float64Array(J * N);
    for (let i = 0; i < N; i++) {
      rootPosM.set(pose.rootPosM, 3 * i);
      rootQuatWxyz.set([Math.cos(yaw(i) / 2), 0, 0, Math.sin(yaw(i) / 2)], 4 * i);
      for (let j = 0; j < J; j++) jointPosRad[J * i + j] = q(i, j);
    }
    return { fps, frameCount: N, rootPosM, rootQuatWxyz, jointPosRad };
  }

  it('K from the shorter duration: 30 fps × 31 frames (1 s) against 60 fps × 100 frames (1.65 s) → K = 51', () => {
    const ref = clip(30, 31, () => 0);
    const exec = clip(60, 100, (i) => i / 60); // q = t
    const { K, metrics: m, exec: e } = evaluator.evaluate(ref, exec);
    expect(K).toBe(51);
    expect(m.K).toBe(51);
    // Linear interpolation of a linear signal is exact: E's joints at t_k = k/50 are k/50.
    for (const k of [0, 1, 7, 25, 50]) expect(e.jointPosRad[J * k + 4]).toBeCloseTo(k / 50, 12);
    // RMSE against q = 0: sqrt(Σ_{k=0}^{50} (k/50)² / 51) = sqrt(42925/127500).
    expect(rel(value(m.jointPosRmseRad), Math.sqrt(42925 / 127500))).toBeLessThan(1e-12);
    expect(rel(value(m.jointVelRmseRadS), 1)).toBeLessThan(1e-12);
    expect(value(m.jointAccRmsRadS2)).toBeLessThan(1e-9);
    // Swapping the roles gives the same K.
    expect(evaluator.evaluate(exec, ref).K).toBe(51);
  });

  it('K = floor(50·D + 1e-9) + 1: 30 fps × 30 frames → 49, 60 fps × 100 frames → 83, 60 fps × 61 → 51', () => {
    expect(
      evaluator.frameCount(
        clip(30, 30, () => 0),
        clip(30, 30, () => 0),
      ),
    ).toBe(49);
    expect(
      evaluator.frameCount(
        clip(60, 100, () => 0),
        clip(60, 100, () => 0),
      ),
    ).toBe(83);
    expect(
      evaluator.frameCount(
        clip(60, 61, () => 0),
        clip(60, 61, () => 0),
      ),
    ).toBe(51);
  });

  it('a 30 fps source is interpolated between floor(f) and floor(f) + 1 at f = 0.6k', () => {
    const sq = (i: number) => 0.01 * i * i;
    const ref = clip(30, 31, () => 0);
    const exec = clip(30, 31, (i) => sq(i));
    const { exec: e } = evaluator.evaluate(ref, exec);
    // k = 3 → f = 1.8: 0.01 + 0.8·(0.04 − 0.01) = 0.034; k = 7 → f = 4.2: 0.16 + 0.2·0.09 = 0.178; k = 50 → f = 30 (last frame).
    expect(e.jointPosRad[J * 3]).toBeCloseTo(0.034, 12);
    expect(e.jointPosRad[J * 7]).toBeCloseTo(0.178, 12);
    expect(e.jointPosRad[J * 50]).toBeCloseTo(sq(30), 12);
  });

  it('a 60 fps root yaw of 3 rad/s (slerped) drifts in heading at k = 9 and fails in orientation at k = 17', () => {
    // heading(E) − heading(R) = 3·k/50: > 0.5 first at k = 9 (0.54), > 1.0 first at k = 17 (1.02).
    const ref = clip(30, 61, () => 0);
    const exec = clip(
      60,
      121,
      () => 0,
      (i) => (3 * i) / 60,
    );
    const { K, metrics: m } = evaluator.evaluate(ref, exec);
    expect(K).toBe(101);
    expect(value(m.progressStop)).toEqual({ frame: 9, cause: 'drift_heading' });
    expect(value(m.progressSoft)).toBe(9 / 100);
    const f = value(m.failure)!;
    expect(f).toMatchObject({ frame: 17, condition: 'root_orientation' });
    // Per-source-frame rotations of 0.05 rad take the resampler's near-parallel (normalised-lerp)
    // path, within ~1e-6 rad of slerp (see docs/METRICS.md).
    expect(f.error).toBeCloseTo(1.02, 5);
  });
});
