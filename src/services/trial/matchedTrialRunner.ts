import { randomBytes } from 'node:crypto';
import type { BackendCapabilities, BackendEvent, BackendLease, EpisodeEnd } from '../../domain/backend/backend';
import { measuredVsClipStart, withClip, withSettledState } from '../../domain/calibration/residuals';
import { allReadingsUnavailable, MB_METRICS_1, type EpisodeMetrics } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import { resampleClip } from '../../domain/motion/resample';
import { makeRunId } from '../../domain/trace/ids';
import type { CalibrationRecord, EpisodeRecord, ParentTraceRecord } from '../../domain/trace/records';
import {
  calibrationCheckProblem,
  calibrationDifference,
  poseDifference,
  DEFAULT_TRIALS,
  initialTrialSession,
  isRequestEffect,
  reduceTrialSession,
  type RequestEffect,
  type RunResult,
  type StoredEpisode,
  type TrialSessionEffect,
  type TrialSessionEvent,
  type TrialSessionResult,
  type TrialSessionState,
} from '../../domain/trial';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import { bindingName } from '../../domain/wbc/bindingName';
import { parentTraceInputs } from '../trace/parentInputs';
import type { EpisodeRecorder } from '../trace/episodeRecorder';
import { referenceFramesOf } from '../episode/episodeWriter';
import { listAdmittedPairs, resolvePair, type AdmittedPair } from './admittedPairs';
import { GateDriver } from './gateDriver';
import { LiveTrial } from './liveTrial';
import { clipForPair } from './pairClip';
import { captureRobotCalibration } from './robotCalibration';
import { initialStateOf, runSimBranch, settledState } from './simBranch';
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
// Each step of the reducer has at most one request effect (its answer is the next event); the
// others are done at once, in order. Trips (from the gate, any time) and the operator's stop (the
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

/** The running real trial's recording, as the frame listener and the end of the trial see it. */
interface TrialIo {
  runId: string;
  recording: { rec: EpisodeRecorder; live: LiveTrial } | null;
  /** A frame or event write of the open recording failed (the session re-throws it). */
  recordError: unknown;
  failureRecorded: boolean;
  /** How the robot's run ended (or the infrastructure error its rejection stands for). */
  end: EpisodeEnd | null;
}

const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function storedEpisode(e: EpisodeRecord): StoredEpisode {
  return {
    runId: e.runId,
    trialIndex: e.rolloutIndex ?? -1,
    outcome: e.outcome,
    reason: e.reason ?? '',
    frames: e.frameCount,
  };
}

/** How long the reset's pose check waits for a lowstate after the operator's answer, ms. */
const NEXT_POSE_WAIT_MS = 500;

class TrialSessionDriver {
  private state: TrialSessionState;
  private readonly log: (line: string) => void;
  private gate: GateDriver | null = null;
  private binding: WbcBinding | null = null;
  private clip: MotionClip | null = null;
  /** The pair's calibration: bound to the clip (before it is stored), then the stored one. */
  private pairCal: CalibrationRecord | null = null;
  /** The last fresh capture of a trial, until the trial opens. */
  private fresh: { runId: string; record: CalibrationRecord; capturedAtMs: number } | null = null;
  private lease: { runId: string; lease: BackendLease; caps: BackendCapabilities } | null = null;
  private io: TrialIo | null = null;
  /** Metrics of the pair's episodes by run id (this session's and the stored ones). */
  private readonly metrics = new Map<string, EpisodeMetrics | null>();
  private startAnswer: true | string | null = null;
  private transmitAnswer: true | string | null = null;
  private result: TrialSessionResult | null = null;
  /** The robot's newest measured pose (copied from the link's stream), for the reset's pose check. */
  private readonly latestPose = { jointPosRad: new Float64Array(29), imuQuatWxyz: new Float64Array(4), have: false };

  constructor(
    private readonly req: MatchedPairRequest,
    private readonly pair: AdmittedPair,
    private readonly qual: ParentTraceRecord,
    initial: TrialSessionState,
  ) {
    this.state = initial;
    this.log = req.log ?? (() => {});
  }

  /**
   * Copies the robot's newest measured pose into latestPose until the returned unsubscribe: only
   * around a reset prompt and a start-pose capture, after the gate driver's own watcher (the
   * fan-out awaits watchers in order; one ahead of the gate would delay its lowstate).
   */
  private watchPose(onFrame?: () => void): () => void {
    this.latestPose.have = false;
    return this.req.link.subscribe(async (events) => {
      for (const ev of events) {
        const f = ev.type === 'frames' ? ev.frames.at(-1) : undefined;
        if (!f) continue;
        this.latestPose.jointPosRad.set(f.jointPosRad.subarray(0, 29));
        this.latestPose.imuQuatWxyz.set(f.imu.quatWxyz);
        this.latestPose.have = true;
        onFrame?.();
      }
    });
  }

  /** Waits for the next lowstate (into latestPose); false when none comes within `timeoutMs`. */
  private nextPose(timeoutMs = NEXT_POSE_WAIT_MS): Promise<boolean> {
    return new Promise((resolve) => {
      const unwatch = this.watchPose(() => done(true));
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        unwatch();
        resolve(ok);
      };
    });
  }

  async run(): Promise<MatchedPairResult> {
    const { signal } = this.req;
    const onAbort = (): void =>
      this.dispatchSync({ type: 'operator_abort', intervention: signal?.reason === 'intervention' });
    try {
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      let next: TrialSessionEvent | null = this.pairResolved();
      while (next !== null) next = await this.dispatch(next);
      if (this.state.phase !== 'done' || this.result === null)
        throw new Error(`the trial session stopped in phase ${this.state.phase} without a result`);
      return this.resultOf(this.result);
    } catch (err) {
      // An error while a trial holds the robot (a recording that failed): the lease is released
      // and the interlock disarmed before the error leaves the session.
      if (this.lease) await this.releaseRobot();
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.gate?.close();
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

  private progress(e: TrialProgressEvent): void {
    try {
      this.req.onProgress?.(e);
    } catch (err) {
      this.log(`progress listener failed: ${errorMessage(err)}`);
    }
  }

  private need<T>(v: T | null, what: string): T {
    if (v === null) throw new Error(`trial session: ${what} is not there (the reducer asked out of order)`);
    return v;
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
      case 'open_gate': {
        const gate = new GateDriver({
          link: this.req.link,
          interlock: this.req.interlock,
          store,
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
        this.gate = gate;
        gate.feed({ type: 'admission', atMs: gate.now(), ...fx.admission });
        return;
      }
      case 'confirm_to_gate': {
        const gate = this.need(this.gate, 'the gate');
        gate.feed({ type: 'operator_confirm', atMs: gate.now(), runId: fx.runId });
        return;
      }
      case 'end_episode': {
        const gate = this.need(this.gate, 'the gate');
        gate.feed({ type: 'episode_end', atMs: gate.now(), runId: fx.runId, outcome: fx.outcome, reason: fx.reason });
        return;
      }
      case 'operator_stop': {
        const gate = this.need(this.gate, 'the gate');
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
        const rec = this.need(this.need(this.io, 'the trial').recording, 'the recording').rec;
        return rec.event('stop_requested', { reason: fx.reason, detail: fx.detail }).then(() => undefined);
      }
      case 'release_robot':
        return this.releaseRobot();
      case 'fail': {
        const err = this.io?.recordError;
        throw err instanceof Error ? err : new Error(fx.message);
      }
      case 'done':
        this.result = fx.result;
        return;
    }
  }

  /** The trial's end: the lease (if one is held) released, the interlock disarmed if it is armed. */
  private async releaseRobot(): Promise<void> {
    const held = this.lease;
    this.lease = null;
    if (held) await held.lease.release().catch(() => undefined);
    if (this.req.interlock.link.state === 'armed') await this.req.interlock.link.disarm().catch(() => undefined);
  }

  // ---- requests (each resolves with the session's next event)

  private async request(fx: RequestEffect): Promise<TrialSessionEvent> {
    const { store, link, interlock, sim, profile, operator } = this.req;
    switch (fx.type) {
      case 'load_clip': {
        const clip = clipForPair(store, this.pair, this.qual, this.req.workload);
        this.clip = clip;
        return {
          type: 'clip_loaded',
          clipName: clip.name,
          executionDomain: link.backend.capabilities.executionDomain,
          backendName: link.backend.name,
        };
      }
      case 'load_calibration': {
        const stored = store.getCalibration(fx.calibrationId);
        if (!stored) return { type: 'pair_calibration', result: { kind: 'not_stored' } };
        return this.pairCalibrationReady(stored.record);
      }
      case 'capture_calibration': {
        const c = await captureRobotCalibration({
          link,
          profile,
          clip: this.need(this.clip, 'the clip'),
          onProgress: (p) => this.progress({ type: 'stillness', progress: p }),
          ...(this.req.signal ? { signal: this.req.signal } : {}),
        });
        if (!c.ok)
          return {
            type: 'pair_calibration',
            result: { kind: 'not_captured', message: c.message, reasons: c.reasons.map((r) => r.message) },
          };
        return this.pairCalibrationReady(c.record);
      }
      case 'store_calibration': {
        let cal = this.need(this.pairCal, 'the pair calibration');
        if (!cal.residuals.settledVsMeasured)
          cal = withSettledState(cal, await settledState(sim, cal, this.need(this.binding, 'the binding'), profile));
        this.pairCal = cal;
        return { type: 'pair_calibration_stored', calibrationId: store.putCalibration(cal).id };
      }
      case 'open_matched_pair':
        return this.openMatchedPair(fx.calibrationId, fx.resumed);
      case 'run_sim_branch': {
        const r = await runSimBranch({
          store,
          sim,
          profile,
          parentTraceId: this.matchedId(),
          clip: this.need(this.clip, 'the clip'),
          binding: this.need(this.binding, 'the binding'),
          calibrationId: this.calibrationId(),
          initial: initialStateOf(this.need(this.pairCal, 'the pair calibration')),
          seed: 0,
          snapshotHash: this.pair.snapshotHash,
        });
        this.metrics.set(r.episode.runId, r.metrics);
        return {
          type: 'sim_ended',
          runId: r.episode.runId,
          outcome: r.end.outcome,
          reason: r.end.reason,
          frames: r.end.frames,
        };
      }
      case 'prompt_reset': {
        const note = await operator.confirmReset({
          trialIndex: fx.trialIndex,
          afterOutcome: fx.afterOutcome,
          tripped: fx.tripped,
        });
        // The robot's pose once the operator says it is back (the next lowstate), against the
        // pair's start pose: the reducer refuses the reset when it is not there.
        const pairCal = this.pairCal;
        const pose =
          note !== null && pairCal && (await this.nextPose()) ? poseDifference(this.latestPose, pairCal) : null;
        return { type: 'reset_answered', note, pose };
      }
      case 'reset_gate': {
        const gate = this.need(this.gate, 'the gate');
        const r = gate.feed({ type: 'operator_reset', atMs: gate.now(), note: fx.note });
        if (r?.reset && !r.reset.accepted) return { type: 'gate_reset', accepted: false, reasons: r.reset.reasons };
        return { type: 'gate_reset', accepted: true };
      }
      case 'check_start_pose': {
        const unwatch = this.watchPose();
        const fresh = await captureRobotCalibration({
          link,
          profile,
          clip: this.need(this.clip, 'the clip'),
          onProgress: (p) => this.progress({ type: 'stillness', progress: p }),
          ...(this.req.signal ? { signal: this.req.signal } : {}),
        }).finally(unwatch);
        const runId = makeRunId('real_robot', Date.now(), randomBytes(4).toString('hex'));
        if (!fresh.ok) {
          // A robot that cannot be held still is usually not at the start pose at all (lying,
          // sagging): say so, with the joints out, before the stillness figures.
          const pairCal = this.need(this.pairCal, 'the pair calibration');
          const offPose = this.latestPose.have
            ? calibrationCheckProblem(poseDifference(this.latestPose, pairCal))
            : null;
          return {
            type: 'start_pose_checked',
            runId,
            ok: false,
            message: offPose ?? `did not hold still at the start pose: ${fresh.message}`,
            reasons: [...(offPose ? [offPose] : []), ...fresh.reasons.map((r) => r.message)],
          };
        }
        const capturedAtMs = this.need(this.gate, 'the gate').now();
        this.fresh = { runId, record: fresh.record, capturedAtMs };
        const difference = calibrationDifference(fresh.record, this.need(this.pairCal, 'the pair calibration'));
        return { type: 'start_pose_checked', runId, ok: true, difference };
      }
      case 'open_trial': {
        const gate = this.need(this.gate, 'the gate');
        const fresh = this.need(this.fresh, 'the fresh calibration');
        this.fresh = null;
        const freshCalibrationId = store.putCalibration(fresh.record).id;
        gate.feed({
          type: 'episode_start',
          atMs: gate.now(),
          runId: fx.runId,
          pairId: this.pair.pairId,
          contractId: this.qual.identity.contractId,
          bindingKey: bindingKey(this.need(this.binding, 'the binding')),
        });
        gate.feed({
          type: 'calibration',
          atMs: gate.now(),
          runId: fx.runId,
          capturedAtMs: fresh.capturedAtMs,
          calibrationId: freshCalibrationId,
        });
        return { type: 'trial_opened', runId: fx.runId, freshCalibrationId };
      }
      case 'ask_confirmation': {
        const confirmed = await operator.confirmTrial({
          pairId: this.pair.pairId,
          runId: fx.runId,
          trialIndex: fx.trialIndex,
          trials: fx.trials,
          clipName: this.need(this.clip, 'the clip').name,
          binding: bindingKey(this.need(this.binding, 'the binding')),
          bindingName: bindingName(this.need(this.binding, 'the binding')),
          calibrationCheck: fx.calibrationCheck,
        });
        return { type: 'confirmation', runId: fx.runId, confirmed };
      }
      case 'arm_interlock': {
        if (!interlock.link.isArmedAndFresh()) {
          const armed = await interlock.link.arm();
          if (!armed.ok)
            return { type: 'interlock_armed', runId: fx.runId, ok: false, reason: armed.reason, detail: armed.detail };
          // Let the box's ARMED status reach the gate (statuses answer heartbeats every 20 ms).
          const gate = this.need(this.gate, 'the gate');
          for (let i = 0; i < 20 && gate.gate.preview(gate.now()).some((r) => r.condition === 'interlock'); i++)
            await new Promise((r) => setTimeout(r, 10));
        }
        return { type: 'interlock_armed', runId: fx.runId, ok: true };
      }
      case 'prepare': {
        const lease = await link.backend.acquire(fx.runId);
        // Read on each trial, with the robot leased (so present): what this connection advertised
        // (motion capture or not, the state rate) — a reconnect may have changed it.
        this.lease = { runId: fx.runId, lease, caps: link.backend.capabilities };
        const d = this.need(this.gate, 'the gate').requestMotion('prepare');
        return { type: 'prepare_decided', runId: fx.runId, allowed: d.allowed, reasons: d.allowed ? [] : d.reasons };
      }
      case 'run_trial':
        return this.runTrial(fx.runId, fx.trialIndex);
      case 'open_recording':
        try {
          await this.openRecording(fx);
          return { type: 'recording_opened', runId: fx.runId };
        } catch (err) {
          return { type: 'recording_failed', runId: fx.runId, message: errorMessage(err) };
        }
      case 'finish_episode':
        return this.finishEpisode(fx);
    }
  }

  private matchedId(): string {
    const s = this.state;
    if (s.phase === 'simulating' || s.phase === 'trials') return s.pair.parentTraceId;
    throw new Error(`trial session: no matched pair in phase ${s.phase}`);
  }

  private calibrationId(): string {
    const s = this.state;
    if (s.phase === 'simulating' || s.phase === 'trials') return s.pair.calibrationId;
    throw new Error(`trial session: no pair calibration in phase ${s.phase}`);
  }

  private pairResolved(): TrialSessionEvent {
    const { pair, qual } = this;
    const bindingRec = this.req.store.getBinding(qual.identity.bindingId, qual.identity.bindingVersion);
    this.binding = bindingRec?.binding ?? null;
    return {
      type: 'pair_resolved',
      pairId: pair.pairId,
      qualificationTraceId: qual.id,
      admitted: pair.admitted,
      reasons: pair.reasons,
      clipName: pair.clipName,
      pairBindingKey: pair.bindingKey,
      contractId: qual.identity.contractId,
      currentContractId: MB_METRICS_1.id,
      bindingKey: this.binding ? bindingKey(this.binding) : null,
      requestedCalibrationId: this.req.calibrationId || null,
      matched: pair.matched
        ? { parentTraceId: pair.matched.parentTraceId, calibrationId: pair.matched.calibrationId }
        : null,
    };
  }

  /** The pair's calibration bound to the clip (simulator initial state, residual (b)); the reducer checks the start pose. */
  private pairCalibrationReady(record: CalibrationRecord): TrialSessionEvent {
    const clip = this.need(this.clip, 'the clip');
    const cal =
      record.clipId !== clip.id || !record.simulatorInitialState ? withClip(record, clip, this.req.profile) : record;
    this.pairCal = cal;
    return { type: 'pair_calibration', result: { kind: 'ready', startResiduals: measuredVsClipStart(cal, clip) } };
  }

  private openMatchedPair(calibrationId: string, resumed: boolean): TrialSessionEvent {
    const { store, profile } = this.req;
    if (resumed) {
      const stored = store.getCalibration(calibrationId);
      if (!stored) throw new Error(`calibration ${calibrationId} of the resumed matched pair is not stored`);
      this.pairCal = stored.record;
    }
    const pairCal = this.need(this.pairCal, 'the pair calibration');
    const matched = store.ensureParentTrace(
      parentTraceInputs({
        binding: this.need(this.binding, 'the binding'),
        clip: this.need(this.clip, 'the clip'),
        profile,
        contract: MB_METRICS_1,
        calibrationId,
      }),
    );
    this.need(this.gate, 'the gate').parentTraceId = matched.id;
    if (!resumed)
      store.recordEvent({
        kind: 'calibration',
        parentTraceId: matched.id,
        reason: `pair calibration ${calibrationId}`,
        detail: { calibration_id: calibrationId, residuals: pairCal.residuals },
      });
    const finished = (domain: 'simulation' | 'real_robot'): StoredEpisode[] =>
      store.findEpisodes({ parentTraceId: matched.id, executionDomain: domain, status: 'finished' }).map((e) => {
        this.metrics.set(e.runId, store.getMetrics(e.runId, MB_METRICS_1.id)?.result ?? null);
        return storedEpisode(e);
      });
    return {
      type: 'matched_pair_opened',
      parentTraceId: matched.id,
      simEpisodes: finished('simulation'),
      realEpisodes: finished('real_robot'),
      anyRealEpisode: store.findEpisodes({ parentTraceId: matched.id, executionDomain: 'real_robot' }).length > 0,
      lastStopEventId: store.listEvents({ parentTraceId: matched.id, kind: 'stop_requested' }).at(-1)?.id ?? null,
      lastResetEventId: store.listEvents({ parentTraceId: matched.id, kind: 'human_reset' }).at(-1)?.id ?? null,
    };
  }

  // ---- the real trial: the robot's run, its start checks, its recording

  private async runTrial(runId: string, index: number): Promise<TrialSessionEvent> {
    const { link } = this.req;
    const held = this.need(this.lease, 'the lease');
    const io: TrialIo = { runId, recording: null, recordError: null, failureRecorded: false, end: null };
    this.io = io;
    const unsubscribe = link.subscribe(async (events: BackendEvent[]) => {
      const r = io.recording;
      if (!r) return;
      const accepted = r.live.accept(events);
      if (accepted.length === 0 || io.recordError !== null) return;
      try {
        await r.rec.frames(accepted);
        const f = r.live.failure();
        if (f && !io.failureRecorded) {
          io.failureRecorded = true;
          await r.rec.event('hard_failure', { tS: f.timeS, reason: f.text, detail: { ...f.failure } });
        }
      } catch (err) {
        io.recordError = err;
      }
    });
    let result: RunResult;
    try {
      // The gate is asked twice: at the robot's start check (beforeStart: nothing is opened for a
      // refused start) and once more, synchronously, right before the start is written
      // (mayTransmit): the awaits in between — the recording's SQLite row and MCAP file — leave
      // time for a trip, and a start after a trip must be impossible.
      const end = await held.lease.run({
        clip: this.need(this.clip, 'the clip'),
        binding: this.need(this.binding, 'the binding'),
        seed: index,
        beforeStart: () => this.beforeStart(runId),
        mayTransmit: () => this.mayTransmit(runId),
      });
      io.end = end;
      result = { kind: 'ended', outcome: end.outcome, reason: end.reason };
    } catch (err) {
      const message = errorMessage(err);
      io.end = {
        runId,
        outcome: 'infrastructure_error',
        reason: `the robot did not run the clip: ${message}`,
        frames: 0,
        simSeconds: 0,
        wallSeconds: 0,
      };
      result = { kind: 'threw', message };
    }
    const opened = io.recording;
    // Frames already queued for the listener still arrive after the end: let them land.
    if (opened) await opened.live.drained(200);
    unsubscribe();
    return {
      type: 'run_ended',
      runId,
      result,
      hardFailure: opened?.live.failure()?.text ?? null,
      recordError: io.recordError !== null ? errorMessage(io.recordError) : null,
    };
  }

  /** RunRequest.beforeStart: the gate answers `start`; the reducer opens the recording on a yes. */
  private async beforeStart(runId: string): Promise<true | string> {
    const d = this.need(this.gate, 'the gate').requestMotion('start');
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
  private mayTransmit(runId: string): true | string {
    const d = this.need(this.gate, 'the gate').transmit('start', runId);
    this.transmitAnswer = null;
    this.dispatchSync({ type: 'transmit_decided', runId, allowed: d.allowed, reasons: d.allowed ? [] : d.reasons });
    const answer = this.transmitAnswer;
    if (d.allowed && answer === true) return true;
    if (typeof answer === 'string') return answer;
    return d.allowed ? 'the trial session did not grant start' : d.reasons.map((r) => r.message).join('; ');
  }

  private async openRecording(fx: Extract<RequestEffect, { type: 'open_recording' }>): Promise<void> {
    const { store, link, profile } = this.req;
    const io = this.need(this.io, 'the trial');
    const caps = this.need(this.lease, 'the lease').caps;
    const clip = this.need(this.clip, 'the clip');
    const binding = this.need(this.binding, 'the binding');
    const index = fx.trialIndex;
    const ref50 = resampleClip(clip, MB_METRICS_1.rateHz);
    const rec = await store.beginEpisode({
      parentTraceId: this.matchedId(),
      executionDomain: 'real_robot',
      backendId: link.backend.id,
      seed: index,
      runId: fx.runId,
      robotUnit: link.robotUnit,
      rolloutIndex: index,
      snapshotHash: this.pair.snapshotHash,
      robot: profile,
      reference: referenceFramesOf(ref50),
      fileMetadata: {
        clip_name: clip.name,
        binding_kind: binding.kind,
        binding_label: binding.label,
        calibration_id: fx.calibrationId,
        fresh_calibration_id: fx.freshCalibrationId,
        trial_index: index,
        state_rate_hz: caps.stateRateHz,
      },
      meta: {
        matchedPair: {
          calibrationId: fx.calibrationId,
          freshCalibrationId: fx.freshCalibrationId,
          calibrationCheck: fx.calibrationCheck,
          trialIndex: index,
          qualificationPair: this.pair.pairId,
        },
      },
    });
    const live = new LiveTrial({
      clip,
      profile,
      runId: fx.runId,
      hasGlobalRoot: caps.globalRootPosition,
      streamRateHz: caps.stateRateHz,
      backend: link.backend,
      onReading: (r) => this.progress({ type: 'live', runId: fx.runId, ...r }),
    });
    io.recording = { rec, live };
  }

  private async finishEpisode(fx: Extract<RequestEffect, { type: 'finish_episode' }>): Promise<TrialSessionEvent> {
    const io = this.need(this.io, 'the trial');
    const { rec, live } = this.need(io.recording, 'the recording');
    const end = this.need(io.end, 'the end of the run');
    const caps = this.need(this.lease, 'the lease').caps;
    const metrics: EpisodeMetrics =
      live.frames >= 2
        ? live.result()
        : allReadingsUnavailable(
            MB_METRICS_1.id,
            live.frames,
            `the trial recorded ${live.frames} frame(s): ${fx.reason}`,
          );
    const episode = await rec.finish(
      { ...end, outcome: fx.outcome, reason: fx.reason, frames: live.frames, simSeconds: live.lastTimeS },
      metrics,
      {
        result: {
          state_rate_hz: caps.stateRateHz,
          refused_frames: live.metrics.reading.refusedFrames + live.problems.length,
          dropped_by_link: live.linkDrops(),
        },
      },
    );
    this.metrics.set(fx.runId, metrics);
    return { type: 'episode_finished', runId: fx.runId, frames: episode.frameCount };
  }

  // ---- the result

  private resultOf(r: TrialSessionResult): MatchedPairResult {
    const clip = this.need(this.clip, 'the clip');
    const binding = this.need(this.binding, 'the binding');
    return {
      pairId: r.pairId,
      parentTraceId: r.parentTraceId,
      calibrationId: r.calibrationId,
      clip: { id: clip.id, name: clip.name },
      binding: { id: binding.id, version: binding.version, label: binding.label, name: bindingName(binding) },
      sim: {
        runId: r.sim.runId,
        outcome: r.sim.outcome,
        metrics: this.metrics.get(r.sim.runId) ?? null,
        resumed: r.sim.resumed,
      },
      real: r.real.map((t) => ({
        runId: t.runId,
        trialIndex: t.trialIndex,
        outcome: t.outcome,
        reason: t.reason,
        frames: t.frames,
        metrics: this.metrics.get(t.runId) ?? null,
        resumed: t.resumed,
      })),
      remaining: r.remaining,
      stoppedEarly: r.stoppedEarly,
    };
  }
}
