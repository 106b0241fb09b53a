import { describe, expect, it } from 'vitest';
import type { Presence } from '../../src/domain/backend/backend';
import {
  freshnessDeadlineMs,
  initialFreshness,
  reduceFreshness,
  resolveFreshnessConfig,
  type FreshnessEffects,
  type FreshnessInput,
  type FreshnessState,
} from '../../src/domain/robotLink/linkFreshness';
import { FreshnessMonitor, type FreshnessChange } from '../../src/services/robotLink/freshnessMonitor';
import { FakeLinkClock } from '../helpers/fakeLinkClock';

// The robot link's freshness (DESIGN §6: moving the robot needs a lowstate < 50 ms old; a running
// episode ends link_lost within 100 ms): the pure reducer at its exact limits, and the monitor's
// timers on a fake clock — no real timer, no sleep.

const ROBOT = resolveFreshnessConfig({ staleAfterMs: 50, lostAfterMs: 100, lostMarginMs: 5 });

function run(inputs: FreshnessInput[], s: FreshnessState = initialFreshness()) {
  let state = s;
  const presences: Presence[] = [];
  let effects: FreshnessEffects | null = null;
  for (const i of inputs) {
    const r = reduceFreshness(state, i, ROBOT);
    state = r.state;
    effects = r.effects;
    if (r.effects.presence) presences.push(r.effects.presence);
  }
  return { state, presences, effects: effects as FreshnessEffects };
}

describe('link freshness (pure reducer)', () => {
  it('declares the loss a margin early: lostAtAgeMs = lostAfterMs − lostMarginMs, never below staleAfterMs', () => {
    expect(ROBOT).toEqual({ staleAfterMs: 50, lostAtAgeMs: 95 });
    expect(resolveFreshnessConfig({ staleAfterMs: 50, lostAfterMs: 52, lostMarginMs: 5 }).lostAtAgeMs).toBe(50);
    expect(() => resolveFreshnessConfig({ staleAfterMs: 0, lostAfterMs: 100, lostMarginMs: 5 })).toThrow(RangeError);
    expect(() => resolveFreshnessConfig({ staleAfterMs: 60, lostAfterMs: 50, lostMarginMs: 5 })).toThrow(
      /staleAfterMs ≤ lostAfterMs/,
    );
    expect(() => resolveFreshnessConfig({ staleAfterMs: 50, lostAfterMs: 100, lostMarginMs: -1 })).toThrow(
      /lostMarginMs/,
    );
  });

  it('goes present → stale exactly when the age reaches 50 ms and → lost when it reaches 95 ms; present again on a frame', () => {
    const base: FreshnessInput[] = [{ type: 'attach' }, { type: 'ready', atMs: 1000 }];
    // Just below each limit nothing changes (the negative control of each step).
    expect(run([...base, { type: 'check', atMs: 1049.999, afterIo: true }]).state.presence).toBe('present');
    const stale = run([...base, { type: 'check', atMs: 1050, afterIo: true }]);
    expect(stale.state.presence).toBe('stale');
    expect(stale.effects.verdict).toEqual({ to: 'stale', ageMs: 50 });
    expect(
      run([...base, { type: 'check', atMs: 1050, afterIo: true }, { type: 'check', atMs: 1094.999, afterIo: true }])
        .state.presence,
    ).toBe('stale');
    const lost = run([
      ...base,
      { type: 'check', atMs: 1050, afterIo: true },
      { type: 'check', atMs: 1095, afterIo: true },
    ]);
    expect(lost.presences).toEqual(['present', 'stale', 'lost']);
    expect(lost.effects.verdict).toEqual({ to: 'lost', ageMs: 95 });
    // The socket is still open: the next frame makes it present at once.
    const back = run([{ type: 'fresh', atMs: 1200 }], lost.state);
    expect(back.presences).toEqual(['present']);
    expect(back.effects.deadlineAtMs).toBe(1250);
  });

  it('takes a verdict only after the socket was read: a check before I/O asks for a verification and changes nothing', () => {
    const r = run([{ type: 'attach' }, { type: 'ready', atMs: 0 }, { type: 'check', atMs: 60, afterIo: false }]);
    expect(r.state.presence).toBe('present');
    expect(r.effects).toMatchObject({ presence: null, verdict: null, verifyAfterIo: true, deadlineAtMs: null });
    // A frame read in the poll phase (it arrived in time) makes the verification find nothing.
    const fresh = run(
      [
        { type: 'fresh', atMs: 58 },
        { type: 'check', atMs: 60, afterIo: true },
      ],
      r.state,
    );
    expect(fresh.state.presence).toBe('present');
    // Control: without it the verification declares stale.
    expect(run([{ type: 'check', atMs: 60, afterIo: true }], r.state).state.presence).toBe('stale');
  });

  it('arms the next threshold only: stale while present, lost while stale, nothing while lost or not attached', () => {
    let s = run([{ type: 'attach' }, { type: 'ready', atMs: 0 }]).state;
    expect(freshnessDeadlineMs(s, ROBOT)).toBe(50);
    s = run([{ type: 'fresh', atMs: 30 }], s).state;
    expect(freshnessDeadlineMs(s, ROBOT)).toBe(80);
    s = run([{ type: 'check', atMs: 80, afterIo: true }], s).state;
    expect(freshnessDeadlineMs(s, ROBOT)).toBe(125);
    s = run([{ type: 'check', atMs: 125, afterIo: true }], s).state;
    expect(s.presence).toBe('lost');
    expect(freshnessDeadlineMs(s, ROBOT)).toBeNull();
    expect(freshnessDeadlineMs(run([{ type: 'attach' }]).state, ROBOT)).toBeNull(); // connecting: nothing ages
  });

  it('a closed socket is lost at once once present; before that it is a failed connect (still connecting)', () => {
    expect(run([{ type: 'attach' }, { type: 'detach' }]).state.presence).toBe('connecting');
    const r = run([{ type: 'attach' }, { type: 'ready', atMs: 0 }, { type: 'detach' }]);
    expect(r.presences).toEqual(['present', 'lost']);
    expect(r.effects.verdict).toBeNull(); // not a silence verdict: the caller reports the close
    // A message cannot revive a detached link; the next connection's ready does.
    expect(run([{ type: 'fresh', atMs: 10 }], r.state).state.presence).toBe('lost');
    expect(run([{ type: 'attach' }, { type: 'ready', atMs: 20 }], r.state).presences).toEqual(['present']);
  });

  it('is disconnected for good after close', () => {
    const r = run([
      { type: 'attach' },
      { type: 'ready', atMs: 0 },
      { type: 'close' },
      { type: 'fresh', atMs: 5 },
      { type: 'ready', atMs: 6 },
    ]);
    expect(r.state.presence).toBe('disconnected');
    expect(r.presences).toEqual(['present', 'disconnected']);
  });
});

function monitor(clock: FakeLinkClock, tickMs = 10_000) {
  const changes: (FreshnessChange & { atMs: number })[] = [];
  const m = new FreshnessMonitor({
    clock,
    config: ROBOT,
    tickMs,
    onChange: (c) => changes.push({ ...c, atMs: clock.nowMs() }),
  });
  return { m, changes };
}

describe('link freshness timers (FreshnessMonitor on a fake clock)', () => {
  it('fires stale 50.5 ms and lost 95.5 ms after the last frame (deadline slack 0.5 ms), one timer for a 500 Hz stream', () => {
    const clock = new FakeLinkClock(0);
    const { m, changes } = monitor(clock);
    m.attach();
    m.ready();
    for (let t = 2; t <= 200; t += 2) {
      clock.advanceTo(t);
      m.fresh();
    }
    // One deadline and the backstop tick pending, not one timer per frame.
    expect(clock.pendingTimers()).toBe(2);
    clock.advanceTo(250.4);
    expect(m.presence).toBe('present'); // negative control: just before the deadline
    clock.advanceTo(250.5);
    expect(m.presence).toBe('stale');
    clock.advanceTo(295.4);
    expect(m.presence).toBe('stale');
    clock.advanceTo(295.5);
    expect(m.presence).toBe('lost');
    expect(changes.map((c) => [c.presence, c.verdict?.to ?? null, c.atMs])).toEqual([
      ['present', null, 0],
      ['stale', 'stale', 250.5],
      ['lost', 'lost', 295.5],
    ]);
    expect(changes[2].verdict!.ageMs).toBeCloseTo(95.5, 9);
    clock.advanceTo(400);
    m.fresh();
    expect(m.presence).toBe('present');
    expect(changes).toHaveLength(4);
  });

  it('does not declare silence for the console’s own stall: a frame read before the verification keeps it present', () => {
    const clock = new FakeLinkClock(0);
    const { m } = monitor(clock);
    m.attach();
    m.ready();
    clock.runTimersTo(60); // the deadline (50.5) fires late in the timer phase …
    expect(m.presence).toBe('present');
    m.fresh(59); // … and the poll phase reads a frame that arrived at 59
    clock.runAfterIo();
    expect(m.presence).toBe('present');
    // Control: the same stall without a frame is a genuine silence.
    const c2 = new FakeLinkClock(0);
    const { m: m2 } = monitor(c2);
    m2.attach();
    m2.ready();
    c2.runTimersTo(60);
    expect(m2.presence).toBe('present');
    c2.runAfterIo();
    expect(m2.presence).toBe('stale');
  });

  it('the backstop tick checks too (and is the ping cue); close clears every timer', () => {
    const clock = new FakeLinkClock(0);
    let ticks = 0;
    const m = new FreshnessMonitor({ clock, config: ROBOT, tickMs: 20, onTick: () => ticks++, onChange: () => {} });
    m.attach();
    m.ready();
    clock.advanceTo(100);
    expect(ticks).toBe(5);
    expect(m.presence).toBe('lost');
    m.close();
    expect(m.presence).toBe('disconnected');
    expect(clock.pendingTimers()).toBe(0);
    clock.advanceTo(200);
    expect(ticks).toBe(5);
  });
});
