// Reads what the campaign analysis needs (src/domain/analysis) from a campaign's index, and runs it.
//
// The score matrix: for every binding × clip, each reading averaged over the pair's counted
// episodes of one domain — `completed` and `hard_failure` finished episodes with stored metrics
// under the analysis's contract (as Table 11 counts them, docs/GAP_REPORT.md). Domain `sim` takes
// every simulation episode of the pair (qualification rollouts and the simulation branches of
// matched trials alike: both are the binding on that clip in MuJoCo); domain `real`, the hardware
// trials. A reading missing from any of a pair's episodes leaves that cell without it.
// The matched pairs (and so the gaps) are Table 11's own (buildGapSection).
// One rollout counts once: a rollout (a pair's branch × rollout index, which fixes its seed) recorded
// more than once — two writers on one campaign before the writer lock, a hand-merged campaign —
// counts by its first settled episode (ended first, then run id: the rule the gap report fills a
// trial with), and the others are listed as duplicates, never taken as repeats. Every metrics row
// read here is checked against its result_json by the store (episodeResults), so the score matrix
// and the gaps (read from result_json by buildGapSection) are the same numbers.
// Reliability of repeated simulation rollouts: a matched pair has one simulation branch, so its
// ICC has no repeats; a qualification pair has N seeded rollouts from slightly perturbed starts
// (mb-admission/1: 3). Their ICC(A,1) per binding, pairs × rollouts, says whether the simulator's
// own repeats agree better than the clips differ, the counterpart of the hardware trials' ICC.

import { analyzeCampaign, type CampaignAnalysis, type ReadingCell } from '../../domain/analysis/campaignAnalysis';
import { repeatReliability, type Reliability } from '../../domain/analysis/gapUncertainty';
import { selectClips, type ClipSelection } from '../../domain/analysis/clipSelection';
import { denseScores } from '../../domain/analysis/scoreMatrix';
import type { Unavailable } from '../../domain/stats/result';
import { MB_METRICS_1 } from '../../domain/metrics/metricContract';
import { NUMERIC_READINGS, type NumericReadingKey } from '../../domain/metrics/readings';
import type { EpisodeResultRow, MetricScalars } from '../../domain/trace/records';
import { bindingName } from '../../domain/wbc/bindingName';
import { buildGapSection, COUNTED_OUTCOMES } from '../report/gapSection';
import { calibratedPairs, type CalibratedPair } from './calibratedPairs';
import type { CampaignStore } from '../trace';

export type AnalysisDomain = 'sim' | 'real';

/** MetricScalars column of each numeric reading. */
const SCALAR_OF: Record<NumericReadingKey, keyof MetricScalars> = {
  progressSoft: 'progressSoft',
  mpjpeLMm: 'mpjpeLMm',
  jointPosRmseRad: 'jointPosRmse',
  jointVelRmseRadS: 'jointVelRmse',
  jointAccRmsRadS2: 'jointAccRms',
  jointAccP95RadS2: 'jointAccP95',
  jointJerkRmsRadS3: 'jointJerkRms',
  jointJerkP95RadS3: 'jointJerkP95',
};

export interface CampaignAnalysisOptions {
  reading: NumericReadingKey;
  share: number;
  seed: number;
  domain?: AnalysisDomain;
  B?: number;
  btB?: number;
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
}

export interface CampaignAnalysisResult {
  campaign: { id: string; name: string; dir: string };
  contract: string | null;
  domain: AnalysisDomain;
  seed: number;
  B: number;
  btB: number;
  /** Display names: binding key → bindingName, clip id → clip name. */
  bindingNames: Record<string, string>;
  clipNames: Record<string, string>;
  /** The matched pair's parent trace per binding and clip (`${binding}\u0000${clip}`): what Gap review replays. */
  matchedParents: Record<string, string>;
  /** The qualification pairs with a calibrated start: what `motionbench sensitivity --pair` accepts. */
  sensitivityPairs: CalibratedPair[];
  /** Per binding, ICC(A,1) of its qualification pairs' seeded simulation rollouts, per reading. */
  rolloutReliability: RolloutReliability[];
  /** Episodes left out because their rollout was already counted (by `keptRunId`). */
  duplicateRollouts: DuplicateRollout[];
  analysis: CampaignAnalysis;
}

export interface DuplicateRollout {
  runId: string;
  keptRunId: string;
  parentTraceId: string;
  executionDomain: string;
  rolloutIndex: number;
}

/**
 * The counted episodes with one episode per rollout (parent × domain × rollout index): the first
 * settled (ended first, then run id); the later ones are duplicates. Episodes without a rollout
 * index are kept as they are.
 */
export function dedupeRollouts(rows: readonly EpisodeResultRow[]): {
  kept: EpisodeResultRow[];
  duplicates: DuplicateRollout[];
} {
  const order = [...rows].sort(
    (a, b) => (a.endedAt ?? '\uffff').localeCompare(b.endedAt ?? '\uffff') || a.runId.localeCompare(b.runId),
  );
  const first = new Map<string, string>();
  const dropped = new Map<string, DuplicateRollout>();
  for (const r of order) {
    if (r.rolloutIndex === null) continue;
    const slot = `${r.parentTraceId}\u0000${r.executionDomain}\u0000${r.rolloutIndex}`;
    const kept = first.get(slot);
    if (kept === undefined) first.set(slot, r.runId);
    else
      dropped.set(r.runId, {
        runId: r.runId,
        keptRunId: kept,
        parentTraceId: r.parentTraceId,
        executionDomain: r.executionDomain,
        rolloutIndex: r.rolloutIndex,
      });
  }
  return { kept: rows.filter((r) => !dropped.has(r.runId)), duplicates: [...dropped.values()] };
}

export interface RolloutReliability {
  binding: string;
  /** Qualification pairs of the binding with counted rollouts. */
  pairs: number;
  readings: Reliability[];
}

/** Qualification rollouts (no calibration, a rollout index) grouped binding → pair, in rollout order. */
function qualificationRolloutReliability(rows: readonly EpisodeResultRow[]): RolloutReliability[] {
  const byBinding = new Map<string, Map<string, EpisodeResultRow[]>>();
  for (const r of rows) {
    if (r.calibrationId !== null || r.rolloutIndex === null || !counted(r)) continue;
    const b = `${r.bindingId}@${r.bindingVersion}`;
    const pairs = byBinding.get(b) ?? new Map<string, EpisodeResultRow[]>();
    pairs.set(r.parentTraceId, [...(pairs.get(r.parentTraceId) ?? []), r]);
    byBinding.set(b, pairs);
  }
  return [...byBinding].map(([binding, pairs]) => {
    const ordered = [...pairs.values()].map((eps) => [...eps].sort((a, b) => a.rolloutIndex! - b.rolloutIndex!));
    return {
      binding,
      pairs: ordered.length,
      readings: NUMERIC_READINGS.map((key) => {
        const table = ordered.flatMap((eps) => {
          const vs = readingValues(eps, key);
          return vs ? [vs] : [];
        });
        return repeatReliability(table, ordered.length, key, 'sim');
      }),
    };
  });
}

/** Finished with an outcome Table 11 counts and stored metrics. */
const counted = (r: EpisodeResultRow): boolean =>
  r.status === 'finished' && r.outcome !== null && COUNTED_OUTCOMES.includes(r.outcome) && r.metrics !== null;

/** One reading of each episode, in order; null when some episode lacks it. */
function readingValues(eps: readonly EpisodeResultRow[], key: NumericReadingKey): number[] | null {
  const vs = eps.map((e) => e.metrics![SCALAR_OF[key]] as number | null);
  return vs.every((v): v is number => typeof v === 'number' && Number.isFinite(v)) ? vs : null;
}

function readingCells(rows: readonly EpisodeResultRow[]): ReadingCell[] {
  const byPair = new Map<string, EpisodeResultRow[]>();
  for (const r of rows) {
    if (!counted(r)) continue;
    const k = `${r.bindingId}@${r.bindingVersion}\u0000${r.clipId}`;
    byPair.set(k, [...(byPair.get(k) ?? []), r]);
  }
  return [...byPair].map(([k, eps]) => {
    const [binding, clip] = k.split('\u0000');
    const readings: Partial<Record<NumericReadingKey, number>> = {};
    for (const key of NUMERIC_READINGS) {
      const vs = readingValues(eps, key);
      if (vs) readings[key] = vs.reduce((a, b) => a + b, 0) / vs.length;
    }
    return { binding, clip, episodes: eps.length, readings };
  });
}

/**
 * The score cells of one domain under one contract: the one most of that domain's episodes were
 * computed under (mb-metrics/1 on a tie), so that the CLI's list, the Trial runner and the analysis
 * pick the same matrix.
 */
function campaignCells(
  store: CampaignStore,
  domain: AnalysisDomain,
): {
  contract: string | null;
  rows: number;
  cells: ReadingCell[];
  episodes: EpisodeResultRow[];
  duplicates: DuplicateRollout[];
} {
  const all = store.episodeResults({ executionDomain: domain === 'sim' ? 'simulation' : 'real_robot' });
  const perContract = new Map<string, number>();
  for (const r of all) perContract.set(r.contractId, (perContract.get(r.contractId) ?? 0) + 1);
  const contract =
    [...perContract].sort(
      (a, b) =>
        b[1] - a[1] || Number(b[0] === MB_METRICS_1.id) - Number(a[0] === MB_METRICS_1.id) || a[0].localeCompare(b[0]),
    )[0]?.[0] ?? null;
  const { kept: rows, duplicates } = dedupeRollouts(all.filter((r) => r.contractId === contract && counted(r)));
  return { contract, rows: rows.length, cells: readingCells(rows), episodes: rows, duplicates };
}

/**
 * Only the minimal clip set (the selection is deterministic: no bootstrap), for `motionbench trial
 * --list --minimal-set` and the Trial runner: the clip ids of the smallest prefix reaching `share`.
 */
export function campaignMinimalClipSet(
  store: CampaignStore,
  options: { reading: NumericReadingKey; share: number; domain?: AnalysisDomain },
): ClipSelection | Unavailable {
  const { cells } = campaignCells(store, options.domain ?? 'sim');
  const matrix = cells.flatMap((c) => {
    const v = c.readings[options.reading];
    return v === undefined ? [] : [{ binding: c.binding, clip: c.clip, value: v }];
  });
  return selectClips(denseScores(matrix), { share: options.share });
}

export function runCampaignAnalysis(store: CampaignStore, options: CampaignAnalysisOptions): CampaignAnalysisResult {
  const domain = options.domain ?? 'sim';
  const say = options.progress ?? (() => {});
  say('reading the matched pairs (Table 11)');
  const gap = buildGapSection(store);
  const { contract, rows: rowCount, cells, episodes, duplicates } = campaignCells(store, domain);
  // the simulator's repeats, whichever domain the score matrix is of
  const simSide = domain === 'sim' ? { episodes, duplicates } : campaignCells(store, 'sim');
  const simEpisodes = simSide.episodes;
  const duplicateRollouts = domain === 'sim' ? duplicates : [...duplicates, ...simSide.duplicates];
  say(`${cells.length} binding × clip cells from ${rowCount} ${domain === 'sim' ? 'simulation' : 'hardware'} episodes`);
  if (duplicateRollouts.length > 0)
    say(
      `${duplicateRollouts.length} duplicate rollout episode(s) not counted (a rollout recorded more than once; each counts once): ${duplicateRollouts
        .slice(0, 5)
        .map((d) => `${d.runId} repeats ${d.keptRunId}`)
        .join(', ')}${duplicateRollouts.length > 5 ? ', …' : ''}`,
    );

  const bindingNames: Record<string, string> = {};
  for (const b of store.listBindings()) bindingNames[`${b.id}@${b.version}`] = bindingName(b.binding);
  const clipNames: Record<string, string> = {};
  for (const s of store.listWorkloadSnapshots()) {
    for (const c of store.getWorkloadSnapshot(s.snapshotHash)?.clips ?? []) clipNames[c.id] ??= c.name;
  }
  const matchedParents: Record<string, string> = {};
  for (const p of gap.pairs) {
    clipNames[p.clipId] ??= p.clipName;
    matchedParents[`${p.wbc}\u0000${p.clipId}`] = p.parentTraceId;
  }

  const B = options.B ?? 2000;
  const btB = options.btB ?? 1000;
  say(`redundancy, selection and Bradley–Terry on ${options.reading}; gap CIs with ${B} replicates`);
  const analysis = analyzeCampaign(cells, gap.matched, {
    reading: options.reading,
    share: options.share,
    seed: options.seed,
    B,
    btB,
  });
  return {
    campaign: { id: store.campaign.id, name: store.campaign.name, dir: store.dir },
    contract,
    domain,
    seed: options.seed,
    B,
    btB,
    bindingNames,
    clipNames,
    matchedParents,
    sensitivityPairs: calibratedPairs(store),
    rolloutReliability: qualificationRolloutReliability(simEpisodes),
    duplicateRollouts,
    analysis,
  };
}
