// Property-based tests of the matched trial session reducer (src/domain/trial):
// random sessions played in a scripted world (test/unit/trialSessionWorld.ts) — refusals,
// retries, resets, trips at any moment, operator stops, and in the adversarial runs a lying gate
// and stray, duplicated or foreign events — judged over the whole history:
//   (1) no `start` unless the gate allowed it: at the start check and again at the write, for
//       this run, after its prepare was allowed, with its recording open and no trip since;
//   (2) every trip yields stop then damp, and the trial it names ends (once) with the trip's
//       outcome — the gate's episode, the recorded episode and its `stop_requested` event;
//   (3) resume: a session killed at any step and run again from what the campaign kept ends with
//       the same trials and outcomes as the uninterrupted session, running none of the finished
//       trials (or the finished simulation branch) again;
// and the reducer never throws. Each property runs against deliberately broken reducers too (it
// must find a counterexample) and against a hand-made history that violates it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EpisodeOutcome } from '../../src/domain/backend/backend';
import type { GateTrip } from '../../src/domain/safety';
import {
  initialTrialSession,
  isSessionOver,
  reduceTrialSession,
  type TrialSessionEffect,
  type TrialSessionEvent,
  type TrialSessionState,
} from '../../src/domain/trial';
import {
  effectsOf,
  goodScript,
  play,
  realReducer,
  resumableWorldArb,
  worldArb,
  type LogEntry,
  type PlayResult,
  type Reducer,
  type WorldScript,
} from './trialSessionWorld';

const NUM_RUNS = 400;

function must(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}

const where = (l: LogEntry, i: number): string => `step ${i} (${l.event.type} in ${l.before.phase})`;

// --- the properties -------------------------------------------------------------------------

/** The reducer never throws and the world never stalls on it. */
function neverThrows(r: PlayResult): void {
  must(r.threw === null, `the reducer threw: ${String(r.threw)}`);
  r.log.forEach((l, i) => must(l.threw === null, `${where(l, i)} threw ${String(l.threw)}`));
}

/**
 * (1) A `start` effect only answers a `transmit_decided` the gate allowed, for the same run; that
 * run's latest `prepare_decided` before it was allowed, a `start_decided` the gate allowed and a
 * `recording_opened` came after it, in that order; no trip (of any run) was heard since that
 * prepare; at most one start per run.
 */
function noStartWithoutGate(log: readonly LogEntry[]): void {
  const started = new Set<string>();
  log.forEach((l, i) => {
    for (const fx of l.effects) {
      if (fx.type !== 'start') continue;
      const e = l.event;
      must(
        e.type === 'transmit_decided' && e.allowed && e.runId === fx.runId,
        `${where(l, i)}: start ${fx.runId} not in answer to an allowed transmit of that run`,
      );
      must(!started.has(fx.runId), `${where(l, i)}: a second start for ${fx.runId}`);
      started.add(fx.runId);
      let p = -1;
      for (let j = i - 1; j >= 0; j--) {
        const ev = log[j].event;
        if (ev.type === 'prepare_decided' && ev.runId === fx.runId) {
          p = j;
          break;
        }
      }
      must(p >= 0, `${where(l, i)}: start ${fx.runId} without a prepare decision`);
      const prep = log[p].event;
      must(prep.type === 'prepare_decided' && prep.allowed, `${where(l, i)}: start after a refused prepare`);
      const between = log.slice(p + 1, i);
      const sd = between.findIndex(
        (x) => x.event.type === 'start_decided' && x.event.runId === fx.runId && x.event.allowed,
      );
      must(sd >= 0, `${where(l, i)}: start ${fx.runId} without an allowed start check`);
      must(
        between.slice(sd + 1).some((x) => x.event.type === 'recording_opened' && x.event.runId === fx.runId),
        `${where(l, i)}: start ${fx.runId} without its recording open`,
      );
      const trip = between.find((x) => x.event.type === 'trip');
      must(trip === undefined, `${where(l, i)}: start ${fx.runId} after a trip (${JSON.stringify(trip?.event)})`);
    }
  });
}

/**
 * (2) Each trip's step starts with stop (the trip's outcome) then damp, and shows the trip. A trip
 * that names a trial the session opened: that trial's gate episode ends exactly once, with the
 * trip's outcome; if it was recorded, the recorded end has the trip's outcome (and, for a trip
 * the trial's end did not cause itself, the trip's reason with its cause) and a
 * `stop_requested` event on the episode before it. Every opened trial's gate episode ends once
 * the session is over.
 */
function tripsEndTrials(r: PlayResult): void {
  const { log } = r;
  const opened = new Map<string, number>();
  log.forEach((l, i) => {
    for (const fx of l.effects) if (fx.type === 'open_trial') opened.set(fx.runId, i);
  });
  const ends = (runId: string) => effectsOf(log, 'end_episode').filter((x) => x.effect.runId === runId);
  log.forEach((l, i) => {
    if (l.event.type !== 'trip') return;
    const trip: GateTrip = l.event.trip;
    const kinds = l.effects.map((e) => e.type);
    must(
      kinds[0] === 'stop' && kinds[1] === 'damp',
      `${where(l, i)}: trip effects start ${JSON.stringify(kinds.slice(0, 2))}, not stop, damp`,
    );
    const [stop, damp] = l.effects as [
      Extract<TrialSessionEffect, { type: 'stop' }>,
      Extract<TrialSessionEffect, { type: 'damp' }>,
    ];
    must(stop.outcome === trip.outcome && stop.runId === trip.runId, `${where(l, i)}: stop ${JSON.stringify(stop)}`);
    must(damp.runId === trip.runId, `${where(l, i)}: damp ${JSON.stringify(damp)}`);
    must(
      l.effects.some((e) => e.type === 'progress' && e.event.type === 'trip' && e.event.trip === trip),
      `${where(l, i)}: trip not shown`,
    );
    const runId = trip.runId;
    const openedAt = runId === null ? undefined : opened.get(runId);
    if (runId === null || openedAt === undefined || openedAt > i) return;
    const e = ends(runId);
    if (e.length === 0) {
      // The session is still in that trial (a cut or a stall): nothing to judge yet.
      must(!isSessionOver(r.state) || r.state.phase === 'failed', `${where(l, i)}: trip of ${runId}, never ended`);
      return;
    }
    must(e.length === 1, `${where(l, i)}: ${runId} ended ${e.length} times`);
    must(
      e[0].effect.outcome === trip.outcome,
      `${where(l, i)}: ${runId} tripped ${trip.outcome} but ended ${e[0].effect.outcome}`,
    );
    const fin = effectsOf(log, 'finish_episode').filter((x) => x.effect.runId === runId);
    must(fin.length <= 1, `${where(l, i)}: ${runId} finished ${fin.length} times`);
    if (fin.length === 1) {
      must(fin[0].effect.outcome === trip.outcome, `${where(l, i)}: ${runId} recorded ${fin[0].effect.outcome}`);
      if (trip.cause !== 'backend_stop')
        must(
          fin[0].effect.reason === `${trip.reason} (${trip.cause})`,
          `${where(l, i)}: ${runId} recorded reason ${fin[0].effect.reason}`,
        );
      const stops = effectsOf(log, 'record_stop_requested').filter((x) => x.effect.runId === runId);
      must(
        stops.length === 1 && stops[0].index === fin[0].index,
        `${where(l, i)}: ${runId} has ${stops.length} stop_requested with its recorded end`,
      );
    }
  });
  if (isSessionOver(r.state) && r.state.phase !== 'failed')
    for (const runId of opened.keys())
      must(ends(runId).length === 1, `opened trial ${runId} ended ${ends(runId).length} times`);
}

// --- playing --------------------------------------------------------------------------------

const worldProperty = (adversarial: boolean, reducer: Reducer, check: (r: PlayResult) => void) =>
  fc.property(worldArb(adversarial), (script: WorldScript) => {
    const r = play(script, reducer);
    neverThrows(r);
    check(r);
  });

describe('trial session properties (fast-check, numRuns ' + NUM_RUNS + ')', () => {
  it('never throws, never stalls in a truthful world, and always ends', () => {
    fc.assert(
      fc.property(worldArb(false), (script) => {
        const r = play(script);
        neverThrows(r);
        must(!r.stalled, `stalled in ${r.state.phase}`);
        must(isSessionOver(r.state), `not over: ${r.state.phase}`);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('never throws on adversarial histories (a lying gate, stray and duplicated events)', () => {
    fc.assert(
      fc.property(worldArb(true), (script) => neverThrows(play(script))),
      { numRuns: NUM_RUNS },
    );
  });

  it('(1) no start unless the gate allowed it — truthful world', () => {
    fc.assert(
      worldProperty(false, realReducer, (r) => noStartWithoutGate(r.log)),
      { numRuns: NUM_RUNS },
    );
  });

  it('(1) no start unless the gate allowed it — lying gate, stray events', () => {
    fc.assert(
      worldProperty(true, realReducer, (r) => noStartWithoutGate(r.log)),
      { numRuns: NUM_RUNS },
    );
  });

  it('(2) every trip yields stop + damp and ends its trial with the trip outcome', () => {
    fc.assert(worldProperty(false, realReducer, tripsEndTrials), { numRuns: NUM_RUNS });
    fc.assert(worldProperty(true, realReducer, tripsEndTrials), { numRuns: NUM_RUNS });
  });

  it('the generator reaches every path: starts, each refusal, trips of each outcome in each step, resets, retries', () => {
    const seen = new Map<string, number>();
    const bump = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
    for (const adversarial of [false, true])
      for (const script of fc.sample(worldArb(adversarial), { numRuns: 600, seed: 12 })) {
        const r = play(script);
        for (const l of r.log) {
          if (l.event.type === 'trip') {
            bump(`trip:${l.event.trip.cause}:${l.event.trip.outcome}`);
            if (l.before.phase === 'trials') bump(`trip-in:${l.before.trial.step}`);
          }
          for (const fx of l.effects) {
            bump(`fx:${fx.type}`);
            if (fx.type === 'progress' && fx.event.type === 'phase' && fx.event.phase === 'stopped')
              bump(`stopped:${fx.event.message.replace(/[0-9]+/g, 'N').slice(0, 60)}`);
            if (fx.type === 'refuse_session') bump(`refused:${fx.message.slice(0, 25)}`);
            if (fx.type === 'end_episode' && fx.reason.startsWith('hard failure after the clip'))
              bump('end:a fall after the clip');
          }
        }
      }
    const need = [
      'fx:start',
      'fx:withhold_start',
      'fx:operator_stop',
      'fx:record_stop_requested',
      'fx:reset_gate',
      'fx:fail',
      'end:a fall after the clip',
      'trip:estop:estop',
      'trip:link_lost:link_lost',
      'trip:interlock_lost:link_lost',
      'trip:operator_stop:aborted_by_operator',
      'trip:operator_stop:intervention',
      'trip:backend_stop:aborted_by_operator',
      'trip-in:running',
      'trip-in:finishing',
      'trip-in:awaiting_reset',
      'trip-in:confirming',
      'stopped:start not sent: ',
      'stopped:start refused by the safety gate: ',
      'stopped:prepare refused by the safety gate: ',
      'stopped:the operator did not confirm the trial',
      'stopped:the interlock did not arm: box in ESTOP',
      'stopped:stopped by the operator',
      'stopped:trial N did not start N times: ',
      'stopped:trial N failed N times with infrastructure e',
      'stopped:trial N: the robot was not ready after N',
      'stopped:the safety gate tripped (',
      'stopped:the operator did not confirm the reset',
      'refused:pair qual-0001 (ub_wave_r',
      'refused:pair qual-0001 was admitt',
      'refused:binding builtin@pd1 of pa',
      'refused:embedded MuJoCo is a simu',
      'refused:calibration cal-given is ',
      'refused:calibration refused: not ',
      'refused:the robot is not standing',
    ];
    const missing = need.filter((k) => ![...seen.keys()].some((s) => s.startsWith(k)));
    expect(missing).toEqual([]);
    expect(seen.get('fx:start') ?? 0).toBeGreaterThan(500);
  });
});

// --- (3) resume -----------------------------------------------------------------------------

/** What the two sessions must agree on: the simulation branch's outcome and each trial's outcome, reason and frames. */
function projection(r: PlayResult) {
  const res = r.result;
  return res
    ? {
        sim: res.sim.outcome,
        real: res.real.map((t) => [t.trialIndex, t.outcome, t.reason, t.frames]),
        remaining: res.remaining,
        stoppedEarly: res.stoppedEarly,
      }
    : { phase: r.state.phase };
}

/** Counting trials the campaign holds (finished, not infrastructure_error). */
const countedIn = (r: PlayResult): Set<number> =>
  new Set(
    r.store.real
      .filter(
        (x) => x.status === 'finished' && x.episode.outcome !== null && x.episode.outcome !== 'infrastructure_error',
      )
      .map((x) => x.episode.trialIndex),
  );

function resumeMatches(reducer: Reducer) {
  return fc.property(resumableWorldArb, fc.double({ min: 0, max: 1, noNaN: true }), (script, where01) => {
    const whole = play(script, realReducer);
    neverThrows(whole);
    // The uninterrupted session of such a world runs every trial (else the property is vacuous).
    must(
      whole.result?.stoppedEarly === null && whole.result.remaining === 0,
      `whole: ${JSON.stringify(projection(whole))}`,
    );
    const cutAt = 1 + Math.floor(where01 * (whole.topSteps - 1));
    const first = play(script, reducer, { cutAt });
    neverThrows(first);
    const again = play(script, reducer, { store: first.store });
    neverThrows(again);
    const a = JSON.stringify(projection(again));
    const w = JSON.stringify(projection(whole));
    must(a === w, `killed before step ${cutAt}: resumed ${a} vs uninterrupted ${w}`);
    // Nothing finished is run again: the resumed session opens none of the counted trials, nor a
    // second simulation episode when the first one counted.
    const counted = countedIn(first);
    for (const x of effectsOf(again.log, 'open_trial'))
      must(!counted.has(x.effect.trialIndex), `trial ${x.effect.trialIndex} counted before the cut and run again`);
    const resumed = again.result?.real.filter((t) => t.resumed).map((t) => t.trialIndex) ?? [];
    must(
      JSON.stringify([...resumed].sort()) === JSON.stringify([...counted].sort()),
      `resumed trials ${JSON.stringify(resumed)} vs counted before the cut ${JSON.stringify([...counted])}`,
    );
    const simCounted = first.store.sim.some((e) => e.outcome !== null && e.outcome !== 'infrastructure_error');
    if (simCounted)
      must(effectsOf(again.log, 'run_sim_branch').length === 0, 'the finished simulation branch ran again');
  });
}

describe('(3) resume after a restart reaches the same end as the uninterrupted session', () => {
  it('holds for the reducer, killed at any step', () => {
    fc.assert(resumeMatches(realReducer), { numRuns: NUM_RUNS });
  });
});

// --- broken reducers: the same properties must find a counterexample -------------------------

const trialOf = (s: TrialSessionState) => (s.phase === 'trials' ? s.trial : null);

/** Replaces effects of one step. */
const mapEffects =
  (f: (fx: TrialSessionEffect[], s: TrialSessionState, e: TrialSessionEvent) => TrialSessionEffect[]): Reducer =>
  (s, e) => {
    const r = reduceTrialSession(s, e);
    return { state: r.state, effects: f(r.effects, s, e) };
  };

const MUTANTS: {
  name: string;
  reducer: Reducer;
  adversarial: boolean;
  check: (r: PlayResult) => void;
  /** What the counterexample must be about. */
  failsWith: RegExp;
}[] = [
  {
    // the start is written on the gate's yes at the start check, without the last check at the write
    name: 'start sent at the start check',
    reducer: mapEffects((fx, _s, e) =>
      e.type === 'start_decided' && e.allowed ? [...fx, { type: 'start', runId: e.runId }] : fx,
    ),
    adversarial: false,
    check: (r) => noStartWithoutGate(r.log),
    failsWith: /not in answer to an allowed transmit/,
  },
  {
    // the gate's refusal at the write is ignored
    name: 'refusal at the write ignored',
    reducer: mapEffects((fx) =>
      fx.map((x): TrialSessionEffect => (x.type === 'withhold_start' ? { type: 'start', runId: x.runId } : x)),
    ),
    adversarial: false,
    check: (r) => noStartWithoutGate(r.log),
    failsWith: /not in answer to an allowed transmit|after a trip/,
  },
  {
    // the session does not listen to trips (it trusts the gate's answers alone): a lying gate wins
    name: 'trips not heard',
    reducer: (s, e) =>
      e.type === 'trip' ? { state: s, effects: reduceTrialSession(s, e).effects } : reduceTrialSession(s, e),
    adversarial: true,
    check: (r) => noStartWithoutGate(r.log),
    failsWith: /after a trip/,
  },
  {
    // a trip sends stop but forgets damp
    name: 'trip without damp',
    reducer: mapEffects((fx) => fx.filter((x) => x.type !== 'damp')),
    adversarial: false,
    check: tripsEndTrials,
    failsWith: /not stop, damp/,
  },
  {
    // a recorded trial that tripped ends with what the robot reported, not the trip's outcome
    name: "robot's end wins over the trip",
    reducer: mapEffects((fx, s, e) => {
      const t = trialOf(s);
      if (e.type !== 'run_ended' || e.result.kind !== 'ended' || t === null || !('trip' in t) || t.trip === null)
        return fx;
      const { outcome, reason } = e.result;
      return fx.map((x) => (x.type === 'end_episode' || x.type === 'finish_episode' ? { ...x, outcome, reason } : x));
    }),
    adversarial: false,
    check: tripsEndTrials,
    failsWith: /tripped \w+ but ended|recorded/,
  },
];

const RESUME_MUTANTS: { name: string; reducer: Reducer; failsWith: RegExp }[] = [
  {
    // resume counts infrastructure_error trials as finished (the countingEpisodes filter forgotten)
    name: 'infrastructure errors count on resume',
    reducer: (s, e) =>
      reduceTrialSession(
        s,
        e.type === 'matched_pair_opened'
          ? {
              ...e,
              realEpisodes: e.realEpisodes.map((x) => ({
                ...x,
                outcome: x.outcome === 'infrastructure_error' ? ('completed' as EpisodeOutcome) : x.outcome,
              })),
            }
          : e,
      ),
    failsWith: /resumed .* vs uninterrupted/,
  },
  {
    // resume ignores the stored trials and runs them all again
    name: 'stored trials ignored on resume',
    reducer: (s, e) => reduceTrialSession(s, e.type === 'matched_pair_opened' ? { ...e, realEpisodes: [] } : e),
    failsWith: /counted before the cut and run again/,
  },
];

describe('the properties catch broken reducers', () => {
  for (const m of MUTANTS) {
    it(`finds a counterexample for: ${m.name}`, () => {
      const result = fc.check(worldProperty(m.adversarial, m.reducer, m.check), {
        numRuns: 2000,
        seed: 20261201,
        endOnFailure: true,
      });
      expect(result.failed).toBe(true);
      expect(String(result.errorInstance)).toMatch(m.failsWith);
    });
  }
  for (const m of RESUME_MUTANTS) {
    it(`finds a counterexample for: ${m.name}`, () => {
      const result = fc.check(resumeMatches(m.reducer), { numRuns: 2000, seed: 20261201, endOnFailure: true });
      expect(result.failed).toBe(true);
      expect(String(result.errorInstance)).toMatch(m.failsWith);
    });
  }

  it('the correct reducer passes the same runs the mutants fail', () => {
    for (const m of MUTANTS) {
      const result = fc.check(worldProperty(m.adversarial, realReducer, m.check), { numRuns: 300, seed: 20261201 });
      expect(result.failed, `${m.name}: ${String(result.errorInstance)}`).toBe(false);
    }
    const result = fc.check(resumeMatches(realReducer), { numRuns: 300, seed: 20261201 });
    expect(result.failed, String(result.errorInstance)).toBe(false);
  });
});

// --- hand-made histories that violate each property: the checks can fail ----------------------

describe('the checks reject histories that break them', () => {
  const s0 = initialTrialSession(1);
  const entry = (event: TrialSessionEvent, effects: TrialSessionEffect[], before = s0, after = s0): LogEntry => ({
    top: 0,
    depth: 0,
    event,
    before,
    after,
    effects,
    threw: null,
  });
  const trip: GateTrip = { cause: 'estop', atMs: 1, reason: 'EV ESTOP', runId: 'real-0-1', outcome: 'estop' };

  it('(1) a start that answers the start check, not the write', () => {
    const log = [
      entry({ type: 'prepare_decided', runId: 'real-0-1', allowed: true, reasons: [] }, []),
      entry({ type: 'start_decided', runId: 'real-0-1', allowed: true, reasons: [] }, [
        { type: 'start', runId: 'real-0-1' },
      ]),
    ];
    expect(() => noStartWithoutGate(log)).toThrow(/not in answer to an allowed transmit/);
  });

  it('(1) a start after a trip, though the write was allowed', () => {
    const log = [
      entry({ type: 'prepare_decided', runId: 'real-0-1', allowed: true, reasons: [] }, []),
      entry({ type: 'start_decided', runId: 'real-0-1', allowed: true, reasons: [] }, []),
      entry({ type: 'recording_opened', runId: 'real-0-1' }, []),
      entry({ type: 'trip', trip }, []),
      entry({ type: 'transmit_decided', runId: 'real-0-1', allowed: true, reasons: [] }, [
        { type: 'start', runId: 'real-0-1' },
      ]),
    ];
    expect(() => noStartWithoutGate(log)).toThrow(/after a trip/);
  });

  it('(2) a trip without damp, and a tripped trial recorded completed', () => {
    const over: TrialSessionState = { ...s0, phase: 'failed', message: 'x' };
    const noDamp: PlayResult = {
      log: [
        entry({ type: 'trip', trip }, [{ type: 'stop', runId: trip.runId, outcome: 'estop', reason: 'x', by: 'gate' }]),
      ],
      state: over,
      result: null,
      store: { matched: null, sim: [], real: [], events: [], nextEventId: 1 },
      topSteps: 1,
      stalled: false,
      trips: [trip],
      threw: null,
    };
    expect(() => tripsEndTrials(noDamp)).toThrow(/not stop, damp/);
    const stopDamp: TrialSessionEffect[] = [
      { type: 'stop', runId: trip.runId, outcome: 'estop', reason: 'x', by: 'gate' },
      { type: 'damp', runId: trip.runId, reason: 'x', by: 'gate' },
      { type: 'progress', event: { type: 'trip', trip } },
    ];
    const wrongEnd: PlayResult = {
      ...noDamp,
      log: [
        entry({ type: 'trial_opened', runId: 'real-0-1', freshCalibrationId: 'c' }, [
          { type: 'open_trial', runId: 'real-0-1', trialIndex: 0 },
        ]),
        entry({ type: 'trip', trip }, stopDamp),
        entry(
          {
            type: 'run_ended',
            runId: 'real-0-1',
            result: { kind: 'ended', outcome: 'completed', reason: 'end' },
            hardFailure: null,
            afterClip: null,
            recordError: null,
          },
          [{ type: 'end_episode', runId: 'real-0-1', outcome: 'completed', reason: 'end' }],
        ),
      ],
    };
    expect(() => tripsEndTrials(wrongEnd)).toThrow(/tripped estop but ended completed/);
  });

  it('(3) a resumed session that ran a finished trial again', () => {
    // Killed right after trial 1 was recorded, resumed by a reducer that forgets the stored trials.
    const forget = RESUME_MUTANTS[1].reducer;
    const script = goodScript(2);
    const whole = play(script);
    const finished = whole.log.find((l) => l.event.type === 'episode_finished');
    expect(finished).toBeDefined();
    const first = play(script, forget, { cutAt: (finished?.top ?? 0) + 1 });
    expect(countedIn(first)).toEqual(new Set([0]));
    const again = play(script, forget, { store: first.store });
    expect(() => {
      for (const x of effectsOf(again.log, 'open_trial'))
        must(!countedIn(first).has(x.effect.trialIndex), `trial ${x.effect.trialIndex} counted and run again`);
    }).toThrow(/trial 0 counted and run again/);
    // The real reducer, resumed from the same campaign, runs trial 2 only.
    const fine = play(script, realReducer, { store: first.store });
    expect(effectsOf(fine.log, 'open_trial').map((x) => x.effect.trialIndex)).toEqual([1]);
    expect(fine.result?.real.map((t) => [t.trialIndex, t.resumed])).toEqual([
      [0, true],
      [1, false],
    ]);
  });
});
