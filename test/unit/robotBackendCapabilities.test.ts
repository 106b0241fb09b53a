import { afterEach, describe, expect, it } from 'vitest';
import {
  NotARobotBackendError,
  robotBackendOf,
  stopPathRefusal,
  type Backend,
  type BackendCapabilities,
  type BackendLease,
  type BackendListener,
  type EpisodeOutcome,
  type Presence,
  type RobotBackend,
  type RobotLinkStats,
  type StopDelivery,
} from '../../src/domain/backend/backend';
import { ConnectionRegistry } from '../../src/services/console/connectionRegistry';
import type { NewTraceEvent } from '../../src/domain/trace/records';
import type { CampaignStore } from '../../src/services/trace';
import { GateDriver } from '../../src/services/trial/gateDriver';
import type { InterlockFeed } from '../../src/services/trial/interlockFeed';
import { trialRobotOf } from '../../src/services/trial/trialRobot';
import { realRobotCapabilities } from '../helpers/robotCapabilities';

// A robot backend declares itself (Backend.robotLink) and offers sendStop, damp and linkStats
// (RobotBackend). The consumers read that declaration, never probe for methods: a backend with a
// `sendStop` or `linkStats` method but no declaration is not a robot link. A backend that cannot
// stop is refused for real-robot trials with the reason, as a trace event — not a log line.

const CAPS: BackendCapabilities = realRobotCapabilities(['remote']);
const STATS: RobotLinkStats = {
  latencyMs: 2.5,
  stateRateHz: 500,
  lastStateAgeMs: 1,
  missingTicks: 0,
  tickGapEvents: 0,
  oneWayLatencyMs: null,
  dropped: 0,
};

class PlainBackend implements Backend {
  readonly capabilities = CAPS;
  presence: Presence = 'present';
  listener: BackendListener | null = null;
  constructor(
    readonly id: string,
    readonly name = id,
  ) {}
  setListener(l: BackendListener | null): void {
    this.listener = l;
  }
  async acquire(): Promise<BackendLease> {
    throw new Error('not used');
  }
  async close(): Promise<void> {}
}

/** Has the methods of a robot link but does not declare one: it must be treated as a plain backend. */
class UndeclaredStopper extends PlainBackend {
  stops = 0;
  async sendStop(): Promise<StopDelivery> {
    this.stops++;
    throw new Error('must not be called');
  }
  linkStats(): RobotLinkStats {
    return STATS;
  }
}

class DeclaredRobot extends PlainBackend implements RobotBackend {
  readonly robotLink = { control: 'runClips' as const, emulatorControl: false };
  readonly wbcStatus = null;
  readonly sent: string[] = [];
  async sendStop(reason: string, outcome?: EpisodeOutcome): Promise<StopDelivery> {
    this.sent.push(`stop ${outcome ?? '-'} ${reason}`);
    return { command: 'stop', reason, attempts: 1, answer: 'ok', message: 'ok', firstSentAtMs: 0, settledAtMs: 1 };
  }
  async damp(reason: string): Promise<StopDelivery> {
    this.sent.push(`damp ${reason}`);
    return { command: 'damp', reason, attempts: 1, answer: 'ok', message: 'ok', firstSentAtMs: 0, settledAtMs: 1 };
  }
  linkStats(): RobotLinkStats {
    return STATS;
  }
}

describe('the declared robot link', () => {
  it('robotBackendOf reads the declaration only', () => {
    const robot = new DeclaredRobot('g1');
    expect(robotBackendOf(robot)).toBe(robot);
    expect(robotBackendOf(new UndeclaredStopper('duck'))).toBeNull();
    expect(stopPathRefusal(robot)).toBeNull();
    expect(stopPathRefusal(new PlainBackend('sim', 'a simulator'))).toMatch(
      /^a simulator declares no robot link: it cannot send stop or damp/,
    );
  });

  it('trialRobotOf sends stop and damp through the RobotBackend (outcome whole)', async () => {
    const robot = new DeclaredRobot('g1');
    const link = trialRobotOf(robot);
    expect((await link.stop('link_lost', 'trip')).answer).toBe('ok');
    expect((await link.damp('trip')).answer).toBe('ok');
    expect(robot.sent).toEqual(['stop link_lost trip', 'damp trip']);
  });

  it('an undeclared backend is not stopped by probing: its stop comes back unsent, naming the reason', async () => {
    const duck = new UndeclaredStopper('duck');
    const lines: string[] = [];
    const d = await trialRobotOf(duck, { log: (l) => lines.push(l) }).stop('estop', 'trip');
    expect(d).toMatchObject({ command: 'stop', attempts: 0, answer: null });
    expect(d.message).toMatch(/duck declares no robot link/);
    expect(duck.stops).toBe(0);
    expect(lines).toEqual([]); // a refusal, not a log line
  });
});

function fakeStore() {
  const events: NewTraceEvent[] = [];
  const store = {
    getEpisode: () => null,
    recordEvent: (e: NewTraceEvent) => {
      events.push(e);
      return e;
    },
  } as unknown as CampaignStore;
  return { store, events };
}
const quietInterlock = { subscribe: () => () => {}, close: async () => {} } as unknown as InterlockFeed;

describe('the gate driver refuses a backend that cannot stop', () => {
  const drivers: GateDriver[] = [];
  afterEach(() => {
    for (const d of drivers.splice(0)) d.close();
  });

  it('throws NotARobotBackendError with the reason and records the refusal on the parent trace', () => {
    const { store, events } = fakeStore();
    const link = trialRobotOf(new UndeclaredStopper('duck', 'a duck-typed robot'));
    let err: unknown;
    try {
      drivers.push(new GateDriver({ link, interlock: quietInterlock, store, parentTraceId: 'pt-1' }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NotARobotBackendError);
    expect((err as NotARobotBackendError).message).toMatch(/a duck-typed robot declares no robot link/);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'refusal', parentTraceId: 'pt-1', runId: null });
    expect(events[0].reason).toMatch(/real-robot trials need a robot link/);
  });

  it('control: a declared robot link is accepted and nothing is recorded', () => {
    const { store, events } = fakeStore();
    const driver = new GateDriver({ link: trialRobotOf(new DeclaredRobot('g1')), interlock: quietInterlock, store });
    drivers.push(driver);
    expect(events).toEqual([]);
  });
});

describe('the registry reads link latency through the declaration', () => {
  const registries: ConnectionRegistry[] = [];
  afterEach(async () => {
    for (const r of registries.splice(0)) await r.close();
  });

  it('shows a declared robot link’s latency, and none for an undeclared backend with a linkStats method', async () => {
    const registry = new ConnectionRegistry({
      factories: {
        robot: ({ id }) => new DeclaredRobot(id),
        remoteSimulator: ({ id }) => new UndeclaredStopper(id),
      },
      modelFile: '/models/g1.xml',
    });
    registries.push(registry);
    const robot = await registry.addRemote('ws://127.0.0.1:9201', 'robot');
    const sim = await registry.addRemote('ws://127.0.0.1:9202');
    expect(robot.latencyMs).toBe(2.5);
    expect(sim.latencyMs).toBeNull();
  });
});
