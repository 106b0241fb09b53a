import type { Backend, BackendEvent, BackendListener, EpisodeOutcome, StopDelivery } from '../../domain/backend/backend';
import type { RobotLink } from './trialTypes';

// A RobotLink over a g1-bridge/1 client Backend for processes without the console's
// ConnectionRegistry (the CLI): fans the backend's single listener out to watchers, awaiting each
// so the backend's backpressure holds, and sends stop/damp through the client's unleased command
// path (a trip must stop the robot whoever holds the lease).

/** What a g1-bridge/1 client offers beyond Backend for trips (BridgeClientBackend.sendStop). */
export interface StopCommandSender {
  sendStop(command: 'stop' | 'damp', reason: string, outcome?: EpisodeOutcome): Promise<StopDelivery>;
}

export const canSendStop = (b: Backend): b is Backend & StopCommandSender => typeof (b as Partial<StopCommandSender>).sendStop === 'function';

/** Installs one listener on the backend that forwards every batch to the watchers. */
export function fanOutBackend(backend: Backend): { subscribe(listener: BackendListener): () => void } {
  const watchers = new Set<BackendListener>();
  backend.setListener(async (events: BackendEvent[]) => {
    for (const w of [...watchers]) {
      try {
        await w(events);
      } catch {
        // A failing watcher must not starve the others (each reports its own trouble).
      }
    }
  });
  return {
    subscribe(listener) {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
  };
}

export function robotLinkFor(backend: Backend, options: { robotUnit?: string; subscribe?: (l: BackendListener) => () => void; log?: (line: string) => void } = {}): RobotLink {
  const log = options.log ?? (() => {});
  const subscribe = options.subscribe ?? fanOutBackend(backend).subscribe;
  const send = async (command: 'stop' | 'damp', reason: string, outcome?: EpisodeOutcome): Promise<StopDelivery> => {
    if (!canSendStop(backend)) {
      log(`robot: ${backend.name} cannot send ${command} (not a g1-bridge/1 client)`);
      return { command, reason, attempts: 0, answer: null, message: `${backend.name} has no stop/damp path (not a g1-bridge/1 client)`, firstSentAtMs: null, settledAtMs: performance.now() };
    }
    try {
      const d = await backend.sendStop(command, reason, outcome);
      if (d.answer !== 'ok') log(`robot: ${command} not confirmed by ${backend.name}: ${d.message}`);
      return d;
    } catch (err) {
      // sendStop never rejects by contract; a sender that does is reported, not thrown.
      log(`robot: ${command} not confirmed by ${backend.name}: ${(err as Error).message}`);
      return { command, reason, attempts: 0, answer: null, message: (err as Error).message, firstSentAtMs: null, settledAtMs: performance.now() };
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
