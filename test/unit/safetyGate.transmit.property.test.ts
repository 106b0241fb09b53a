// Property tests of the gate's last check before a granted start is written (without it a
// start can reach the robot tens of ms after the gate tripped, when the trip happens while the
// runner awaits the episode's recording between the gate's grant and the write). Whatever
// happens in that await — any order and timing of interlock statuses, e-stops, losses, lowstates,
// operator stops, episode ends, resets, silent stretches — `transmit` answers `allowed` only if
// nothing tripped since the grant and the interlock and link are fresh at the instant of the write.
// A negative control (a transport that trusts the grant) must be caught by the same property.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SafetyGate, type GateEvent, type MotionDecision } from '../../src/domain/safety';

const C = 'mb-metrics/1';
const B = 'builtin@pd1';
const RUN = 'real-r1';
const T0 = 10_000;

/** A gate whose `start` for RUN was just granted at T0 (every condition held). */
function grantedGate(): SafetyGate {
  const g = new SafetyGate();
  g.handle({ type: 'admission', atMs: T0 - 5000, pairId: 'p1', admitted: true, contractId: C, bindingKey: B });
  g.handle({ type: 'episode_start', atMs: T0 - 4000, runId: RUN, pairId: 'p1', contractId: C, bindingKey: B });
  g.handle({ type: 'calibration', atMs: T0 - 3000, runId: RUN, capturedAtMs: T0 - 3500 });
  g.handle({ type: 'operator_confirm', atMs: T0 - 2000, runId: RUN });
  g.handle({ type: 'interlock_status', atMs: T0 - 10, status: 'ARMED' });
  g.handle({ type: 'lowstate', atMs: T0 - 2 });
  expect(g.requestMotion('prepare', T0 - 1).allowed).toBe(true);
  expect(g.requestMotion('start', T0).allowed).toBe(true);
  return g;
}

/** What can happen while the runner awaits between the grant and the write (times are offsets from the previous step). */
type Step = { dtMs: number; event: Omit<GateEvent, 'atMs'> };
const stepArb: fc.Arbitrary<Step> = fc.record({
  dtMs: fc.oneof(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 150 })),
  event: fc.oneof(
    fc.constant({ type: 'interlock_status', status: 'ARMED' } as const),
    fc.constant({ type: 'interlock_status', status: 'SAFE' } as const),
    fc.constant({ type: 'interlock_status', status: 'ESTOP' } as const),
    fc.constant({ type: 'interlock_status', status: 'LOST' } as const),
    fc.constant({ type: 'lowstate' } as const),
    fc.constant({ type: 'lowstate' } as const),
    fc.constant({ type: 'tick' } as const),
    fc.constant({ type: 'estop' } as const),
    fc.constant({ type: 'interlock_lost' } as const),
    fc.constant({ type: 'link_lost' } as const),
    fc.constant({ type: 'operator_stop' } as const),
    fc.constant({ type: 'episode_end', runId: RUN, outcome: 'link_lost' } as const),
    fc.constant({ type: 'episode_end', runId: RUN, outcome: 'completed' } as const),
    fc.constant({ type: 'operator_reset', note: 'test' } as const),
    fc.constant({ type: 'operator_confirm', runId: RUN } as const),
  ),
});
const awaitArb = fc.record({
  steps: fc.array(stepArb, { maxLength: 10 }),
  finalDtMs: fc.integer({ min: 0, max: 120 }),
});

interface Played {
  tripped: boolean;
  episodeClosed: boolean;
  lastArmedAtMs: number | null;
  lastStatusAtMs: number;
  lastStatus: string;
  lastLowstateAtMs: number;
  atMs: number;
}

/** Plays the await on the gate, keeping an independent record of what happened. */
function play(g: SafetyGate, steps: Step[], finalDtMs: number): Played {
  const p: Played = {
    tripped: false,
    episodeClosed: false,
    lastArmedAtMs: T0 - 10,
    lastStatusAtMs: T0 - 10,
    lastStatus: 'ARMED',
    lastLowstateAtMs: T0 - 2,
    atMs: T0,
  };
  for (const s of steps) {
    p.atMs += s.dtMs;
    const fx = g.handle({ ...s.event, atMs: p.atMs } as GateEvent);
    if (fx.actions.length > 0) p.tripped = true;
    const e = { ...s.event, atMs: p.atMs } as GateEvent;
    if (e.type === 'episode_end') p.episodeClosed = true;
    if (e.type === 'lowstate') p.lastLowstateAtMs = p.atMs;
    if (e.type === 'interlock_status') {
      p.lastStatus = e.status;
      p.lastStatusAtMs = p.atMs;
    }
  }
  p.atMs += finalDtMs;
  return p;
}

type Transport = (g: SafetyGate, atMs: number) => MotionDecision | { allowed: true };
const realTransport: Transport = (g, atMs) => g.transmit('start', RUN, atMs);
/** Negative control: writes the start because it was granted once. */
const trustingTransport: Transport = () => ({ allowed: true });

function startNeverAfterATrip(transport: Transport) {
  return fc.property(awaitArb, ({ steps, finalDtMs }) => {
    const g = grantedGate();
    const p = play(g, steps, finalDtMs);
    const d = transport(g, p.atMs);
    // Whatever tripped during the await (now, or by the watchdog at the write): no start.
    const trippedAtWrite = p.tripped || (!d.allowed && 'reasons' in d && d.reasons.some((r) => r.code === 'tripped'));
    if (p.tripped || p.episodeClosed)
      expect(
        d.allowed,
        `start allowed after ${p.tripped ? 'a trip' : 'the episode ended'}: ${JSON.stringify(steps)}`,
      ).toBe(false);
    if (d.allowed) {
      // … and every freshness condition holds at the instant of the write.
      expect(trippedAtWrite).toBe(false);
      expect(p.lastStatus).toBe('ARMED');
      expect(p.atMs - p.lastStatusAtMs).toBeLessThanOrEqual(100);
      expect(p.atMs - p.lastLowstateAtMs).toBeLessThan(50);
    }
  });
}

describe('safety gate: the last check before a granted start is written (transmit)', () => {
  it('allows the write only when nothing tripped since the grant and the interlock and link are fresh at that instant (2000 random awaits)', () => {
    fc.assert(startNeverAfterATrip(realTransport), { numRuns: 2000, seed: 20261201 });
  });

  it('negative control: a transport that trusts the grant is caught by the same property', () => {
    expect(() => fc.assert(startNeverAfterATrip(trustingTransport), { numRuns: 2000, seed: 20261201 })).toThrow(
      /Property failed[\s\S]*Counterexample/,
    );
  });

  it('the attack’s order: granted, the interlock silent for 104 ms while the recording opens, then the write → refused, tripped, traced', () => {
    const g = grantedGate();
    // lowstates keep coming; the last interlock status was at T0 − 10 (the box went silent)
    g.handle({ type: 'lowstate', atMs: T0 + 60 });
    g.handle({ type: 'lowstate', atMs: T0 + 85 });
    const d = g.transmit('start', RUN, T0 + 94);
    expect(d.allowed).toBe(false);
    if (d.allowed) return;
    expect(d.reasons.map((r) => r.code)).toContain('tripped');
    expect(d.effects.actions.map((a) => a.command)).toEqual(['stop', 'damp']); // the watchdog tripped at the write
    expect(d.effects.trace.map((t) => t.kind)).toEqual(['stop_requested', 'refusal']);
    expect(d.effects.trace[1].reason).toMatch(/^start not sent: tripped 0 ms ago by interlock lost/);
  });

  it('control: granted and written at once (nothing happened in between) → allowed, no effects', () => {
    const g = grantedGate();
    const d = g.transmit('start', RUN, T0 + 1);
    expect(d).toMatchObject({ allowed: true, runId: RUN });
    expect(d.effects.actions).toEqual([]);
    expect(d.effects.trace).toEqual([]);
  });

  it('a write for another run, or one never granted, is refused', () => {
    const g = grantedGate();
    expect(g.transmit('start', 'real-r2', T0 + 1)).toMatchObject({
      allowed: false,
      reasons: [{ code: 'not_granted' }],
    });
    const fresh = new SafetyGate();
    fresh.handle({ type: 'interlock_status', atMs: 0, status: 'ARMED' });
    fresh.handle({ type: 'lowstate', atMs: 0 });
    expect(fresh.transmit('start', RUN, 1)).toMatchObject({ allowed: false, reasons: [{ code: 'not_granted' }] });
  });
});
