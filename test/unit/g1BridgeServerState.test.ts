import { describe, expect, it } from 'vitest';
import { canStart, nextBridgeSessionState, type RobotMotorFacts } from '../../src/domain/bridge/g1BridgeServerState';

/** Facts that record which were asked, in order. */
function facts(damping: boolean, standing: boolean): RobotMotorFacts & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    isDamping: () => (asked.push('damping'), damping),
    isStanding: () => (asked.push('standing'), standing),
  };
}

describe('g1-bridge/1 server state', () => {
  it('reset, prepare and start move idle → ready → tracking; a reset keeps a prepared clip ready', () => {
    expect(nextBridgeSessionState('done', { type: 'reset', prepared: false })).toBe('idle');
    expect(nextBridgeSessionState('ready', { type: 'reset', prepared: true })).toBe('ready');
    expect(nextBridgeSessionState('idle', { type: 'prepared' })).toBe('ready');
    expect(nextBridgeSessionState('ready', { type: 'started' })).toBe('tracking');
  });

  it('a start needs ready, a prepared clip and a lease', () => {
    expect(canStart('ready', true, true)).toBe(true);
    expect(canStart('idle', true, true)).toBe(false);
    expect(canStart('ready', false, true)).toBe(false);
    expect(canStart('ready', true, false)).toBe(false);
  });

  it('a stop, damp or hold with nothing running: damping for a damp or damped motors, else idle', () => {
    const f = facts(false, false);
    expect(nextBridgeSessionState('ready', { type: 'stopped_idle', command: 'damp', robot: f })).toBe('damping');
    expect(f.asked).toEqual([]); // a damp decides without asking the robot
    expect(nextBridgeSessionState('ready', { type: 'stopped_idle', command: 'stop', robot: f })).toBe('idle');
    expect(nextBridgeSessionState('ready', { type: 'stopped_idle', command: 'hold', robot: facts(true, false) })).toBe(
      'damping',
    );
  });

  it('an episode end: damping over hold over standing over fault/done, asking the robot only as far as needed', () => {
    const end = (
      cause: 'damp' | 'hold' | 'stop' | null,
      outcome: 'completed' | 'infrastructure_error',
      f: RobotMotorFacts,
    ) => nextBridgeSessionState('tracking', { type: 'episode_ended', cause, outcome, robot: f });
    const damp = facts(false, true);
    expect(end('damp', 'completed', damp)).toBe('damping');
    expect(damp.asked).toEqual([]);
    expect(end('hold', 'completed', facts(true, true))).toBe('damping');
    const hold = facts(false, true);
    expect(end('hold', 'completed', hold)).toBe('idle');
    expect(hold.asked).toEqual(['damping']);
    expect(end('stop', 'completed', facts(false, true))).toBe('standing');
    expect(end(null, 'infrastructure_error', facts(false, false))).toBe('fault');
    expect(end(null, 'completed', facts(false, false))).toBe('done');
  });

  it('the robot reports its own state while no episode runs', () => {
    expect(nextBridgeSessionState('ready', { type: 'robot_state', state: 'damping' })).toBe('damping');
  });
});
