// Example tests of the matched trial session reducer (src/domain/trial; docs/TRIALS.md): each
// refusal of the session and of a trial with its exact message, trace event and progress; the
// retries and their limits; trips and the operator's stop in each step; resume; purity. The
// sessions are played in the scripted world of trialSessionWorld.ts (the driver's parts answer as
// scripted), so each test states only what differs from a session where everything goes well.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CALIBRATION_CHECK,
  calibrationCheckProblem,
  countsAsFinished,
  initialTrialSession,
  MAX_INFRA_RETRIES,
  MAX_RESET_ATTEMPTS,
  reduceTrialSession,
  poseDifference,
  startPoseProblems,
  tripEnd,
  type CalibrationDifference,
  type SessionProgress,
  type TrialSessionEffect,
  type TrialSessionState,
} from '../../src/domain/trial';
import * as runner from '../../src/services/trial/matchedTrialRunner';
import {
  attempt,
  BINDING,
  CLIP,
  effectsOf,
  goodScript,
  PAIR_ID,
  play,
  worldArb,
  type PlayResult,
  type Reducer,
  type WorldScript,
} from './trialSessionWorld';

const script = (over: Partial<WorldScript> = {}, trials = 3): WorldScript => ({ ...goodScript(trials), ...over });

const progressOf = (r: PlayResult): SessionProgress[] => effectsOf(r.log, 'progress').map((x) => x.effect.event);
const phases = (r: PlayResult): string[] =>
  progressOf(r).flatMap((p) =>
    p.type === 'phase' ? [`${p.phase}${p.trialIndex === null ? '' : ` ${p.trialIndex}`}`] : [],
  );
const refusals = (r: PlayResult) =>
  progressOf(r).filter((p): p is Extract<SessionProgress, { type: 'refusal' }> => p.type === 'refusal');
const traced = (r: PlayResult, kind: string) =>
  effectsOf(r.log, 'record_event')
    .map((x) => x.effect.event)
    .filter((e) => e.kind === kind);
const types = (r: PlayResult): string[] => r.log.flatMap((l) => l.effects.map((e) => e.type));
const count = (r: PlayResult, type: TrialSessionEffect['type']): number => effectsOf(r.log, type).length;
const stoppedEarly = (r: PlayResult): string | null | undefined => r.result?.stoppedEarly;

describe('the session rules (moved from the runner)', () => {
  it('are re-exported from matchedTrialRunner.ts for its importers', () => {
    expect(runner.CALIBRATION_CHECK).toBe(CALIBRATION_CHECK);
    expect(runner.startPoseProblems).toBe(startPoseProblems);
    expect(typeof runner.calibrationDifference).toBe('function');
    expect(runner.START_POSE_LIMITS).toEqual({ maxTiltRad: 0.3, maxRootHeightDiffM: 0.1 });
    expect(new runner.TrialRefusedError('no', ['a'])).toBeInstanceOf(Error);
    expect(new runner.TrialRefusedError('no', ['a']).name).toBe('TrialRefusedError');
  });

  it('trial counts: an integer in 1..20', () => {
    for (const bad of [0, 21, 1.5, Number.NaN]) expect(() => initialTrialSession(bad)).toThrow(RangeError);
    expect(initialTrialSession(20)).toMatchObject({ phase: 'resolving_pair', trials: 20, abort: null, gateTrip: null });
  });

  it('what counts as finished, the trip mapping, the calibration check at its limits', () => {
    expect(countsAsFinished(null)).toBe(false);
    expect(countsAsFinished('infrastructure_error')).toBe(false);
    for (const o of ['completed', 'hard_failure', 'estop', 'link_lost', 'intervention', 'aborted_by_operator'] as const)
      expect(countsAsFinished(o)).toBe(true);
    expect(
      tripEnd({ cause: 'interlock_lost', atMs: 0, reason: 'no status for 120 ms', runId: 'r', outcome: 'link_lost' }),
    ).toEqual({ outcome: 'link_lost', reason: 'no status for 120 ms (interlock_lost)' });
    const at = { joint: 'left_knee_joint', maxJointDiffRad: 0.05, attitudeDiffRad: 0.035, jointsOut: [] };
    expect(calibrationCheckProblem(at)).toBeNull();
    expect(
      calibrationCheckProblem({
        ...at,
        maxJointDiffRad: 0.0501,
        jointsOut: [{ joint: 'left_knee_joint', diffRad: 0.0501 }],
      }),
    ).toBe('not at the start pose: 1 joint out — left_knee_joint 0.050 rad (limit 0.05 rad)');
    expect(calibrationCheckProblem({ ...at, attitudeDiffRad: 0.036 })).toBe(
      'not at the start pose: attitude differs by 0.036 rad (limit 0.035 rad)',
    );
    expect(calibrationCheckProblem({ ...at, maxJointDiffRad: Number.NaN })).not.toBeNull();
  });
});

describe('the start-pose check of a measured pose (reset, stillness failure)', () => {
  const standing: number[] = Array.from({ length: 29 }, (_, j) => (j === 3 || j === 9 ? 0.3 : 0));
  const pairCal = { measured: { jointPosRad: standing, imuQuatWxyz: [1, 0, 0, 0] } } as unknown as Parameters<
    typeof poseDifference
  >[1];

  it('lists every joint out, largest first, against the calibration thresholds', () => {
    const lying = [...standing];
    lying[3] = 1.4; // left_knee 1.1 rad out
    lying[22] = 0.062; // right_shoulder_pitch just out
    lying[12] = 0.03; // waist_yaw within 0.05
    const d = poseDifference({ jointPosRad: lying, imuQuatWxyz: [Math.cos(0.5), 0, Math.sin(0.5), 0] }, pairCal);
    expect(d.jointsOut.map((j) => j.joint)).toEqual(['left_knee_joint', 'right_shoulder_pitch_joint']);
    expect(calibrationCheckProblem(d)).toBe(
      'not at the start pose: 2 joints out — left_knee_joint 1.100 rad, right_shoulder_pitch_joint 0.062 rad (limit 0.05 rad); attitude differs by 1.000 rad (limit 0.035 rad)',
    );
  });

  it('negative control: the calibrated pose itself, with sensor noise within the limits, passes', () => {
    const noisy = standing.map((q, j) => q + (j % 2 ? 0.004 : -0.004));
    const d = poseDifference({ jointPosRad: noisy, imuQuatWxyz: [1, 0.003, 0, 0] }, pairCal);
    expect(d.jointsOut).toEqual([]);
    expect(calibrationCheckProblem(d)).toBeNull();
  });

  it('names at most five joints and counts the rest; a NaN joint counts as out', () => {
    const all = standing.map((q) => q + 0.2);
    all[0] = Number.NaN;
    const msg = calibrationCheckProblem(poseDifference({ jointPosRad: all, imuQuatWxyz: [1, 0, 0, 0] }, pairCal))!;
    expect(msg).toMatch(
      /^not at the start pose: 29 joints out — left_hip_pitch_joint NaN rad, .* and 24 more \(limit 0\.05 rad\)$/,
    );
  });
});

describe('a session where everything goes well', () => {
  it('calibrates, simulates once, runs three trials with a reset before the second and third, then is done', () => {
    const r = play(script());
    expect(r.stalled).toBe(false);
    expect(phases(r)).toEqual([
      'calibrating',
      'simulating',
      'checking_calibration 0',
      'waiting_confirmation 0',
      'running 0',
      'waiting_reset 1',
      'checking_calibration 1',
      'waiting_confirmation 1',
      'running 1',
      'waiting_reset 2',
      'checking_calibration 2',
      'waiting_confirmation 2',
      'running 2',
      'done',
    ]);
    expect(progressOf(r).at(-1)).toEqual({
      type: 'phase',
      phase: 'done',
      trialIndex: null,
      message: 'matched pair done: 1 simulation + 3 real trials',
    });
    expect(r.result).toMatchObject({
      pairId: PAIR_ID,
      parentTraceId: 'matched-1',
      calibrationId: 'cal-pair-1',
      sim: { outcome: 'completed', resumed: false },
      remaining: 0,
      stoppedEarly: null,
    });
    expect(r.result?.real.map((t) => [t.trialIndex, t.outcome, t.frames, t.resumed])).toEqual([
      [0, 'completed', 200, false],
      [1, 'completed', 200, false],
      [2, 'completed', 200, false],
    ]);
    expect(traced(r, 'human_reset').map((e) => e.detail)).toEqual([
      { trial_index: 1, after_outcome: 'completed', max_joint_diff_rad: 0.004, attitude_diff_rad: 0.002 },
      { trial_index: 2, after_outcome: 'completed', max_joint_diff_rad: 0.004, attitude_diff_rad: 0.002 },
    ]);
    expect(count(r, 'start')).toBe(3);
    expect(count(r, 'release_robot')).toBe(3);
    // The effects of one trial, in order.
    const one = types(play(script({}, 1)));
    expect(one.slice(one.indexOf('check_start_pose'))).toEqual([
      'check_start_pose',
      'open_trial',
      'progress',
      'ask_confirmation',
      'confirm_to_gate',
      'arm_interlock',
      'prepare',
      'progress',
      'run_trial',
      'open_recording',
      'answer_start_check',
      'start',
      'end_episode',
      'finish_episode',
      'progress',
      'release_robot',
      'progress',
      'done',
    ]);
    const msgs = progressOf(r).flatMap((p) => (p.type === 'phase' ? [p.message] : []));
    expect(msgs).toContain(`confirm trial 1 of 3: ${CLIP} × ${BINDING}`);
    expect(msgs).toContain('put the robot back at its start pose for trial 2 of 3');
    expect(msgs).toContain(`simulation branch: ${CLIP} from the calibrated start`);
  });
});

describe('refusals of the session: traced on the qualification pair, then refused', () => {
  const cases: [string, Partial<WorldScript>, string, string[]][] = [
    [
      'the pair is not admitted',
      { admitted: false },
      `pair ${PAIR_ID} (${CLIP} × ${BINDING}) is not admitted: MPJPE-l 212 mm above the admission limit`,
      ['MPJPE-l 212 mm above the admission limit'],
    ],
    [
      'admitted under another contract',
      { contractOk: false },
      `pair ${PAIR_ID} was admitted under mb-metrics/0, not the current contract mb-metrics/1`,
      [],
    ],
    [
      'the binding is not stored',
      { bindingStored: false },
      `binding ${BINDING} of pair ${PAIR_ID} is not stored in the campaign`,
      [],
    ],
    [
      'the robot link is not a real robot',
      { realRobot: false },
      'embedded MuJoCo is a simulation backend; real-robot trials need a robot (or motionbench emulate-robot)',
      [],
    ],
    [
      'the given calibration is not stored',
      { calibration: 'missing' },
      'calibration cal-given is not stored in this campaign',
      [],
    ],
    ['the capture gives up', { pairCalibration: 'not_still' }, 'calibration refused: not still', ['gyro 0.2 rad/s']],
    [
      'the robot is not standing at the clip start',
      { pairCalibration: 'bad_pose' },
      "the robot is not standing at the clip's start: attitude differs from the clip's first frame by roll 1.200 rad, pitch -0.020 rad (limit 0.3 rad)",
      ["attitude differs from the clip's first frame by roll 1.200 rad, pitch -0.020 rad (limit 0.3 rad)"],
    ],
  ];
  for (const [name, over, message, reasons] of cases)
    it(name, () => {
      const r = play(script(over));
      expect(r.state).toMatchObject({ phase: 'refused', message, reasons });
      expect(traced(r, 'refusal')).toEqual([
        { kind: 'refusal', reason: message, parentTraceId: PAIR_ID, detail: { reasons } },
      ]);
      const fx = types(r);
      expect(fx.at(-1)).toBe('refuse_session');
      expect(effectsOf(r.log, 'refuse_session')[0].effect).toEqual({ type: 'refuse_session', message, reasons });
      // Nothing moved, nothing was simulated.
      for (const t of ['run_sim_branch', 'prepare', 'start', 'open_trial'] as const) expect(count(r, t)).toBe(0);
    });

  it('the gate opens only for a real robot, before the calibration', () => {
    expect(count(play(script({ realRobot: false })), 'open_gate')).toBe(0);
    const r = play(script({ pairCalibration: 'bad_pose' }));
    expect(effectsOf(r.log, 'open_gate')[0].effect.admission).toEqual({
      pairId: PAIR_ID,
      admitted: true,
      contractId: 'mb-metrics/1',
      bindingKey: BINDING,
      reasons: [],
    });
  });

  it('a stored calibration is loaded, not captured', () => {
    const r = play(script({ calibration: 'stored' }));
    expect(effectsOf(r.log, 'load_calibration').map((x) => x.effect.calibrationId)).toEqual(['cal-given']);
    expect(count(r, 'capture_calibration')).toBe(0);
    expect(phases(r)[0]).toBe('simulating');
  });
});

describe('refusals of a trial', () => {
  it('the fresh capture gives up: refused on the matched pair, the operator resets, the check runs again', () => {
    const r = play(script({ attempts: [[attempt({ startPose: 'not_still' }), attempt()]] }, 1));
    expect(traced(r, 'refusal')).toEqual([
      {
        kind: 'refusal',
        reason: 'calibration refused: not still',
        parentTraceId: 'matched-1',
        detail: { run_id: 'real-0-1', trial_index: 0, reasons: ['gyro 0.2 rad/s'] },
      },
    ]);
    expect(refusals(r)).toEqual([
      {
        type: 'refusal',
        runId: 'real-0-1',
        reasons: [{ code: 'no_calibration', condition: 'calibration', message: 'gyro 0.2 rad/s', values: {} }],
      },
    ]);
    expect(phases(r)).toEqual([
      'calibrating',
      'simulating',
      'checking_calibration 0',
      'waiting_reset 0',
      'checking_calibration 0',
      'waiting_confirmation 0',
      'running 0',
      'done',
    ]);
    expect(effectsOf(r.log, 'prompt_reset')[0].effect).toEqual({
      type: 'prompt_reset',
      trialIndex: 0,
      afterOutcome: null,
      tripped: false,
    });
    expect(r.result?.real.map((t) => t.runId)).toEqual(['real-0-2']);
  });

  it('the robot is not at the calibrated start pose: the joint and the limits are named', () => {
    const r = play(script({ attempts: [[attempt({ startPose: 'far' }), attempt()]] }, 1));
    expect(traced(r, 'refusal')[0]).toMatchObject({
      reason: 'not at the start pose',
      detail: { reasons: ['not at the start pose: 1 joint out — left_knee_joint 0.200 rad (limit 0.05 rad)'] },
    });
    expect(r.result?.stoppedEarly).toBeNull();
  });

  it(`after ${MAX_RESET_ATTEMPTS} resets that do not bring the robot back, the session stops`, () => {
    const r = play(script({ attempts: [[attempt({ startPose: 'far' })]] }, 1));
    expect(count(r, 'prompt_reset')).toBe(MAX_RESET_ATTEMPTS);
    expect(count(r, 'check_start_pose')).toBe(MAX_RESET_ATTEMPTS + 1);
    expect(stoppedEarly(r)).toBe(`trial 1: the robot was not ready after ${MAX_RESET_ATTEMPTS} resets`);
    expect(progressOf(r).at(-1)).toEqual({
      type: 'phase',
      phase: 'stopped',
      trialIndex: null,
      message: `trial 1: the robot was not ready after ${MAX_RESET_ATTEMPTS} resets`,
    });
    expect(r.result?.remaining).toBe(1);
  });

  it('a good check starts the reset count again', () => {
    const far = attempt({ startPose: 'far' });
    const r = play(
      script(
        {
          attempts: [
            [far, far, attempt()],
            [far, far, attempt()],
          ],
        },
        2,
      ),
    );
    expect(stoppedEarly(r)).toBeNull();
    expect(count(r, 'prompt_reset')).toBe(2 + 3);
  });

  it('the operator does not confirm the reset', () => {
    const r = play(script({ resets: [null] }));
    expect(stoppedEarly(r)).toBe('the operator did not confirm the reset');
    expect(r.result?.real).toHaveLength(1);
    expect(r.result?.remaining).toBe(2);
  });

  it('after a trip the reset goes to the gate; declined, the session says it tripped', () => {
    const tripped = play(script({ attempts: [[attempt({ tripDuringRun: 'estop' })]], resets: [null] }, 2));
    expect(effectsOf(tripped.log, 'prompt_reset')[0].effect).toMatchObject({ afterOutcome: 'estop', tripped: true });
    expect(stoppedEarly(tripped)).toBe(
      'the safety gate tripped (estop): the session does not resume by itself; run it again after the reset',
    );
    const accepted = play(script({ attempts: [[attempt({ tripDuringRun: 'estop' })], [attempt()]] }, 2));
    expect(effectsOf(accepted.log, 'reset_gate').map((x) => x.effect.note)).toEqual(['reset by the test']);
    expect(traced(accepted, 'human_reset')).toEqual([]); // the gate traces its own reset
    expect(accepted.result?.real.map((t) => t.outcome)).toEqual(['estop', 'completed']);
  });

  it('the reset checks the measured pose, not the note: a robot still lying is refused with the joints out, asked again', () => {
    const lying: CalibrationDifference = {
      maxJointDiffRad: 0.9,
      joint: 'left_knee_joint',
      attitudeDiffRad: 1.01,
      jointsOut: [
        { joint: 'left_knee_joint', diffRad: 0.9 },
        { joint: 'right_knee_joint', diffRad: 0.7 },
        { joint: 'right_elbow_joint', diffRad: 0.062 },
      ],
    };
    const r = play(script({ resets: ['put back', 'put back, really'], resetPoses: [lying] }, 2));
    const why =
      'not at the start pose: 3 joints out — left_knee_joint 0.900 rad, right_knee_joint 0.700 rad, right_elbow_joint 0.062 rad (limit 0.05 rad); attitude differs by 1.010 rad (limit 0.035 rad)';
    expect(refusals(r)[0]).toMatchObject({ runId: null, reasons: [{ code: 'no_calibration', message: why }] });
    expect(traced(r, 'refusal')[0]).toMatchObject({ reason: `reset not accepted: ${why}` });
    expect(count(r, 'prompt_reset')).toBe(2);
    // only the second answer, at the start pose, is a human reset, with the measured differences
    expect(traced(r, 'human_reset')).toEqual([
      expect.objectContaining({
        reason: 'put back, really',
        detail: expect.objectContaining({ max_joint_diff_rad: 0.004, attitude_diff_rad: 0.002 }),
      }),
    ]);
    expect(r.result?.real.map((t) => t.outcome)).toEqual(['completed', 'completed']);
    // negative control: with the robot at the start pose the first answer is the reset
    const ok = play(script({ resets: ['put back'] }, 2));
    expect(refusals(ok)).toEqual([]);
    expect(count(ok, 'prompt_reset')).toBe(1);
  });

  it('a reset with no lowstate to check is refused; three in a row stop the session', () => {
    const r = play(script({ resetPoses: [null, null, null] }, 2));
    expect(refusals(r).map((p) => p.reasons[0].message)).toEqual(
      Array(3).fill('not at the start pose: no lowstate from the robot to check it against'),
    );
    expect(stoppedEarly(r)).toMatch(/not ready after 3 resets/);
  });

  it('the gate refuses the reset: shown, asked again (and counted)', () => {
    const r = play(
      script({ attempts: [[attempt({ tripDuringRun: 'link_lost' })], [attempt()]], gateResets: [false] }, 2),
    );
    expect(refusals(r)).toEqual([
      {
        type: 'refusal',
        runId: null,
        reasons: [{ code: 'link_stale', condition: 'link', message: 'no lowstate since the trip', values: {} }],
      },
    ]);
    expect(count(r, 'prompt_reset')).toBe(2);
    expect(r.result?.stoppedEarly).toBeNull();
  });

  it('the operator does not confirm: refused, the gate episode closed without a safety outcome, stopped', () => {
    const r = play(script({ attempts: [[attempt({ confirm: false })]] }));
    expect(traced(r, 'refusal')).toEqual([
      {
        kind: 'refusal',
        reason: 'not confirmed by the operator',
        parentTraceId: 'matched-1',
        detail: { run_id: 'real-0-1', trial_index: 0, reasons: ['the operator did not confirm the trial'] },
      },
    ]);
    expect(refusals(r)[0].reasons[0]).toMatchObject({ code: 'no_confirmation', condition: 'confirmation' });
    expect(effectsOf(r.log, 'end_episode').map((x) => x.effect)).toEqual([
      { type: 'end_episode', runId: 'real-0-1', outcome: 'infrastructure_error', reason: 'not confirmed' },
    ]);
    expect(stoppedEarly(r)).toBe('the operator did not confirm the trial');
    for (const t of ['confirm_to_gate', 'arm_interlock', 'prepare', 'release_robot'] as const)
      expect(count(r, t)).toBe(0);
  });

  it('the interlock does not arm: refused, nothing leased, stopped', () => {
    const r = play(script({ attempts: [[attempt({ arm: false })]] }));
    expect(traced(r, 'refusal')[0]).toMatchObject({
      reason: 'interlock not armed',
      detail: { reasons: ['the interlock did not arm (not_safe): box in ESTOP'] },
    });
    expect(refusals(r)[0].reasons[0]).toMatchObject({ code: 'interlock_not_armed', condition: 'interlock' });
    expect(stoppedEarly(r)).toBe('the interlock did not arm: box in ESTOP');
    expect(effectsOf(r.log, 'end_episode')[0].effect).toMatchObject({
      outcome: 'infrastructure_error',
      reason: 'interlock not armed',
    });
    expect(count(r, 'prepare')).toBe(0);
    expect(count(r, 'release_robot')).toBe(0);
  });

  it('the gate refuses prepare: its reasons shown, the robot released, stopped', () => {
    const r = play(script({ attempts: [[attempt({ prepare: false })]] }));
    const why = 'prepare refused by the safety gate: robot link stale: last lowstate 70 ms ago (limit 50 ms)';
    expect(refusals(r)).toEqual([
      {
        type: 'refusal',
        runId: 'real-0-1',
        reasons: [
          {
            code: 'link_stale',
            condition: 'link',
            message: 'robot link stale: last lowstate 70 ms ago (limit 50 ms)',
            values: {},
          },
        ],
      },
    ]);
    expect(stoppedEarly(r)).toBe(why);
    const fx = types(r);
    expect(fx.slice(fx.indexOf('prepare'))).toEqual([
      'prepare',
      'progress',
      'end_episode',
      'progress',
      'release_robot',
      'done',
    ]);
    expect(count(r, 'run_trial')).toBe(0);
  });

  it('the gate refuses start at the robot start check: nothing opened, the robot released, stopped', () => {
    const r = play(script({ attempts: [[attempt({ start: false })]] }));
    expect(effectsOf(r.log, 'answer_start_check')[0].effect.answer).toBe(
      'robot link stale: last lowstate 70 ms ago (limit 50 ms)',
    );
    expect(count(r, 'open_recording')).toBe(0);
    expect(count(r, 'start')).toBe(0);
    expect(stoppedEarly(r)).toBe(
      'start refused by the safety gate: robot link stale: last lowstate 70 ms ago (limit 50 ms)',
    );
    expect(effectsOf(r.log, 'end_episode')[0].effect).toMatchObject({
      outcome: 'infrastructure_error',
      reason: 'start refused',
    });
    expect(count(r, 'release_robot')).toBe(1);
  });

  it('the gate refuses the write: the start withheld, the episode recorded with what ended it, stopped', () => {
    const r = play(script({ attempts: [[attempt({ transmit: false })]] }));
    expect(effectsOf(r.log, 'withhold_start')[0].effect.message).toBe(
      'robot link stale: last lowstate 70 ms ago (limit 50 ms)',
    );
    expect(count(r, 'start')).toBe(0);
    expect(effectsOf(r.log, 'finish_episode')[0].effect).toMatchObject({ outcome: 'aborted_by_operator' });
    // The robot's aborted end closes the gate's episode with a safety outcome: the gate trips (stop, damp).
    expect(r.trips.map((t) => [t.cause, t.outcome])).toEqual([['backend_stop', 'aborted_by_operator']]);
    expect(stoppedEarly(r)).toBe('start not sent: robot link stale: last lowstate 70 ms ago (limit 50 ms)');
    expect(r.result?.real.map((t) => t.outcome)).toEqual(['aborted_by_operator']);
  });

  it(`the robot refuses or fails the prepare: a problem each time, ${MAX_INFRA_RETRIES} retries, then stopped`, () => {
    const r = play(
      script({ attempts: [[attempt({ robot: 'refuse' }), attempt({ robot: 'fail' }), attempt({ robot: 'refuse' })]] }),
    );
    expect(traced(r, 'problem').map((e) => [e.reason, e.detail])).toEqual([
      [
        'trial 1 did not start: the robot did not run the clip: prepare refused by the robot',
        { run_id: 'real-0-1', trial_index: 0 },
      ],
      ['trial 1 did not start: controller fault while preparing', { run_id: 'real-0-2', trial_index: 0 }],
      [
        'trial 1 did not start: the robot did not run the clip: prepare refused by the robot',
        { run_id: 'real-0-3', trial_index: 0 },
      ],
    ]);
    expect(stoppedEarly(r)).toBe(
      'trial 1 did not start 3 times: the robot did not run the clip: prepare refused by the robot',
    );
    expect(count(r, 'ask_confirmation')).toBe(3); // each retry is a new run the operator confirms
    expect(count(r, 'prompt_reset')).toBe(0); // nothing moved: no reset
    expect(refusals(r)).toEqual([]);
  });

  it('a recording that cannot open: the start check says why, retried like an infrastructure error', () => {
    const r = play(script({ attempts: [[attempt({ recording: false }), attempt()]] }, 1));
    expect(effectsOf(r.log, 'answer_start_check')[0].effect.answer).toBe(
      'the episode could not be recorded: cannot create the MCAP file',
    );
    expect(traced(r, 'problem')[0].reason).toBe(
      'trial 1 did not start: the episode could not be recorded: cannot create the MCAP file',
    );
    expect(r.result?.real.map((t) => t.outcome)).toEqual(['completed']);
  });

  it(`infrastructure errors of recorded trials: retried ${MAX_INFRA_RETRIES} times, then stopped`, () => {
    const r = play(script({ attempts: [[attempt({ end: 'infrastructure_error' })]] }));
    expect(count(r, 'finish_episode')).toBe(3);
    expect(stoppedEarly(r)).toBe('trial 1 failed 3 times with infrastructure errors: robot ended infrastructure_error');
    expect(r.result?.real).toEqual([]);
    expect(count(r, 'prompt_reset')).toBe(2); // a recorded trial moved the robot: reset before the retry
  });

  it('a counted trial resets the infrastructure retries', () => {
    const infra = attempt({ end: 'infrastructure_error' });
    const r = play(
      script(
        {
          attempts: [
            [infra, infra, attempt()],
            [infra, infra, attempt()],
          ],
        },
        2,
      ),
    );
    expect(stoppedEarly(r)).toBeNull();
    expect(r.result?.real.map((t) => t.outcome)).toEqual(['completed', 'completed']);
  });

  it('the recording fails while frames come in: recorded end traced, the robot released, the session fails', () => {
    const r = play(script({ attempts: [[attempt({ recordError: true })]] }));
    const fx = types(r);
    expect(fx.slice(fx.indexOf('start'))).toEqual(['start', 'end_episode', 'release_robot', 'fail']);
    expect(r.state).toMatchObject({ phase: 'failed', message: 'disk full' });
  });
});

describe('outcomes, trips and the operator stop', () => {
  it('a completed run the live metrics saw fail is a hard_failure', () => {
    const r = play(script({ attempts: [[attempt({ hardFailure: true })]] }, 1));
    expect(r.result?.real[0]).toMatchObject({ outcome: 'hard_failure', reason: 'hard failure: pelvis below 0.3 m' });
    expect(count(r, 'record_stop_requested')).toBe(0);
  });

  it('a robot that falls after a completed clip is a hard_failure, never completed; upright, the reason says so', () => {
    const fell = { kind: 'fell' as const, atS: 1.234, tiltRad: 1.66, watchedS: 1.234, frames: 617 };
    const r = play(script({ attempts: [[attempt({ afterClip: fell })]] }, 1));
    expect(r.result?.real[0]).toMatchObject({
      outcome: 'hard_failure',
      reason: 'hard failure after the clip: fell 1.23 s after the clip ended: tilt 95° (limit 30°)',
    });
    // negative control: the robot standing after the same clip
    const up = { kind: 'upright' as const, watchedS: 1.5, maxTiltRad: 0.05, still: true, frames: 750 };
    const ok = play(script({ attempts: [[attempt({ afterClip: up })]] }, 1));
    expect(ok.result?.real[0]).toMatchObject({
      outcome: 'completed',
      reason: 'robot ended completed; standing still 1.5 s after the clip (tilt at most 3°)',
    });
    // a fall the watch could not see (no lowstate) leaves the robot's end, with why it is not known
    const unknown = {
      kind: 'unknown' as const,
      reason: 'the link went quiet',
      watchedS: 0,
      maxTiltRad: null,
      frames: 0,
    };
    const u = play(script({ attempts: [[attempt({ afterClip: unknown })]] }, 1));
    expect(u.result?.real[0].reason).toBe('robot ended completed; after the clip: not known (the link went quiet)');
  });

  it('a trip during the after-clip watch decides the outcome, not the fall', () => {
    const fell = { kind: 'fell' as const, atS: 0.8, tiltRad: 1.2, watchedS: 0.8, frames: 400 };
    const r = play(script({ attempts: [[attempt({ tripDuringRun: 'estop', afterClip: fell })]] }, 1));
    expect(r.result?.real[0].outcome).toBe('estop');
  });

  it('a trip while the clip runs ends the trial with the trip outcome, stop_requested on the episode', () => {
    const r = play(script({ attempts: [[attempt({ tripDuringRun: 'interlock_lost', hardFailure: true })]] }, 1));
    const trip = r.trips[0];
    expect(trip).toMatchObject({ cause: 'interlock_lost', outcome: 'link_lost', runId: 'real-0-1' });
    const tripStep = r.log.find((l) => l.event.type === 'trip');
    expect(tripStep?.effects).toEqual([
      {
        type: 'stop',
        runId: 'real-0-1',
        outcome: 'link_lost',
        reason: 'scripted interlock_lost (interlock_lost)',
        by: 'gate',
      },
      { type: 'damp', runId: 'real-0-1', reason: 'scripted interlock_lost (interlock_lost)', by: 'gate' },
      { type: 'progress', event: { type: 'trip', trip } },
      { type: 'log', line: 'safety: TRIP interlock_lost: scripted interlock_lost' },
    ]);
    expect(effectsOf(r.log, 'record_stop_requested')[0].effect).toEqual({
      type: 'record_stop_requested',
      runId: 'real-0-1',
      reason: 'link_lost: scripted interlock_lost (interlock_lost)',
      detail: { outcome: 'link_lost', trip },
    });
    expect(r.result?.real[0]).toMatchObject({
      outcome: 'link_lost',
      reason: 'scripted interlock_lost (interlock_lost)',
    });
  });

  it('a trip before the start check: start refused (the session heard it, whatever the gate said)', () => {
    const lying = play(script({ attempts: [[attempt({ tripBeforeStart: 'estop' })]], lie: true }));
    expect(count(lying, 'open_recording')).toBe(0);
    expect(count(lying, 'start')).toBe(0);
    expect(refusals(lying)[0].reasons[0]).toMatchObject({ code: 'tripped' });
    expect(effectsOf(lying.log, 'end_episode')[0].effect).toMatchObject({ outcome: 'estop' });
    expect(stoppedEarly(lying)).toMatch(/^start refused by the safety gate: the session heard a trip \(estop: /);
  });

  it('a trip between the grant and the write: the start withheld, recorded with the trip outcome', () => {
    const r = play(script({ attempts: [[attempt({ tripBeforeWrite: 'estop' })]], lie: true }));
    expect(count(r, 'start')).toBe(0);
    expect(count(r, 'withhold_start')).toBe(1);
    expect(effectsOf(r.log, 'finish_episode')[0].effect).toMatchObject({ outcome: 'estop' });
    expect(stoppedEarly(r)).toMatch(/^start not sent: the session heard a trip/);
  });

  it('the operator stops while the clip runs: the stop goes to the gate (intervention)', () => {
    const base = play(script({}, 1));
    const at = base.log.findIndex((l) => l.effects.some((e) => e.type === 'start'));
    const r = play(script({ interjections: [{ at: base.log[at].top + 1, kind: 'intervention' }] }, 1));
    expect(effectsOf(r.log, 'operator_stop').map((x) => x.effect)).toEqual([
      {
        type: 'operator_stop',
        runId: 'real-0-1',
        intervention: true,
        reason: 'the operator stopped for a human intervention',
      },
    ]);
    expect(r.result?.real[0].outcome).toBe('intervention');
    expect(r.result?.stoppedEarly).toBeNull(); // the last trial: nothing remains
  });

  it('the operator stops between trials: stop and damp at once (the robot holds or stands), then the session stops', () => {
    const base = play(script({}, 2));
    const fin = base.log.find((l) => l.event.type === 'episode_finished');
    // heard while the first trial's episode is being finished: the robot holds its last targets
    const r = play(script({ interjections: [{ at: fin?.top ?? 0, kind: 'abort' }] }, 2));
    expect(effectsOf(r.log, 'operator_stop').map((x) => x.effect)).toEqual([
      { type: 'operator_stop', runId: null, intervention: false, reason: 'the operator pressed stop' },
    ]);
    expect(r.trips.map((t) => [t.cause, t.runId])).toEqual([['operator_stop', null]]);
    expect(count(r, 'stop')).toBe(1);
    expect(count(r, 'damp')).toBe(1);
    expect(count(r, 'prompt_reset')).toBe(0);
    expect(stoppedEarly(r)).toBe('stopped by the operator');
    expect(r.result?.real).toHaveLength(1);
    expect(r.result?.real[0].outcome).toBe('completed'); // the finished trial keeps its outcome
  });

  it('the operator stops during the confirmation: not confirmed', () => {
    const base = play(script({}, 1));
    const ask = base.log.find((l) => l.effects.some((e) => e.type === 'ask_confirmation'));
    const r = play(script({ interjections: [{ at: (ask?.top ?? 0) + 1, kind: 'abort' }] }, 1));
    expect(stoppedEarly(r)).toBe('the operator did not confirm the trial');
    expect(count(r, 'arm_interlock')).toBe(0);
  });

  it('the operator stops while the interlock arms or the robot is leased: stop and damp, no prepare, released, stopped', () => {
    for (const step of ['arm_interlock', 'prepare'] as const) {
      const base = play(script({}, 1));
      const ask = base.log.find((l) => l.effects.some((e) => e.type === step));
      const r = play(script({ interjections: [{ at: (ask?.top ?? 0) + 1, kind: 'abort' }] }, 1));
      expect(count(r, 'run_trial'), step).toBe(0);
      expect(stoppedEarly(r), step).toBe('stopped by the operator');
      // the trial that never began ends with the operator's stop, not as a fault
      expect(effectsOf(r.log, 'end_episode')[0].effect, step).toMatchObject({
        outcome: 'aborted_by_operator',
        reason: 'the operator pressed stop (operator_stop)',
      });
      expect(count(r, 'release_robot'), step).toBe(1);
      expect(
        r.trips.map((t) => t.cause),
        step,
      ).toEqual(['operator_stop']);
      expect(count(r, 'damp'), step).toBe(1);
    }
  });

  it('a trip between trials (no episode open): stop and damp, then a reset the gate accepts', () => {
    const base = play(script({}, 2));
    const fin = base.log.find((l) => l.event.type === 'episode_finished');
    const r = play(script({ interjections: [{ at: (fin?.top ?? 0) + 1, kind: 'estop' }] }, 2));
    expect(r.trips.map((t) => t.runId)).toEqual([null]);
    expect(count(r, 'stop')).toBe(1);
    expect(count(r, 'damp')).toBe(1);
    expect(effectsOf(r.log, 'prompt_reset').map((x) => x.effect.tripped)).toEqual([false]);
    // The prompt went out before the trip: the operator's note is a human reset; the next
    // check comes, but the gate is tripped and refuses prepare.
    expect(stoppedEarly(r)).toMatch(/^prepare refused by the safety gate: tripped by estop/);
  });
});

describe('the simulation branch', () => {
  it(`infrastructure errors are retried ${MAX_INFRA_RETRIES} times; the last run is the branch`, () => {
    const r = play(script({ sim: ['infrastructure_error', 'infrastructure_error', 'infrastructure_error'] }, 1));
    expect(effectsOf(r.log, 'run_sim_branch').map((x) => x.effect.attempt)).toEqual([0, 1, 2]);
    expect(r.result?.sim).toEqual({ runId: 'sim-3', outcome: 'infrastructure_error', resumed: false });
    const ends = progressOf(r).filter((p) => p.type === 'episode_end' && p.domain === 'simulation');
    expect(ends).toHaveLength(3);
    const ok = play(script({ sim: ['infrastructure_error', 'hard_failure'] }, 1));
    expect(ok.result?.sim).toEqual({ runId: 'sim-2', outcome: 'hard_failure', resumed: false });
  });
});

describe('resume', () => {
  const storeAfter = (s: WorldScript, n: number): PlayResult => {
    const whole = play(s);
    const fin = whole.log.filter((l) => l.event.type === 'episode_finished')[n - 1];
    return play(s, undefined, { cutAt: (fin?.top ?? 0) + 1 });
  };

  it('reports the stored episodes once, skips the simulation, starts with a reset, runs the missing trials', () => {
    const first = storeAfter(script(), 1);
    const r = play(script(), undefined, { store: first.store });
    expect(count(r, 'run_sim_branch')).toBe(0);
    expect(count(r, 'capture_calibration')).toBe(0);
    expect(effectsOf(r.log, 'log').map((x) => x.effect.line)).toContain(
      'resuming matched pair matched-1 (calibration cal-pair-1)',
    );
    expect(effectsOf(r.log, 'open_matched_pair')[0].effect).toEqual({
      type: 'open_matched_pair',
      calibrationId: 'cal-pair-1',
      resumed: true,
    });
    const ends = progressOf(r).filter((p) => p.type === 'episode_end');
    expect(ends.slice(0, 2)).toEqual([
      expect.objectContaining({ domain: 'simulation', resumed: true }),
      expect.objectContaining({ domain: 'real_robot', trialIndex: 0, resumed: true }),
    ]);
    expect(effectsOf(r.log, 'prompt_reset')[0].effect).toMatchObject({ trialIndex: 1, afterOutcome: 'completed' });
    expect(r.result?.real.map((t) => [t.trialIndex, t.resumed])).toEqual([
      [0, true],
      [1, false],
      [2, false],
    ]);
  });

  it('an interrupted or infrastructure_error trial does not count; a trip that left no episode asks for a reset', () => {
    // Killed while trial 1 runs: its recording is open (interrupted), nothing counted.
    const whole = play(script());
    const started = whole.log.find((l) => l.effects.some((e) => e.type === 'start'));
    const first = play(script(), undefined, { cutAt: (started?.top ?? 0) + 1 });
    expect(first.store.real.map((x) => x.status)).toEqual(['running']);
    const r = play(script(), undefined, { store: first.store });
    // a real episode exists (interrupted): reset first
    expect(phases(r).slice(0, 2)).toEqual(['waiting_reset 0', 'checking_calibration 0']);
    expect(r.result?.real.map((t) => [t.trialIndex, t.resumed])).toEqual([
      [0, false],
      [1, false],
      [2, false],
    ]);
    // A trip with no episode behind it (stop_requested after the last human reset): reset first.
    const s0 = initialTrialSession(3);
    const opening: TrialSessionState = {
      ...s0,
      phase: 'opening_pair',
      pair: {
        pairId: PAIR_ID,
        qualificationTraceId: PAIR_ID,
        contractId: 'mb-metrics/1',
        bindingKey: BINDING,
        clipName: CLIP,
      },
      calibrationId: 'cal-1',
      resumed: true,
    };
    const opened = (stop: number | null, reset: number | null) =>
      reduceTrialSession(opening, {
        type: 'matched_pair_opened',
        parentTraceId: 'm',
        simEpisodes: [{ runId: 'sim-1', trialIndex: -1, outcome: 'completed', reason: '', frames: 5 }],
        realEpisodes: [
          { runId: 'real-a', trialIndex: 0, outcome: 'infrastructure_error', reason: 'x', frames: 9 },
          { runId: 'real-b', trialIndex: 1, outcome: null, reason: '', frames: 9 },
        ],
        anyRealEpisode: false,
        lastStopEventId: stop,
        lastResetEventId: reset,
      });
    const step = (x: ReturnType<typeof opened>) => (x.state.phase === 'trials' ? x.state.trial.step : x.state.phase);
    expect(step(opened(7, 3))).toBe('awaiting_reset');
    expect(step(opened(7, 9))).toBe('checking_start_pose');
    expect(step(opened(null, null))).toBe('checking_start_pose');
    // neither the infrastructure error nor the unfinished one counts: trial 0 is next
    const o = opened(null, null);
    expect(o.state.phase === 'trials' && o.state.trial).toMatchObject({ index: 0 });
    expect(o.effects.filter((e) => e.type === 'progress' && e.event.type === 'episode_end')).toHaveLength(1);
  });

  it('a given calibration starts a new matched pair even when one exists', () => {
    const first = storeAfter(script(), 1);
    const r = play(script({ calibration: 'stored' }), undefined, { store: first.store });
    expect(effectsOf(r.log, 'open_matched_pair')[0].effect.resumed).toBe(false);
    expect(count(r, 'load_calibration')).toBe(1);
  });
});

describe('purity', () => {
  const deepFreeze = <T>(v: T): T => {
    if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
      Object.freeze(v);
      for (const x of Object.values(v)) deepFreeze(x);
    }
    return v;
  };
  const frozen: Reducer = (s, e) => reduceTrialSession(deepFreeze(s), deepFreeze(e));

  it('never mutates its state or its event (deep-frozen inputs, random sessions) and is deterministic', () => {
    fc.assert(
      fc.property(worldArb(true), (s) => {
        const a = play(s, frozen);
        expect(a.threw).toBeNull();
        const b = play(s);
        expect(JSON.stringify(b.log.map((l) => [l.event, l.effects]))).toBe(
          JSON.stringify(a.log.map((l) => [l.event, l.effects])),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('ignores an event out of place, with a log line and the same state', () => {
    const s0 = initialTrialSession(1);
    const r = reduceTrialSession(s0, { type: 'confirmation', runId: 'real-1', confirmed: true });
    expect(r.state).toBe(s0);
    expect(r.effects).toEqual([{ type: 'log', line: 'trial session: confirmation ignored in phase resolving_pair' }]);
  });
});
