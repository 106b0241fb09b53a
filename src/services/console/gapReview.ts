import path from 'node:path';
import type {
  ApiParams,
  GapContractsDto,
  GapBindingDto,
  GapClipDto,
  GapReplayDto,
  GapReplayRunDto,
  GapReportDto,
  GapRowDto,
  GapTrialCountsDto,
  GapValueDto,
  GapWorstFrameDto,
} from '../../api/contract';
import { clipToDto } from '../../api/clipDto';
import { AGGREGATE_KEYS, type GapRow } from '../../domain/metrics/aggregate';
import { ClipPairEvaluator } from '../../domain/metrics/clipPairMetrics';
import { MB_METRICS_1 } from '../../domain/metrics/metricContract';
import { READING_INFO, type Reading } from '../../domain/metrics/readings';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { toContractTimeline } from '../episode/contractTimeline';
import { readEpisodeFile } from '../episode/episodeReader';
import type { ExecutedMessage, ReferenceMessage } from '../episode/episodeSchemas';
import {
  buildGapSection,
  parseGapSortKey,
  sortedClips,
  type GapPair,
  type GapSection,
  type TrialCounts,
} from '../report/gapSection';
import type { CampaignStore } from '../trace';
import { ApiFailure } from './apiFailure';
import { evaluateCampaignPeers, isPeerContractId } from '../analysis/peerEvaluation';
import { contractComparison, contractComparisonDto } from '../analysis/contractComparison';
import { withReadOnlyCampaign } from './campaignOpen';
import { trialNumber } from '../../domain/trial/trialNumber';

// Gap review from the console (DESIGN §8): `gap.report` is Table 11 of a campaign exactly as
// `motionbench report` computes it (buildGapSection, docs/GAP_REPORT.md) shaped for the panel;
// `gap.replay` puts one matched pair on the 50 Hz contract timeline for the viewport — the
// reference as recorded with the simulation episode, the simulation branch and the counted real
// trials — and finds the worst frame: the largest per-frame MPJPE-l of a real trial against the
// reference, or the largest per-frame joint-position RMSE when MPJPE-l is unavailable (a robot
// without motion capture has no global root heading, so MPJPE-l is not measured, DESIGN §4).

const valueDto = (r: Reading<number>): GapValueDto =>
  r.available ? { value: r.value } : { value: null, reason: r.reason };

const countsDto = (c: TrialCounts): GapTrialCountsDto => ({
  used: c.used,
  failed: c.failed,
  stopped: c.stopped,
  excluded: c.excluded.map((e) => ({ ...e })),
});

/** The panel's shape of a gap section: the same values as gapJson, typed (stored units). */
export function gapReportDto(
  section: GapSection,
  sortName: string,
  campaign: { dir: string; id: string },
  generatedAt: string,
): GapReportDto {
  const sort = parseGapSortKey(sortName);
  const nameOf = (clipId: string) => section.pairs.find((p) => p.clipId === clipId)?.clipName ?? clipId;
  const row = (r: GapRow): GapRowDto => ({
    reading: READING_INFO[r.key].json,
    sim: valueDto(r.sim),
    real: valueDto(r.real),
    gapPercent: valueDto(r.gapPercent),
    clips: r.clips,
    excluded: r.excluded.map((e) => ({ clipId: e.clipId, clip: nameOf(e.clipId), reason: e.reason })),
  });
  const clipDto = (pair: GapPair, clip: (typeof section.report.wbcs)[number]['clips'][number]): GapClipDto => ({
    clipId: pair.clipId,
    clip: pair.clipName,
    group: pair.group,
    parentTraceId: pair.parentTraceId,
    calibrationId: pair.calibrationId,
    capturedAt: pair.capturedAt,
    robotUnit: pair.robotUnit,
    simTrials: countsDto(pair.sim),
    realTrials: countsDto(pair.real),
    trials: pair.trials.map((t) => ({
      runId: t.runId,
      domain: t.domain,
      trialIndex: t.rolloutIndex,
      outcome: t.outcome,
      use: t.use,
      failed: t.failed,
      reason: t.reason,
    })),
    readings: Object.fromEntries(
      AGGREGATE_KEYS.map((k) => [
        READING_INFO[k].json,
        {
          sim: valueDto(clip.sim.readings[k]),
          real: valueDto(clip.real.readings[k]),
          gapPercent: valueDto(clip.gapPercent[k]),
        },
      ]),
    ),
  });
  const bindings: GapBindingDto[] = section.report.wbcs.map((w) => {
    const b = section.bindings.find((x) => x.key === w.wbc);
    return {
      binding: w.wbc,
      name: b?.name ?? w.wbc,
      kind: b?.kind ?? null,
      label: b?.label ?? null,
      note: b?.note ?? null,
      rows: w.rows.map(row),
      byGroup: w.byGroup.map((g) => ({ group: g.group, clips: g.clips, rows: g.rows.map(row) })),
      clips: sortedClips(section, w.wbc, sort).map(({ clip, pair }) => clipDto(pair, clip)),
    };
  });
  return {
    campaignDir: campaign.dir,
    campaignId: campaign.id,
    contract: section.contract,
    matchedPairs: section.pairs.length,
    message:
      section.pairs.length === 0
        ? 'No matched sim/real pairs in this campaign (a parent trace with a calibration, a counted simulation episode and counted real-robot trials).'
        : null,
    sort: sort === 'clip' ? 'clip' : READING_INFO[sort].json,
    bindings,
    skipped: section.skipped.map((s) => ({
      binding: s.wbc,
      clipId: s.clipId,
      clip: s.clipName,
      parentTraceId: s.parentTraceId,
      calibrationId: s.calibrationId,
      why: s.why,
      reason: s.reason,
    })),
    generatedAt,
  };
}

// The 50 Hz contract timeline of a recording: src/services/episode/contractTimeline.ts.
export { toContractTimeline, type ContractTimeline, type TimedSample } from '../episode/contractTimeline';

/** Per-frame joint-position RMSE (rad) of an executed trajectory against the reference, over their common frames. */
export function frameJointRmse(
  refJointPosRad: ArrayLike<number>,
  execJointPosRad: ArrayLike<number>,
  jointCount: number,
): number[] {
  const K = Math.min(refJointPosRad.length, execJointPosRad.length) / jointCount;
  const out: number[] = [];
  for (let k = 0; k < K; k++) {
    let s = 0;
    for (let j = 0; j < jointCount; j++) {
      const d = execJointPosRad[k * jointCount + j] - refJointPosRad[k * jointCount + j];
      s += d * d;
    }
    out.push(Math.sqrt(s / jointCount));
  }
  return out;
}

/** Per-frame MPJPE-l (m): mean over bodies of ‖(p_b(E) − p_root(E)) − (p_b(R) − p_root(R))‖, bodies by FK (K×B×3). */
export function frameMpjpeL(
  refBodyPosM: ArrayLike<number>,
  execBodyPosM: ArrayLike<number>,
  bodyCount: number,
  rootBody: number,
  K: number,
): number[] {
  const out: number[] = [];
  for (let k = 0; k < K; k++) {
    const o = 3 * bodyCount * k;
    const r = o + 3 * rootBody;
    let s = 0;
    for (let b = 0; b < bodyCount; b++) {
      let d2 = 0;
      for (let a = 0; a < 3; a++) {
        const d = execBodyPosM[o + 3 * b + a] - execBodyPosM[r + a] - (refBodyPosM[o + 3 * b + a] - refBodyPosM[r + a]);
        d2 += d * d;
      }
      s += Math.sqrt(d2);
    }
    out.push(s / bodyCount);
  }
  return out;
}

// ------------------------------------------------------------------ replay pieces

type ReplayFound = ReturnType<typeof replayPair>;
type ReplayTrial = ReplayFound['shown'][number];
type ReplayEpisode = Awaited<ReturnType<typeof readEpisodeFile>>;

/** The matched pair's Table 11 row, its shown trials, their MPJPE-l readings and episode files. */
function replayPair(store: CampaignStore, parentTraceId: string) {
  const section = buildGapSection(store);
  const pair = section.pairs.find((x) => x.parentTraceId === parentTraceId);
  if (!pair) {
    const s = section.skipped.find((x) => x.parentTraceId === parentTraceId);
    throw new ApiFailure(
      'not_found',
      s
        ? `pair ${parentTraceId} is not in Table 11: ${s.why} (${s.reason})`
        : `no matched pair ${parentTraceId} in this campaign`,
      'params.parentTraceId',
    );
  }
  const shown = pair.trials.filter((t) => t.use !== 'excluded');
  const mpjpe = new Map(
    shown.map((t) => [t.runId, store.getMetrics(t.runId, section.contract ?? undefined)?.result.mpjpeLMm ?? null]),
  );
  const referenceSha256 = store.getParentTrace(pair.parentTraceId)?.identity.referenceSha256 ?? '';
  return {
    pair,
    bindingName: section.bindings.find((b) => b.key === pair.wbc)?.name ?? pair.wbc,
    contract: section.contract!,
    referenceSha256,
    shown,
    mpjpe,
    files: new Map(shown.map((t) => [t.runId, store.episodeFile(t.runId)])),
  };
}

/** The reference as recorded on the 50 Hz timeline: the simulation episode's, else a trial's. */
function recordedReference(
  found: ReplayFound,
  episodes: Map<string, ReplayEpisode>,
  simTrial: ReplayTrial | null,
  p: ApiParams<'gap.replay'>,
): MotionClip {
  const { pair } = found;
  const refMsgs: ReferenceMessage[] =
    (simTrial ? episodes.get(simTrial.runId)!.reference : []).length > 0
      ? episodes.get(simTrial!.runId)!.reference
      : ([...episodes.values()].find((e) => e.reference.length > 0)?.reference ?? []);
  if (refMsgs.length < 2)
    throw new ApiFailure(
      'not_found',
      `pair ${p.parentTraceId}: no episode recorded the reference (/reference)`,
      'params.parentTraceId',
    );
  const refFile = path.relative(
    p.campaignDir,
    simTrial ? found.files.get(simTrial.runId)! : found.files.values().next().value!,
  );
  const reference: MotionClip = {
    id: pair.clipId,
    name: pair.clipName,
    fps: MB_METRICS_1.rateHz,
    frameCount: refMsgs.length,
    rootPosM: Float64Array.from(refMsgs.flatMap((m) => m.rootPosM)),
    rootQuatWxyz: Float64Array.from(refMsgs.flatMap((m) => m.rootQuatWxyz)),
    jointPosRad: Float64Array.from(refMsgs.flatMap((m) => m.jointPosRad)),
    // fileSha256: the qualified reference's hash from the parent trace identity (the clip file the 50 Hz frames come from).
    provenance: {
      file: `${refFile} (/reference)`,
      format: 'motionbench-json',
      fileSha256: found.referenceSha256,
      fpsSource: 'file',
    },
    warnings: [],
  };
  if (pair.group !== 'unassigned') reference.capabilityGroup = pair.group;
  return reference;
}

/** One shown trial's executed motion on the contract timeline. */
function replayRun(t: ReplayTrial, ep: ReplayEpisode, rate: number, J: number): GapReplayRunDto {
  const tl = toContractTimeline(ep.executed as readonly ExecutedMessage[], rate, J);
  return {
    runId: t.runId,
    domain: t.domain,
    trialIndex: t.rolloutIndex,
    outcome: t.outcome,
    use: t.use as 'counted' | 'stopped',
    sourceRateHz: tl.sourceRateHz,
    resampling: tl.resampling,
    rootMeasured: tl.rootPosM !== null,
    trajectory: {
      frames: tl.frames,
      timeS: tl.timeS,
      rootPosM: tl.rootPosM,
      rootQuatWxyz: tl.rootQuatWxyz,
      jointPosRad: tl.jointPosRad,
    },
  };
}

// ------------------------------------------------------------------ the service

export interface GapReviewOptions {
  profile: () => RobotProfile;
  now?: () => number;
}

export class GapReview {
  private evaluator: ClipPairEvaluator | null = null;

  constructor(private readonly o: GapReviewOptions) {}

  private withStore<T>(dir: string, fn: (s: CampaignStore) => T | Promise<T>): Promise<T> {
    return withReadOnlyCampaign(dir, fn);
  }

  report(p: ApiParams<'gap.report'>): Promise<GapReportDto> {
    return this.withStore(p.campaignDir, (store) =>
      gapReportDto(
        buildGapSection(store),
        p.sort ?? 'mpjpe_l_mm',
        { dir: store.dir, id: store.campaign.id },
        new Date(this.o.now?.() ?? Date.now()).toISOString(),
      ),
    );
  }

  /** The campaign under mb-metrics/1 and the peers' contracts; with `score`, first scores and stores what is missing. */
  async contracts(p: ApiParams<'gap.contracts'>): Promise<GapContractsDto> {
    const peers = [...new Set(p.contracts)].filter(isPeerContractId);
    let scoredNow = 0;
    if (p.score)
      await withReadOnlyCampaign(
        p.campaignDir,
        async (store) => {
          for (const c of peers)
            for (const r of await evaluateCampaignPeers(store, c, this.o.profile()))
              if (r.outcome.available && !r.stored) scoredNow++;
        },
        '',
        true,
      );
    return this.withStore(p.campaignDir, (store) => ({
      ...contractComparisonDto(contractComparison(store, peers)),
      campaignDir: store.dir,
      scoredNow,
    }));
  }

  async replay(p: ApiParams<'gap.replay'>): Promise<GapReplayDto> {
    const found = await this.withStore(p.campaignDir, (store) => replayPair(store, p.parentTraceId));
    const { pair, shown } = found;
    const profile = this.o.profile();
    const J = profile.joints.length;
    const rate = MB_METRICS_1.rateHz;

    const episodes = new Map<string, ReplayEpisode>();
    for (const t of shown) episodes.set(t.runId, await readEpisodeFile(found.files.get(t.runId)!));
    const simTrial = shown.find((t) => t.domain === 'simulation') ?? null;
    const reference = recordedReference(found, episodes, simTrial, p);
    const runOf = (t: ReplayTrial): GapReplayRunDto => replayRun(t, episodes.get(t.runId)!, rate, J);
    const sim = simTrial ? runOf(simTrial) : null;
    const real = shown.filter((t) => t.domain === 'real_robot').map(runOf);
    real.sort((a, b) => (a.trialIndex ?? 1e9) - (b.trialIndex ?? 1e9));

    return {
      parentTraceId: pair.parentTraceId,
      binding: pair.wbc,
      bindingName: found.bindingName,
      clipId: pair.clipId,
      clip: pair.clipName,
      calibrationId: pair.calibrationId,
      contract: found.contract,
      reference: clipToDto(reference),
      sim,
      real,
      notShown: pair.trials
        .filter((t) => t.use === 'excluded')
        .map((t) => ({ runId: t.runId, domain: t.domain, trialIndex: t.rolloutIndex, reason: t.reason ?? 'excluded' })),
      worst: this.worstFrame(reference, real, found.mpjpe, profile),
    };
  }

  /**
   * The worst frame over the real trials: per-frame MPJPE-l when every real trial has it,
   * else per-frame joint-position RMSE (with the reason MPJPE-l is unavailable).
   */
  private worstFrame(
    reference: MotionClip,
    real: GapReplayRunDto[],
    mpjpe: ReplayFound['mpjpe'],
    profile: RobotProfile,
  ): GapWorstFrameDto | null {
    const J = profile.joints.length;
    const rate = MB_METRICS_1.rateHz;
    let worst: GapWorstFrameDto | null = null;
    const allMpjpe =
      real.length > 0 &&
      real.every((r) => r.rootMeasured && r.trajectory.rootQuatWxyz !== null && mpjpe.get(r.runId)?.available === true);
    const noMp = real.find((r) => mpjpe.get(r.runId)?.available !== true);
    const why = allMpjpe
      ? 'per-frame MPJPE-l of the real trials against the reference (root-relative, FK on the robot model)'
      : `per-frame joint-position RMSE: MPJPE-l is unavailable for real trial ${trialNumber(noMp?.trialIndex ?? null)} (${(() => {
          const m = noMp ? mpjpe.get(noMp.runId) : null;
          return m && !m.available ? m.reason : 'no global root in the recording (no motion capture)';
        })()})`;
    for (const r of real) {
      const K = Math.min(r.trajectory.frames, reference.frameCount);
      let series: number[];
      if (allMpjpe) {
        this.evaluator ??= new ClipPairEvaluator(MB_METRICS_1, profile);
        const tl = this.evaluator.timeline(reference, {
          fps: rate,
          frameCount: r.trajectory.frames,
          rootPosM: Float64Array.from(r.trajectory.rootPosM!),
          rootQuatWxyz: Float64Array.from(r.trajectory.rootQuatWxyz!),
          jointPosRad: Float64Array.from(r.trajectory.jointPosRad),
        });
        series = frameMpjpeL(
          tl.ref.bodyPosM,
          tl.exec.bodyPosM,
          this.evaluator.fk.bodyCount,
          profile.rootBodyIndex,
          tl.K,
        ).map((m) => m * 1000);
      } else series = frameJointRmse(reference.jointPosRad, r.trajectory.jointPosRad, J).slice(0, K);
      series.forEach((v, k) => {
        if (worst === null || v > worst.value)
          worst = {
            frame: k,
            timeS: k / rate,
            runId: r.runId,
            trialIndex: r.trialIndex,
            measure: allMpjpe ? 'mpjpe_l' : 'joint_rmse',
            value: v,
            unit: allMpjpe ? 'mm' : 'rad',
            why,
          };
      });
    }
    return worst;
  }
}
