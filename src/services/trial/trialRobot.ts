import {
  robotBackendOf,
  stopPathRefusal,
  type Backend,
  type BackendListener,
  type EpisodeOutcome,
  type StopDelivery,
} from '../../domain/backend/backend';
import { backendHub } from '../stream/backendHub';
import type { TrialRobot } from './trialTypes';

// A TrialRobot over a robot backend: its watchers subscribe to the backend's one hub
// (src/services/stream/backendHub.ts), which owns the backend's single listener and awaits each
// watcher so the backend's backpressure holds; stop/damp go through the RobotBackend's unleased
// path (a trip must stop the robot whoever holds the lease). Whether the backend has that path is
// read from its declaration (`robotLink`, src/domain/backend/backend.ts), never probed for. A
// backend without it can still be watched (calibration, live metrics); its stop and damp come
// back unsent with the reason, and the gate driver refuses it for real-robot trials (gateDriver.ts).

/** A watcher of the backend's stream through its hub: every batch, in order ('every'). */
function hubSubscribe(backend: Backend): (listener: BackendListener) => () => void {
  const hub = backendHub(backend);
  return (listener) => hub.subscribe({ name: 'robot link watcher', delivery: 'every', onEvents: listener });
}

const unsent = (command: 'stop' | 'damp', reason: string, message: string): StopDelivery => ({
  command,
  reason,
  attempts: 0,
  answer: null,
  message,
  firstSentAtMs: null,
  settledAtMs: performance.now(),
});

export function trialRobotOf(
  backend: Backend,
  options: { robotUnit?: string; subscribe?: (l: BackendListener) => () => void; log?: (line: string) => void } = {},
): TrialRobot {
  const log = options.log ?? (() => {});
  const subscribe = options.subscribe ?? hubSubscribe(backend);
  const robot = robotBackendOf(backend);
  const send = async (command: 'stop' | 'damp', reason: string, outcome?: EpisodeOutcome): Promise<StopDelivery> => {
    if (!robot) return unsent(command, reason, stopPathRefusal(backend) as string);
    try {
      const d = command === 'stop' ? await robot.sendStop(reason, outcome) : await robot.damp(reason);
      if (d.answer !== 'ok') log(`robot: ${command} not confirmed by ${backend.name}: ${d.message}`);
      return d;
    } catch (err) {
      // sendStop and damp never reject by contract; one that does is reported, not thrown.
      log(`robot: ${command} not confirmed by ${backend.name}: ${(err as Error).message}`);
      return unsent(command, reason, (err as Error).message);
    }
  };
  return {
    backend,
    subscribe,
    robotUnit: options.robotUnit ?? backend.id,
    // The outcome travels whole (a link_lost stop latches the run like any other); the client
    // puts on the wire only what g1-bridge/1 knows.
    stop: (outcome, reason) => send('stop', reason, outcome),
    damp: (reason) => send('damp', reason),
  };
}
