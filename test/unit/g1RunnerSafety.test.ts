import { describe, expect, it } from 'vitest';
import {
  CONSOLE_SILENT_DAMP_MS,
  CONSOLE_SILENT_HOLD_MS,
  DAMPING_KD,
  HOLD_KD,
  HOLD_KP,
  initialRunnerState,
  LOWSTATE_STALE_MS,
  motorCommand,
  PREPARE_MAX_DISTANCE_RAD,
  RAMP_MIN_MS,
  reduceRunner,
  REMOTE_KEY_B,
  REMOTE_KEY_L2,
  remoteStopPressed,
  type MotorCommandOut,
  type RunnerEvent,
  type RunnerState,
} from '../../src/domain/g1Runner/g1RunnerSafety';
import { encodeG1Remote, G1_REMOTE_STOP_COMBINATION } from '../../src/domain/robotLink/g1WirelessRemote';
import { J, limits, lowstate } from '../helpers/g1RunnerEvents';

function cmdOut(): MotorCommandOut {
  return {
    q: new Float32Array(35),
    dq: new Float32Array(35),
    tau: new Float32Array(35),
    kp: new Float32Array(35),
    kd: new Float32Array(35),
  };
}

/** A runner ready at a start pose 0.3 rad away on every joint (prepare, ramp, ready), at t = 3100 ms. */
function ready(): { s: RunnerState; pose: Float64Array; t: number } {
  const s = initialRunnerState('gantry', 0);
  const pose = new Float64Array(J).fill(0.3);
  reduceRunner(s, lowstate(0), limits);
  expect(reduceRunner(s, { type: 'prepare', nowMs: 0, startPose: pose }, limits)).toContainEqual(
    expect.objectContaining({ type: 'accepted', command: 'prepare' }),
  );
  let t = 0;
  for (let u = 0; u <= RAMP_MIN_MS + 100; u += 50) {
    t = u;
    reduceRunner(s, lowstate(t), limits);
    reduceRunner(s, { type: 'tick', nowMs: t }, limits);
    reduceRunner(s, { type: 'console', nowMs: t }, limits);
  }
  return { s, pose, t };
}

function tracking(): { s: RunnerState; t: number } {
  const r = ready();
  const fx = reduceRunner(r.s, { type: 'start', nowMs: r.t, runId: 'run-1' }, limits);
  expect(fx).toContainEqual(expect.objectContaining({ type: 'accepted', command: 'start' }));
  return { s: r.s, t: r.t };
}

describe('g1-runner safety reducer', () => {
  it('starts damping: kp 0, kd 3 (Unitree Passive) on the wire', () => {
    const s = initialRunnerState('gantry', 0);
    reduceRunner(s, lowstate(0, { q: new Float64Array(J).fill(0.1) }), limits);
    const out = cmdOut();
    motorCommand(s, 0, limits, out);
    expect(Array.from(out.kp.subarray(0, J))).toEqual(new Array(J).fill(0));
    expect(Array.from(out.kd.subarray(0, J))).toEqual(new Array(J).fill(DAMPING_KD));
  });

  it('prepare ramps at bounded speed under FixStand gains, then holds ready at the start pose', () => {
    const s = initialRunnerState('gantry', 0);
    reduceRunner(s, lowstate(0), limits);
    const pose = new Float64Array(J).fill(0.3);
    reduceRunner(s, { type: 'prepare', nowMs: 0, startPose: pose }, limits);
    expect(s.mode).toBe('ramping');
    const out = cmdOut();
    motorCommand(s, RAMP_MIN_MS / 2, limits, out);
    expect(out.q[0]).toBeCloseTo(0.15, 5); // halfway
    expect(out.kp[3]).toBe(HOLD_KP[3]);
    expect(out.kd[3]).toBe(HOLD_KD[3]);
    reduceRunner(s, lowstate(RAMP_MIN_MS - 10), limits);
    reduceRunner(s, { type: 'console', nowMs: RAMP_MIN_MS - 10 }, limits);
    const fx = reduceRunner(s, { type: 'tick', nowMs: RAMP_MIN_MS + 1 }, limits);
    expect(fx).toContainEqual(expect.objectContaining({ type: 'mode', mode: 'holding' }));
    expect(s.ready).toBe(true);
    motorCommand(s, RAMP_MIN_MS + 1, limits, out);
    expect(out.q[0]).toBeCloseTo(0.3, 5);
  });

  it('a larger distance ramps longer than 3 s (speed bound)', () => {
    const s = initialRunnerState('gantry', 0);
    reduceRunner(s, lowstate(0), limits);
    reduceRunner(s, { type: 'prepare', nowMs: 0, startPose: new Float64Array(J).fill(1.5) }, limits);
    expect(s.ramp!.durationMs).toBeCloseTo(3000, 0);
    const s2 = initialRunnerState('gantry', 0);
    reduceRunner(s2, lowstate(0, { q: new Float64Array(J).fill(-0.1) }), limits);
    reduceRunner(s2, { type: 'prepare', nowMs: 0, startPose: new Float64Array(J).fill(1.5) }, limits);
    expect(s2.ramp!.durationMs).toBeCloseTo(3200, 0);
  });

  it.each([
    ['not upright (IMU)', { quat: [Math.cos(0.3), Math.sin(0.3), 0, 0] }, /tilted 0\.60 rad/],
    ['start pose too far', { pose: PREPARE_MAX_DISTANCE_RAD + 0.1 }, /from the start pose/],
    ['start pose outside the joint range', { pose: 2.5 }, /outside its range/],
    ['no fresh lowstate', { staleMs: LOWSTATE_STALE_MS + 1 }, /no fresh lowstate/],
  ])('prepare refuses with the reason: %s', (_name, o, reason) => {
    const s = initialRunnerState('gantry', 0);
    reduceRunner(s, lowstate(0, { quat: (o as { quat?: number[] }).quat }), limits);
    const pose = new Float64Array(J).fill((o as { pose?: number }).pose ?? 0.2);
    const fx = reduceRunner(
      s,
      { type: 'prepare', nowMs: (o as { staleMs?: number }).staleMs ?? 0, startPose: pose },
      limits,
    );
    const r = fx.find((e) => e.type === 'refused');
    expect(r).toBeDefined();
    expect((r as { reason: string }).reason).toMatch(reason);
    expect(s.mode).toBe('damping');
  });

  it('start refused without a declared after-clip way (negative control: with gantry it starts)', () => {
    const r = ready();
    r.s.afterClip = null;
    const fx = reduceRunner(r.s, { type: 'start', nowMs: r.t, runId: 'x' }, limits);
    expect(fx).toContainEqual(expect.objectContaining({ type: 'refused', reason: expect.stringMatching(/gantry/) }));
    r.s.afterClip = 'gantry';
    expect(reduceRunner(r.s, { type: 'start', nowMs: r.t, runId: 'x' }, limits)).toContainEqual(
      expect.objectContaining({ type: 'accepted' }),
    );
  });

  it('prepare refused while the remote stop is held; released (negative control), it ramps', () => {
    const s = initialRunnerState('gantry', 0);
    reduceRunner(s, lowstate(0, { keys: REMOTE_KEY_L2 | REMOTE_KEY_B }), limits);
    const pose = new Float64Array(J).fill(0.1);
    expect(reduceRunner(s, { type: 'prepare', nowMs: 0, startPose: pose }, limits)).toContainEqual(
      expect.objectContaining({ type: 'refused', reason: expect.stringMatching(/remote stop/) }),
    );
    reduceRunner(s, lowstate(1), limits);
    reduceRunner(s, { type: 'prepare', nowMs: 1, startPose: pose }, limits);
    expect(s.mode).toBe('ramping');
  });

  it('hold leaves damping only with a live link and the remote stop released (negative controls stay damped)', () => {
    const s = initialRunnerState('gantry', 0);
    reduceRunner(s, { type: 'hold', reason: 'no state yet' }, limits);
    expect(s.mode).toBe('damping');
    reduceRunner(s, lowstate(0, { keys: REMOTE_KEY_L2 | REMOTE_KEY_B }), limits);
    reduceRunner(s, { type: 'hold', reason: 'remote stop held' }, limits);
    expect(s.mode).toBe('damping');
    reduceRunner(s, lowstate(1), limits);
    reduceRunner(s, { type: 'tick', nowMs: 1 + LOWSTATE_STALE_MS + 1 }, limits);
    reduceRunner(s, { type: 'hold', reason: 'stale' }, limits);
    expect(s.mode).toBe('damping');
    reduceRunner(s, lowstate(200), limits);
    reduceRunner(s, { type: 'hold', reason: 'operator' }, limits);
    expect(s.mode).toBe('holding');
  });

  it('start refused unless ready at the start pose', () => {
    const s = initialRunnerState('gantry', 0);
    reduceRunner(s, lowstate(0), limits);
    expect(reduceRunner(s, { type: 'start', nowMs: 0, runId: 'x' }, limits)).toContainEqual(
      expect.objectContaining({ type: 'refused', reason: expect.stringMatching(/not ready/) }),
    );
  });

  it('lowstate older than 100 ms → damping, episode link_lost; 100 ms exactly (negative control) does nothing', () => {
    const { s, t } = tracking();
    reduceRunner(s, lowstate(t), limits);
    expect(reduceRunner(s, { type: 'tick', nowMs: t + LOWSTATE_STALE_MS }, limits)).toEqual([]);
    expect(s.mode).toBe('tracking');
    const fx = reduceRunner(s, { type: 'tick', nowMs: t + LOWSTATE_STALE_MS + 1 }, limits);
    expect(fx).toContainEqual(expect.objectContaining({ type: 'episode_end', outcome: 'link_lost' }));
    expect(s.mode).toBe('damping');
  });

  it('wireless remote L2 + B → damping, episode estop; L2 alone or B alone (negative controls) do nothing', () => {
    const { s, t } = tracking();
    expect(reduceRunner(s, lowstate(t, { keys: REMOTE_KEY_L2 }), limits)).toEqual([]);
    expect(reduceRunner(s, lowstate(t, { keys: REMOTE_KEY_B }), limits)).toEqual([]);
    expect(s.mode).toBe('tracking');
    const fx = reduceRunner(s, lowstate(t, { keys: REMOTE_KEY_L2 | REMOTE_KEY_B }), limits);
    expect(fx).toContainEqual(expect.objectContaining({ type: 'episode_end', outcome: 'estop' }));
    expect(s.mode).toBe('damping');
    expect(remoteStopPressed(new Uint8Array([0, 0, 0x20, 0x02]))).toBe(true);
    expect(remoteStopPressed(new Uint8Array([0, 0, 0x02, 0x20]))).toBe(false);
  });

  it('interlock e-stop → damping, episode estop; a damp (negative control) ends aborted_by_operator', () => {
    const a = tracking();
    const fx = reduceRunner(a.s, { type: 'estop', reason: 'interlock: EV ESTOP' }, limits);
    expect(fx).toContainEqual(expect.objectContaining({ type: 'episode_end', outcome: 'estop' }));
    expect(a.s.mode).toBe('damping');
    const out = cmdOut();
    motorCommand(a.s, a.t, limits, out);
    expect([...out.kp.subarray(0, J)].every((k) => k === 0)).toBe(true);
    expect([...out.kd.subarray(0, J)].every((k) => k === DAMPING_KD)).toBe(true);
    const b = tracking();
    expect(reduceRunner(b.s, { type: 'damp', reason: 'operator' }, limits)).toContainEqual(
      expect.objectContaining({ type: 'episode_end', outcome: 'aborted_by_operator' }),
    );
  });

  it("agrees with the emulated G1's remote encoding: its stop combination stops, L2 + A (negative control) does not", () => {
    expect(remoteStopPressed(encodeG1Remote({ buttons: G1_REMOTE_STOP_COMBINATION }))).toBe(true);
    expect(remoteStopPressed(encodeG1Remote({ buttons: ['L2', 'A'] }))).toBe(false);
    expect(remoteStopPressed(encodeG1Remote({ buttons: ['L2', 'B', 'X'] }))).toBe(true);
  });

  it.each([
    ['a NaN joint angle', { q: Object.assign(new Float64Array(J), { 4: Number.NaN }) }],
    ['a joint far outside its range', { q: Object.assign(new Float64Array(J), { 4: 3 }) }],
    ['a non-unit IMU quaternion', { quat: [0.5, 0, 0, 0] }],
  ])('%s → damping, episode hard_failure', (_n, o) => {
    const { s, t } = tracking();
    const fx = reduceRunner(s, lowstate(t, o), limits);
    expect(fx).toContainEqual(expect.objectContaining({ type: 'episode_end', outcome: 'hard_failure' }));
    expect(s.mode).toBe('damping');
  });

  it('negative control: a joint just inside the state margin does not damp', () => {
    const { s, t } = tracking();
    expect(reduceRunner(s, lowstate(t, { q: Object.assign(new Float64Array(J), { 4: 2.2 }) }), limits)).toEqual([]);
    expect(s.mode).toBe('tracking');
  });

  it('console silent: hold (episode link_lost) after the hold limit, damping after the damp limit; a ping resets it', () => {
    const { s, t } = tracking();
    const at = (dt: number): RunnerEvent[] => [lowstate(t + dt), { type: 'tick', nowMs: t + dt }];
    let fx = at(CONSOLE_SILENT_HOLD_MS - 10).flatMap((e) => reduceRunner(s, e, limits));
    expect(s.mode).toBe('tracking');
    fx = at(CONSOLE_SILENT_HOLD_MS + 10).flatMap((e) => reduceRunner(s, e, limits));
    expect(fx).toContainEqual(expect.objectContaining({ type: 'episode_end', outcome: 'link_lost' }));
    expect(s.mode).toBe('holding');
    fx = at(CONSOLE_SILENT_DAMP_MS + 10).flatMap((e) => reduceRunner(s, e, limits));
    expect(s.mode).toBe('damping');
    expect(fx).toContainEqual(
      expect.objectContaining({ type: 'mode', cause: expect.stringMatching(/console silent/) }),
    );
    // negative control: a console that pings keeps tracking
    const r = tracking();
    for (let dt = 0; dt < CONSOLE_SILENT_DAMP_MS + 500; dt += 200) {
      reduceRunner(r.s, { type: 'console', nowMs: r.t + dt }, limits);
      reduceRunner(r.s, lowstate(r.t + dt), limits);
      reduceRunner(r.s, { type: 'tick', nowMs: r.t + dt }, limits);
    }
    expect(r.s.mode).toBe('tracking');
  });

  it('targets are clamped to the joint range and to the effort limit from the measured pose', () => {
    const { s, t } = tracking();
    const q = new Float64Array(J).fill(0.3);
    q[0] = 5; // beyond the range
    q[1] = 1.5; // within range, but kp 100 × 1.2 rad = 120 N·m > 50 N·m
    reduceRunner(s, { type: 'targets', q, kp: new Float64Array(J).fill(100), kd: new Float64Array(J).fill(2) }, limits);
    reduceRunner(s, lowstate(t, { q: new Float64Array(J).fill(0.3) }), limits);
    const out = cmdOut();
    motorCommand(s, t, limits, out);
    expect(out.q[0]).toBeCloseTo(0.3 + 50 / 100, 5); // the range clamp then the effort clamp
    expect(out.q[1]).toBeCloseTo(0.3 + 0.5, 5);
    expect(out.q[2]).toBeCloseTo(0.3, 5); // negative control: a reachable target is untouched
    // A non-finite target holds the measured pose.
    reduceRunner(s, { type: 'targets', q: new Float64Array(J).fill(Number.NaN), kp: null, kd: null }, limits);
    motorCommand(s, t, limits, out);
    expect(out.q[5]).toBeCloseTo(0.3, 5);
  });

  it('clip end: completed, then holds on the gantry (declared); damp → damping', () => {
    const { s, t } = tracking();
    const fx = reduceRunner(s, { type: 'clip_end', runId: 'run-1' }, limits);
    expect(fx).toContainEqual(expect.objectContaining({ type: 'episode_end', outcome: 'completed' }));
    expect(s.mode).toBe('holding');
    reduceRunner(s, { type: 'damp', reason: 'operator' }, limits);
    expect(s.mode).toBe('damping');
    reduceRunner(s, { type: 'tick', nowMs: t }, limits);
  });
});
