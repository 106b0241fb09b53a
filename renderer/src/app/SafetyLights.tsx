import { useEffect, useState } from 'react';
import { useShownRobot } from '../trial/shownRobot';
import { Light } from '../safety/Light';
import { interlockLightView, linkLightView } from '../safety/lightViews';
import { useSafetyStore } from '../safety/safetyStore';

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
