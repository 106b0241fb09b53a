import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import type { TraceEvent } from '../../src/domain/trace/records';
import type { WbcBinding } from '../../src/domain/wbc/wbcBinding';
import { runQualification } from '../../src/services/qualification';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { openCampaign, type CampaignStore } from '../../src/services/trace';
import {
  listAdmittedPairs,
  runMatchedPair,
  type MatchedPairResult,
  type TrialProgressEvent,
} from '../../src/services/trial';
import { trialRobotOf } from '../../src/services/trial/trialRobot';
import { loadWorkload } from '../../src/services/workload';
import { ScriptedInterlock, ScriptedRobot, SteppedClock } from '../helpers/scriptedTrialRig';

// The matched trial runner's safety paths where nothing may start (docs/TRIALS.md, "Judgement
// calls"; docs/SAFETY_GATE.md): a start the gate refuses after the robot acknowledged the
// prepare, a robot that refuses or fails the prepare, a prepare the gate refuses, an interlock
// that does not arm. Real parts: the SQLite campaign with a pair admitted by runQualification, the
// embedded MuJoCo simulator for the settle run and the simulation branch, the safety gate and its
// driver. Doubles (test/helpers/scriptedTrialRig.ts): the robot, the interlock box and the gate's
// clock, so each condition fails at an exact instant — a stale link is "70 ms without a lowstate",
// stepped, never waited for — and every command the robot receives is recorded.

const profile = loadRobotProfile();
const workload = loadWorkload('core-v1');
const CLIP = 'ub_wave_right';

let root: string;
let template: string;
let pairId: string;
let clip: MotionClip;
let sim: EmbeddedSimulator;
let binding: WbcBinding;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'mb-trial-refusals-'));
  binding = await resolveBindingSpec('builtin:assist=3000');
  sim = new EmbeddedSimulator({ modelFile: profile.sourceFile, workers: 1 });
  await sim.ready();
  // One qualified campaign, copied for each test (each test's trace starts from the same state).
  template = path.join(root, 'template');
  await runQualification({
    campaignDir: template,
    workload,
    bindings: [binding],
    profile,
    clips: [CLIP],
    simulator: sim,
  });
  const store = await openCampaign(template);
  const pair = listAdmittedPairs(store)[0];
  store.close();
  expect(pair.admitted).toBe(true);
  pairId = pair.pairId;
  clip = workload.clips.find((c) => c.name === CLIP)!;
}, 60_000);

afterAll(async () => {
  await sim?.close();
  await rm(root, { recursive: true, force: true });
});

interface Session {
  clock: SteppedClock;
  robot: ScriptedRobot;
  interlock: ScriptedInterlock;
  store: CampaignStore;
  events: TrialProgressEvent[];
  confirmations: number;
  resets: number;
}
let current: Session | null = null;
let campaigns = 0;

afterEach(async () => {
  const s = current;
  current = null;
  if (!s) return;
  await s.robot.close();
  await s.interlock.close();
  s.store.close();
  s.clock.restore();
});

/** A robot, an interlock box and a fresh copy of the qualified campaign; `script` sets up the robot's and the box's answers. */
async function rig(script: (s: Session) => void = () => {}): Promise<Session> {
  const dir = path.join(root, `campaign-${++campaigns}`);
  await cp(template, dir, { recursive: true });
  const clock = new SteppedClock();
  const s: Session = {
    clock,
    robot: new ScriptedRobot(clip),
    interlock: new ScriptedInterlock(clock),
    store: await openCampaign(dir),
    events: [],
    confirmations: 0,
    resets: 0,
  };
  current = s;
  script(s);
  return s;
}

/** One session of up to `trials` trials; the test operator confirms every trial (unless `confirm` is false) and every reset. */
function runSession(
  s: Session,
  { trials = 3, confirm = true }: { trials?: number; confirm?: boolean } = {},
): Promise<MatchedPairResult> {
  return runMatchedPair({
    store: s.store,
    link: trialRobotOf(s.robot, { robotUnit: 'g1-scripted' }),
    interlock: s.interlock,
    sim,
    profile,
    pairId,
    trials,
    workload,
    operator: {
      confirmTrial: async () => {
        s.confirmations++;
        return confirm;
      },
      confirmReset: async () => {
        s.resets++;
        return 'test operator put the robot back';
      },
    },
    onProgress: (e) => s.events.push(e),
  });
}

const ofType = <T extends TrialProgressEvent['type']>(
  s: Session,
  type: T,
): Extract<TrialProgressEvent, { type: T }>[] =>
  s.events.filter((e): e is Extract<TrialProgressEvent, { type: T }> => e.type === type);
const traceOf = (s: Session, r: MatchedPairResult, kind: TraceEvent['kind']): TraceEvent[] =>
  s.store.listEvents({ parentTraceId: r.parentTraceId, kind });
const realEpisodes = (s: Session) => s.store.findEpisodes({ executionDomain: 'real_robot' });
const commandNames = (s: Session): string[] => s.robot.commands.map((c) => c.command);
const lastPhase = (s: Session) => ofType(s, 'phase').at(-1);

describe('matched trial runner: trials that must not start', () => {
  it('control: with every condition met the rig reaches start and the runner opens one real episode', async () => {
    const s = await rig(({ robot, interlock, clock }) => {
      // From the lease to its release the gate's clock stands still: the trial cannot trip on a
      // stall of a loaded machine (the watchdog runs while the robot moves).
      robot.script.onAcquire = () => {
        interlock.status('ARMED');
        clock.freeze();
      };
      robot.script.onRelease = () => clock.thaw();
    });
    const r = await runSession(s, { trials: 1 });
    expect(r.stoppedEarly).toBeNull();
    expect(r.sim.outcome).not.toBe('infrastructure_error');
    expect(r.real).toHaveLength(1);
    expect(r.real[0]).toMatchObject({ trialIndex: 0, outcome: 'completed', frames: 200 });
    const runId = s.robot.acquired[0];
    expect(s.robot.commands).toEqual([
      { command: 'prepare', runId },
      { command: 'start', runId },
    ]);
    expect(realEpisodes(s).map((e) => [e.runId, e.status, e.outcome])).toEqual([[runId, 'finished', 'completed']]);
    expect(ofType(s, 'refusal')).toEqual([]);
    expect(ofType(s, 'trip')).toEqual([]);
    expect(s.interlock.calls).toEqual(['arm', 'disarm']);
    expect(s.robot.released).toEqual([runId]);
  });

  it('(a) start refused: the robot link goes stale between the prepare ack and the start check', async () => {
    const s = await rig(({ robot, interlock, clock }) => {
      robot.script.afterPrepareAck = () => {
        // Fresh statuses, then exactly 70 ms without a lowstate (the box keeps answering): stale
        // for motion (≥ 50 ms) but not lost (> 100 ms), so the gate refuses and does not trip. The
        // clock stands still until the lease is released, so no real time is added to the 70 ms.
        clock.freeze();
        robot.sendState(1);
        interlock.status('ARMED');
        clock.advance(70);
        interlock.status('ARMED');
      };
      robot.script.onRelease = () => clock.thaw();
    });
    const r = await runSession(s);
    const runId = s.robot.acquired[0];
    expect(s.robot.acquired).toEqual([runId]);

    const refusals = ofType(s, 'refusal');
    expect(refusals).toHaveLength(1);
    expect(refusals[0].runId).toBe(runId);
    expect(refusals[0].reasons.map((x) => x.code)).toEqual(['link_stale']);
    expect(refusals[0].reasons[0].message).toMatch(/^robot link stale: last lowstate 70 ms ago \(limit 50 ms\)$/);

    // The gate's refusal is in the trace, on the matched pair (no episode to hang it on).
    const traced = traceOf(s, r, 'refusal');
    expect(traced).toHaveLength(1);
    expect(traced[0]).toMatchObject({
      runId: null,
      reason: `start refused: ${refusals[0].reasons[0].message}`,
      detail: { run_id: runId, command: 'start', codes: ['link_stale'] },
    });

    // Nothing started: no start sent, no episode, and a refusal is no trip (no stop, no damp).
    expect(commandNames(s)).toEqual(['prepare']);
    expect(realEpisodes(s)).toEqual([]);
    expect(ofType(s, 'trip')).toEqual([]);
    expect(traceOf(s, r, 'stop_requested')).toEqual([]);

    const why = `start refused by the safety gate: ${refusals[0].reasons[0].message}`;
    expect(r.stoppedEarly).toBe(why);
    expect(lastPhase(s)).toEqual({ type: 'phase', phase: 'stopped', trialIndex: null, message: why });
    expect(r.real).toEqual([]);
    expect(r.remaining).toBe(3);
    expect(s.confirmations).toBe(1);
    // Afterwards: the interlock disarmed and the lease released.
    expect(s.interlock.calls).toEqual(['arm', 'disarm']);
    expect(s.interlock.state).toBe('safe');
    expect(s.robot.released).toEqual([runId]);
  });

  it('(a) start not sent: granted, then the link goes stale while the recording opens → refused at the write, no start, episode of 0 frames, session stopped', async () => {
    const s = await rig(({ robot, interlock, clock }) => {
      robot.script.beforeTransmit = () => {
        // Between the gate's grant (beforeStart) and the write: 70 ms without a lowstate.
        interlock.status('ARMED');
        clock.advance(70);
        interlock.status('ARMED');
      };
    });
    const r = await runSession(s);
    const runId = s.robot.acquired[0];
    const refusals = ofType(s, 'refusal');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ runId, reasons: [{ code: 'link_stale' }] });
    // Traced on the episode (its recording was open when the write was refused).
    const traced = s.store.listEvents({ runId, kind: 'refusal' });
    expect(traced).toHaveLength(1);
    const stale = /^start not sent: robot link stale: last lowstate (\d+(?:\.\d+)?) ms ago \(limit 50 ms\)$/.exec(
      traced[0].reason ?? '',
    );
    expect(stale, traced[0].reason ?? '').not.toBeNull();
    // The 70 ms the script stepped, plus the real time until the write (21.8 ms on one loaded CI run).
    expect(Number(stale![1])).toBeGreaterThanOrEqual(70);
    // No start reached the robot; the prepared robot was stopped and damped (the episode ended by a stop).
    expect(commandNames(s)).toEqual(['prepare', 'stop', 'damp']);
    const eps = realEpisodes(s);
    expect(eps).toHaveLength(1);
    expect(eps[0]).toMatchObject({ runId, frameCount: 0, outcome: 'aborted_by_operator' });
    expect(r.stoppedEarly).toMatch(/^start not sent: robot link stale/);
    expect(s.interlock.calls).toEqual(['arm', 'disarm']);
    expect(s.robot.released).toEqual([runId]);
  });

  it('(a) start refused after a trip: the robot link is lost between the prepare ack and the start check', async () => {
    const s = await rig(({ robot, interlock }) => {
      robot.script.afterPrepareAck = () => {
        robot.sendState(1);
        interlock.status('ARMED');
        robot.setPresence('lost'); // prepare was allowed, so the robot counts as moving: a trip
      };
    });
    const r = await runSession(s);
    const runId = s.robot.acquired[0];

    const trips = ofType(s, 'trip');
    expect(trips).toHaveLength(1);
    expect(trips[0].trip).toMatchObject({ cause: 'link_lost', outcome: 'link_lost', runId });
    const stops = traceOf(s, r, 'stop_requested');
    expect(stops).toHaveLength(1);
    expect(stops[0]).toMatchObject({
      runId: null,
      detail: { run_id: runId, cause: 'link_lost', outcome: 'link_lost', actions: ['stop', 'damp'] },
    });

    const refusals = ofType(s, 'refusal');
    expect(refusals).toHaveLength(1);
    expect(refusals[0].runId).toBe(runId);
    expect(refusals[0].reasons.map((x) => x.code)).toEqual(['tripped', 'link_unknown', 'no_episode']); // the trip ended the gate's episode
    const traced = traceOf(s, r, 'refusal');
    expect(traced).toHaveLength(1);
    // The trip closed the gate's episode, so its refusal names no run (the trip's event does).
    expect(traced[0]).toMatchObject({
      runId: null,
      reason: `start refused: ${refusals[0].reasons.map((x) => x.message).join('; ')}`,
      detail: { run_id: null, command: 'start', codes: ['tripped', 'link_unknown', 'no_episode'] },
    });

    // The trip's stop and damp went out at once (once each); the start never did.
    expect(s.robot.commands.map((c) => [c.command, c.outcome ?? null])).toEqual([
      ['prepare', null],
      ['stop', null],
      ['damp', null],
    ]);
    expect(realEpisodes(s)).toEqual([]);
    expect(r.stoppedEarly).toBe(
      `start refused by the safety gate: ${refusals[0].reasons.map((x) => x.message).join('; ')}`,
    );
    expect(r.stoppedEarly).toMatch(/^start refused by the safety gate: tripped /);
    expect(lastPhase(s)).toMatchObject({ phase: 'stopped', message: r.stoppedEarly });
    expect(s.interlock.calls).toEqual(['arm', 'disarm']);
    expect(s.robot.released).toEqual([runId]);
    expect(s.resets).toBe(0);

    // The next session of the pair: no episode was stored, but the trip sent damp (the robot may
    // be down), so it starts with a human reset before anything moves.
    s.robot.setPresence('present');
    s.robot.script.afterPrepareAck = undefined;
    s.robot.script.onAcquire = () => {
      s.interlock.status('ARMED');
      s.clock.freeze();
    };
    s.robot.script.onRelease = () => s.clock.thaw();
    const r2 = await runSession(s, { trials: 1 });
    expect(s.resets).toBe(1);
    expect(traceOf(s, r2, 'human_reset')).toHaveLength(1);
    expect(r2.stoppedEarly).toBeNull();
    expect(r2.real.map((t) => t.outcome)).toEqual(['completed']);
  });

  it('(b) the robot refuses or fails the prepare: a problem each time, two retries, then the session stops', async () => {
    const refused = 'the robot is not in its start pose';
    const s = await rig(({ robot }) => {
      robot.script.prepare = (_runId, attempt) =>
        attempt === 1
          ? { type: 'fail', reason: 'controller fault while preparing' }
          : { type: 'refuse', reason: refused };
    });
    const r = await runSession(s);
    const runIds = s.robot.acquired;
    expect(runIds).toHaveLength(3); // the first attempt and MAX_INFRA_RETRIES = 2 retries
    expect(new Set(runIds).size).toBe(3); // each retry is a new run id…
    expect(s.confirmations).toBe(3); // …that the operator confirms again

    const refusedWhy = `the robot did not run the clip: prepare refused by scripted G1: ${refused}`;
    const problems = traceOf(s, r, 'problem');
    expect(problems.map((p) => [p.reason, p.detail.run_id, p.detail.trial_index])).toEqual([
      [`trial 1 did not start: ${refusedWhy}`, runIds[0], 0],
      ['trial 1 did not start: controller fault while preparing', runIds[1], 0],
      [`trial 1 did not start: ${refusedWhy}`, runIds[2], 0],
    ]);
    expect(r.stoppedEarly).toBe(`trial 1 did not start 3 times: ${refusedWhy}`);
    expect(lastPhase(s)).toMatchObject({ phase: 'stopped', message: r.stoppedEarly });

    expect(s.robot.commands).toEqual(runIds.map((runId) => ({ command: 'prepare', runId })));
    expect(realEpisodes(s)).toEqual([]);
    expect(r.real).toEqual([]);
    // Not the gate's doing: no refusal, no trip.
    expect(ofType(s, 'refusal')).toEqual([]);
    expect(ofType(s, 'trip')).toEqual([]);
    expect(traceOf(s, r, 'refusal')).toEqual([]);
    expect(s.interlock.calls).toEqual(['arm', 'disarm', 'arm', 'disarm', 'arm', 'disarm']);
    expect(s.robot.released).toEqual(runIds);
  });

  it('the operator does not confirm: refused, nothing sent (no trip, no damp), session stopped', async () => {
    const s = await rig();
    const r = await runSession(s, { confirm: false });
    expect(s.confirmations).toBe(1);
    const refusals = ofType(s, 'refusal');
    expect(refusals).toHaveLength(1);
    expect(refusals[0].reasons).toMatchObject([
      { code: 'no_confirmation', condition: 'confirmation', message: 'the operator did not confirm the trial' },
    ]);
    expect(traceOf(s, r, 'refusal')).toMatchObject([
      {
        reason: 'not confirmed by the operator',
        detail: { run_id: refusals[0].runId, reasons: ['the operator did not confirm the trial'] },
      },
    ]);
    expect(r.stoppedEarly).toBe('the operator did not confirm the trial');
    expect(s.robot.commands).toEqual([]);
    expect(s.robot.acquired).toEqual([]);
    expect(ofType(s, 'trip')).toEqual([]);
    expect(traceOf(s, r, 'stop_requested')).toEqual([]);
    expect(realEpisodes(s)).toEqual([]);
    expect(s.interlock.calls).toEqual([]);
  });

  it('(c) the interlock does not arm: refused before the robot is leased, nothing sent, session stopped', async () => {
    const detail = 'the box reports ESTOP: release the e-stop first';
    const s = await rig(({ interlock }) => {
      interlock.armAnswer = () => ({ ok: false, reason: 'not_safe', detail });
    });
    const r = await runSession(s);

    const refusals = ofType(s, 'refusal');
    expect(refusals).toHaveLength(1);
    expect(refusals[0].runId).toMatch(/^real/);
    expect(refusals[0].reasons).toMatchObject([
      {
        code: 'interlock_not_armed',
        condition: 'interlock',
        message: `the interlock did not arm (not_safe): ${detail}`,
      },
    ]);
    const traced = traceOf(s, r, 'refusal');
    expect(traced).toHaveLength(1);
    expect(traced[0]).toMatchObject({
      reason: 'interlock not armed',
      detail: {
        run_id: refusals[0].runId,
        trial_index: 0,
        reasons: [`the interlock did not arm (not_safe): ${detail}`],
      },
    });
    expect(r.stoppedEarly).toBe(`the interlock did not arm: ${detail}`);
    expect(lastPhase(s)).toMatchObject({ phase: 'stopped', message: r.stoppedEarly });

    expect(s.robot.commands).toEqual([]);
    expect(s.robot.acquired).toEqual([]);
    expect(realEpisodes(s)).toEqual([]);
    expect(ofType(s, 'trip')).toEqual([]);
    expect(traceOf(s, r, 'stop_requested')).toEqual([]);
    expect(s.interlock.calls).toEqual(['arm']);
  });

  it('(c) the gate refuses prepare (robot link stale): nothing sent, lease released, interlock disarmed', async () => {
    const s = await rig(({ robot, interlock, clock }) => {
      robot.script.onAcquire = () => {
        interlock.status('ARMED');
        clock.advance(70);
        interlock.status('ARMED');
      };
    });
    const r = await runSession(s);
    const runId = s.robot.acquired[0];
    expect(s.robot.acquired).toEqual([runId]);

    const refusals = ofType(s, 'refusal');
    expect(refusals).toHaveLength(1);
    expect(refusals[0].runId).toBe(runId);
    expect(refusals[0].reasons.map((x) => x.code)).toEqual(['link_stale']);
    const traced = traceOf(s, r, 'refusal');
    expect(traced).toHaveLength(1);
    expect(traced[0]).toMatchObject({
      runId: null,
      reason: `prepare refused: ${refusals[0].reasons[0].message}`,
      detail: { run_id: runId, command: 'prepare', codes: ['link_stale'] },
    });
    expect(r.stoppedEarly).toBe(`prepare refused by the safety gate: ${refusals[0].reasons[0].message}`);
    expect(lastPhase(s)).toMatchObject({ phase: 'stopped', message: r.stoppedEarly });

    expect(s.robot.commands).toEqual([]);
    expect(realEpisodes(s)).toEqual([]);
    expect(ofType(s, 'trip')).toEqual([]);
    expect(traceOf(s, r, 'stop_requested')).toEqual([]);
    expect(s.interlock.calls).toEqual(['arm', 'disarm']);
    expect(s.robot.released).toEqual([runId]);
  });
});
