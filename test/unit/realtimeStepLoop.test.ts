import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CATCH_UP_SLICE_MS, RealtimeStepLoop } from '../../src/services/robotEmulator/realtimeStepLoop';
import { SampleFaults } from '../../src/services/robotEmulator/sampleFaults';

// The emulators' real-time loop on a fake clock: steps run at or after their due time, never
// earlier; a late loop catches up in slices of at most CATCH_UP_SLICE_MS and says when it fell
// behind and when it caught up.

const DT_MS = 2;

function rig(o: { startLateMs?: number; stepCostMs?: number } = {}) {
  let tick = 0;
  const t0 = Date.now() - (o.startLateMs ?? 0);
  const stepsAt: { tick: number; atMs: number; dueMs: number }[] = [];
  const turns: number[] = [];
  const log: string[] = [];
  // A turn of the loop is one synchronous run of steps: a microtask runs only after it yields.
  let inTurn = false;
  const dueMs = (k: number): number => t0 + k * DT_MS;
  const loop = new RealtimeStepLoop({
    now: () => Date.now(),
    tick: () => tick,
    dueMs,
    step: () => {
      if (!inTurn) {
        turns.push(0);
        inTurn = true;
        queueMicrotask(() => (inTurn = false));
      }
      turns[turns.length - 1]!++;
      stepsAt.push({ tick, atMs: Date.now(), dueMs: dueMs(tick) });
      tick++;
      if (o.stepCostMs) vi.setSystemTime(Date.now() + o.stepCostMs);
    },
    onBehind: (lateMs, k) => log.push(`behind ${lateMs} at ${k}`),
    onCaughtUp: (k, afterMs, worstMs) => log.push(`caught up at ${k} after ${afterMs} worst ${worstMs}`),
  });
  return { loop, stepsAt, turns, log, ticks: () => tick };
}

describe('RealtimeStepLoop', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'] });
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => vi.useRealTimers());

  it('runs each step at or after its due time, never earlier, and keeps pace with the clock', async () => {
    const r = rig();
    r.loop.start();
    await vi.advanceTimersByTimeAsync(100);
    r.loop.stop();
    expect(r.stepsAt.every((s) => s.atMs >= s.dueMs)).toBe(true);
    expect(r.ticks()).toBeGreaterThanOrEqual(50);
    expect(r.ticks()).toBeLessThanOrEqual(51);
    expect(r.loop.maxLateMs).toBeLessThan(DT_MS);
    expect(r.log).toEqual([]);
  });

  it('catches up a late start step by step in slices of at most CATCH_UP_SLICE_MS, and says so', async () => {
    // Every step costs 1 ms of a 2 ms period: the loop gains 1 ms a step on a 120 ms backlog.
    const r = rig({ startLateMs: 120, stepCostMs: 1 });
    r.loop.start();
    await vi.advanceTimersByTimeAsync(400);
    r.loop.stop();
    expect(r.stepsAt.every((s) => s.atMs >= s.dueMs)).toBe(true);
    // A slice ends once CATCH_UP_SLICE_MS have passed: at most that many 1 ms steps in a turn.
    expect(Math.max(...r.turns)).toBeLessThanOrEqual(CATCH_UP_SLICE_MS);
    expect(r.turns.length).toBeGreaterThan(10);
    expect(r.loop.maxLateMs).toBeGreaterThanOrEqual(120);
    expect(r.log).toHaveLength(2);
    expect(r.log[0]).toMatch(/^behind 120 at 0$/);
    expect(r.log[1]).toMatch(/^caught up at \d+ after \d+ worst 120$/);
    // Caught up: the steps after it run on time again.
    expect(r.stepsAt.at(-1)!.atMs - r.stepsAt.at(-1)!.dueMs).toBeLessThan(DT_MS + 1);
  });

  it('NEGATIVE CONTROL: runs no step after stop()', async () => {
    const r = rig();
    r.loop.start();
    await vi.advanceTimersByTimeAsync(10);
    r.loop.stop();
    const n = r.ticks();
    await vi.advanceTimersByTimeAsync(100);
    expect(r.ticks()).toBe(n);
  });
});

describe('SampleFaults', () => {
  it('repeats the frozen sample until the freeze ends, then forgets it; counts NaN samples down', () => {
    const f = new SampleFaults<{ v: number }>();
    expect(f.frozenAt(0)).toBeNull();
    f.freeze({ v: 7 }, 50);
    const from = performance.now();
    expect(f.frozenAt(from)).toEqual({ v: 7 });
    expect(f.frozenAt(from + 60)).toBeNull();
    expect(f.frozenAt(from)).toBeNull(); // forgotten once over
    f.addNan(2);
    expect([f.takeNan(), f.takeNan(), f.takeNan()]).toEqual([true, true, false]);
  });
});
