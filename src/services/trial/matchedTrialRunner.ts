import { randomBytes } from 'node:crypto';
import type { BackendEvent, EpisodeEnd, EpisodeOutcome } from '../../domain/backend/backend';
import { quatToYawPitchRoll, wrapAngle } from '../../domain/calibration/attitude';
import { measuredVsClipStart, withClip, withSettledState, type StartResiduals } from '../../domain/calibration/residuals';
import { allReadingsUnavailable, MB_METRICS_1, type EpisodeMetrics } from '../../domain/metrics';
import { resampleClip } from '../../domain/motion/resample';
import { G1_JOINT_NAMES } from '../../domain/robot/g1Joints';
import { REFUSAL_CODES, type GateTrip, type Refusal, type RefusalCode } from '../../domain/safety/safetyTypes';
import { makeRunId } from '../../domain/trace/ids';
import type { CalibrationRecord } from '../../domain/trace/records';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import { parentTraceInputs } from '../trace/parentInputs';
import { clipForPair } from './pairClip';
import { countingEpisodes, listAdmittedPairs, resolvePair } from './admittedPairs';
import { GateDriver } from './gateDriver';
import { LiveTrial } from './liveTrial';
import type { EpisodeRecorder } from '../trace/episodeRecorder';
import { captureRobotCalibration } from './robotCalibration';
import { initialStateOf, runSimBranch, settledState } from './simBranch';
import type { MatchedPairRequest, MatchedPairResult, TrialProgressEvent } from './trialTypes';

// The matched sim/real pair (issue 6 item 6; DESIGN §3, §6): for an admitted qualification pair,
//   1. the pair's calibration — captured from the still robot (or given), bound to the clip
//      (simulator initial state, residual (b)) and settled in the simulator (residual (a)); its
//      id completes the matched parent trace's identity (binding × clip × calibration);
//   2. the simulation branch from that initial state (once; resumed sessions skip it);
//   3. the real-robot trials, each behind a human-gated reset (after the first), a fresh
//      stillness capture that must agree with the pair's calibration, the operator's confirmation,
//      an armed interlock, and the safety gate's permission for prepare and start; recorded at the
//      robot's rate with live mb-metrics/1 readings; any trip ends the trial with its outcome and
//      keeps every frame; only infrastructure errors are retried.
// Everything refused or reset is a trace event with its reason. A later call resumes: finished
// trials (any outcome but infrastructure_error) count, the rest are run.

/** A fresh capture must agree with the pair's calibration this closely (rad). */
export const CALIBRATION_CHECK = { maxJointDiffRad: 0.05, maxAttitudeDiffRad: 0.035 } as const;
const MAX_INFRA_RETRIES = 2;
const MAX_RESET_ATTEMPTS = 3;
const TRIP_OUTCOMES: readonly EpisodeOutcome[] = ['estop', 'link_lost', 'aborted_by_operator', 'intervention'];

export class TrialRefusedError extends Error {
  override readonly name = 'TrialRefusedError';
  constructor(
    message: string,
    readonly reasons: string[] = [],
  ) {
    super(message);
  }
}

/**
 * A calibration the pair cannot start from: the robot lying or leaning (roll/pitch), or with
 * motion capture, its pelvis far from the clip's first-frame height — the trial would be a hard
 * failure at frame 0 and the simulation branch would start from the same wrong state.
 */
export const START_POSE_LIMITS = { maxTiltRad: 0.3, maxRootHeightDiffM: 0.1 } as const;

export function startPoseProblems(r: StartResiduals): string[] {
  const out: string[] = [];
  if (Math.abs(r.rollRad) > START_POSE_LIMITS.maxTiltRad || Math.abs(r.pitchRad) > START_POSE_LIMITS.maxTiltRad) {
    out.push(`attitude differs from the clip's first frame by roll ${r.rollRad.toFixed(3)} rad, pitch ${r.pitchRad.toFixed(3)} rad (limit ${START_POSE_LIMITS.maxTiltRad} rad)`);
  }
  if (r.rootPosM && Math.abs(r.rootPosM[2]) > START_POSE_LIMITS.maxRootHeightDiffM) {
    out.push(`pelvis height differs from the clip's first frame by ${r.rootPosM[2].toFixed(3)} m (limit ${START_POSE_LIMITS.maxRootHeightDiffM} m)`);
  }
  return out;
}

/** Largest joint and roll/pitch differences between a fresh capture and the pair's calibration. */
export function calibrationDifference(fresh: CalibrationRecord, pairCal: CalibrationRecord): { maxJointDiffRad: number; joint: string; attitudeDiffRad: number } {
  let max = 0;
  let joint: string = G1_JOINT_NAMES[0];
  fresh.measured.jointPosRad.forEach((q, j) => {
    const d = Math.abs(q - pairCal.measured.jointPosRad[j]);
    if (!(d <= max)) {
      max = d;
      joint = G1_JOINT_NAMES[j];
    }
  });
  const a = quatToYawPitchRoll(fresh.measured.imuQuatWxyz);
  const b = quatToYawPitchRoll(pairCal.measured.imuQuatWxyz);
  const att = Math.max(Math.abs(wrapAngle(a.rollRad - b.rollRad)), Math.abs(wrapAngle(a.pitchRad - b.pitchRad)));
  return { maxJointDiffRad: max, joint, attitudeDiffRad: att };
}

export async function runMatchedPair(req: MatchedPairRequest): Promise<MatchedPairResult> {
  const { store, link, interlock, sim, profile, operator } = req;
  const log = req.log ?? (() => {});
  const progress = (e: TrialProgressEvent): void => {
    try {
      req.onProgress?.(e);
    } catch (err) {
      log(`progress listener failed: ${(err as Error).message}`);
    }
  };
  const trials = req.trials ?? 3;
  if (!(Number.isInteger(trials) && trials >= 1 && trials <= 20)) throw new RangeError(`trials must be an integer in 1..20, got ${trials}`);

  // ---- the pair
  const pair = resolvePair(listAdmittedPairs(store, trials), req.pairId);
  const qual = store.getParentTrace(pair.pairId)!;
  const refuseSession = (message: string, reasons: string[] = []): never => {
    store.recordEvent({ kind: 'refusal', reason: message, parentTraceId: qual.id, detail: { reasons } });
    throw new TrialRefusedError(message, reasons);
  };
  if (!pair.admitted) refuseSession(`pair ${pair.pairId} (${pair.clipName} × ${pair.bindingKey}) is not admitted: ${pair.reasons.join('; ')}`, pair.reasons);
  if (qual.identity.contractId !== MB_METRICS_1.id) refuseSession(`pair ${pair.pairId} was admitted under ${qual.identity.contractId}, not the current contract ${MB_METRICS_1.id}`);
  const bindingRec = store.getBinding(qual.identity.bindingId, qual.identity.bindingVersion);
  if (!bindingRec) refuseSession(`binding ${pair.bindingKey} of pair ${pair.pairId} is not stored in the campaign`);
  const binding: WbcBinding = bindingRec!.binding;
  const clip = clipForPair(store, pair, qual, req.workload);
  const domain = link.backend.capabilities.executionDomain;
  if (domain !== 'real_robot') refuseSession(`${link.backend.name} is a ${domain} backend; real-robot trials need a robot (or motionbench emulate-robot)`);

  const gateTrips: GateTrip[] = [];
  const gate = new GateDriver({ link, interlock, store, parentTraceId: qual.id, log, onTrip: (t) => {
    gateTrips.push(t);
    progress({ type: 'trip', trip: t });
    log(`safety: TRIP ${t.cause}: ${t.reason}`);
  } });
  try {
    gate.feed({ type: 'admission', atMs: gate.now(), pairId: pair.pairId, admitted: pair.admitted, contractId: qual.identity.contractId, bindingKey: bindingKey(binding), reasons: pair.reasons });

    // ---- 1. the pair's calibration
    // Resume the most advanced matched pair of this qualification pair (listAdmittedPairs found it).
    const resumed = !req.calibrationId && pair.matched ? store.getParentTrace(pair.matched.parentTraceId) : null;
    let pairCal: CalibrationRecord;
    let calibrationId: string;
    if (resumed) {
      calibrationId = resumed.identity.calibrationId!;
      pairCal = store.getCalibration(calibrationId)!.record;
      log(`resuming matched pair ${resumed.id} (calibration ${calibrationId})`);
    } else {
      let cal: CalibrationRecord;
      if (req.calibrationId) {
        const stored = store.getCalibration(req.calibrationId);
        if (!stored) refuseSession(`calibration ${req.calibrationId} is not stored in this campaign`);
        cal = stored!.record;
      } else {
        progress({ type: 'phase', phase: 'calibrating', trialIndex: null, message: 'hold the robot still: capturing its start state' });
        const c = await captureRobotCalibration({ link, profile, clip, onProgress: (p) => progress({ type: 'stillness', progress: p }), ...(req.signal ? { signal: req.signal } : {}) });
        if (!c.ok) refuseSession(c.message, c.reasons.map((r) => r.message));
        cal = (c as Extract<typeof c, { ok: true }>).record;
      }
      if (cal.clipId !== clip.id || !cal.simulatorInitialState) cal = withClip(cal, clip, profile);
      const startProblems = startPoseProblems(measuredVsClipStart(cal, clip));
      if (startProblems.length > 0) refuseSession(`the robot is not standing at the clip's start: ${startProblems.join('; ')}`, startProblems);
      if (!cal.residuals.settledVsMeasured) cal = withSettledState(cal, await settledState(sim, cal, binding, profile));
      calibrationId = store.putCalibration(cal).id;
      pairCal = cal;
    }
    const matched = store.ensureParentTrace(parentTraceInputs({ binding, clip, profile, contract: MB_METRICS_1, calibrationId }));
    gate.parentTraceId = matched.id;
    if (!resumed) store.recordEvent({ kind: 'calibration', parentTraceId: matched.id, reason: `pair calibration ${calibrationId}`, detail: { calibration_id: calibrationId, residuals: pairCal.residuals } });

    // ---- 2. the simulation branch
    let simResult: MatchedPairResult['sim'];
    const simDone = countingEpisodes(store, matched.id, 'simulation')[0];
    if (simDone) {
      simResult = { runId: simDone.runId, outcome: simDone.outcome!, metrics: store.getMetrics(simDone.runId, MB_METRICS_1.id)?.result ?? null, resumed: true };
      progress({ type: 'episode_end', runId: simDone.runId, domain: 'simulation', trialIndex: null, outcome: simDone.outcome!, reason: simDone.reason ?? '', frames: simDone.frameCount, resumed: true });
    } else {
      progress({ type: 'phase', phase: 'simulating', trialIndex: null, message: `simulation branch: ${clip.name} from the calibrated start` });
      let r: Awaited<ReturnType<typeof runSimBranch>> | null = null;
      for (let attempt = 0; attempt <= MAX_INFRA_RETRIES; attempt++) {
        r = await runSimBranch({ store, sim, profile, parentTraceId: matched.id, clip, binding, calibrationId, initial: initialStateOf(pairCal), seed: 0, snapshotHash: pair.snapshotHash });
        progress({ type: 'episode_end', runId: r.episode.runId, domain: 'simulation', trialIndex: null, outcome: r.end.outcome, reason: r.end.reason, frames: r.end.frames, resumed: false });
        if (r.end.outcome !== 'infrastructure_error') break;
      }
      simResult = { runId: r!.episode.runId, outcome: r!.end.outcome, metrics: r!.metrics, resumed: false };
    }

    // ---- 3. the real-robot trials
    const real: MatchedPairResult['real'] = [];
    for (const e of countingEpisodes(store, matched.id, 'real_robot')) {
      real.push({ runId: e.runId, trialIndex: e.rolloutIndex ?? -1, outcome: e.outcome!, reason: e.reason ?? '', frames: e.frameCount, metrics: store.getMetrics(e.runId, MB_METRICS_1.id)?.result ?? null, resumed: true });
      progress({ type: 'episode_end', runId: e.runId, domain: 'real_robot', trialIndex: e.rolloutIndex ?? -1, outcome: e.outcome!, reason: e.reason ?? '', frames: e.frameCount, resumed: true });
    }
    let lastOutcome: EpisodeOutcome | null = real.length > 0 ? real[real.length - 1].outcome : null;
    // A trip that left no episode behind (the link lost after the prepare ack) sent damp all the
    // same, and the robot may be down: a resumed session starts with a human reset then too.
    const lastStop = store.listEvents({ parentTraceId: matched.id, kind: 'stop_requested' }).at(-1);
    const lastReset = store.listEvents({ parentTraceId: matched.id, kind: 'human_reset' }).at(-1);
    const trippedSinceReset = lastStop !== undefined && (lastReset === undefined || lastReset.id < lastStop.id);
    let needsReset = trippedSinceReset || store.findEpisodes({ parentTraceId: matched.id, executionDomain: 'real_robot' }).length > 0;
    let stoppedEarly: string | null = null;
    let infraRetries = 0;
    let resetAttempts = 0;
    const stopSession = (why: string): void => {
      stoppedEarly = why;
      progress({ type: 'phase', phase: 'stopped', trialIndex: null, message: why });
    };

    while (stoppedEarly === null) {
      const doneIdx = new Set(real.map((r) => r.trialIndex));
      let index = 0;
      while (doneIdx.has(index)) index++;
      if (index >= trials) break;
      if (req.signal?.aborted) {
        stopSession('stopped by the operator');
        break;
      }

      // a. human-gated reset
      const tripped = gate.gate.snapshot().tripped !== null;
      if (needsReset || tripped) {
        if (++resetAttempts > MAX_RESET_ATTEMPTS) {
          stopSession(`trial ${index + 1}: the robot was not ready after ${MAX_RESET_ATTEMPTS} resets`);
          break;
        }
        progress({ type: 'phase', phase: 'waiting_reset', trialIndex: index, message: `put the robot back at its start pose for trial ${index + 1} of ${trials}` });
        const note = await operator.confirmReset({ trialIndex: index, afterOutcome: lastOutcome, tripped });
        if (note === null) {
          stopSession(tripped ? `the safety gate tripped (${gate.gate.snapshot().tripped!.cause}): the session does not resume by itself; run it again after the reset` : 'the operator did not confirm the reset');
          break;
        }
        if (tripped) {
          const fx = gate.feed({ type: 'operator_reset', atMs: gate.now(), note });
          if (fx?.reset && !fx.reset.accepted) {
            progress({ type: 'refusal', runId: null, reasons: fx.reset.reasons });
            continue;
          }
        } else {
          store.recordEvent({ kind: 'human_reset', reason: note, parentTraceId: matched.id, detail: { trial_index: index, after_outcome: lastOutcome } });
        }
        needsReset = false;
      }

      // b. fresh calibration check
      progress({ type: 'phase', phase: 'checking_calibration', trialIndex: index, message: 'hold still: checking the start pose against the pair calibration' });
      const fresh = await captureRobotCalibration({ link, profile, clip, onProgress: (p) => progress({ type: 'stillness', progress: p }), ...(req.signal ? { signal: req.signal } : {}) });
      const runId = makeRunId('real_robot', Date.now(), randomBytes(4).toString('hex'));
      // `code`: what the runner's own refusals are about (the start-pose check by default).
      const refuseTrial = (reasons: Refusal[] | string[], why: string, code: RefusalCode = 'no_calibration'): void => {
        const list = reasons.map((r) => (typeof r === 'string' ? r : r.message));
        store.recordEvent({ kind: 'refusal', reason: why, parentTraceId: matched.id, detail: { run_id: runId, trial_index: index, reasons: list } });
        progress({ type: 'refusal', runId, reasons: reasons.map((r) => (typeof r === 'string' ? { code, condition: REFUSAL_CODES[code], message: r, values: {} } : r)) as Refusal[] });
      };
      if (!fresh.ok) {
        refuseTrial(fresh.reasons.map((r) => r.message), fresh.message);
        needsReset = true;
        continue;
      }
      const capturedAtMs = gate.now();
      const diff = calibrationDifference(fresh.record, pairCal);
      if (diff.maxJointDiffRad > CALIBRATION_CHECK.maxJointDiffRad || diff.attitudeDiffRad > CALIBRATION_CHECK.maxAttitudeDiffRad) {
        refuseTrial(
          [`${diff.joint} is ${diff.maxJointDiffRad.toFixed(3)} rad from the pair calibration (limit ${CALIBRATION_CHECK.maxJointDiffRad}); attitude differs by ${diff.attitudeDiffRad.toFixed(3)} rad (limit ${CALIBRATION_CHECK.maxAttitudeDiffRad})`],
          'the robot is not at the pair’s calibrated start pose',
        );
        needsReset = true;
        continue;
      }
      resetAttempts = 0;
      const freshId = store.putCalibration(fresh.record).id;

      // c. the gate's episode, calibration and the operator's confirmation
      gate.feed({ type: 'episode_start', atMs: gate.now(), runId, pairId: pair.pairId, contractId: qual.identity.contractId, bindingKey: bindingKey(binding) });
      gate.feed({ type: 'calibration', atMs: gate.now(), runId, capturedAtMs, calibrationId: freshId });
      const closeGateEpisode = (outcome: EpisodeOutcome, reason: string): void => {
        gate.feed({ type: 'episode_end', atMs: gate.now(), runId, outcome, reason });
      };
      // A trial that never started (not confirmed, not armed, prepare or start refused) closes the
      // gate's episode with an outcome that is not a safety end: the gate takes estop, link_lost,
      // intervention and aborted_by_operator as the robot side stopping — a trip, which sends stop
      // and damp, and a damped G1 standing idle collapses. The refusal is already traced.
      const closeUnstartedGateEpisode = (reason: string): void => closeGateEpisode('infrastructure_error', reason);
      progress({ type: 'phase', phase: 'waiting_confirmation', trialIndex: index, message: `confirm trial ${index + 1} of ${trials}: ${clip.name} × ${bindingKey(binding)}` });
      const confirmed = await operator.confirmTrial({
        pairId: pair.pairId,
        runId,
        trialIndex: index,
        trials,
        clipName: clip.name,
        binding: bindingKey(binding),
        calibrationCheck: { maxJointDiffRad: diff.maxJointDiffRad, attitudeDiffRad: diff.attitudeDiffRad },
      });
      if (!confirmed || req.signal?.aborted) {
        refuseTrial(['the operator did not confirm the trial'], 'not confirmed by the operator', 'no_confirmation');
        closeUnstartedGateEpisode('not confirmed');
        stopSession('the operator did not confirm the trial');
        break;
      }
      gate.feed({ type: 'operator_confirm', atMs: gate.now(), runId });

      // d. interlock armed, robot leased, motion permitted
      if (!interlock.link.isArmedAndFresh()) {
        const armed = await interlock.link.arm();
        if (!armed.ok) {
          refuseTrial([`the interlock did not arm (${armed.reason}): ${armed.detail}`], 'interlock not armed', 'interlock_not_armed');
          closeUnstartedGateEpisode('interlock not armed');
          stopSession(`the interlock did not arm: ${armed.detail}`);
          break;
        }
        // Let the box's ARMED status reach the gate (statuses answer heartbeats every 20 ms).
        for (let i = 0; i < 20 && gate.gate.preview(gate.now()).some((r) => r.condition === 'interlock'); i++) await new Promise((r) => setTimeout(r, 10));
      }
      const lease = await link.backend.acquire(runId);
      // Read on each trial, with the robot leased (so present): what this connection advertised
      // (motion capture or not, the state rate) — a reconnect may have changed it.
      const caps = link.backend.capabilities;
      let outcomeOverride: { outcome: EpisodeOutcome; reason: string } | null = null;
      try {
        const prepare = gate.requestMotion('prepare');
        if (!prepare.allowed) {
          progress({ type: 'refusal', runId, reasons: prepare.reasons });
          closeUnstartedGateEpisode('prepare refused');
          stopSession(`prepare refused by the safety gate: ${prepare.reasons.map((r) => r.message).join('; ')}`);
          break;
        }
        // e. the recorded trial. `start` is asked of the gate when the robot has the clip
        // prepared, right before it is sent; only then is the episode opened in the campaign (a
        // refused start moved nothing and is a refusal, not an episode).
        progress({ type: 'phase', phase: 'running', trialIndex: index, message: `trial ${index + 1} of ${trials} running` });
        let startRefusal: Refusal[] | null = null;
        let recording: { rec: EpisodeRecorder; live: LiveTrial } | null = null;
        let recordError: unknown = null;
        let failureRecorded = false;
        const openRecording = async (): Promise<void> => {
          const ref50 = resampleClip(clip, MB_METRICS_1.rateHz);
          const rec = await store.beginEpisode({
            parentTraceId: matched.id,
            executionDomain: 'real_robot',
            backendId: link.backend.id,
            seed: index,
            runId,
            robotUnit: link.robotUnit,
            rolloutIndex: index,
            snapshotHash: pair.snapshotHash,
            reference: { frameCount: ref50.frameCount, rateHz: ref50.fps, rootPosM: ref50.rootPosM, rootQuatWxyz: ref50.rootQuatWxyz, jointPosRad: ref50.jointPosRad },
            fileMetadata: { clip_name: clip.name, binding_kind: binding.kind, binding_label: binding.label, calibration_id: calibrationId, fresh_calibration_id: freshId, trial_index: index, state_rate_hz: caps.stateRateHz },
            meta: { matchedPair: { calibrationId, freshCalibrationId: freshId, calibrationCheck: diff, trialIndex: index, qualificationPair: pair.pairId } },
          });
          const live = new LiveTrial({ clip, profile, runId, hasGlobalRoot: caps.globalRootPosition, streamRateHz: caps.stateRateHz, backend: link.backend, onReading: (r) => progress({ type: 'live', runId, ...r }) });
          recording = { rec, live };
        };
        // The gate is asked twice: before the recording opens (beforeStart: nothing is opened for a
        // refused start) and once more, synchronously, right before the start is written
        // (mayTransmit): the awaits in between — the recording's SQLite row and MCAP file — leave
        // time for a trip, and a start after a trip must be impossible (issue 10 item 1).
        let notSent: Refusal[] | null = null;
        const mayTransmit = (): true | string => {
          const d = gate.transmit('start', runId);
          if (d.allowed) return true;
          notSent = d.reasons;
          progress({ type: 'refusal', runId, reasons: d.reasons });
          return d.reasons.map((r) => r.message).join('; ');
        };
        const beforeStart = async (): Promise<true | string> => {
          const d = gate.requestMotion('start');
          if (!d.allowed) {
            startRefusal = d.reasons;
            progress({ type: 'refusal', runId, reasons: d.reasons });
            return d.reasons.map((r) => r.message).join('; ');
          }
          try {
            await openRecording();
          } catch (err) {
            recordError = err;
            return `the episode could not be recorded: ${(err as Error).message}`;
          }
          return true;
        };
        const unsubscribe = link.subscribe(async (events: BackendEvent[]) => {
          const r = recording as { rec: EpisodeRecorder; live: LiveTrial } | null;
          if (!r) return;
          const accepted = r.live.accept(events);
          if (accepted.length === 0 || recordError !== null) return;
          try {
            await r.rec.frames(accepted);
            const f = r.live.failure();
            if (f && !failureRecorded) {
              failureRecorded = true;
              await r.rec.event('hard_failure', { tS: f.timeS, reason: f.text, detail: { ...f.failure } });
            }
          } catch (err) {
            recordError = err;
          }
        });
        const onAbort = (): void => {
          const intervention = req.signal?.reason === 'intervention';
          gate.feed({ type: 'operator_stop', atMs: gate.now(), intervention, reason: intervention ? 'the operator stopped for a human intervention' : 'the operator pressed stop' });
        };
        req.signal?.addEventListener('abort', onAbort, { once: true });
        const tripsBefore = gateTrips.length;
        let end: EpisodeEnd;
        try {
          end = await lease.run({ clip, binding, seed: index, beforeStart, mayTransmit });
        } catch (err) {
          end = { runId, outcome: 'infrastructure_error', reason: `the robot did not run the clip: ${(err as Error).message}`, frames: 0, simSeconds: 0, wallSeconds: 0 };
        } finally {
          req.signal?.removeEventListener('abort', onAbort);
        }
        const opened = recording as { rec: EpisodeRecorder; live: LiveTrial } | null;
        // Frames already queued for the listener still arrive after the end: let them land.
        if (opened) await opened.live.drained(200);
        unsubscribe();
        if (!opened) {
          // Nothing started: a refused start (a refusal, already traced by the gate), or a robot
          // that refused or failed the prepare, or a recorder that could not open (retried).
          const refusal = startRefusal as Refusal[] | null;
          if (refusal) {
            closeUnstartedGateEpisode('start refused');
            stopSession(`start refused by the safety gate: ${refusal.map((r) => r.message).join('; ')}`);
            break;
          }
          const why = recordError !== null ? `the episode could not be recorded: ${(recordError as Error).message}` : end.reason;
          store.recordEvent({ kind: 'problem', reason: `trial ${index + 1} did not start: ${why}`, parentTraceId: matched.id, detail: { run_id: runId, trial_index: index } });
          closeGateEpisode('infrastructure_error', why);
          if (++infraRetries > MAX_INFRA_RETRIES) stopSession(`trial ${index + 1} did not start ${infraRetries} times: ${why}`);
          continue;
        }
        const { rec, live } = opened;
        const trip = gateTrips.slice(tripsBefore).find((t) => t.runId === runId) ?? null;
        if (trip) outcomeOverride = { outcome: trip.outcome, reason: `${trip.reason} (${trip.cause})` };
        else if (end.outcome === 'completed' && live.failure()) outcomeOverride = { outcome: 'hard_failure', reason: `hard failure: ${live.failure()!.text}` };
        const outcome = outcomeOverride?.outcome ?? end.outcome;
        const reason = outcomeOverride?.reason ?? end.reason;
        closeGateEpisode(outcome, reason);
        if (TRIP_OUTCOMES.includes(outcome)) await rec.event('stop_requested', { reason: `${outcome}: ${reason}`, detail: { outcome, trip: trip ?? null } });
        if (recordError !== null) throw recordError;
        const metrics: EpisodeMetrics = live.frames >= 2 ? live.result() : allReadingsUnavailable(MB_METRICS_1.id, live.frames, `the trial recorded ${live.frames} frame(s): ${reason}`);
        const episode = await rec.finish({ ...end, outcome, reason, frames: live.frames, simSeconds: live.lastTimeS }, metrics, {
          result: { state_rate_hz: caps.stateRateHz, refused_frames: live.metrics.reading.refusedFrames + live.problems.length, dropped_by_link: live.linkDrops() },
        });
        progress({ type: 'episode_end', runId, domain: 'real_robot', trialIndex: index, outcome, reason, frames: episode.frameCount, resumed: false });
        lastOutcome = outcome;
        needsReset = true;
        if (outcome === 'infrastructure_error') {
          if (++infraRetries > MAX_INFRA_RETRIES) stopSession(`trial ${index + 1} failed ${infraRetries} times with infrastructure errors: ${reason}`);
        } else {
          real.push({ runId, trialIndex: index, outcome, reason, frames: episode.frameCount, metrics, resumed: false });
          infraRetries = 0;
        }
        const unsent = notSent as Refusal[] | null;
        if (unsent) {
          // The start was granted, then refused at the write: the episode is recorded (its
          // recording was open) with what ended it, and the session stops for the operator.
          stopSession(`start not sent: ${unsent.map((r) => r.message).join('; ')}`);
          break;
        }
      } finally {
        await lease.release().catch(() => undefined);
        if (interlock.link.state === 'armed') await interlock.link.disarm().catch(() => undefined);
      }
    }
    const remaining = trials - new Set(real.map((r) => r.trialIndex)).size;
    if (stoppedEarly === null) progress({ type: 'phase', phase: 'done', trialIndex: null, message: `matched pair done: 1 simulation + ${real.length} real trials` });
    return {
      pairId: pair.pairId,
      parentTraceId: matched.id,
      calibrationId,
      clip: { id: clip.id, name: clip.name },
      binding: { id: binding.id, version: binding.version, label: binding.label },
      sim: simResult,
      real: real.sort((a, b) => a.trialIndex - b.trialIndex),
      remaining,
      stoppedEarly,
    };
  } finally {
    gate.close();
  }
}

