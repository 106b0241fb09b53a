import { afterEach, describe, expect, it } from 'vitest';
import type {
  Backend,
  BackendCapabilities,
  BackendEvent,
  BackendLease,
  BackendListener,
  BackendProblem,
  Presence,
} from '../../src/domain/backend/backend';
import { BACKEND_PROBLEM_KINDS, problemKindOf, type BackendProblemCode } from '../../src/domain/backend/problemCodes';
import { ProblemLedger } from '../../src/domain/robotLink/problemLedger';
import { ConnectionRegistry, INCIDENT_CURRENT_MS } from '../../src/services/console/connectionRegistry';
import { realRobotCapabilities } from '../helpers/robotCapabilities';

// Problems carry a typed code whose kind says how long they are current: a condition until the
// backend withdraws it (problem_cleared), an incident for a while after it happened. The ledger
// decides what a link reports; the registry lists only what is current.

describe('problem codes', () => {
  it('classify every code; a code this build does not know is an incident', () => {
    expect(problemKindOf('link_stale')).toBe('condition');
    expect(problemKindOf('link_lost')).toBe('condition');
    expect(problemKindOf('malformed_frame')).toBe('incident');
    expect(problemKindOf('from_a_newer_backend')).toBe('incident');
    expect(problemKindOf('toString')).toBe('incident'); // not fooled by the prototype
    for (const kind of Object.values(BACKEND_PROBLEM_KINDS)) expect(['condition', 'incident']).toContain(kind);
  });
});

describe('ProblemLedger', () => {
  it('rate-limits incidents per code (always bypasses); every code has its own window', () => {
    const l = new ProblemLedger(1000);
    expect(l.incident('warn', 'malformed_frame', 'a', 0)).not.toBeNull();
    expect(l.incident('warn', 'malformed_frame', 'b', 999)).toBeNull();
    expect(l.incident('warn', 'duplicate_frame', 'c', 999)).not.toBeNull();
    expect(l.incident('warn', 'malformed_frame', 'd', 1000)?.problem).toEqual({
      severity: 'warn',
      code: 'malformed_frame',
      message: 'd',
      atMs: 1000,
    });
    expect(l.incident('info', 'server_status', 'e', 1001, true)).not.toBeNull();
    expect(l.incident('info', 'server_status', 'f', 1002, true)).not.toBeNull();
  });

  it('reports a condition once when it begins, again only after it was cleared; its log line is rate-limited', () => {
    const l = new ProblemLedger(1000);
    expect(l.raise('warn', 'link_stale', 'nothing for 50 ms', 0)).toMatchObject({ log: true });
    expect(l.raise('warn', 'link_stale', 'nothing for 70 ms', 20)).toBeNull(); // still holds
    expect(l.holds('link_stale')).toBe(true);
    expect(l.clear('link_stale')).toBe(true);
    expect(l.clear('link_stale')).toBe(false); // control: nothing to withdraw twice
    // A flapping link: the onset is reported (it holds again), the log line is not repeated within 1 s.
    expect(l.raise('warn', 'link_stale', 'again', 300)).toMatchObject({ log: false, problem: { message: 'again' } });
    expect(l.raise('error', 'link_lost', 'lost', 310)).toMatchObject({ log: true });
    expect(l.conditions().sort()).toEqual(['link_lost', 'link_stale']);
  });
});

/** A backend whose events the test emits (a stand-in for one part: the registry's listener). */
class EmittingBackend implements Backend {
  readonly name: string;
  readonly capabilities: BackendCapabilities = realRobotCapabilities(['remote']);
  presence: Presence = 'present';
  private listener: BackendListener | null = null;
  constructor(readonly id: string) {
    this.name = id;
  }
  setListener(l: BackendListener | null): void {
    this.listener = l;
  }
  async emit(...events: BackendEvent[]): Promise<void> {
    await this.listener?.(events);
  }
  problem(code: BackendProblemCode, message: string = code): BackendEvent {
    return { type: 'problem', problem: { severity: 'warn', code, message, atMs: 1 } satisfies BackendProblem };
  }
  cleared(code: BackendProblemCode): BackendEvent {
    return { type: 'problem_cleared', code, atMs: 2 };
  }
  async acquire(): Promise<BackendLease> {
    throw new Error('not used');
  }
  async close(): Promise<void> {}
}

let registries: ConnectionRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.map((r) => r.close()));
  registries = [];
});

async function robotEntry() {
  let now = 5_000_000;
  let backend!: EmittingBackend;
  const registry = new ConnectionRegistry({
    factories: { robot: ({ id }) => (backend = new EmittingBackend(id)) },
    modelFile: '/models/g1.xml',
    now: () => now,
  });
  registries.push(registry);
  const info = await registry.addRemote('ws://127.0.0.1:9100', 'robot');
  const codes = () => registry.get(info.id).problems.map((p) => p.code);
  return { registry, backend, id: info.id, codes, advance: (ms: number) => (now += ms) };
}

describe('the registry lists only current problems', () => {
  it('a stale link is listed while it is stale and withdrawn when frames are fresh again', async () => {
    const r = await robotEntry();
    await r.backend.emit(r.backend.problem('link_stale', 'nothing from the robot for 51 ms'));
    expect(r.codes()).toEqual(['link_stale']);
    await r.backend.emit({ type: 'presence', presence: 'present' }, r.backend.cleared('link_stale'));
    expect(r.codes()).toEqual([]);
    // Control: withdrawing another code leaves a holding condition listed.
    await r.backend.emit(r.backend.problem('link_lost'));
    await r.backend.emit(r.backend.cleared('link_stale'));
    expect(r.codes()).toEqual(['link_lost']);
  });

  it('conditions come first (newest first), then incidents; an incident is current for INCIDENT_CURRENT_MS after it arrived', async () => {
    const r = await robotEntry();
    await r.backend.emit(r.backend.problem('malformed_frame'));
    r.advance(10);
    await r.backend.emit(r.backend.problem('watch_only'), r.backend.problem('tick_gap'));
    r.advance(10);
    await r.backend.emit(r.backend.problem('link_stale'));
    expect(r.codes()).toEqual(['link_stale', 'watch_only', 'tick_gap', 'malformed_frame']);
    r.advance(INCIDENT_CURRENT_MS - 20);
    expect(r.codes()).toEqual(['link_stale', 'watch_only', 'tick_gap', 'malformed_frame']);
    r.advance(1);
    expect(r.codes()).toEqual(['link_stale', 'watch_only', 'tick_gap']); // the first incident is over
    r.advance(1_000_000);
    expect(r.codes()).toEqual(['link_stale', 'watch_only']); // conditions hold until withdrawn
  });

  it('a condition reported again replaces the earlier report (one entry per code)', async () => {
    const r = await robotEntry();
    await r.backend.emit(r.backend.problem('link_lost', 'nothing for 95 ms'));
    await r.backend.emit(r.backend.problem('link_lost', 'link closed'));
    const problems = r.registry.get(r.id).problems;
    expect(problems.map((p) => p.message)).toEqual(['link closed']);
  });

  it('forgets what a backend reported as holding once that backend is disconnected', async () => {
    const r = await robotEntry();
    await r.backend.emit(r.backend.problem('link_lost'), r.backend.problem('frames_dropped'));
    await r.registry.disconnect(r.id);
    expect(r.codes()).toEqual(['frames_dropped']);
  });
});
