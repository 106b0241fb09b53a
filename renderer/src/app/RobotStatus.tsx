import { useState } from 'react';
import { errorReport } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import { Light } from '../safety/Light';
import { useShownRobot } from '../trial/shownRobot';
import { robotBannerAlerts, tiltChipView, timingChipView, timingView, wbcChipView } from '../safety/robotStateView';
import { useSafetyStore } from '../safety/safetyStore';

// The top bar's robot state: the controller's state (/g1/wbc_status), the IMU tilt,
// the timing health before arming, the emulator's human reset (only when the link declares the
// emulator's control channel), and the banner under the bar when the robot is fallen, damped or in
// fault. All from the 5 Hz safety.status push (low rate: React state is fine).

export function RobotStateChips() {
  const robot = useShownRobot();
  const interlock = useSafetyStore((s) => s.interlock);
  const host = useSafetyStore((s) => s.host);
  return (
    <span className="safety-lights">
      <Light name="wbc" view={wbcChipView(robot)} testId="robot-wbc" />
      <Light name="tilt" view={tiltChipView(robot)} testId="robot-tilt" />
      <Light name="timing" view={timingChipView(timingView(interlock, robot, host))} testId="timing-health" />
    </span>
  );
}

/** The emulator's human reset: shown only when the connected robot declares itself the emulator. */
export function EmulatorResetButton() {
  const robot = useShownRobot();
  const [state, setState] = useState<{ busy: boolean; message: string | null; ok: boolean }>({
    busy: false,
    message: null,
    ok: true,
  });
  if (!robot || !robot.emulatorControl || robot.presence === 'disconnected') return null;
  const reset = async () => {
    const c = useConnectionStore.getState().client;
    if (!c) return;
    setState({ busy: true, message: null, ok: true });
    try {
      const r = await c.call('robot.emulatorReset', { connectionId: robot.connectionId });
      setState({ busy: false, message: r.message, ok: r.ok });
    } catch (err) {
      setState({ busy: false, message: errorReport(err), ok: false });
    }
  };
  return (
    <span className="emulator-reset">
      <button
        type="button"
        className="small"
        disabled={state.busy}
        title="The robot emulator's human reset (/emulator/control human_reset): stands the emulated robot up at its start pose. A real robot is put back by a person."
        onClick={() => void reset()}
        data-testid="emulator-reset"
      >
        Reset emulator robot
      </button>
      {state.message && (
        <span
          className={state.ok ? 'muted emulator-reset-msg' : 'bad emulator-reset-msg'}
          data-testid="emulator-reset-result"
          data-ok={state.ok}
          title={state.message}
        >
          {state.message}
        </span>
      )}
    </span>
  );
}

/** The banner under the top bar while the robot is fallen, damped or in fault. */
export function RobotAlertBanner() {
  const robot = useShownRobot();
  const alerts = robotBannerAlerts(robot);
  if (alerts.length === 0) return null;
  return (
    <div
      className="robot-alert-banner"
      role="alert"
      data-testid="robot-alert"
      data-codes={alerts.map((a) => a.code).join(' ')}
    >
      <b>{robot!.name}:</b> {alerts.map((a) => a.message).join(' · ')}
    </div>
  );
}
