import type { BackendEvent } from '../../domain/backend/backend';
import { allReadingsUnavailable, MB_METRICS_1, type EpisodeMetrics } from '../../domain/metrics';
import { resampleClip } from '../../domain/motion/resample';
import {
  AFTER_CLIP_WINDOW_S,
  describeAfterClip,
  type AfterClipVerdict,
  type RequestEffect,
  type RunResult,
  type TrialSessionEvent,
} from '../../domain/trial';
import { AfterClipRecording } from './afterClipRecording';
import { referenceFramesOf } from '../episode/episodeWriter';
import { LiveTrial } from './liveTrial';
import { errorMessage, type RequestHandlers, type TrialIo, type TrialSessionContext } from './trialSessionContext';

// A real trial's run and its recording: the robot runs the clip under its lease (its start check
// and last check go back to the driver, which asks the gate and the reducer), a listener records
// this run's frames and its first hard failure while the recording is open; after a completed
// clip the robot is watched and recorded until it is safe (afterClipRecording.ts), and the
// episode is finished with the outcome the reducer decided and the live mb-metrics/1 result.

async function runTrial(ctx: TrialSessionContext, runId: string, index: number): Promise<TrialSessionEvent> {
  const { link } = ctx.req;
  const { held } = ctx;
  const lease = held.need('lease').lease;
  const io: TrialIo = { runId, recording: null, recordError: null, failureRecorded: false, end: null };
  held.io = io;
  const after = new AfterClipRecording();
  const unsubscribe = link.subscribe(async (events: BackendEvent[]) => {
    const r = io.recording;
    if (!r) return;
    const accepted = r.live.accept(events);
    after.push(r.live.takeAfterEnd());
    if (accepted.length > 0 && io.recordError === null)
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
    await after.drain();
  });
  let result: RunResult;
  try {
    // The gate is asked twice: at the robot's start check (beforeStart: nothing is opened for a
    // refused start) and once more, synchronously, right before the start is written
    // (mayTransmit): the awaits in between — the recording's SQLite row and MCAP file — leave
    // time for a trip, and a start after a trip must be impossible.
    const end = await lease.run({
      clip: held.need('clip'),
      binding: held.need('binding'),
      seed: index,
      beforeStart: () => ctx.beforeStart(runId),
      mayTransmit: () => ctx.mayTransmit(runId),
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
  const hardFailure = opened?.live.failure()?.text ?? null;
  let afterClip: AfterClipVerdict | null = null;
  if (
    opened &&
    result.kind === 'ended' &&
    result.outcome === 'completed' &&
    hardFailure === null &&
    io.recordError === null
  )
    afterClip = await watchAfterClip(ctx, index, opened, after).finally(unsubscribe);
  else {
    after.cancel();
    unsubscribe();
  }
  return {
    type: 'run_ended',
    runId,
    result,
    hardFailure,
    afterClip,
    recordError: io.recordError !== null ? errorMessage(io.recordError) : null,
  };
}

/** A completed clip: the robot watched and recorded until it is safe (afterClipRecording.ts); a fall is a hard_failure event. */
async function watchAfterClip(
  ctx: TrialSessionContext,
  index: number,
  { rec, live }: NonNullable<TrialIo['recording']>,
  after: AfterClipRecording,
): Promise<AfterClipVerdict> {
  const { held } = ctx;
  const io = held.need('io');
  const gate = held.need('gate');
  ctx.progress({
    type: 'phase',
    phase: 'running',
    trialIndex: index,
    message: `the clip ended: watching the robot for up to ${AFTER_CLIP_WINDOW_S} s (it must stay up)`,
  });
  const r = await after.start({
    rec,
    clipEndS: live.lastTimeS,
    stateRateHz: held.need('lease').caps.stateRateHz,
    tripped: () => gate.gate.snapshot().tripped !== null,
  });
  if (r.recordError !== null) io.recordError = r.recordError;
  else if (r.verdict.kind === 'fell')
    try {
      await rec.event('hard_failure', {
        tS: live.lastTimeS + r.verdict.atS,
        reason: describeAfterClip(r.verdict),
        detail: { after_clip: true, after_s: r.verdict.atS, tilt_rad: r.verdict.tiltRad },
      });
    } catch (err) {
      io.recordError = err;
    }
  return r.verdict;
}

async function openRecording(
  ctx: TrialSessionContext,
  fx: Extract<RequestEffect, { type: 'open_recording' }>,
): Promise<void> {
  const { store, link, profile } = ctx.req;
  const { held, pair } = ctx;
  const io = held.need('io');
  const caps = held.need('lease').caps;
  const clip = held.need('clip');
  const binding = held.need('binding');
  const index = fx.trialIndex;
  const ref50 = resampleClip(clip, MB_METRICS_1.rateHz);
  const rec = await store.beginEpisode({
    parentTraceId: ctx.matchedId(),
    executionDomain: 'real_robot',
    backendId: link.backend.id,
    seed: index,
    runId: fx.runId,
    robotUnit: link.robotUnit,
    rolloutIndex: index,
    snapshotHash: pair.snapshotHash,
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
        qualificationPair: pair.pairId,
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
    onReading: (r) => ctx.progress({ type: 'live', runId: fx.runId, ...r }),
  });
  io.recording = { rec, live };
}

async function finishEpisode(
  ctx: TrialSessionContext,
  fx: Extract<RequestEffect, { type: 'finish_episode' }>,
): Promise<TrialSessionEvent> {
  const { held } = ctx;
  const { rec, live } = held.recording();
  const end = held.runEnd();
  const caps = held.need('lease').caps;
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
  held.metrics.set(fx.runId, metrics);
  return { type: 'episode_finished', runId: fx.runId, frames: episode.frameCount };
}

export const TRIAL_RUN_REQUESTS: RequestHandlers<'run_trial' | 'open_recording' | 'finish_episode'> = {
  run_trial: (ctx, fx) => runTrial(ctx, fx.runId, fx.trialIndex),
  open_recording: async (ctx, fx) => {
    try {
      await openRecording(ctx, fx);
      return { type: 'recording_opened', runId: fx.runId };
    } catch (err) {
      return { type: 'recording_failed', runId: fx.runId, message: errorMessage(err) };
    }
  },
  finish_episode: finishEpisode,
};
