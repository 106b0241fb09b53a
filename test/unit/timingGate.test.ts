import { describe, expect, it } from 'vitest';
import { timingGate } from '../../src/domain/timing/timingGate';
import { timingHealth } from '../../src/domain/timing/timingHealth';

// Start and Confirm while TIMING reads BAD: a warning with the measured figure and a second,
// explicit confirmation; every other level proceeds at once.

describe('timingGate', () => {
  it('a BAD timing asks for a second confirmation naming the measured gap, worst first', () => {
    const h = timingHealth({ interlock: { maxGapMs: 104.2 }, lowstate: { maxGapMs: 137.6 } });
    expect(h.level).toBe('bad');
    const d = timingGate(h, false);
    expect(d.kind).toBe('confirm');
    if (d.kind !== 'confirm') return;
    expect(d.figures).toEqual([
      { source: 'robot lowstate', maxGapMs: 137.6 },
      { source: 'interlock status', maxGapMs: 104.2 },
    ]);
    expect(d.message).toBe(
      'TIMING BAD: robot lowstate max gap 138 ms, interlock status max gap 104 ms over the last 5 s (the link and the interlock trip at 100 ms of silence)',
    );
  });

  it('names only the sources that reached the trip limit', () => {
    const d = timingGate(timingHealth({ interlock: { maxGapMs: 30 }, lowstate: { maxGapMs: 100.7 } }), false);
    expect(d.kind === 'confirm' && d.figures.map((f) => f.source)).toEqual(['robot lowstate']);
  });

  it('the explicit second confirmation of a BAD timing proceeds', () => {
    expect(timingGate(timingHealth({ interlock: null, lowstate: { maxGapMs: 250 } }), true)).toEqual({
      kind: 'proceed',
    });
  });

  it('negative controls: ok, warn (including the scheduler warning) and unknown proceed without a second press', () => {
    const ok = timingHealth({ interlock: null, lowstate: { maxGapMs: 20 } });
    const warn = timingHealth({ interlock: null, lowstate: { maxGapMs: 99.9 } });
    const sched = timingHealth({ interlock: null, lowstate: { maxGapMs: 20 }, scheduler: { kernelAutogroups: true } });
    const unknown = timingHealth({ interlock: null, lowstate: null });
    expect([ok.level, warn.level, sched.level, unknown.level]).toEqual(['ok', 'warn', 'warn', 'unknown']);
    for (const h of [ok, warn, sched, unknown]) expect(timingGate(h, false)).toEqual({ kind: 'proceed' });
  });
});
