// Property-based tests of the safety gate (DESIGN §6): random histories of
// interlock statuses, robot frames, admissions, episodes, calibrations, confirmations, stops,
// e-stops, link losses, resets and motion requests — with monotonic random timestamps, some
// going backwards and some malformed — judged step by step by an independent oracle
// (safetyOracle.ts). The same properties run against deliberately broken gates and must fail.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SafetyGate,
  type GateEffects,
  type GateEvent,
  type MotionDecision,
  type MotionKind,
} from '../../src/domain/safety';
import {
  judge,
  materialise,
  play,
  PROPERTY_CONFIG,
  scenarioArb,
  type GateLike,
  type PlayRecord,
  type Scenario,
  type Verdict,
} from './safetyOracle';

const NUM_RUNS = 1000;

type Check = (recs: PlayRecord[], verdicts: Verdict[]) => void;

function must(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}

const where = (r: PlayRecord, i: number): string => `step ${i} ${JSON.stringify(r.input)}`;
const motionDecision = (r: PlayRecord): MotionDecision | null =>
  r.input.op === 'motion' && r.decision ? (r.decision as MotionDecision) : null;
const codesOf = (d: MotionDecision): string[] => (d.allowed ? [] : d.reasons.map((x) => x.code));

function property(makeGate: () => GateLike, check: Check) {
  return fc.property(scenarioArb, (sc: Scenario) => {
    const inputs = materialise(sc);
    const recs = play(inputs, makeGate());
    const verdicts = judge(inputs, PROPERTY_CONFIG);
    check(recs, verdicts);
  });
}

const realGate = (): GateLike => new SafetyGate(PROPERTY_CONFIG);

// --- the properties -------------------------------------------------------------------------

/** Nothing ever throws, whatever the input. */
const neverThrows: Check = (recs) => {
  recs.forEach((r, i) => must(r.threw === null, `${where(r, i)} threw ${String(r.threw)}`));
};

/** (a) Whenever motion is allowed, every condition holds at that instant (oracle). */
const allowedOnlyWhenAllHold: Check = (recs, verdicts) => {
  neverThrows(recs, verdicts);
  recs.forEach((r, i) => {
    const d = motionDecision(r);
    if (d?.allowed)
      must(
        verdicts[i].failing !== null && verdicts[i].failing.length === 0,
        `${where(r, i)} allowed but the oracle finds failing: ${verdicts[i].failing?.join(', ')}`,
      );
  });
};

/** (b) After a trip (stop+damp emitted), no motion is allowed until an operator_reset input is accepted — whatever else happens. Checked from the gate's outputs and from the oracle's latch. */
const latchedUntilHumanReset: Check = (recs, verdicts) => {
  neverThrows(recs, verdicts);
  let latched = false;
  recs.forEach((r, i) => {
    const fx = r.effects!;
    if (fx.actions.length > 0) latched = true;
    if (r.input.op === 'event' && r.input.event.type === 'operator_reset' && fx.reset?.accepted === true)
      latched = false;
    const d = motionDecision(r);
    if (d?.allowed) {
      must(!latched, `${where(r, i)} allowed after a trip without a human-gated reset`);
      must(
        !verdicts[i].trippedBefore && verdicts[i].trip === null,
        `${where(r, i)} allowed while the oracle's latch is on`,
      );
    }
  });
};

/** (c) stop and damp are never refused, have no side effects, whatever the state or the time. */
const stopAndDampNeverRefused: Check = (recs, verdicts) => {
  neverThrows(recs, verdicts);
  recs.forEach((r, i) => {
    if (r.input.op !== 'command' || r.input.command === 'reset') return;
    must(r.decision?.allowed === true, `${where(r, i)} ${r.input.command} refused`);
    must(
      r.effects!.actions.length === 0 && r.effects!.trace.length === 0,
      `${where(r, i)} ${r.input.command} had effects`,
    );
    expect(r.after).toEqual(r.before);
  });
};

/** (d) Every refusal carries ≥ 1 reason with a message; each reason's code is a condition the oracle finds failing; the refusal reaches the trace with every message. */
const refusalsAreTrue: Check = (recs, verdicts) => {
  neverThrows(recs, verdicts);
  recs.forEach((r, i) => {
    const d = r.decision;
    if (!d || d.allowed) return;
    const v = verdicts[i];
    must(d.reasons.length >= 1, `${where(r, i)} refused without a reason`);
    for (const reason of d.reasons) {
      must(
        typeof reason.message === 'string' && reason.message.length > 10,
        `${where(r, i)} reason ${reason.code} has no message`,
      );
      must(
        v.failing !== null && v.failing.includes(reason.code),
        `${where(r, i)} reason ${reason.code} but the oracle finds failing only: ${v.failing?.join(', ')}`,
      );
    }
    const refusals = r.effects!.trace.filter((e) => e.kind === 'refusal');
    must(refusals.length === 1, `${where(r, i)} refusal not traced exactly once`);
    const ev = refusals[0];
    for (const reason of d.reasons)
      must(ev.reason.includes(reason.message), `${where(r, i)} trace reason misses "${reason.message}"`);
    if (r.input.op === 'motion' && v.accepted) {
      must(ev.atMs === r.input.atMs, `${where(r, i)} trace atMs ${ev.atMs}`);
      must(ev.runId === v.openRun, `${where(r, i)} trace runId ${ev.runId}, oracle ${v.openRun}`);
    }
  });
};

/** (a)+(d) strengthened: the gate's refusal codes are exactly the oracle's failing conditions (sound and complete). */
const decisionsEqualOracle: Check = (recs, verdicts) => {
  neverThrows(recs, verdicts);
  recs.forEach((r, i) => {
    const d = r.decision;
    if (!d || (r.input.op === 'command' && r.input.command !== 'reset')) return;
    const got = codesOf(d as MotionDecision).sort();
    const want = [...(verdicts[i].failing ?? [])].sort();
    must(
      JSON.stringify(got) === JSON.stringify(want),
      `${where(r, i)} codes ${got.join(',') || '(allowed)'} but oracle ${want.join(',') || '(allowed)'}`,
    );
  });
};

/** (e) Each trip emits exactly [stop, damp] once, with the right outcome for the episode it ends; no other input emits actions. */
const tripsEmitStopDampOnce: Check = (recs, verdicts) => {
  neverThrows(recs, verdicts);
  recs.forEach((r, i) => {
    const fx = r.effects!;
    const v = verdicts[i];
    if (v.trip === null) {
      must(
        fx.actions.length === 0 && fx.trip === null && fx.episodeOutcome === null,
        `${where(r, i)} emitted ${JSON.stringify(fx.actions)} without a trip`,
      );
      return;
    }
    must(
      JSON.stringify(fx.actions.map((a) => a.command)) === '["stop","damp"]',
      `${where(r, i)} trip emitted ${JSON.stringify(fx.actions.map((a) => a.command))}`,
    );
    must(
      fx.trip !== null && fx.trip.outcome === v.trip.outcome && fx.trip.runId === v.trip.runId,
      `${where(r, i)} trip ${JSON.stringify(fx.trip)} vs oracle ${JSON.stringify(v.trip)}`,
    );
    if (v.trip.runId === null) must(fx.episodeOutcome === null, `${where(r, i)} ended an episode that was not open`);
    else
      must(
        fx.episodeOutcome?.runId === v.trip.runId && fx.episodeOutcome.outcome === v.trip.outcome,
        `${where(r, i)} episode outcome ${JSON.stringify(fx.episodeOutcome)}`,
      );
    must(
      fx.trace.some((e) => e.kind === 'stop_requested' && e.reason.length > 0),
      `${where(r, i)} trip not traced`,
    );
  });
};

/** Human-gated resets: accepted exactly when the oracle accepts them, and every reset (accepted or refused) is a trace event with a reason. */
const resetsTraced: Check = (recs, verdicts) => {
  neverThrows(recs, verdicts);
  recs.forEach((r, i) => {
    if (r.input.op !== 'event' || r.input.event.type !== 'operator_reset' || !verdicts[i].accepted) return;
    const fx = r.effects!;
    must(
      fx.reset !== null && fx.reset.accepted === verdicts[i].resetAccepted,
      `${where(r, i)} reset ${JSON.stringify(fx.reset)} vs oracle ${verdicts[i].resetAccepted}`,
    );
    const kind = verdicts[i].resetAccepted ? 'human_reset' : 'refusal';
    must(
      fx.trace.filter((e) => e.kind === kind && e.reason.length > 0 && e.atMs === r.input.atMs).length === 1,
      `${where(r, i)} reset not traced as ${kind}`,
    );
  });
};

/** (f) Time going backwards: the input is rejected with a problem (requests refused with clock_backwards only), the state does not change, nothing throws. */
const backwardsTimeRejected: Check = (recs, verdicts) => {
  neverThrows(recs, verdicts);
  recs.forEach((r, i) => {
    const v = verdicts[i];
    if (r.input.op === 'command' && r.input.command !== 'reset') return;
    if (v.accepted || r.input.op === 'malformed') {
      if (r.input.op === 'malformed') {
        must(
          r.effects!.problems.some((p) => p.code === 'bad_event' || p.code === 'clock_backwards'),
          `${where(r, i)} malformed event without a problem`,
        );
        expect(r.after).toEqual(r.before);
      }
      return;
    }
    if (r.input.op === 'command') return; // reset command: judged by decisionsEqualOracle
    must(
      r.effects!.problems.some((p) => p.code === 'clock_backwards'),
      `${where(r, i)} backwards input without a clock_backwards problem`,
    );
    expect(r.after).toEqual(r.before);
    if (r.input.op === 'motion')
      must(
        JSON.stringify(codesOf(r.decision as MotionDecision)) === '["clock_backwards"]',
        `${where(r, i)} backwards request: ${codesOf(r.decision as MotionDecision).join(',')}`,
      );
  });
};

const PROPERTIES: Record<string, Check> = {
  '(a) motion allowed only when every condition holds': allowedOnlyWhenAllHold,
  '(b) after a trip, no motion until a human-gated reset': latchedUntilHumanReset,
  '(c) stop and damp are never refused': stopAndDampNeverRefused,
  '(d) every refusal has true reasons, traced': refusalsAreTrue,
  '(a)+(d) refusal codes equal the oracle exactly': decisionsEqualOracle,
  '(e) each trip emits stop+damp once with the right outcome': tripsEmitStopDampOnce,
  'resets: accepted as the oracle says, always traced': resetsTraced,
  '(f) backwards time is rejected with a problem, never a crash': backwardsTimeRejected,
};

describe('safety gate properties (fast-check, numRuns ' + NUM_RUNS + ')', () => {
  for (const [name, check] of Object.entries(PROPERTIES)) {
    it(name, () => {
      fc.assert(property(realGate, check), { numRuns: NUM_RUNS });
    });
  }

  it('the generator reaches every decision: allowed motions of each kind, every refusal code, trips of every outcome, accepted and refused resets', () => {
    const seen = new Map<string, number>();
    const bump = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
    for (const sc of fc.sample(scenarioArb, { numRuns: 1500, seed: 7 })) {
      const inputs = materialise(sc);
      const recs = play(inputs, realGate());
      const verdicts = judge(inputs, PROPERTY_CONFIG);
      recs.forEach((r, i) => {
        const d = motionDecision(r);
        if (d?.allowed) bump(`allowed:${d.command}`);
        if (d && !d.allowed) d.reasons.forEach((x) => bump(`code:${x.code}`));
        if (r.effects?.trip) bump(`trip:${r.effects.trip.cause}:${r.effects.trip.outcome}`);
        if (verdicts[i].resetAccepted !== null) bump(`reset:${verdicts[i].resetAccepted}`);
        if (r.effects?.reset && !r.effects.reset.accepted)
          r.effects.reset.reasons.forEach((x) => bump(`resetcode:${x.code}`));
        if (r.effects?.problems.some((p) => p.code === 'clock_backwards')) bump('backwards');
      });
    }
    const need = [
      'allowed:prepare',
      'allowed:start',
      'allowed:hold',
      ...[
        'clock_backwards',
        'tripped',
        'no_episode',
        'interlock_unknown',
        'interlock_stale',
        'interlock_not_armed',
        'link_unknown',
        'link_stale',
        'not_admitted',
        'admission_contract_mismatch',
        'admission_binding_mismatch',
        'no_calibration',
        'calibration_other_run',
        'calibration_stale',
        'no_confirmation',
        'confirmation_other_run',
        'confirmation_used',
        'confirmation_before_calibration',
        'confirmation_expired',
      ].map((c) => `code:${c}`),
      'trip:estop:estop',
      'trip:interlock_lost:link_lost',
      'trip:link_lost:link_lost',
      'trip:operator_stop:aborted_by_operator',
      'trip:operator_stop:intervention',
      'trip:backend_stop:estop',
      'reset:true',
      'reset:false',
      'resetcode:not_tripped',
      'resetcode:interlock_estop',
      'resetcode:link_unknown',
      'backwards',
    ];
    const missing = need.filter((k) => !seen.has(k));
    expect(missing).toEqual([]);
    // enough allowed motions that property (a) is far from vacuous
    expect(
      (seen.get('allowed:start') ?? 0) + (seen.get('allowed:prepare') ?? 0) + (seen.get('allowed:hold') ?? 0),
    ).toBeGreaterThan(300);
    // watchdog trips happen while moving
    const watchdogTrips = [...seen.keys()].filter((k) => k.startsWith('trip:'));
    expect(watchdogTrips.length).toBeGreaterThan(5);
  });
});

// --- mutants: the same properties must find a counterexample --------------------------------

/** A gate wrapper with a deliberate bug. Each stands for a realistic mistake in the gate or the code around it. */
function wrap(overrides: (inner: SafetyGate) => Partial<GateLike>): () => GateLike {
  return () => {
    const inner = new SafetyGate(PROPERTY_CONFIG);
    const base: GateLike = {
      handle: (e) => inner.handle(e),
      requestMotion: (k, t) => inner.requestMotion(k, t),
      requestCommand: (c, t) => inner.requestCommand(c, t),
      snapshot: () => inner.snapshot(),
    };
    return { ...base, ...overrides(inner) };
  };
}

const MUTANTS: { name: string; gate: () => GateLike; caughtBy: Check }[] = [
  {
    // the link freshness check is effectively skipped: the request's own time is taken as the last frame time
    name: 'link freshness skipped',
    gate: wrap((inner) => ({
      requestMotion: (k: MotionKind, t: number) => {
        inner.handle({ type: 'lowstate', atMs: t });
        return inner.requestMotion(k, t);
      },
    })),
    caughtBy: allowedOnlyWhenAllHold,
  },
  {
    // calibration freshness never expires (a config that ignores the limit)
    name: 'calibration freshness skipped',
    gate: () => {
      const inner = new SafetyGate({ ...PROPERTY_CONFIG, calibrationMaxAgeMs: 1e12 });
      return {
        handle: (e) => inner.handle(e),
        requestMotion: (k, t) => inner.requestMotion(k, t),
        requestCommand: (c, t) => inner.requestCommand(c, t),
        snapshot: () => inner.snapshot(),
      };
    },
    caughtBy: allowedOnlyWhenAllHold,
  },
  {
    // the confirmation is not one-shot: whoever sends start re-confirms for the operator
    name: 'confirmation reused',
    gate: wrap((inner) => ({
      requestMotion: (k: MotionKind, t: number) => {
        const d = inner.requestMotion(k, t);
        if (d.allowed && k === 'start') inner.handle({ type: 'operator_confirm', atMs: t, runId: d.runId });
        return d;
      },
    })),
    caughtBy: allowedOnlyWhenAllHold,
  },
  {
    // the trip clears itself once the interlock and link look fine again (no human in the loop)
    name: 'automatic reset after a trip',
    gate: wrap((inner) => ({
      handle: (e: GateEvent) => {
        const fx = inner.handle(e);
        if (inner.snapshot().tripped !== null && e.type !== 'operator_reset')
          inner.handle({ type: 'operator_reset', atMs: e.atMs, note: 'auto' });
        return fx;
      },
    })),
    caughtBy: latchedUntilHumanReset,
  },
  {
    // stop is routed through the gate and refused while tripped
    name: 'stop gated while tripped',
    gate: wrap((inner) => ({
      requestCommand: (c: string, t: number) => {
        if ((c === 'stop' || c === 'damp') && inner.snapshot().tripped !== null) {
          const d = inner.requestMotion('hold', t);
          if (!d.allowed) return d;
        }
        return inner.requestCommand(c, t);
      },
    })),
    caughtBy: stopAndDampNeverRefused,
  },
  {
    // a refusal names the wrong condition (interlock staleness reported as link staleness)
    name: 'wrong refusal reason',
    gate: wrap((inner) => ({
      requestMotion: (k: MotionKind, t: number) => {
        const d = inner.requestMotion(k, t);
        if (!d.allowed)
          return {
            ...d,
            reasons: d.reasons.map((x) =>
              x.code === 'interlock_stale' ? { ...x, code: 'link_stale' as const, condition: 'link' as const } : x,
            ),
          };
        return d;
      },
    })),
    caughtBy: refusalsAreTrue,
  },
  {
    // a trip sends stop but forgets damp
    name: 'trip without damp',
    gate: wrap((inner) => {
      const strip = (fx: GateEffects): GateEffects => ({
        ...fx,
        actions: fx.actions.filter((a) => a.command !== 'damp'),
      });
      return {
        handle: (e: GateEvent) => strip(inner.handle(e)),
        requestMotion: (k: MotionKind, t: number) => {
          const d = inner.requestMotion(k, t);
          return { ...d, effects: strip(d.effects) };
        },
      };
    }),
    caughtBy: tripsEmitStopDampOnce,
  },
  {
    // interlock loss ends the episode as an e-stop instead of link_lost
    name: 'wrong trip outcome',
    gate: wrap((inner) => ({
      handle: (e: GateEvent) => {
        const fx = inner.handle(e);
        if (fx.trip?.cause === 'interlock_lost') return { ...fx, trip: { ...fx.trip, outcome: 'estop' as const } };
        return fx;
      },
    })),
    caughtBy: tripsEmitStopDampOnce,
  },
  {
    // an input with an earlier timestamp crashes the gate
    name: 'crash on backwards time',
    gate: wrap((inner) => {
      let last = -Infinity;
      const guard = (t: number) => {
        if (t < last) throw new Error('time went backwards');
        last = t;
      };
      return {
        handle: (e: GateEvent) => {
          if (typeof e === 'object' && e !== null && typeof e.atMs === 'number') guard(e.atMs);
          return inner.handle(e);
        },
        requestMotion: (k: MotionKind, t: number) => {
          guard(t);
          return inner.requestMotion(k, t);
        },
      };
    }),
    caughtBy: backwardsTimeRejected,
  },
];

describe('the properties catch broken gates', () => {
  for (const m of MUTANTS) {
    it(`finds a counterexample for: ${m.name}`, () => {
      const result = fc.check(property(m.gate, m.caughtBy), { numRuns: 3000, seed: 20261129, endOnFailure: true });
      expect(result.failed).toBe(true);
    });
  }

  it('the correct gate passes the same runs the mutants fail', () => {
    for (const m of MUTANTS) {
      const result = fc.check(property(realGate, m.caughtBy), { numRuns: 300, seed: 20261129 });
      expect(result.failed, `${m.name}: ${String(result.errorInstance)}`).toBe(false);
    }
  });
});
