import { describe, expect, it } from 'vitest';
import type { ConnectionInfo } from '../../src/api/contract';
import { ROS2_LINK_WATCH_ONLY_REASON } from '../../src/domain/robotLink/serverCapabilities';
import { watchOnlyReason } from '../../renderer/src/trial/linkControl';

// The Trial runner disables Start for a watch-only robot link and shows why: the link's
// `watch_only` condition, as connections.list carries it.

const URL = 'ws://127.0.0.1:8765';
const entry = (problems: ConnectionInfo['problems'], kind: ConnectionInfo['kind'] = 'robot'): ConnectionInfo => ({
  id: 'robot-1',
  kind,
  name: '127.0.0.1:8765',
  url: URL,
  executionDomain: 'real_robot',
  presence: 'present',
  active: true,
  available: true,
  rateHz: 500,
  declaredRateHz: 500,
  lastFrameAgeMs: 1,
  latencyMs: null,
  leasedRunId: null,
  problems,
  removable: true,
});
const problem = (code: string, message: string) => ({ severity: 'warn' as const, code, message, atMs: 1 });

describe('Trial runner: a watch-only robot link', () => {
  it('reads the reason of a ROS 2 link’s watch_only condition, without the URL', () => {
    const e = entry([problem('tick_gap', 'a gap'), problem('watch_only', `${URL}: ${ROS2_LINK_WATCH_ONLY_REASON}`)]);
    expect(watchOnlyReason(e)).toBe(ROS2_LINK_WATCH_ONLY_REASON);
  });

  it('reads a g1-bridge/1 server that accepts no client messages as watch-only too', () => {
    const msg = `${URL} does not accept client messages: it can be watched, not controlled`;
    expect(watchOnlyReason(entry([problem('watch_only', msg)]))).toBe(msg);
  });

  it('is null for a controllable link, another problem, a simulator or no entry (negative controls)', () => {
    expect(watchOnlyReason(entry([]))).toBeNull();
    expect(watchOnlyReason(entry([problem('link_stale', 'nothing for 60 ms')]))).toBeNull();
    expect(watchOnlyReason(entry([problem('watch_only', 'x')], 'remote_simulator'))).toBeNull();
    expect(watchOnlyReason(undefined)).toBeNull();
  });
});
