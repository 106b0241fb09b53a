import { describe, expect, it } from 'vitest';
import { LowStateSequencer, type LowStateVerdict } from '../../src/domain/robotLink/lowStateSequence';
import { StateIntake } from '../../src/domain/robotLink/stateIntake';

// Lowstate ordering on one connection: duplicates and out-of-order samples dropped and counted,
// gaps measured in the stream's own tick unit; and the intake that decodes, sequences and times
// frames (pure: bytes in, frames and problem descriptions out).

const judgeAll = (s: LowStateSequencer, samples: [number, number][]): LowStateVerdict['kind'][] =>
  samples.map(([tick, stamp]) => s.judge(tick, stamp).kind);

describe('lowstate sequencing and gap statistics', () => {
  it('control: a steady stream is accepted whole, nothing counted', () => {
    const s = new LowStateSequencer();
    const kinds = judgeAll(
      s,
      Array.from({ length: 100 }, (_, k) => [k + 1, (k + 1) * 2_000_000] as [number, number]),
    );
    expect(kinds.every((k) => k === 'accepted')).toBe(true);
    expect(s.stats()).toEqual({ duplicate: 0, outOfOrder: 0, missingTicks: 0, tickGapEvents: 0 });
  });

  it('drops a repeated tick, a smaller tick and a smaller stamp; counts a gap of 6 missing samples', () => {
    const s = new LowStateSequencer();
    expect(
      judgeAll(s, [
        [1, 100],
        [2, 200],
        [3, 300],
        [3, 300],
        [2, 200],
        [4, 250],
        [10, 1000],
      ]),
    ).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'duplicate',
      'out_of_order', // tick 2 after 3
      'out_of_order', // tick 4 but stamp 250 < 300
      'accepted',
    ]);
    expect(s.stats()).toEqual({ duplicate: 1, outOfOrder: 2, missingTicks: 6, tickGapEvents: 1 });
    expect(s.lastAcceptedStampNs).toBe(1000);
  });

  it('measures gaps in the smallest step seen (a source counting ticks in twos is not missing every other one)', () => {
    const s = new LowStateSequencer();
    const v = [s.judge(0, 0), s.judge(2, 2), s.judge(4, 4), s.judge(10, 10)];
    expect(v.map((x) => (x.kind === 'accepted' ? x.missing : -1))).toEqual([0, 0, 0, 2]);
    expect(s.stats()).toMatchObject({ missingTicks: 2, tickGapEvents: 1 });
  });

  it('a new connection may restart the counter (not out of order); the counts since creation stay', () => {
    const s = new LowStateSequencer();
    judgeAll(s, [
      [100, 100],
      [100, 100],
    ]);
    s.newConnection();
    expect(s.judge(1, 1)).toEqual({ kind: 'accepted', missing: 0, previousTick: null });
    expect(s.stats().duplicate).toBe(1);
    // Control: without the new connection the same sample is out of order.
    const t = new LowStateSequencer();
    t.judge(100, 100);
    expect(t.judge(1, 1).kind).toBe('out_of_order');
  });
});

const enc = (o: unknown): Uint8Array => new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o));
const low = (tick: number, stampNs: number) => ({
  tick,
  stamp_ns: stampNs,
  q: new Array(29).fill(0.1),
  dq: new Array(29).fill(0),
  tau_est: new Array(29).fill(0),
  imu: { quat_wxyz: [1, 0, 0, 0], gyro: [0, 0, 0], accel: [0, 0, 9.81] },
});

describe('the state intake', () => {
  it('times frames from the connection’s first sample, or from the episode start; counts and describes every rejection', () => {
    const intake = new StateIntake(20);
    const a = intake.lowState(enc(low(10, 1_000_000_000)), null);
    const b = intake.lowState(enc(low(11, 1_002_000_000)), null);
    expect(a.kind === 'frame' && a.frame.timeS).toBe(0);
    expect(b.kind === 'frame' && b.frame.timeS).toBeCloseTo(0.002, 12);
    const inEpisode = intake.lowState(enc(low(12, 1_004_000_000)), 1_003_000_000);
    expect(inEpisode.kind === 'frame' && inEpisode.frame.timeS).toBeCloseTo(0.001, 12);
    const dup = intake.lowState(enc(low(12, 1_004_000_000)), null);
    expect(dup).toMatchObject({ kind: 'rejected', problem: { code: 'duplicate_frame' } });
    const bad = intake.lowState(enc({ ...low(13, 1_006_000_000), q: [1, 2] }), null);
    expect(bad).toMatchObject({ kind: 'rejected', problem: { code: 'malformed_frame' } });
    expect(bad.kind === 'rejected' && bad.problem.message).toMatch(
      /lowstate dropped \(1 malformed so far\): q: must have 29/,
    );
    const gap = intake.lowState(enc(low(20, 1_020_000_000)), null);
    expect(gap.kind === 'frame' && gap.gap).toEqual({
      code: 'tick_gap',
      message: 'lowstate ticks 12 → 20: 7 samples missing (7 in 1 gaps so far)',
    });
    expect(intake.stats()).toMatchObject({
      received: 6,
      accepted: 4,
      malformed: 1,
      duplicate: 1,
      missingTicks: 7,
      tickGapEvents: 1,
    });
  });

  it('pairs a root_state with a lowstate whose stamp is within the skew, and only then', () => {
    const intake = new StateIntake(20);
    expect(
      intake.rootState(enc({ stamp_ns: 1_000_000_000, pos: [1, 2, 0.8], quat_wxyz: [1, 0, 0, 0], source: 'mocap' })),
    ).toBeNull();
    const near = intake.lowState(enc(low(1, 1_015_000_000)), null);
    expect(near.kind === 'frame' && Array.from(near.frame.rootPosM!)).toEqual([1, 2, 0.8]);
    const far = intake.lowState(enc(low(2, 1_021_000_000)), null);
    expect(far.kind === 'frame' && far.frame.rootPosM).toBeNull();
    expect(intake.rootState(enc({ stamp_ns: 1, pos: [0, 0] }))).toMatchObject({ code: 'malformed_root_state' });
    expect(intake.wbcStatus(enc({ state: 'sleeping' }))).toMatchObject({
      ok: false,
      problem: { code: 'malformed_wbc_status' },
    });
    expect(intake.stats().malformedOther).toBe(2);
  });
});
