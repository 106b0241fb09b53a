import type {
  ApiParams,
  CapabilityGroupId,
  GapContractsDto,
  GapReplayDto,
  GapReportDto,
  MeshDto,
  QualificationBindingDto,
  QualificationCellDto,
  QualificationClipDto,
  QualificationReplayDto,
  QualificationReportDto,
} from '../../api/contract';
import { clipToDto } from '../../api/clipDto';
import { ClipPairEvaluator, MB_METRICS_1 } from '../../domain/metrics';
import { placedClip } from '../../domain/sim/referencePlacement';
import type { MotionClip } from '../../domain/motion/motionClip';
import { matrixCell } from '../../domain/qualification';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { readEpisodeFile } from '../episode/episodeReader';
import { buildCampaignReport } from '../qualification';
import { loadRobotProfile } from '../robot/loadRobotProfile';
import { ApiFailure } from './apiFailure';
import { withReadOnlyCampaign } from './campaignOpen';
import { GapReview } from './gapReview';
import { readProfileMesh } from './meshFiles';

// The board's reads of a campaign and of the model's files, run in the console's file worker
// (src/services/console/fileWorker.ts), never on the loop that carries STOP: a campaign folder and
// the files a model names are the lab's files, possibly damaged or hostile, and what they cost to
// read (SQLite rows, JSON records, MCAP episodes, mesh bytes) is theirs to choose. Each function
// takes the request's params and the robot model's file; the model is read once per file here.

const profiles = new Map<string, RobotProfile>();

/** The robot model `modelFile`, read once in this thread. */
export function profileOf(modelFile: string): RobotProfile {
  let p = profiles.get(modelFile);
  if (!p) {
    p = loadRobotProfile(modelFile);
    profiles.set(modelFile, p);
  }
  return p;
}

const gapReviews = new Map<string, GapReview>();
const gapReviewOf = (modelFile: string): GapReview => {
  let g = gapReviews.get(modelFile);
  if (!g) {
    g = new GapReview({ profile: () => profileOf(modelFile) });
    gapReviews.set(modelFile, g);
  }
  return g;
};

/** gap.report: Table 11 of a campaign for the Gap review panel (gapReview.ts). */
export const readGapReport = (p: ApiParams<'gap.report'>, modelFile: string): Promise<GapReportDto> =>
  gapReviewOf(modelFile).report(p);

/** gap.replay: one matched pair on the contract timeline, its episodes read here. */
export const readGapReplay = (p: ApiParams<'gap.replay'>, modelFile: string): Promise<GapReplayDto> =>
  gapReviewOf(modelFile).replay(p);

/** gap.contracts: the campaign under mb-metrics/1 and the peers' contracts (scoring what is missing). */
export const readGapContracts = (p: ApiParams<'gap.contracts'>, modelFile: string): Promise<GapContractsDto> =>
  gapReviewOf(modelFile).contracts(p);

/** robot.getMesh: the bytes of a mesh the model references, read and base64-encoded here. */
export const readModelMesh = (modelFile: string, name: string): MeshDto => readProfileMesh(profileOf(modelFile), name);

/** What the board's matrix holds in the campaign, and the clips' order in its workload snapshots. */
export interface CampaignBoardReport {
  report: QualificationReportDto;
  /** Clip id → position in the first snapshot that lists it. */
  snapshotOrder: [string, number][];
}

/** The stored part of qualification.report: the campaign's pairs, bindings and clips (no running job). */
export function readCampaignBoard(p: ApiParams<'qualification.report'>): Promise<CampaignBoardReport> {
  return withReadOnlyCampaign(
    p.campaignDir,
    (store) => {
      const r = buildCampaignReport(store);
      const clips = new Map<string, QualificationClipDto>();
      const durations = new Map<string, number>();
      const order = new Map<string, number>();
      for (const s of r.snapshots) {
        const snap = store.getWorkloadSnapshot(s.snapshotHash);
        for (const c of snap?.clips ?? []) durations.set(c.id, c.duration_s);
        snap?.clips.forEach((c, i) => order.has(c.id) || order.set(c.id, i));
      }
      for (const pr of r.pairs) {
        if (!clips.has(pr.clipId))
          clips.set(pr.clipId, {
            id: pr.clipId,
            name: pr.clipName,
            group: (pr.group as CapabilityGroupId | null) ?? null,
            durationS: durations.get(pr.clipId) ?? null,
          });
      }
      const cells: QualificationCellDto[] = r.pairs.map((pr) => {
        const c = matrixCell([pr]);
        return {
          bindingKey: pr.bindingKey,
          clipId: pr.clipId,
          state: pr.decision ? (pr.decision.admitted ? 'admitted' : 'rejected') : 'pending',
          reasons: pr.decision?.reasons ?? [],
          rollouts: pr.rollouts.length,
          sr: c.sr,
          progressSoft: c.progressSoft,
          mpjpeLMm: c.mpjpeLMm,
          decidedAt: pr.decidedAt,
        };
      });
      const bindings: QualificationBindingDto[] = r.bindings.map((b) => {
        const c = matrixCell(r.pairs.filter((pr) => pr.bindingKey === b.key));
        return {
          key: b.key,
          name: b.name,
          kind: b.kind,
          label: b.label,
          note: b.note,
          summary: {
            pairs: c.pairs,
            admitted: c.admitted,
            rejected: c.rejected,
            pending: c.pending,
            sr: c.sr,
            progressSoft: c.progressSoft,
            mpjpeLMm: c.mpjpeLMm,
          },
        };
      });
      return {
        report: {
          campaignDir: store.dir,
          campaignId: store.campaign.id,
          policy: r.policy.key,
          contract: r.contracts[0] ?? null,
          snapshots: r.snapshots.map((s) => ({ id: s.id, version: s.version, snapshotHash: s.snapshotHash })),
          bindings,
          clips: [...clips.values()],
          cells,
          generatedAt: r.generatedAt,
        },
        snapshotOrder: [...order],
      };
    },
    ': open it with create to start one',
  );
}

/**
 * qualification.replay: the worst rollout of a pair, its episode read and evaluated against the
 * reference here. `reference` is the pair's clip (core-v1's or an opened policy's motion), null
 * when the console knows no such clip (refused after the pair is found, as the pair's absence
 * says more).
 */
export async function readQualificationReplay(
  p: ApiParams<'qualification.replay'>,
  reference: MotionClip | null,
  modelFile: string,
): Promise<QualificationReplayDto> {
  const found = await withReadOnlyCampaign(
    p.campaignDir,
    (store) => {
      const r = buildCampaignReport(store);
      const pair = r.pairs.find((x) => x.bindingKey === p.bindingKey && x.clipId === p.clipId);
      if (!pair)
        throw new ApiFailure('not_found', `no pair ${p.bindingKey} × ${p.clipId} in this campaign`, 'params.clipId');
      let rollouts = pair.rollouts.map((x) => ({
        runId: x.runId,
        index: x.rolloutIndex,
        outcome: x.outcome,
        failed: x.failed,
        progressSoft: x.progressSoft,
        mpjpeLMm: x.mpjpeLMm,
      }));
      if (rollouts.length === 0) {
        rollouts = store
          .findEpisodes({ parentTraceId: pair.parentTraceId, executionDomain: 'simulation' })
          .filter((e) => e.status === 'finished')
          .map((e) => ({
            runId: e.runId,
            index: e.rolloutIndex,
            outcome: e.outcome,
            failed: e.outcome === 'hard_failure',
            progressSoft: null,
            mpjpeLMm: null,
          }));
      }
      if (rollouts.length === 0)
        throw new ApiFailure(
          'not_found',
          `pair ${p.bindingKey} × ${p.clipId} has no finished rollout yet`,
          'params.clipId',
        );
      // Worst: a failed rollout (lowest progress first), else the highest MPJPE-l.
      const score = (x: (typeof rollouts)[number]) =>
        x.failed ? 1e9 - (x.progressSoft ?? 0) * 1e6 : (x.mpjpeLMm ?? 0);
      const worst = [...rollouts].sort((a, b) => score(b) - score(a))[0];
      return { pair, worst, file: store.episodeFile(worst.runId) };
    },
    ': open it with create to start one',
  );
  const ep = await readEpisodeFile(found.file);
  if (!reference)
    throw new ApiFailure(
      'not_found',
      `clip ${p.clipId} is neither in core-v1 nor the motion of an opened policy: replay of other workloads is not supported yet`,
      'params.clipId',
    );
  const clip = reference;
  const profile = profileOf(modelFile);
  const n = ep.executed.length;
  const hasRoot = n > 0 && ep.executed.every((m) => m.rootPosM !== null);
  const hasQuat = n > 0 && ep.executed.every((m) => m.rootQuatWxyz !== null);
  const exec = {
    frames: n,
    timeS: ep.executed.map((m) => m.timeS),
    rootPosM: hasRoot ? ep.executed.flatMap((m) => m.rootPosM!) : null,
    rootQuatWxyz: hasQuat ? ep.executed.flatMap((m) => m.rootQuatWxyz!) : null,
    jointPosRad: ep.executed.flatMap((m) => m.jointPosRad),
  };
  let worst: QualificationReplayDto['worst'] = {
    frame: 0,
    timeS: 0,
    kind: 'max_error',
    detail: 'no executed frames',
  };
  if (n >= 2 && exec.rootPosM && exec.rootQuatWxyz) {
    const evaluator = new ClipPairEvaluator(MB_METRICS_1, profile);
    const t0 = exec.timeS[0];
    const fps = n > 1 ? (n - 1) / (exec.timeS[n - 1] - t0) : MB_METRICS_1.rateHz;
    // The reference as placed for the run, as the episode's results name it (absent or 0: unplaced).
    const lift = Number(ep.metadata.result?.reference_lift_m);
    const ev = evaluator.evaluate(placedClip(clip, Number.isFinite(lift) ? lift : 0), {
      fps,
      frameCount: n,
      rootPosM: Float64Array.from(exec.rootPosM),
      rootQuatWxyz: Float64Array.from(exec.rootQuatWxyz),
      jointPosRad: Float64Array.from(exec.jointPosRad),
    });
    const f = ev.metrics.failure;
    if (f.available && f.value) {
      worst = {
        frame: f.value.frame,
        timeS: f.value.frame / MB_METRICS_1.rateHz,
        kind: 'first_failure',
        detail: `${f.value.condition} of ${f.value.body}: ${f.value.error.toFixed(3)} > ${f.value.threshold}`,
      };
    } else {
      // The frame with the largest body error (root translation removed, as MPJPE-l).
      const B = ev.exec.bodyPosM.length / ev.K / 3;
      const root = profile.rootBodyIndex;
      let best = -1;
      let bestK = 0;
      let bestB = 0;
      for (let k = 0; k < ev.K; k++) {
        const o = k * B * 3;
        for (let b = 0; b < B; b++) {
          let s = 0;
          for (let a = 0; a < 3; a++) {
            const d =
              ev.exec.bodyPosM[o + 3 * b + a] -
              ev.exec.bodyPosM[o + 3 * root + a] -
              (ev.ref.bodyPosM[o + 3 * b + a] - ev.ref.bodyPosM[o + 3 * root + a]);
            s += d * d;
          }
          if (s > best) {
            best = s;
            bestK = k;
            bestB = b;
          }
        }
      }
      worst = {
        frame: bestK,
        timeS: bestK / MB_METRICS_1.rateHz,
        kind: 'max_error',
        detail: `largest body error ${(Math.sqrt(best) * 100).toFixed(1)} cm (${profile.bodies[bestB]?.name ?? `body ${bestB}`})`,
      };
    }
  }
  return {
    bindingKey: p.bindingKey,
    clipId: p.clipId,
    runId: found.worst.runId,
    rolloutIndex: found.worst.index,
    outcome: found.worst.outcome,
    admitted: found.pair.decision ? found.pair.decision.admitted : null,
    reasons: found.pair.decision?.reasons ?? [],
    reference: clipToDto(clip),
    executed: exec,
    worst,
  };
}
