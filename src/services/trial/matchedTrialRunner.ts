import type { ParentTraceRecord } from '../../domain/trace/records';
import {
  DEFAULT_TRIALS,
  initialTrialSession,
  isRequestEffect,
  reduceTrialSession,
  type RequestEffect,
  type TrialSessionEffect,
  type TrialSessionEvent,
  type TrialSessionResult,
  type TrialSessionState,
} from '../../domain/trial';
import { bindingName } from '../../domain/wbc/bindingName';
import { listAdmittedPairs, resolvePair, type AdmittedPair } from './admittedPairs';
import { GateDriver } from './gateDriver';
import { PAIR_REQUESTS, pairResolvedEvent } from './pairRequests';
import { PoseWatch } from './poseWatch';
import { TRIAL_RUN_REQUESTS } from './realTrialRun';
import { TRIAL_START_REQUESTS } from './trialStartRequests';
import {
  errorMessage,
  SessionHoldings,
  type RequestHandler,
  type RequestHandlers,
  type TrialSessionContext,
} from './trialSessionContext';
import type { MatchedPairRequest, MatchedPairResult, TrialProgressEvent } from './trialTypes';

// The matched sim/real pair (DESIGN §3, §6) — the driver of the session reducer
// (src/domain/trial, `reduceTrialSession`; docs/TRIALS.md has the session step by step). The
// reducer decides everything: refusals, retries, resets, which trials count on resume, how a trip
// ends a trial, when the start may be written. This driver only feeds it events and executes its
// effects with the parts that touch the world: the campaign store, the safety gate's driver
// (GateDriver: the gate is asked before prepare, at the robot's start check and again,
// synchronously, right before the start is written), the robot link and its lease, the interlock,
// the stillness captures, the embedded simulator, the recorder and the live metrics (LiveTrial),
// and the operator's prompts.
//
// Each step of the reducer has at most one request effect (its answer is the next event), answered
// by one handler of REQUEST_HANDLERS: the pair's setup (pairRequests.ts), a trial up to the robot's
// run (trialStartRequests.ts), the run and its recording (realTrialRun.ts). The other effects are
// done here at once, in order. Trips (from the gate, any time) and the operator's stop (the
// AbortSignal) are dispatched as they happen; their effects are synchronous.

// The session's rules live in the domain; importers of this module keep finding them here.
export { CALIBRATION_CHECK, calibrationDifference, START_POSE_LIMITS, startPoseProblems } from '../../domain/trial';

export class TrialRefusedError extends Error {
  override readonly name = 'TrialRefusedError';
  constructor(
    message: string,
    readonly reasons: string[] = [],
  ) {
    super(message);
  }
}

export async function runMatchedPair(req: MatchedPairRequest): Promise<MatchedPairResult> {
  const initial = initialTrialSession(req.trials ?? DEFAULT_TRIALS); // RangeError for a bad count
  const pair = resolvePair(listAdmittedPairs(req.store, initial.trials), req.pairId);
  const qual = req.store.getParentTrace(pair.pairId);
  if (!qual) throw new Error(`the qualification parent trace ${pair.pairId} is not stored in the campaign`);
  return new TrialSessionDriver(req, pair, qual, initial).run();
}

/** Every request effect's handler, one each (the type checks that none is missing). */
const REQUEST_HANDLERS: RequestHandlers<RequestEffect['type']> = {
  ...PAIR_REQUESTS,
  ...TRIAL_START_REQUESTS,
  ...TRIAL_RUN_REQUESTS,
};

class TrialSessionDriver implements TrialSessionContext {
  private state: TrialSessionState;
  private readonly log: (line: string) => void;
  readonly held = new SessionHoldings();
  readonly pose: PoseWatch;
  private startAnswer: true | string | null = null;
  private transmitAnswer: true | string | null = null;
  private result: TrialSessionResult | null = null;

  constructor(
    readonly req: MatchedPairRequest,
    readonly pair: AdmittedPair,
    readonly qual: ParentTraceRecord,
    initial: TrialSessionState,
  ) {
    this.state = initial;
    this.log = req.log ?? (() => {});
    this.pose = new PoseWatch(req.link);
  }

  async run(): Promise<MatchedPairResult> {
    const { signal } = this.req;
    const onAbort = (): void =>
      this.dispatchSync({ type: 'operator_abort', intervention: signal?.reason === 'intervention' });
    try {
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      let next: TrialSessionEvent | null = pairResolvedEvent(this);
      while (next !== null) next = await this.dispatch(next);
      if (this.state.phase !== 'done' || this.result === null)
        throw new Error(`the trial session stopped in phase ${this.state.phase} without a result`);
      return this.resultOf(this.result);
    } catch (err) {
      // An error while a trial holds the robot (a recording that failed): the lease is released
      // and the interlock disarmed before the error leaves the session.
      if (this.held.lease) await this.releaseRobot();
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.held.gate?.close();
    }
  }

  // ---- the reducer

  /** Reduces one event and executes its effects in order; resolves with the answer to its request, if any. */
  private async dispatch(event: TrialSessionEvent): Promise<TrialSessionEvent | null> {
    const { state, effects } = reduceTrialSession(this.state, event);
    this.state = state;
    let next: TrialSessionEvent | null = null;
    for (const fx of effects) {
      const r = isRequestEffect(fx) ? await this.request(fx) : this.execute(fx);
      const answer = r instanceof Promise ? await r : r;
      if (answer) next = answer;
    }
    return next;
  }

  /** An event that happens meanwhile (a trip, the operator's stop, the gate's last check): handled in this turn. */
  private dispatchSync(event: TrialSessionEvent): void {
    const { state, effects } = reduceTrialSession(this.state, event);
    this.state = state;
    for (const fx of effects) {
      if (isRequestEffect(fx)) throw new Error(`trial session: ${event.type} asked for ${fx.type}`);
      const r = this.execute(fx);
      if (r instanceof Promise) throw new Error(`trial session: ${fx.type} cannot follow ${event.type} at once`);
    }
  }

  /** A request effect, answered by its handler; resolves with the session's next event. */
  private async request(fx: RequestEffect): Promise<TrialSessionEvent> {
    // The table pairs each type with its handler; TypeScript cannot correlate the two unions.
    const handler = REQUEST_HANDLERS[fx.type] as RequestHandler<RequestEffect['type']>;
    return handler(this, fx);
  }

  progress(e: TrialProgressEvent): void {
    try {
      this.req.onProgress?.(e);
    } catch (err) {
      this.log(`progress listener failed: ${errorMessage(err)}`);
    }
  }

  matchedId(): string {
    const s = this.state;
    if (s.phase === 'simulating' || s.phase === 'trials') return s.pair.parentTraceId;
    throw new Error(`trial session: no matched pair in phase ${s.phase}`);
  }

  calibrationId(): string {
    const s = this.state;
    if (s.phase === 'simulating' || s.phase === 'trials') return s.pair.calibrationId;
    throw new Error(`trial session: no pair calibration in phase ${s.phase}`);
  }

  // ---- effects done at once (the async ones: the episode's event, the release, the failure)

  private execute(fx: Exclude<TrialSessionEffect, RequestEffect>): void | Promise<void> {
    const { store } = this.req;
    switch (fx.type) {
      case 'progress':
        return this.progress(fx.event);
      case 'log':
        return this.log(fx.line);
      case 'record_event':
        store.recordEvent(fx.event);
        return;
      case 'refuse_session':
        throw new TrialRefusedError(fx.message, fx.reasons);
      case 'open_gate':
        return this.openGate(fx.admission);
      case 'confirm_to_gate': {
        const gate = this.held.need('gate');
        gate.feed({ type: 'operator_confirm', atMs: gate.now(), runId: fx.runId });
        return;
      }
      case 'end_episode': {
        const gate = this.held.need('gate');
        gate.feed({ type: 'episode_end', atMs: gate.now(), runId: fx.runId, outcome: fx.outcome, reason: fx.reason });
        return;
      }
      case 'operator_stop': {
        const gate = this.held.need('gate');
        gate.feed({ type: 'operator_stop', atMs: gate.now(), intervention: fx.intervention, reason: fx.reason });
        return;
      }
      case 'stop':
      case 'damp':
        // Written by the gate's driver in the same turn as the trip (nothing may be awaited
        // before a stop); it traces what became of each. Nothing more to send.
        return;
      case 'answer_start_check':
        this.startAnswer = fx.answer;
        return;
      case 'start':
        this.transmitAnswer = true;
        return;
      case 'withhold_start':
        this.transmitAnswer = fx.message;
        return;
      case 'record_stop_requested': {
        const { rec } = this.held.recording();
        return rec.event('stop_requested', { reason: fx.reason, detail: fx.detail }).then(() => undefined);
      }
      case 'release_robot':
        return this.releaseRobot();
      case 'fail': {
        const err = this.held.io?.recordError;
        throw err instanceof Error ? err : new Error(fx.message);
      }
      case 'done':
        this.result = fx.result;
        return;
    }
  }

  /** The session's gate: its trips come back as `trip` events, handled in the turn they happen. */
  private openGate(admission: Extract<TrialSessionEffect, { type: 'open_gate' }>['admission']): void {
    const gate = new GateDriver({
      link: this.req.link,
      interlock: this.req.interlock,
      store: this.req.store,
      parentTraceId: this.qual.id,
      log: this.log,
      onTrip: (trip) => {
        try {
          this.dispatchSync({ type: 'trip', trip });
        } catch (err) {
          this.log(`trial session: trip not handled: ${errorMessage(err)}`);
        }
      },
    });
    this.held.gate = gate;
    gate.feed({ type: 'admission', atMs: gate.now(), ...admission });
  }

  /** The trial's end: the lease (if one is held) released, the interlock disarmed if it is armed. */
  private async releaseRobot(): Promise<void> {
    const held = this.held.lease;
    this.held.lease = null;
    if (held) await held.lease.release().catch(() => undefined);
    if (this.req.interlock.link.state === 'armed') await this.req.interlock.link.disarm().catch(() => undefined);
  }

  // ---- the robot's start checks while a trial runs

  /** RunRequest.beforeStart: the gate answers `start`; the reducer opens the recording on a yes. */
  async beforeStart(runId: string): Promise<true | string> {
    const d = this.held.need('gate').requestMotion('start');
    this.startAnswer = null;
    let next = await this.dispatch({
      type: 'start_decided',
      runId,
      allowed: d.allowed,
      reasons: d.allowed ? [] : d.reasons,
    });
    while (next !== null) next = await this.dispatch(next);
    const answer = this.startAnswer;
    // The gate's no is final, whatever the session answered.
    if (!d.allowed) return typeof answer === 'string' ? answer : d.reasons.map((r) => r.message).join('; ');
    return answer ?? 'the trial session gave no answer to the start check';
  }

  /** RunRequest.mayTransmit: synchronous, right before the write; true only if the gate and the session both say so. */
  mayTransmit(runId: string): true | string {
    const d = this.held.need('gate').transmit('start', runId);
    this.transmitAnswer = null;
    this.dispatchSync({ type: 'transmit_decided', runId, allowed: d.allowed, reasons: d.allowed ? [] : d.reasons });
    const answer = this.transmitAnswer;
    if (d.allowed && answer === true) return true;
    if (typeof answer === 'string') return answer;
    return d.allowed ? 'the trial session did not grant start' : d.reasons.map((r) => r.message).join('; ');
  }

  // ---- the result

  private resultOf(r: TrialSessionResult): MatchedPairResult {
    const { held } = this;
    const clip = held.need('clip');
    const binding = held.need('binding');
    const { metrics } = held;
    return {
      pairId: r.pairId,
      parentTraceId: r.parentTraceId,
      calibrationId: r.calibrationId,
      clip: { id: clip.id, name: clip.name },
      binding: { id: binding.id, version: binding.version, label: binding.label, name: bindingName(binding) },
      sim: {
        runId: r.sim.runId,
        outcome: r.sim.outcome,
        metrics: metrics.get(r.sim.runId) ?? null,
        resumed: r.sim.resumed,
      },
      real: r.real.map((t) => ({
        runId: t.runId,
        trialIndex: t.trialIndex,
        outcome: t.outcome,
        reason: t.reason,
        frames: t.frames,
        metrics: metrics.get(t.runId) ?? null,
        resumed: t.resumed,
      })),
      remaining: r.remaining,
      stoppedEarly: r.stoppedEarly,
    };
  }
}
