import { describe, expect, it } from 'vitest';
import { simDuringRealTrialRefusal, simulatorOnThisMachine } from '../../src/domain/sim/simDuringRealTrial';
import { simRunOutcome, type SimRunEndFacts } from '../../src/domain/sim/simRunOutcome';

// A simulation run beside a real trial on the same machine is refused unless overridden; a run
// that recorded no frame never ends `completed`.

const TRIAL = 'trial trial-1 is running (pair pt-1)';

describe('simDuringRealTrialRefusal', () => {
  it('refuses the embedded simulator and a loopback remote simulator while real-robot work runs', () => {
    for (const [embedded, url] of [
      [true, null],
      [false, 'ws://127.0.0.1:9000'],
      [false, 'ws://localhost:9000/'],
      [false, 'ws://[::1]:9000'],
    ] as const)
      expect(simDuringRealTrialRefusal({ realWork: TRIAL, embedded, url, override: false })).toMatch(
        /^trial trial-1 is running \(pair pt-1\) on this machine: .* set allowDuringRealTrial to run anyway$/,
      );
  });

  it('negative controls: no real work, the override, or a simulator on another machine run', () => {
    expect(simDuringRealTrialRefusal({ realWork: null, embedded: true, url: null, override: false })).toBeNull();
    expect(simDuringRealTrialRefusal({ realWork: TRIAL, embedded: true, url: null, override: true })).toBeNull();
    expect(
      simDuringRealTrialRefusal({ realWork: TRIAL, embedded: false, url: 'ws://10.0.0.7:9000', override: false }),
    ).toBeNull();
    expect(simulatorOnThisMachine(false, 'not a url')).toBe(false);
    expect(simulatorOnThisMachine(false, null)).toBe(false);
  });
});

describe('simRunOutcome', () => {
  const base: SimRunEndFacts = {
    end: { outcome: 'completed', reason: 'reached the end of the clip' },
    stopReason: null,
    failedReason: null,
    frames: 0,
    plannedFrames: 165,
    connectionId: 'embedded-sim',
  };

  it('a `completed` end with 0 frames is an infrastructure_error naming the planned frames', () => {
    expect(simRunOutcome(base)).toEqual({
      outcome: 'infrastructure_error',
      reason:
        'the backend reported "reached the end of the clip" but the console recorded 0 of 165 frames on embedded-sim: nothing was tracked',
    });
  });

  it('negative control: the same end with frames stays completed; other ends keep their outcome', () => {
    expect(simRunOutcome({ ...base, frames: 165 })).toEqual({
      outcome: 'completed',
      reason: 'reached the end of the clip',
    });
    expect(simRunOutcome({ ...base, end: { outcome: 'hard_failure', reason: 'fell' } }).outcome).toBe('hard_failure');
    expect(
      simRunOutcome({
        ...base,
        end: { outcome: 'aborted_by_operator', reason: 'stop' },
        stopReason: 'operator stop (key:Space)',
      }),
    ).toEqual({ outcome: 'aborted_by_operator', reason: 'operator stop (key:Space)' });
  });

  it('without an end: a stop before the run began, or a run that could not start', () => {
    expect(simRunOutcome({ ...base, end: null, stopReason: 'panel stop' })).toEqual({
      outcome: 'aborted_by_operator',
      reason: 'panel stop (before the simulation began)',
    });
    expect(simRunOutcome({ ...base, end: null, failedReason: 'no simulator' })).toEqual({
      outcome: 'infrastructure_error',
      reason: 'the run could not start on embedded-sim: no simulator',
    });
  });
});
