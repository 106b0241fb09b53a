// Example-based tests of the safety gate (DESIGN §6): each condition with its
// message, the limits at their boundaries, trips and their outcomes, the watchdog, human-gated
// resets, stop/damp, time going backwards, malformed input, config limits and purity.
// The random-history properties are in safetyGate.property.test.ts.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SAFETY_GATE_CONFIG,
  formatDuration,
  initialGateState,
  isMotionCommand,
  reduceGate,
  resolveGateConfig,
  SafetyGate,
  type GateEvent,
  type GateState,
  type MotionDecision,
  type RefusalCode,
} from '../../src/domain/safety';
import { EVENT_KINDS_NEEDING_REASON, TRACE_EVENT_KINDS } from '../../src/domain/trace';

const C = 'mb-metrics/1';
const B = 'builtin@pd1';

/** A gate at time t with everything in place for run `runId` (pair p1). */
function readyGate(t = 10_000, runId = 'real-r1'): SafetyGate {
  const g = new SafetyGate();
  g.handle({ type: 'admission', atMs: t - 5000, pairId: 'p1', admitted: true, contractId: C, bindingKey: B });
  g.handle({ type: 'episode_start', atMs: t - 4000, runId, pairId: 'p1', contractId: C, bindingKey: B });
  g.handle({ type: 'calibration', atMs: t - 3000, runId, capturedAtMs: t - 3500 });
  g.handle({ type: 'operator_confirm', atMs: t - 2000, runId });
  g.handle({ type: 'interlock_status', atMs: t - 10, status: 'ARMED' });
  g.handle({ type: 'lowstate', atMs: t - 2 });
  return g;
}

const refused = (d: MotionDecision): Extract<MotionDecision, { allowed: false }> => {
  if (d.allowed) throw new Error('expected a refusal');
  return d;
};
const codes = (d: MotionDecision): RefusalCode[] => (d.allowed ? [] : d.reasons.map((r) => r.code));
const msg = (d: MotionDecision, code: RefusalCode): string =>
  refused(d).reasons.find((r) => r.code === code)?.message ?? `(no ${code})`;

describe('motion is allowed only when every condition holds', () => {
  it('allows start when everything holds, and names the run', () => {
    const d = readyGate().requestMotion('start', 10_000);
    expect(d).toMatchObject({ allowed: true, command: 'start', runId: 'real-r1' });
    expect(d.effects.actions).toEqual([]);
  });

  it('classifies commands: prepare, start and hold are motion; stop and damp are not; reset is no robot command', () => {
    expect(['prepare', 'start', 'hold'].every(isMotionCommand)).toBe(true);
    expect(['stop', 'damp', 'reset', 'teleport'].some(isMotionCommand)).toBe(false);
    const g = readyGate();
    expect(codes(refused(g.requestCommand('reset', 10_000) as MotionDecision))).toEqual(['not_a_robot_command']);
    expect(g.requestCommand('prepare', 10_000).allowed).toBe(true);
  });

  it('robot link: fresh below 50 ms, stale at 50 ms, with the age and the limit in the message', () => {
    const g = readyGate();
    g.handle({ type: 'lowstate', atMs: 10_000 });
    expect(g.preview(10_049.5)).toEqual([]);
    expect(g.preview(10_050).map((r) => r.code)).toEqual(['link_stale']);
    const d = g.requestMotion('start', 10_073);
    expect(codes(d)).toEqual(['link_stale']);
    expect(msg(d, 'link_stale')).toBe('robot link stale: last lowstate 73 ms ago (limit 50 ms)');
    expect(refused(d).reasons[0]).toMatchObject({ condition: 'link', values: { ageMs: 73, limitMs: 50 } });
  });

  it('robot link unknown before the first lowstate and after link loss', () => {
    const g = new SafetyGate();
    expect(msg(g.requestMotion('prepare', 1), 'link_unknown')).toBe('robot link down: no lowstate received');
  });

  it('interlock: ARMED and at most 100 ms old', () => {
    const g = readyGate();
    g.handle({ type: 'interlock_status', atMs: 10_000, status: 'ARMED' });
    g.handle({ type: 'lowstate', atMs: 10_090 });
    expect(g.preview(10_100)).toEqual([]);
    const d = g.requestMotion('start', 10_100.5);
    expect(codes(d)).toEqual(['interlock_stale']);
    expect(msg(d, 'interlock_stale')).toBe('interlock status stale: last status ARMED 100.5 ms ago (limit 100 ms)');
  });

  it('interlock SAFE is not ARMED; no status at all is unknown', () => {
    const g = readyGate();
    g.handle({ type: 'interlock_status', atMs: 10_000, status: 'SAFE' });
    g.handle({ type: 'lowstate', atMs: 10_000 });
    const d = g.requestMotion('start', 10_001);
    expect(codes(d)).toEqual(['interlock_not_armed']);
    expect(msg(d, 'interlock_not_armed')).toBe('interlock not armed: status is SAFE (motion needs ARMED)');
    expect(msg(new SafetyGate().requestMotion('start', 0), 'interlock_unknown')).toBe(
      'interlock status unknown: no status received from the interlock box',
    );
  });

  it('no episode open: admission, calibration and confirmation are per episode', () => {
    const g = new SafetyGate();
    g.handle({ type: 'interlock_status', atMs: 0, status: 'ARMED' });
    g.handle({ type: 'lowstate', atMs: 0 });
    const d = g.requestMotion('hold', 1);
    expect(codes(d)).toEqual(['no_episode']);
    expect(msg(d, 'no_episode')).toMatch(/^no real-robot episode is open/);
  });

  it('admission: none, rejected (with its reasons), admitted under another contract or binding', () => {
    const none = new SafetyGate();
    none.handle({ type: 'episode_start', atMs: 0, runId: 'r1', pairId: 'p9', contractId: C, bindingKey: B });
    expect(msg(none.requestMotion('start', 1), 'not_admitted')).toBe('pair p9 has no admission decision');

    const g = readyGate();
    g.handle({
      type: 'admission',
      atMs: 10_000,
      pairId: 'p1',
      admitted: false,
      contractId: C,
      bindingKey: B,
      reasons: ['SR 0.9 < 1', 'saturation 3%'],
    });
    expect(msg(g.requestMotion('start', 10_000), 'not_admitted')).toBe(
      'pair p1 is not admitted for hardware: SR 0.9 < 1; saturation 3%',
    );

    const h = readyGate();
    h.handle({
      type: 'admission',
      atMs: 10_000,
      pairId: 'p1',
      admitted: true,
      contractId: 'mb-metrics/1+custom-0123456789ab',
      bindingKey: 'builtin@pd0',
    });
    const d = h.requestMotion('start', 10_000);
    expect(codes(d)).toEqual(['admission_contract_mismatch', 'admission_binding_mismatch']);
    expect(msg(d, 'admission_contract_mismatch')).toBe(
      'pair p1 was admitted under contract mb-metrics/1+custom-0123456789ab, but the current contract is mb-metrics/1',
    );
    expect(msg(d, 'admission_binding_mismatch')).toBe(
      'pair p1 was admitted with binding builtin@pd0, but the current binding is builtin@pd1',
    );
  });

  it('calibration: for this run, fresh (default limit 5 min), and the latest one counts', () => {
    const g = readyGate(400_000); // captured at 396_500
    const refresh = (t: number) => {
      g.handle({ type: 'operator_confirm', atMs: t, runId: 'real-r1' });
      g.handle({ type: 'interlock_status', atMs: t, status: 'ARMED' });
      g.handle({ type: 'lowstate', atMs: t });
    };
    refresh(396_500 + 300_000);
    expect(g.preview(396_500 + 300_000)).toEqual([]);
    refresh(396_500 + 301_000);
    const d = g.requestMotion('start', 396_500 + 301_000);
    expect(codes(d)).toEqual(['calibration_stale']);
    expect(msg(d, 'calibration_stale')).toBe(
      'calibration for run real-r1 is stale: captured 301.0 s ago (limit 300.0 s)',
    );

    const h = readyGate();
    h.handle({ type: 'calibration', atMs: 9_999, runId: 'real-r0', capturedAtMs: 9_000 });
    const e = h.requestMotion('start', 10_000);
    expect(codes(e)).toEqual(['calibration_other_run', 'confirmation_before_calibration']);
    expect(msg(e, 'calibration_other_run')).toBe(
      'the latest calibration was captured for run real-r0, not for this episode (run real-r1)',
    );

    const n = new SafetyGate();
    n.handle({ type: 'episode_start', atMs: 0, runId: 'r1', pairId: 'p1', contractId: C, bindingKey: B });
    expect(msg(n.requestMotion('start', 1), 'no_calibration')).toBe('no calibration captured for run r1');
  });

  it('confirmation: explicit, for this run, after the calibration, one-shot, expires (default 30 s)', () => {
    const none = new SafetyGate();
    none.handle({ type: 'episode_start', atMs: 0, runId: 'r1', pairId: 'p1', contractId: C, bindingKey: B });
    expect(msg(none.requestMotion('start', 1), 'no_confirmation')).toBe('the operator has not confirmed run r1');

    const other = readyGate();
    other.handle({ type: 'operator_confirm', atMs: 9_999, runId: 'real-r2' });
    expect(msg(other.requestMotion('start', 10_000), 'confirmation_other_run')).toBe(
      "the operator's confirmation is for run real-r2, not for this episode (run real-r1)",
    );

    const before = readyGate();
    before.handle({ type: 'calibration', atMs: 9_999, runId: 'real-r1', capturedAtMs: 9_990 });
    expect(codes(before.requestMotion('start', 10_000))).toEqual(['confirmation_before_calibration']);
    expect(msg(before.requestMotion('start', 10_000), 'confirmation_before_calibration')).toBe(
      'the operator confirmed run real-r1 before the latest calibration: confirm again after the calibration',
    );

    // same timestamp, calibration reported after the confirmation: order decides
    const sameMs = readyGate();
    sameMs.handle({ type: 'operator_confirm', atMs: 9_999, runId: 'real-r1' });
    sameMs.handle({ type: 'calibration', atMs: 9_999, runId: 'real-r1', capturedAtMs: 9_990 });
    expect(codes(sameMs.requestMotion('start', 10_000))).toEqual(['confirmation_before_calibration']);

    const expired = readyGate(40_000);
    // confirmed at 38_000
    expired.handle({ type: 'interlock_status', atMs: 68_000, status: 'ARMED' });
    expired.handle({ type: 'lowstate', atMs: 68_000 });
    expect(expired.preview(68_000)).toEqual([]);
    expired.handle({ type: 'interlock_status', atMs: 68_500, status: 'ARMED' });
    expired.handle({ type: 'lowstate', atMs: 68_500 });
    const d = expired.requestMotion('start', 68_500);
    expect(codes(d)).toEqual(['confirmation_expired']);
    expect(msg(d, 'confirmation_expired')).toBe(
      "the operator's confirmation for run real-r1 expired: given 30.5 s ago (limit 30.0 s)",
    );

    const once = readyGate();
    expect(once.requestMotion('prepare', 10_000).allowed).toBe(true); // prepare does not use the confirmation up
    expect(once.requestMotion('start', 10_001).allowed).toBe(true);
    for (const kind of ['start', 'prepare', 'hold'] as const) {
      const r = once.requestMotion(kind, 10_010);
      expect(codes(r)).toEqual(['confirmation_used']);
      expect(msg(r, 'confirmation_used')).toBe(
        "the operator's confirmation for run real-r1 was used by start 9 ms ago (one-shot): confirm again",
      );
    }
    once.handle({ type: 'operator_confirm', atMs: 10_020, runId: 'real-r1' });
    expect(once.requestMotion('hold', 10_030).allowed).toBe(true);
  });

  it('reports every failing condition at once, each with its own reason', () => {
    const g = new SafetyGate();
    g.handle({ type: 'interlock_status', atMs: 0, status: 'SAFE' });
    g.handle({ type: 'episode_start', atMs: 0, runId: 'r1', pairId: 'p1', contractId: C, bindingKey: B });
    const d = g.requestMotion('start', 500);
    expect(codes(d)).toEqual([
      'interlock_stale',
      'interlock_not_armed',
      'link_unknown',
      'not_admitted',
      'no_calibration',
      'no_confirmation',
    ]);
    expect(refused(d).reasons.map((r) => r.condition)).toEqual([
      'interlock',
      'interlock',
      'link',
      'admission',
      'calibration',
      'confirmation',
    ]);
  });
});

describe('every refusal reaches the trace with its reason', () => {
  it('one refusal trace event per refused request: kind, reason with every message, time, run', () => {
    const g = readyGate();
    const d = refused(g.requestMotion('start', 10_073));
    expect(d.effects.trace).toEqual([
      {
        kind: 'refusal',
        reason: 'start refused: robot link stale: last lowstate 75 ms ago (limit 50 ms)',
        atMs: 10_073,
        runId: 'real-r1',
        detail: { command: 'start', codes: ['link_stale'], refusals: d.reasons },
      },
    ]);
  });

  it('the gate writes only trace kinds the trace store knows, and refusals/resets carry a reason', () => {
    const kinds = new Set<string>();
    const g = readyGate();
    g.requestMotion('start', 20_000).effects.trace.forEach((e) => kinds.add(e.kind));
    g.handle({ type: 'estop', atMs: 20_001 }).trace.forEach((e) => kinds.add(e.kind));
    g.handle({ type: 'operator_reset', atMs: 20_002 }).trace.forEach((e) => kinds.add(e.kind));
    g.handle({ type: 'interlock_status', atMs: 20_003, status: 'SAFE' });
    g.handle({ type: 'lowstate', atMs: 20_003 });
    g.handle({ type: 'operator_reset', atMs: 20_004 }).trace.forEach((e) => kinds.add(e.kind));
    expect([...kinds].sort()).toEqual(['human_reset', 'refusal', 'stop_requested']);
    for (const k of kinds) expect(TRACE_EVENT_KINDS as readonly string[]).toContain(k);
    expect(EVENT_KINDS_NEEDING_REASON).toEqual(expect.arrayContaining(['refusal', 'human_reset']));
  });
});

describe('trips: stop and damp at once, the matching outcome, latched', () => {
  const cases: { name: string; event: GateEvent; cause: string; outcome: string }[] = [
    { name: 'EV ESTOP', event: { type: 'estop', atMs: 10_001 }, cause: 'estop', outcome: 'estop' },
    {
      name: 'status ESTOP',
      event: { type: 'interlock_status', atMs: 10_001, status: 'ESTOP' },
      cause: 'estop',
      outcome: 'estop',
    },
    {
      name: 'interlock lost',
      event: { type: 'interlock_lost', atMs: 10_001 },
      cause: 'interlock_lost',
      outcome: 'link_lost',
    },
    {
      name: 'status LOST',
      event: { type: 'interlock_status', atMs: 10_001, status: 'LOST' },
      cause: 'interlock_lost',
      outcome: 'link_lost',
    },
    { name: 'robot link lost', event: { type: 'link_lost', atMs: 10_001 }, cause: 'link_lost', outcome: 'link_lost' },
    {
      name: 'interlock disarmed (SAFE) while moving',
      event: { type: 'interlock_status', atMs: 10_001, status: 'SAFE' },
      cause: 'interlock_disarmed',
      outcome: 'estop',
    },
    {
      name: 'operator stop',
      event: { type: 'operator_stop', atMs: 10_001 },
      cause: 'operator_stop',
      outcome: 'aborted_by_operator',
    },
    {
      name: 'operator stop for an intervention',
      event: { type: 'operator_stop', atMs: 10_001, intervention: true },
      cause: 'operator_stop',
      outcome: 'intervention',
    },
    {
      name: 'robot reports an e-stop end',
      event: { type: 'episode_end', atMs: 10_001, runId: 'real-r1', outcome: 'estop' },
      cause: 'backend_stop',
      outcome: 'estop',
    },
  ];
  for (const c of cases) {
    it(`${c.name} → [stop, damp], episode ends ${c.outcome}`, () => {
      const g = readyGate();
      expect(g.requestMotion('start', 10_000).allowed).toBe(true);
      const fx = g.handle(c.event);
      expect(fx.actions.map((a) => a.command)).toEqual(['stop', 'damp']);
      expect(fx.actions.every((a) => a.atMs === 10_001 && a.reason.length > 0)).toBe(true);
      expect(fx.trip).toMatchObject({ cause: c.cause, outcome: c.outcome, runId: 'real-r1', atMs: 10_001 });
      expect(fx.episodeOutcome).toMatchObject({ runId: 'real-r1', outcome: c.outcome });
      expect(fx.trace).toHaveLength(1);
      expect(fx.trace[0]).toMatchObject({ kind: 'stop_requested', runId: 'real-r1', atMs: 10_001 });
      expect(fx.trace[0].reason).toContain(`episode real-r1 ends ${c.outcome}`);
      // latched: nothing moves, whatever arrives, until the operator's reset
      g.handle({ type: 'interlock_status', atMs: 10_002, status: 'ARMED' });
      g.handle({ type: 'lowstate', atMs: 10_002 });
      const d = g.requestMotion('start', 10_003);
      expect(codes(d)).toContain('tripped');
      expect(msg(d, 'tripped')).toMatch(
        /^tripped 2 ms ago by .+; the operator must acknowledge the trip \(human-gated reset\) before any motion$/,
      );
    });
  }

  it('interlock SAFE before any motion is no trip: it only refuses motion', () => {
    const g = readyGate();
    const fx = g.handle({ type: 'interlock_status', atMs: 10_001, status: 'SAFE' });
    expect(fx.actions).toEqual([]);
    expect(fx.trip).toBeNull();
    expect(codes(g.requestMotion('start', 10_002))).toContain('interlock_not_armed');
  });

  it('a trip with no episode open still sends stop and damp, and ends no episode', () => {
    const g = new SafetyGate();
    const fx = g.handle({ type: 'estop', atMs: 5 });
    expect(fx.actions.map((a) => a.command)).toEqual(['stop', 'damp']);
    expect(fx.trip).toMatchObject({ runId: null, outcome: 'estop' });
    expect(fx.episodeOutcome).toBeNull();
  });

  it('a second trip while tripped sends nothing again (a problem notes it)', () => {
    const g = readyGate();
    g.handle({ type: 'estop', atMs: 10_001 });
    const fx = g.handle({ type: 'link_lost', atMs: 10_002 });
    expect(fx.actions).toEqual([]);
    expect(fx.trip).toBeNull();
    expect(fx.problems.map((p) => p.code)).toEqual(['already_tripped']);
  });

  it('the box repeating ST ESTOP every heartbeat trips once and stays quiet', () => {
    const g = readyGate();
    const first = g.handle({ type: 'interlock_status', atMs: 10_000, status: 'ESTOP' });
    expect(first.actions.map((a) => a.command)).toEqual(['stop', 'damp']);
    for (let t = 10_020; t <= 10_200; t += 20) {
      const fx = g.handle({ type: 'interlock_status', atMs: t, status: 'ESTOP' });
      expect(fx).toEqual({ actions: [], trip: null, episodeOutcome: null, reset: null, trace: [], problems: [] });
    }
  });

  it('a normal episode end is not a trip; the next episode needs its own calibration and confirmation', () => {
    const g = readyGate();
    expect(g.requestMotion('start', 10_000).allowed).toBe(true);
    const fx = g.handle({ type: 'episode_end', atMs: 10_020, runId: 'real-r1', outcome: 'completed' });
    expect(fx.actions).toEqual([]);
    g.handle({ type: 'episode_start', atMs: 10_030, runId: 'real-r2', pairId: 'p1', contractId: C, bindingKey: B });
    g.handle({ type: 'lowstate', atMs: 10_040 });
    expect(codes(g.requestMotion('start', 10_040))).toEqual(['calibration_other_run', 'confirmation_other_run']);
  });
});

describe('watchdog while the robot moves', () => {
  it('no interlock status for more than 100 ms → interlock_lost trip (outcome link_lost)', () => {
    const g = readyGate();
    expect(g.requestMotion('start', 10_000).allowed).toBe(true);
    g.handle({ type: 'lowstate', atMs: 10_040 });
    expect(g.handle({ type: 'tick', atMs: 10_090 }).actions).toEqual([]); // status 100 ms old: still fine
    g.handle({ type: 'lowstate', atMs: 10_090.5 });
    const fx = g.handle({ type: 'tick', atMs: 10_090.5 });
    expect(fx.actions.map((a) => a.command)).toEqual(['stop', 'damp']);
    expect(fx.trip).toMatchObject({
      cause: 'interlock_lost',
      outcome: 'link_lost',
      reason: 'no interlock status for 100.5 ms (limit 100 ms)',
    });
  });

  it('no lowstate for more than 100 ms → link_lost trip', () => {
    const g = readyGate();
    expect(g.requestMotion('start', 10_000).allowed).toBe(true);
    g.handle({ type: 'interlock_status', atMs: 10_050, status: 'ARMED' });
    g.handle({ type: 'interlock_status', atMs: 10_099, status: 'ARMED' });
    const fx = g.handle({ type: 'tick', atMs: 10_099 });
    expect(fx.actions.map((a) => a.command)).toEqual(['stop', 'damp']);
    expect(fx.trip).toMatchObject({
      cause: 'link_lost',
      outcome: 'link_lost',
      reason: 'no lowstate for 101 ms (limit 100 ms)',
    });
  });

  it("is judged at a tick, not at each input: after the gate's own loop stalled, the inputs read in any order do not trip", () => {
    const g = readyGate();
    expect(g.requestMotion('start', 10_000).allowed).toBe(true);
    // the gate's loop stalled 300 ms; both sources kept sending (their inputs are read now, the
    // lowstate first, the box's statuses stamped when the keeper received them)
    expect(g.handle({ type: 'lowstate', atMs: 10_300 }).actions).toEqual([]);
    expect(g.handle({ type: 'interlock_status', atMs: 10_300, status: 'ARMED' }).actions).toEqual([]);
    expect(g.handle({ type: 'tick', atMs: 10_301 }).actions).toEqual([]);
    // negative control: the box really silent — the next tick trips
    g.handle({ type: 'lowstate', atMs: 10_400 });
    expect(g.handle({ type: 'tick', atMs: 10_401 }).trip).toMatchObject({ cause: 'interlock_lost' });
  });

  it('a motion request after the silence trips first and is refused', () => {
    const g = readyGate();
    expect(g.requestMotion('prepare', 10_000).allowed).toBe(true);
    const d = g.requestMotion('start', 10_500);
    expect(d.effects.actions.map((a) => a.command)).toEqual(['stop', 'damp']);
    expect(codes(d)).toEqual(expect.arrayContaining(['tripped', 'no_episode']));
    expect(d.effects.trace.map((e) => e.kind)).toEqual(['stop_requested', 'refusal']);
  });

  it('not armed before motion: silence only refuses, it does not trip', () => {
    const g = readyGate();
    const fx = g.handle({ type: 'tick', atMs: 60_000 });
    expect(fx.actions).toEqual([]);
    expect(codes(g.requestMotion('start', 60_000))).toEqual(['interlock_stale', 'link_stale', 'confirmation_expired']);
  });
});

describe('human-gated reset', () => {
  function tripped(): SafetyGate {
    const g = readyGate();
    expect(g.requestMotion('start', 10_000).allowed).toBe(true);
    g.handle({ type: 'estop', atMs: 10_010 });
    return g;
  }

  it('is refused while the interlock still reports ESTOP, with the reason traced', () => {
    const g = tripped();
    g.handle({ type: 'interlock_status', atMs: 10_020, status: 'ESTOP' });
    g.handle({ type: 'lowstate', atMs: 10_020 });
    const fx = g.handle({ type: 'operator_reset', atMs: 10_030, operator: 'ana' });
    expect(fx.reset).toEqual({ accepted: false, reasons: [expect.objectContaining({ code: 'interlock_estop' })] });
    expect(fx.trace).toEqual([
      expect.objectContaining({
        kind: 'refusal',
        reason: 'reset refused: the interlock still reports ESTOP: release the e-stop first',
        atMs: 10_030,
        runId: 'real-r1',
      }),
    ]);
  });

  it('needs an interlock status and a lowstate received after the trip, both fresh', () => {
    const g = tripped();
    const fx = g.handle({ type: 'operator_reset', atMs: 10_011 });
    expect(fx.reset).toMatchObject({ accepted: false });
    expect(fx.reset && !fx.reset.accepted && fx.reset.reasons.map((r) => r.code)).toEqual([
      'interlock_unknown',
      'link_unknown',
    ]);
    g.handle({ type: 'interlock_status', atMs: 10_020, status: 'SAFE' });
    g.handle({ type: 'lowstate', atMs: 10_020 });
    const late = g.handle({ type: 'operator_reset', atMs: 10_070 });
    expect(late.reset && !late.reset.accepted && late.reset.reasons.map((r) => r.code)).toEqual(['link_stale']);
  });

  it('is refused when nothing tripped', () => {
    const fx = readyGate().handle({ type: 'operator_reset', atMs: 10_000 });
    expect(fx.reset && !fx.reset.accepted && fx.reset.reasons.map((r) => r.code)).toEqual(['not_tripped']);
    expect(fx.trace[0]).toMatchObject({
      kind: 'refusal',
      reason: 'reset refused: nothing to reset: the gate is not tripped',
    });
  });

  it('accepted: a human_reset trace event with the operator and the trip; motion then needs every condition again', () => {
    const g = tripped();
    g.handle({ type: 'interlock_status', atMs: 10_900, status: 'ARMED' });
    g.handle({ type: 'lowstate', atMs: 10_900 });
    g.handle({ type: 'calibration', atMs: 10_905, runId: 'real-r2', capturedAtMs: 10_905 }); // while tripped: ignored
    const fx = g.handle({ type: 'operator_reset', atMs: 10_910, operator: 'ana', note: 'robot back on the gantry' });
    expect(fx.reset).toEqual({ accepted: true });
    expect(fx.trace).toEqual([
      {
        kind: 'human_reset',
        reason:
          'operator ana acknowledged the e-stop trip of 900 ms ago (e-stop pressed (EV ESTOP)): robot back on the gantry',
        atMs: 10_910,
        runId: 'real-r1',
        detail: {
          cause: 'estop',
          trippedAtMs: 10_010,
          outcome: 'estop',
          operator: 'ana',
          note: 'robot back on the gantry',
        },
      },
    ]);
    expect(codes(g.requestMotion('start', 10_911))).toEqual(['no_episode']);
    // the old run id cannot be reopened; a new episode needs a calibration captured after the reset and a new confirmation
    expect(
      g.handle({ type: 'episode_start', atMs: 10_912, runId: 'real-r1', pairId: 'p1', contractId: C, bindingKey: B })
        .problems[0].code,
    ).toBe('run_id_reused');
    g.handle({ type: 'episode_start', atMs: 10_913, runId: 'real-r2', pairId: 'p1', contractId: C, bindingKey: B });
    expect(
      g.handle({ type: 'calibration', atMs: 10_914, runId: 'real-r2', capturedAtMs: 10_909 }).problems[0].code,
    ).toBe('calibration_before_reset');
    expect(codes(g.requestMotion('start', 10_915))).toEqual(['no_calibration', 'no_confirmation']);
    g.handle({ type: 'calibration', atMs: 10_920, runId: 'real-r2', capturedAtMs: 10_915 });
    g.handle({ type: 'operator_confirm', atMs: 10_925, runId: 'real-r2' });
    g.handle({ type: 'interlock_status', atMs: 10_930, status: 'ARMED' });
    g.handle({ type: 'lowstate', atMs: 10_930 });
    expect(g.requestMotion('start', 10_931)).toMatchObject({ allowed: true, runId: 'real-r2' });
  });

  it('while tripped, episodes, calibrations and confirmations are ignored with a problem', () => {
    const g = tripped();
    expect(
      g.handle({ type: 'episode_start', atMs: 10_020, runId: 'real-r3', pairId: 'p1', contractId: C, bindingKey: B })
        .problems[0].code,
    ).toBe('ignored_while_tripped');
    expect(g.handle({ type: 'operator_confirm', atMs: 10_021, runId: 'real-r3' }).problems[0].code).toBe(
      'ignored_while_tripped',
    );
  });
});

describe('stop and damp are never gated', () => {
  it('are allowed tripped, with nothing known, and with a time from the past; they change nothing', () => {
    const g = readyGate();
    g.handle({ type: 'estop', atMs: 10_001 });
    const before = g.snapshot();
    for (const c of ['stop', 'damp']) {
      for (const t of [10_002, 0, Number.NaN]) {
        const d = g.requestCommand(c, t);
        expect(d).toEqual({
          allowed: true,
          command: c,
          effects: { actions: [], trip: null, episodeOutcome: null, reset: null, trace: [], problems: [] },
        });
      }
    }
    expect(g.snapshot()).toBe(before);
    expect(new SafetyGate().requestCommand('stop', -1).allowed).toBe(true);
  });
});

describe('time going backwards and malformed input', () => {
  it('an event from the past is ignored with a problem; the state does not change', () => {
    const g = readyGate();
    const before = g.snapshot();
    const fx = g.handle({ type: 'lowstate', atMs: 9_000 });
    expect(fx.problems).toEqual([
      {
        severity: 'warn',
        code: 'clock_backwards',
        message: "lowstate ignored: its time 9000 ms is 998 ms earlier than the gate's clock (9998 ms)",
        atMs: 9_998,
      },
    ]);
    expect(g.snapshot()).toBe(before);
  });

  it('a request from the past is refused (clock_backwards) and traced; an e-stop from the past cannot un-trip anything', () => {
    const g = readyGate();
    const d = g.requestMotion('start', 9_000);
    expect(codes(d)).toEqual(['clock_backwards']);
    expect(d.effects.trace[0]).toMatchObject({ kind: 'refusal', atMs: 9_998 });
    expect(d.effects.problems[0].code).toBe('clock_backwards');
    expect(codes(g.requestMotion('start', Number.NaN))).toEqual(['clock_backwards']);
    expect(g.requestMotion('start', 10_000).allowed).toBe(true);
  });

  it('malformed events never throw: a bad_event problem, nothing changes', () => {
    const g = readyGate();
    const before = g.snapshot();
    const bad: unknown[] = [
      null,
      42,
      'ESTOP',
      {},
      { type: 'teleport', atMs: 1 },
      { type: 'lowstate' },
      { type: 'lowstate', atMs: Number.NaN },
      { type: 'interlock_status', atMs: 10_000, status: 'armed' },
      { type: 'episode_start', atMs: 10_000, runId: '../x', pairId: 'p', contractId: C, bindingKey: B },
      { type: 'episode_start', atMs: 10_000, runId: 'ok', pairId: '', contractId: C, bindingKey: B },
      { type: 'episode_end', atMs: 10_000, runId: 'real-r1', outcome: 'fine' },
      { type: 'calibration', atMs: 10_000, runId: 'real-r1', capturedAtMs: 10_001 },
      { type: 'admission', atMs: 10_000, pairId: 'p1', admitted: 1, contractId: C, bindingKey: B },
      { type: 'operator_confirm', atMs: 10_000, runId: 7 },
    ];
    for (const e of bad) {
      const fx = g.handle(e as GateEvent);
      expect(fx.problems.map((p) => p.code)).toEqual(['bad_event']);
      expect(fx.actions).toEqual([]);
    }
    expect(g.snapshot()).toBe(before);
  });
});

describe('configuration', () => {
  it('defaults are DESIGN §6 limits; calibration and confirmation lifetimes are configurable', () => {
    expect(DEFAULT_SAFETY_GATE_CONFIG).toEqual({
      interlockFreshMs: 100,
      linkFreshMs: 50,
      interlockLostMs: 100,
      linkLostMs: 100,
      calibrationMaxAgeMs: 300_000,
      confirmationTtlMs: 30_000,
    });
    const g = new SafetyGate({ calibrationMaxAgeMs: 1000, linkFreshMs: 20 });
    expect(g.config).toMatchObject({ calibrationMaxAgeMs: 1000, linkFreshMs: 20, interlockFreshMs: 100 });
  });

  it('a limit looser than DESIGN allows, zero, negative or not a number is refused', () => {
    expect(() => resolveGateConfig({ linkFreshMs: 51 })).toThrow(
      /linkFreshMs = 51 ms is looser than DESIGN §6 allows \(at most 50 ms\)/,
    );
    expect(() => resolveGateConfig({ interlockFreshMs: 150 })).toThrow(RangeError);
    expect(() => resolveGateConfig({ linkLostMs: 500 })).toThrow(RangeError);
    expect(() => resolveGateConfig({ confirmationTtlMs: 0 })).toThrow(RangeError);
    expect(() => resolveGateConfig({ calibrationMaxAgeMs: Number.NaN })).toThrow(RangeError);
  });
});

describe('purity', () => {
  function deepFreeze<T>(o: T): T {
    if (o && typeof o === 'object') {
      Object.values(o).forEach(deepFreeze);
      Object.freeze(o);
    }
    return o;
  }

  it('reduceGate never mutates the state it is given and is deterministic', () => {
    const cfg = resolveGateConfig();
    const inputs = [
      {
        kind: 'event',
        event: { type: 'admission', atMs: 0, pairId: 'p1', admitted: true, contractId: C, bindingKey: B },
      },
      {
        kind: 'event',
        event: { type: 'episode_start', atMs: 1, runId: 'r1', pairId: 'p1', contractId: C, bindingKey: B },
      },
      { kind: 'event', event: { type: 'calibration', atMs: 2, runId: 'r1', capturedAtMs: 2 } },
      { kind: 'event', event: { type: 'operator_confirm', atMs: 3, runId: 'r1' } },
      { kind: 'event', event: { type: 'interlock_status', atMs: 4, status: 'ARMED' } },
      { kind: 'event', event: { type: 'lowstate', atMs: 4 } },
      { kind: 'request', command: 'start', atMs: 5 },
      { kind: 'event', event: { type: 'tick', atMs: 500 } },
      { kind: 'event', event: { type: 'interlock_status', atMs: 501, status: 'SAFE' } },
      { kind: 'event', event: { type: 'lowstate', atMs: 501 } },
      { kind: 'event', event: { type: 'operator_reset', atMs: 502 } },
    ] as const;
    const run = () => {
      let s: GateState = deepFreeze(initialGateState());
      const out: unknown[] = [];
      for (const input of inputs) {
        const r = reduceGate(s, input, cfg);
        s = deepFreeze(r.state);
        out.push(r.effects, r.decision ?? null);
      }
      return { s, out };
    };
    const a = run();
    expect(run()).toEqual(a);
    expect(a.s.tripped).toBeNull();
    expect(a.s.lastResetAtMs).toBe(502);
  });

  it('preview changes nothing', () => {
    const g = readyGate();
    const before = g.snapshot();
    g.preview(10_000);
    g.preview(1);
    expect(g.snapshot()).toBe(before);
  });

  it('formats durations as an operator reads them', () => {
    expect([
      formatDuration(73),
      formatDuration(12.25),
      formatDuration(9_999),
      formatDuration(10_000),
      formatDuration(412_345),
    ]).toEqual(['73 ms', '12.3 ms', '9999 ms', '10.0 s', '412.3 s']);
  });
});
