import { describe, expect, it } from 'vitest';
import type { InterlockStatusDto, RobotLinkStatusDto, StartResidualsDto } from '../../src/api/contract';
import { applyTrialLive, emptyTrialLive } from '../../renderer/src/trial/trialStore';
import { interlockLightView, linkLightView, SAFETY_STATUS_STALE_MS } from '../../renderer/src/safety/lightViews';
import { parseTrials } from '../../renderer/src/trial/trialFormat';
import { boundCalibrationId, residualRows, stillnessMeter } from '../../renderer/src/calibration/calibrationFormat';

// The Trial runner and Calibration panels' view logic: when each light is green (only armed-and-
// fresh, only a fresh link), grey when the status pushes stop, the stillness meter, the residual
// table order, and the live store's failure latch.

const interlock = (patch: Partial<InterlockStatusDto> = {}): InterlockStatusDto => ({
  path: '/dev/pts/7',
  open: true,
  state: 'armed',
  light: 'ARMED',
  deviceState: 'ARMED',
  armedAndFresh: true,
  armPending: false,
  disarmPending: false,
  lastStatusAgeMs: 12,
  rttMs: 1.5,
  statusGapMaxMs: 22,
  lastTrip: null,
  lastEvent: null,
  garbageLines: 0,
  trips: 0,
  ...patch,
});

const link = (patch: Partial<RobotLinkStatusDto> = {}): RobotLinkStatusDto => ({
  connectionId: 'robot-1',
  name: 'Robot 127.0.0.1:9000',
  presence: 'present',
  lastFrameAgeMs: 3,
  rateHz: 500,
  latencyMs: 0.8,
  fresh: true,
  freshLimitMs: 50,
  globalRoot: false,
  wbc: { state: 'idle', reason: null },
  tiltRad: 0.01,
  frameGapMaxMs: 6,
  emulatorControl: false,
  ...patch,
});

describe('safety lights', () => {
  it('interlock: green only when armed with a fresh status', () => {
    expect(interlockLightView(interlock(), 1000, 1100)).toMatchObject({ colour: 'green', label: 'ARMED' });
    expect(interlockLightView(interlock({ armedAndFresh: false }), 1000, 1100)).toMatchObject({
      colour: 'amber',
      label: 'ARMED',
    });
    expect(
      interlockLightView(interlock({ state: 'safe', light: 'SAFE', armedAndFresh: false }), 1000, 1100),
    ).toMatchObject({ colour: 'amber', label: 'SAFE' });
    expect(
      interlockLightView(interlock({ state: 'estop', light: 'ESTOP', armedAndFresh: false }), 1000, 1100),
    ).toMatchObject({ colour: 'red', label: 'ESTOP' });
    const lost = interlockLightView(
      interlock({
        state: 'lost',
        light: 'LOST',
        armedAndFresh: false,
        lastTrip: { reason: 'silence', detail: 'no status for 101 ms', agoMs: 5 },
      }),
      1000,
      1100,
    );
    expect(lost).toMatchObject({ colour: 'red', label: 'LOST' });
    expect(lost.detail).toContain('no status for 101 ms');
    expect(interlockLightView(null, 1000, 1100)).toMatchObject({ colour: 'grey', label: 'CLOSED' });
  });

  it('link: green only when the last frame is fresh', () => {
    expect(linkLightView(link(), 1000, 1100).colour).toBe('green');
    expect(linkLightView(link({ fresh: false, lastFrameAgeMs: 70, presence: 'stale' }), 1000, 1100)).toMatchObject({
      colour: 'amber',
      label: 'STALE',
    });
    expect(linkLightView(link({ fresh: false, lastFrameAgeMs: 400, presence: 'lost' }), 1000, 1100)).toMatchObject({
      colour: 'red',
      label: 'LOST',
    });
    expect(linkLightView(null, 1000, 1100).colour).toBe('grey');
  });

  it('every light goes grey when the status pushes stop', () => {
    const t = 1000 + SAFETY_STATUS_STALE_MS + 1;
    expect(interlockLightView(interlock(), 1000, t)).toMatchObject({ colour: 'grey', label: '?' });
    expect(linkLightView(link(), 1000, t)).toMatchObject({ colour: 'grey', label: '?' });
    expect(linkLightView(link(), null, t).colour).toBe('grey');
  });
});

describe('calibration view', () => {
  it('stillness meter: window fill, velocity and gyro against their limits, the first reason', () => {
    expect(stillnessMeter(null)).toMatchObject({ fill: 0, still: false, jointVelRadS: null });
    const m = stillnessMeter({
      still: false,
      windowFilledS: 0.25,
      windowNeededS: 1,
      reasons: [
        {
          code: 'joint_velocity',
          message: 'left_knee_joint moves at 0.2 rad/s (limit 0.05)',
          joint: 'left_knee_joint',
        },
      ],
      stats: { maxAbsJointVelRadS: 0.3, maxJointVelRmsRadS: 0.2, maxGyroRadS: 0.01 },
    });
    expect(m).toMatchObject({
      fill: 0.25,
      still: false,
      jointVelRadS: 0.2,
      gyroRadS: 0.01,
      why: 'left_knee_joint moves at 0.2 rad/s (limit 0.05)',
    });
    expect(m.jointVelLimitRadS).toBeGreaterThan(0);
    expect(
      stillnessMeter({ still: true, windowFilledS: 0.9, windowNeededS: 1, reasons: [], stats: null }),
    ).toMatchObject({ fill: 1, still: true, why: null });
  });

  it('residual rows: largest |Δ| first, with measured and clip values', () => {
    const jointRad = new Array(29).fill(0.001);
    jointRad[3] = -0.2;
    jointRad[20] = 0.05;
    const r: StartResidualsDto = {
      jointRad,
      maxAbsJointRad: 0.2,
      maxAbsJoint: 'left_knee_joint',
      rmsJointRad: 0.04,
      rollRad: 0.01,
      pitchRad: -0.02,
      headingRad: null,
      rootPosM: null,
    };
    const measured = Array.from({ length: 29 }, (_, i) => i / 10);
    const rows = residualRows(r, measured, null);
    expect(rows).toHaveLength(29);
    expect(rows[0]).toMatchObject({
      joint: 'left_knee_joint',
      index: 3,
      deltaRad: -0.2,
      measuredRad: 0.3,
      clipRad: null,
    });
    expect(rows[1].index).toBe(20);
    expect(rows[2].index).toBe(0); // ties keep canonical order
  });

  it('trials field: 1..10', () => {
    expect(parseTrials('3')).toEqual({ ok: true, trials: 3 });
    expect(parseTrials('0').ok).toBe(false);
    expect(parseTrials('2.5').ok).toBe(false);
  });
});

describe('trial live store', () => {
  const batch = (runId: string, failed: boolean[], failure: string | null = null) => ({
    runId,
    count: failed.length,
    frame: failed.map((_, i) => i),
    timeS: failed.map((_, i) => i / 50),
    readings: {
      mpjpeLMm: failed.map((_, i) => 10 + i),
      jointRmseRad: failed.map(() => 0.02),
      firstFailureFrame: null,
      failed,
      failure,
    },
    droppedFrames: 0,
  });

  it('shows the newest sample, latches the failure flag, resets on a new run', () => {
    let s = applyTrialLive(emptyTrialLive(), batch('r1', [false, false]), 1);
    expect(s).toMatchObject({ runId: 'r1', samples: 2, frame: 1, mpjpeLMm: 11, failed: false, failure: null });
    s = applyTrialLive(s, batch('r1', [false, true], 'root_height of pelvis'), 2);
    expect(s).toMatchObject({ samples: 4, failed: true, failure: 'root_height of pelvis' });
    s = applyTrialLive(s, batch('r1', [false]), 3);
    expect(s.failed).toBe(true); // latched
    s = applyTrialLive(s, batch('r2', [false]), 4);
    expect(s).toMatchObject({ runId: 'r2', samples: 1, failed: false });
    expect(s.revision).toBe(4);
  });
});

describe('phase line', () => {
  it('says why a job stopped', async () => {
    const { phaseLine } = await import('../../renderer/src/trial/trialFormat');
    const base = {
      state: 'stopped',
      error: null,
      result: null,
      stopRequested: { atMs: 1, intervention: false, reason: 'operator stop (key:Space)' },
      phase: 'stopped',
      trialIndex: null,
      trials: 1,
      phaseMessage: 'x',
    } as unknown as Parameters<typeof phaseLine>[0];
    expect(phaseLine({ ...base, episodes: [] })).toBe('stopped · 1 not run: operator stop (key:Space)');
    expect(
      phaseLine({
        ...base,
        episodes: [],
        state: 'running',
        phase: 'waiting_confirmation',
        trialIndex: 0,
        phaseMessage: 'confirm trial 1 of 1',
      }),
    ).toBe('waiting confirmation · trial 1/1 — confirm trial 1 of 1');
    // A session that ran every trial names their outcomes: an e-stopped trial does not hide behind "completed".
    const ep = (trialIndex: number, outcome: string, resumed: boolean) => ({
      runId: `r${trialIndex}`,
      domain: 'real_robot',
      trialIndex,
      outcome,
      reason: '',
      frames: 10,
      resumed,
    });
    const sim = {
      runId: 's',
      domain: 'simulation',
      trialIndex: null,
      outcome: 'completed',
      reason: '',
      frames: 10,
      resumed: true,
    };
    const done = {
      ...base,
      state: 'completed',
      stopRequested: null,
      episodes: [sim, ep(0, 'estop', true), ep(1, 'completed', false), ep(2, 'completed', false)],
    } as unknown as Parameters<typeof phaseLine>[0];
    expect(phaseLine({ ...done, trials: 3 })).toBe('ended · 1 estop, 2 completed');
    expect(
      phaseLine({
        ...done,
        trials: 2,
        episodes: [sim, ep(0, 'completed', true), ep(1, 'completed', false)],
      } as typeof done),
    ).toBe('completed');
    // The simulation branch is not a real trial: a session with no real trial did not complete one.
    expect(phaseLine({ ...done, trials: 1, episodes: [sim] } as typeof done)).toBe('ended · 1 not run');
  });

  it('counts real trials against those asked for, never "5/3"', async () => {
    const { realProgressText } = await import('../../renderer/src/trial/trialFormat');
    const ep = (trialIndex: number, outcome: string) => ({ domain: 'real_robot', trialIndex, outcome });
    const job = (trials: number, episodes: unknown[]) =>
      ({ trials, episodes }) as unknown as Parameters<typeof realProgressText>[0];
    expect(realProgressText(job(3, [ep(0, 'completed'), ep(1, 'estop')]))).toBe('real 2/3');
    // An infrastructure error is owed again; a trial recorded twice counts once.
    expect(realProgressText(job(3, [ep(0, 'infrastructure_error'), ep(0, 'completed'), ep(0, 'completed')]))).toBe(
      'real 1/3',
    );
    // Earlier sessions asked for 5; this one for 3: the count says both.
    const five = [0, 1, 2, 3, 4].map((i) => ep(i, 'completed'));
    expect(realProgressText(job(3, five))).toBe('real 5 (3 asked)');
    // Negative control: the same five against 5 asked.
    expect(realProgressText(job(5, five))).toBe('real 5/5');
  });
});

describe('one id per calibration', () => {
  const job = { pairId: 'pt-1', calibrationId: 'cal-bbbbbbbbbbbbbbbbbbbbbbbb' };
  it('names the record the pair was bound to from the accepted one', () => {
    expect(boundCalibrationId('cal-aaaaaaaaaaaaaaaaaaaaaaaa', 'pt-1', job, 'cal-aaaaaaaaaaaaaaaaaaaaaaaa')).toBe(
      'cal-bbbbbbbbbbbbbbbbbbbbbbbb',
    );
  });
  it('negative controls: another pair, a job started without or with another calibration, the same id', () => {
    const a = 'cal-aaaaaaaaaaaaaaaaaaaaaaaa';
    expect(boundCalibrationId(a, 'pt-2', job, a)).toBeNull();
    expect(boundCalibrationId(a, 'pt-1', job, null)).toBeNull();
    expect(boundCalibrationId(a, 'pt-1', job, 'cal-cccccccccccccccccccccccc')).toBeNull();
    expect(boundCalibrationId(a, 'pt-1', { ...job, calibrationId: a }, a)).toBeNull();
    expect(boundCalibrationId(null, 'pt-1', job, a)).toBeNull();
  });
});
