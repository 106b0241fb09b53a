import { measuredVsClipStart, withClip, withSettledState } from '../../domain/calibration/residuals';
import { MB_METRICS_1 } from '../../domain/metrics';
import type { CalibrationRecord, EpisodeRecord } from '../../domain/trace/records';
import type { StoredEpisode, TrialSessionEvent } from '../../domain/trial';
import { bindingKey } from '../../domain/wbc/wbcBinding';
import { parentTraceInputs } from '../trace/parentInputs';
import { clipForPair } from './pairClip';
import { captureRobotCalibration } from './robotCalibration';
import { initialStateOf, runSimBranch, settledState } from './simBranch';
import type { RequestHandlers, TrialSessionContext } from './trialSessionContext';
import type { CalibrationCaptureResult } from './trialTypes';

// The matched pair before its real trials: the pair as resolved, its clip, its calibration
// (loaded, or captured from the still robot, then settled in the simulator and stored), the
// matched parent trace with what the campaign already holds of it, and the simulation branch.

/** The session's first event: the admitted pair and what its qualification was made with. */
export function pairResolvedEvent(ctx: TrialSessionContext): TrialSessionEvent {
  const { pair, qual, held } = ctx;
  const bindingRec = ctx.req.store.getBinding(qual.identity.bindingId, qual.identity.bindingVersion);
  held.binding = bindingRec?.binding ?? null;
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
    bindingKey: held.binding ? bindingKey(held.binding) : null,
    requestedCalibrationId: ctx.req.calibrationId || null,
    matched: pair.matched
      ? { parentTraceId: pair.matched.parentTraceId, calibrationId: pair.matched.calibrationId }
      : null,
  };
}

/** A stillness capture of the robot against the pair's clip, its progress reported as it fills. */
export function captureStill(ctx: TrialSessionContext): Promise<CalibrationCaptureResult> {
  const { req } = ctx;
  return captureRobotCalibration({
    link: req.link,
    profile: req.profile,
    clip: ctx.held.need('clip'),
    onProgress: (p) => ctx.progress({ type: 'stillness', progress: p }),
    ...(req.signal ? { signal: req.signal } : {}),
  });
}

/** The pair's calibration bound to the clip (simulator initial state, residual (b)); the reducer checks the start pose. */
function pairCalibrationReady(ctx: TrialSessionContext, record: CalibrationRecord): TrialSessionEvent {
  const clip = ctx.held.need('clip');
  const cal =
    record.clipId !== clip.id || !record.simulatorInitialState ? withClip(record, clip, ctx.req.profile) : record;
  ctx.held.pairCal = cal;
  return { type: 'pair_calibration', result: { kind: 'ready', startResiduals: measuredVsClipStart(cal, clip) } };
}

function storedEpisode(e: EpisodeRecord): StoredEpisode {
  return {
    runId: e.runId,
    trialIndex: e.rolloutIndex ?? -1,
    outcome: e.outcome,
    reason: e.reason ?? '',
    frames: e.frameCount,
  };
}

function openMatchedPair(ctx: TrialSessionContext, calibrationId: string, resumed: boolean): TrialSessionEvent {
  const { store, profile } = ctx.req;
  const { held } = ctx;
  if (resumed) {
    const stored = store.getCalibration(calibrationId);
    if (!stored) throw new Error(`calibration ${calibrationId} of the resumed matched pair is not stored`);
    held.pairCal = stored.record;
  }
  const pairCal = held.need('pairCal');
  const matched = store.ensureParentTrace(
    parentTraceInputs({
      binding: held.need('binding'),
      clip: held.need('clip'),
      profile,
      contract: MB_METRICS_1,
      calibrationId,
    }),
  );
  held.need('gate').parentTraceId = matched.id;
  if (!resumed)
    store.recordEvent({
      kind: 'calibration',
      parentTraceId: matched.id,
      reason: `pair calibration ${calibrationId}`,
      detail: { calibration_id: calibrationId, residuals: pairCal.residuals },
    });
  const finished = (domain: 'simulation' | 'real_robot'): StoredEpisode[] =>
    store.findEpisodes({ parentTraceId: matched.id, executionDomain: domain, status: 'finished' }).map((e) => {
      held.metrics.set(e.runId, store.getMetrics(e.runId, MB_METRICS_1.id)?.result ?? null);
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

export const PAIR_REQUESTS: RequestHandlers<
  | 'load_clip'
  | 'load_calibration'
  | 'capture_calibration'
  | 'store_calibration'
  | 'open_matched_pair'
  | 'run_sim_branch'
> = {
  load_clip: (ctx) => {
    const { link } = ctx.req;
    const clip = clipForPair(ctx.req.store, ctx.pair, ctx.qual, ctx.req.workload);
    ctx.held.clip = clip;
    return {
      type: 'clip_loaded',
      clipName: clip.name,
      executionDomain: link.backend.capabilities.executionDomain,
      backendName: link.backend.name,
    };
  },

  load_calibration: (ctx, fx) => {
    const stored = ctx.req.store.getCalibration(fx.calibrationId);
    if (!stored) return { type: 'pair_calibration', result: { kind: 'not_stored' } };
    return pairCalibrationReady(ctx, stored.record);
  },

  capture_calibration: async (ctx) => {
    const c = await captureStill(ctx);
    if (!c.ok)
      return {
        type: 'pair_calibration',
        result: { kind: 'not_captured', message: c.message, reasons: c.reasons.map((r) => r.message) },
      };
    return pairCalibrationReady(ctx, c.record);
  },

  store_calibration: async (ctx) => {
    const { held } = ctx;
    const { sim, profile, store } = ctx.req;
    let cal = held.need('pairCal');
    if (!cal.residuals.settledVsMeasured)
      cal = withSettledState(cal, await settledState(sim, cal, held.need('binding'), profile));
    held.pairCal = cal;
    return { type: 'pair_calibration_stored', calibrationId: store.putCalibration(cal).id };
  },

  open_matched_pair: (ctx, fx) => openMatchedPair(ctx, fx.calibrationId, fx.resumed),

  run_sim_branch: async (ctx) => {
    const { held } = ctx;
    const { store, sim, profile } = ctx.req;
    const r = await runSimBranch({
      store,
      sim,
      profile,
      parentTraceId: ctx.matchedId(),
      clip: held.need('clip'),
      binding: held.need('binding'),
      calibrationId: ctx.calibrationId(),
      initial: initialStateOf(held.need('pairCal')),
      seed: 0,
      snapshotHash: ctx.pair.snapshotHash,
    });
    held.metrics.set(r.episode.runId, r.metrics);
    return {
      type: 'sim_ended',
      runId: r.episode.runId,
      outcome: r.end.outcome,
      reason: r.end.reason,
      frames: r.end.frames,
    };
  },
};
