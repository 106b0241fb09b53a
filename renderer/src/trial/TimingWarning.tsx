import { timingGate, type TimingGateDecision } from '../../../src/domain/timing/timingGate';
import type { TimingHealth } from '../../../src/domain/timing/timingHealth';
import { useShownRobot } from './shownRobot';
import { timingView } from '../safety/robotStateView';
import { useSafetyStore } from '../safety/safetyStore';

// The second confirmation of an action that moves the robot while TIMING reads BAD
// (src/domain/timing/timingGate.ts): the first press shows this warning with the measured gaps,
// live at the 5 Hz safety.status rate; only its "anyway" button goes ahead.

/** The TIMING light's verdict for the robot the top bar shows (the Trial runner's robot). */
export function useTimingHealth(): TimingHealth {
  const robot = useShownRobot();
  const interlock = useSafetyStore((s) => s.interlock);
  const host = useSafetyStore((s) => s.host);
  return timingView(interlock, robot, host);
}

/** The first press's decision (not yet acknowledged) for the timing measured now. */
export function firstPressDecision(health: TimingHealth): TimingGateDecision {
  return timingGate(health, false);
}

export function TimingWarning({
  action,
  goLabel,
  onGo,
  onCancel,
  testId,
}: {
  /** What the go button does, e.g. "start the matched pair". */
  action: string;
  goLabel: string;
  onGo: () => void;
  onCancel: () => void;
  testId: string;
}) {
  const health = useTimingHealth();
  const now = timingGate(health, false);
  return (
    <div
      className="timing-warning"
      role="alertdialog"
      aria-label={`Timing is bad: ${action}?`}
      data-testid={testId}
      data-level={health.level}
    >
      <div className="strong bad-text" data-testid={`${testId}-figure`}>
        {now.kind === 'confirm' ? now.message : `TIMING now reads ${health.level.toUpperCase()}: ${health.summary}`}
      </div>
      <div className="small">
        This machine is not holding the safety timing: a gap like this during a trial trips the link or the interlock
        and damps the robot. Lower the load (close other programs, docs/CONSOLE.md "Timing before the robot moves") or{' '}
        {action} anyway.
      </div>
      <div className="row">
        <button type="button" className="danger" onClick={onGo} data-testid={`${testId}-go`}>
          {goLabel}
        </button>
        <button type="button" onClick={onCancel} data-testid={`${testId}-cancel`}>
          Cancel
        </button>
      </div>
    </div>
  );
}
