import { describe, expect, it } from 'vitest';
import { RecentGaps } from '../../src/domain/timing/recentGaps';
import { timingHealth, TIMING_TRIP_LIMIT_MS } from '../../src/domain/timing/timingHealth';

// The timing health shown before arming — the largest gaps of the interlock's
// statuses and of the robot's lowstate over the last seconds, against the 100 ms trip.

describe('RecentGaps', () => {
  it('keeps the largest gap that ended within the window, and the gap still open', () => {
    const g = new RecentGaps(16);
    expect(g.maxGapMs(0, 5000)).toBeNull();
    for (const t of [0, 20, 40, 110, 130]) g.record(t); // one 70 ms gap
    expect(g.maxGapMs(130, 5000)).toBe(70);
    expect(g.countWithin(130, 5000)).toBe(4);
    // 5 s later the 70 ms gap has left the window, but the silence since 130 is open now
    expect(g.maxGapMs(130 + 5000, 5000)).toBe(5000);
    g.record(5140);
    g.record(5160);
    expect(g.maxGapMs(5160, 100)).toBe(5010); // the gap that ended at 5140 is within 100 ms
    expect(g.maxGapMs(5400, 100)).toBe(240); // only the open one
  });

  it('a ring smaller than the window keeps the newest gaps; reset forgets the last arrival', () => {
    const g = new RecentGaps(3);
    for (const t of [0, 90, 100, 110, 120]) g.record(t);
    expect(g.maxGapMs(120, 10_000)).toBe(10); // the 90 ms gap was overwritten
    g.reset();
    g.record(1000);
    expect(g.maxGapMs(1000, 10_000)).toBe(0); // the first arrival after a reset is no gap
  });
});

describe('timingHealth', () => {
  it('ok while both max gaps stay at or below half the trip limit', () => {
    const h = timingHealth({ interlock: { maxGapMs: 24 }, lowstate: { maxGapMs: 50 } });
    expect(h.level).toBe('ok');
    expect(h.summary).toBe('timing ok: interlock status max gap 24 ms, robot lowstate max gap 50 ms');
  });

  it('warns above half the limit and says it would have tripped at the limit, naming the source', () => {
    const warn = timingHealth({ interlock: { maxGapMs: 20 }, lowstate: { maxGapMs: 61 } });
    expect(warn.level).toBe('warn');
    expect(warn.summary).toMatch(/^robot lowstate: max gap 61 ms over 5 s \(trip at 100 ms\) — above 50 ms/);
    const bad = timingHealth({ interlock: { maxGapMs: TIMING_TRIP_LIMIT_MS + 8 }, lowstate: { maxGapMs: 61 } });
    expect(bad.level).toBe('bad');
    expect(bad.summary).toMatch(/^interlock status: max gap 108 ms .* this would have tripped$/);
    expect(bad.items.map((i) => i.level)).toEqual(['bad', 'warn']);
  });

  it('unknown with nothing to measure or nothing measured yet; a missing source is not judged', () => {
    expect(timingHealth({ interlock: null, lowstate: null }).level).toBe('unknown');
    expect(timingHealth({ interlock: { maxGapMs: null }, lowstate: null }).level).toBe('unknown');
    expect(timingHealth({ interlock: null, lowstate: { maxGapMs: 12 } }).items.map((i) => i.source)).toEqual([
      'lowstate',
    ]);
  });

  it('kernel autogroups on: a warning beside the measured gaps, even when the gaps are small; judged only with a source', () => {
    const on = timingHealth({
      interlock: { maxGapMs: 12 },
      lowstate: null,
      scheduler: { kernelAutogroups: true },
    });
    expect(on.level).toBe('warn');
    expect(on.items.map((i) => [i.source, i.level])).toEqual([
      ['interlock', 'ok'],
      ['scheduler', 'warn'],
    ]);
    expect(on.summary).toMatch(/^kernel scheduler: kernel\.sched_autogroup_enabled = 1 — .* set it to 0/);
    // negative controls: off, not known, or nothing measured beside it
    const off = timingHealth({ interlock: { maxGapMs: 12 }, lowstate: null, scheduler: { kernelAutogroups: false } });
    expect(off.level).toBe('ok');
    expect(off.summary).toBe('timing ok: interlock status max gap 12 ms');
    expect(
      timingHealth({ interlock: { maxGapMs: 12 }, lowstate: null, scheduler: { kernelAutogroups: null } }).items,
    ).toHaveLength(1);
    expect(timingHealth({ interlock: null, lowstate: null, scheduler: { kernelAutogroups: true } }).level).toBe(
      'unknown',
    );
  });
});
