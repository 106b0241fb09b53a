import { useEffect, useState } from 'react';
import { useTrialStore } from '../trial/trialStore';
import { interlockLightView, linkLightView, type LightView } from './lightViews';
import { useSafetyStore } from './safetyStore';

// The interlock and robot-link lights (DESIGN §6): green only when armed-and-fresh / fresh; grey
// when the services stopped sending status. Re-rendered on each safety.status push (5 Hz) and
// twice a second on their own, so a silent link turns grey even without pushes.

function useNowMs(hz = 2): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    const t = setInterval(() => setNow(performance.now()), 1000 / hz);
    return () => clearInterval(t);
  }, [hz]);
  return now;
}

export function Light({ name, view, testId }: { name: string; view: LightView; testId: string }) {
  return (
    <span
      className={`light light-${view.colour}`}
      title={`${name}: ${view.detail}`}
      data-testid={testId}
      data-colour={view.colour}
      data-label={view.label}
    >
      <span className="light-dot" />
      <span className="light-name">{name}</span>
      <b className="light-label">{view.label}</b>
    </span>
  );
}

/** The robot the lights and the top bar show: the Trial runner's connection, else the first robot. */
export function useShownRobot() {
  const robots = useSafetyStore((s) => s.robots);
  const connectionId = useTrialStore((s) => s.form.connectionId);
  return robots.find((r) => r.connectionId === connectionId) ?? robots[0] ?? null;
}

export function SafetyLights() {
  const { interlock, receivedAtMs } = useSafetyStore();
  const now = Math.max(useNowMs(), receivedAtMs ?? 0);
  const robot = useShownRobot();
  return (
    <span className="safety-lights">
      <Light name="interlock" view={interlockLightView(interlock, receivedAtMs, now)} testId="light-interlock" />
      <Light name="link" view={linkLightView(robot, receivedAtMs, now)} testId="light-link" />
    </span>
  );
}
