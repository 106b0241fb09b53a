import type { EpisodeOutcome } from '../episode/episodeOutcome';
import type { CommandName, WbcState } from './g1BridgeContract';

// The `wbc_status.state` a g1-bridge/1 server reports, as a reducer over what happened to its
// session (docs/G1_BRIDGE.md, "States"). The robot's own facts (damped motors, a standing
// controller) are asked lazily, in the order the rules read, so a rule that decides earlier never
// consults them.

/** What ended an episode early, if anything did. */
export type EpisodeStopCause = 'stop' | 'damp' | 'hold' | 'disconnect' | 'shutdown';

/** The robot's facts the state depends on (a simulator: both false). */
export interface RobotMotorFacts {
  /** True while the motors are damped. */
  isDamping(): boolean;
  /** True while a runner's standing controller drives the motors. */
  isStanding(): boolean;
}

export type BridgeSessionEvent =
  /** An exact reset succeeded; a prepared clip stays prepared. */
  | { type: 'reset'; prepared: boolean }
  /** A clip and binding were prepared. */
  | { type: 'prepared' }
  /** The prepared episode started. */
  | { type: 'started' }
  /** A stop, damp or hold arrived while nothing ran (what was prepared is dropped). */
  | { type: 'stopped_idle'; command: Extract<CommandName, 'stop' | 'damp' | 'hold'>; robot: RobotMotorFacts }
  /** The running episode ended. */
  | { type: 'episode_ended'; cause: EpisodeStopCause | null; outcome: EpisodeOutcome; robot: RobotMotorFacts }
  /** The robot changed state on its own (e-stop, human reset) while no episode ran. */
  | { type: 'robot_state'; state: WbcState };

/** The state after `event`. */
export function nextBridgeSessionState(_state: WbcState, event: BridgeSessionEvent): WbcState {
  switch (event.type) {
    case 'reset':
      return event.prepared ? 'ready' : 'idle';
    case 'prepared':
      return 'ready';
    case 'started':
      return 'tracking';
    case 'stopped_idle':
      return event.command === 'damp' || event.robot.isDamping() ? 'damping' : 'idle';
    case 'episode_ended': {
      const { cause, robot } = event;
      if (cause === 'damp' || robot.isDamping()) return 'damping';
      if (cause === 'hold') return 'idle';
      if (robot.isStanding()) return 'standing';
      return event.outcome === 'infrastructure_error' ? 'fault' : 'done';
    }
    case 'robot_state':
      return event.state;
  }
}

/** A start is accepted only from `ready` with a prepared clip on a held lease. */
export function canStart(state: WbcState, prepared: boolean, leased: boolean): boolean {
  return state === 'ready' && prepared && leased;
}
