// The analysis of a campaign: from the per-(binding, clip) reading means and
// the matched pairs, everything `motionbench analyze` and the console's Analysis panel show.
// Pure: the services read the store (src/services/analysis) and hand the numbers in.
//
//   readings' redundancy  observations = (binding, clip) cells with all seven error readings;
//                         ρ CIs resample clips (a clip's cells move together)
//   clips' redundancy     observations = bindings, variables = clips (the chosen reading)
//   selection             greedy minimal clip set (clipSelection.ts) on the chosen reading
//   Bradley–Terry         bindings ranked by the clips (all, and the minimal set)
//   gaps                  Table 11 with CIs, HL medians and ICC reliability (gapUncertainty.ts)

import type { MatchedPair } from '../metrics/aggregate';
import { NUMERIC_READINGS, type NumericReadingKey } from '../metrics/readings';
import type { Unavailable } from '../stats/result';
import { bradleyTerry, type BradleyTerryRanking } from './bradleyTerry';
import { selectClips, type ClipSelection } from './clipSelection';
import { gapUncertainty, type BindingGapUncertainty } from './gapUncertainty';
import { redundancyAudit, type RedundancyAudit } from './redundancy';
import { clipColumn, denseScores, type DenseScores, type ScoreCell } from './scoreMatrix';

/** The seven error readings of mb-metrics/1 (progress-soft, a completion share, is not one). */
export const ERROR_READINGS: readonly NumericReadingKey[] = NUMERIC_READINGS.filter((k) => k !== 'progressSoft');

/** Which way is better for a reading: lower for every error reading, higher for progress-soft. */
export const betterOf = (key: NumericReadingKey): 'lower' | 'higher' => (key === 'progressSoft' ? 'higher' : 'lower');

export interface ReadingCell {
  readonly binding: string;
  readonly clip: string;
  /** Counted episodes averaged. */
  readonly episodes: number;
  /** Mean of each reading over those episodes; absent where some episode lacks it. */
  readonly readings: Partial<Record<NumericReadingKey, number>>;
}

export interface AnalysisOptions {
  readonly reading: NumericReadingKey;
  readonly share: number;
  readonly seed: number;
  /** Bootstrap replicates of the gap CIs and ρ CIs (default 2,000) and of Bradley–Terry (default 1,000). */
  readonly B?: number;
  readonly btB?: number;
  readonly level?: number;
  readonly lambda?: number;
}

export interface RankMove {
  readonly binding: string;
  readonly fullRank: number;
  readonly minimalRank: number | null;
  /** fullRank − minimalRank: positive = moved up on the minimal set. */
  readonly moved: number | null;
}

export interface CampaignAnalysis {
  readonly reading: NumericReadingKey;
  readonly better: 'lower' | 'higher';
  readonly matrix: readonly ScoreCell[];
  readonly dense: DenseScores;
  readonly readingRedundancy: RedundancyAudit | Unavailable;
  readonly clipRedundancy: RedundancyAudit | Unavailable;
  readonly selection: ClipSelection | Unavailable;
  readonly bradleyTerry: BradleyTerryRanking | Unavailable;
  readonly bradleyTerryMinimal: BradleyTerryRanking | Unavailable;
  readonly rankMoves: readonly RankMove[];
  readonly gaps: readonly BindingGapUncertainty[];
}

function ranking(dense: DenseScores, clips: readonly string[], options: AnalysisOptions) {
  const judges = clips.map((c) => clipColumn(dense, dense.clips.indexOf(c)));
  return bradleyTerry(dense.bindings, judges, betterOf(options.reading), {
    seed: options.seed,
    B: options.btB ?? 1000,
    ...(options.level !== undefined ? { level: options.level } : {}),
  });
}

export function analyzeCampaign(
  cells: readonly ReadingCell[],
  matched: readonly MatchedPair[],
  options: AnalysisOptions,
): CampaignAnalysis {
  const B = options.B ?? 2000;
  const common = {
    seed: options.seed,
    B,
    ...(options.level !== undefined ? { level: options.level } : {}),
    ...(options.lambda !== undefined ? { lambda: options.lambda } : {}),
  };
  const matrix: ScoreCell[] = cells.flatMap((c) => {
    const v = c.readings[options.reading];
    return v === undefined ? [] : [{ binding: c.binding, clip: c.clip, value: v }];
  });
  const dense = denseScores(matrix);

  const complete = cells.filter((c) => ERROR_READINGS.every((k) => c.readings[k] !== undefined));
  const readingRedundancy: RedundancyAudit | Unavailable =
    complete.length >= 3
      ? redundancyAudit(
          ERROR_READINGS,
          ERROR_READINGS.map((k) => complete.map((c) => c.readings[k]!)),
          { ...common, clusterKeys: complete.map((c) => c.clip) },
        )
      : {
          available: false,
          code: 'too-few',
          reason: `${complete.length} binding × clip cells have all seven error readings; the audit needs at least 3`,
        };
  const clipRedundancy: RedundancyAudit | Unavailable =
    dense.bindings.length >= 3 && dense.clips.length >= 2
      ? redundancyAudit(
          dense.clips,
          dense.clips.map((_, i) => clipColumn(dense, i)),
          common,
        )
      : {
          available: false,
          code: 'too-few',
          reason: `clips are judged across bindings: needs at least 3 bindings and 2 clips with a score for every binding (have ${dense.bindings.length} and ${dense.clips.length})`,
        };

  const selection = selectClips(dense, {
    share: options.share,
    ...(options.lambda !== undefined ? { lambda: options.lambda } : {}),
  });
  const bt = dense.clips.length > 0 ? ranking(dense, dense.clips, options) : noClips();
  const btMin = selection.available ? ranking(dense, selection.minimalSet, options) : selection;
  const rankMoves: RankMove[] = bt.available
    ? bt.strengths.map((s) => {
        const m = btMin.available ? btMin.strengths.find((x) => x.player === s.player)!.rank : null;
        return { binding: s.player, fullRank: s.rank, minimalRank: m, moved: m === null ? null : s.rank - m };
      })
    : [];
  return {
    reading: options.reading,
    better: betterOf(options.reading),
    matrix,
    dense,
    readingRedundancy,
    clipRedundancy,
    selection,
    bradleyTerry: bt,
    bradleyTerryMinimal: btMin,
    rankMoves,
    gaps: gapUncertainty(matched, {
      seed: options.seed,
      B,
      ...(options.level !== undefined ? { level: options.level } : {}),
    }),
  };
}

const noClips = (): Unavailable => ({
  available: false,
  code: 'empty',
  reason: 'no clip has a score for every binding',
});
