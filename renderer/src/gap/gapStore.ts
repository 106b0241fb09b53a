import { create } from 'zustand';
import type { GapContractsDto, GapReplayDto, GapReportDto } from '../../../src/api/contract';

// The Gap review panel's state (DESIGN §8 "Gap review"), low rate: the campaign field, the report
// (gap.report: the numbers of `motionbench report`), the per-clip sort, the clip replayed and
// what the replay drew. Actions in gapActions.ts, formatting in gapFormat.ts.

/** A column of the per-clip table: a reading's JSON name or `clip`. */
export type GapSortColumn = string;

export interface GapSortState {
  column: GapSortColumn;
  /** false: the report's order (|Gap %| descending; clip names A→Z); true: reversed. */
  reversed: boolean;
}

export interface GapReviewState {
  campaignDir: string;
  report: GapReportDto | null;
  loading: boolean;
  error: string | null;
  sort: GapSortState;
  selected: string | null;
  replay: (Omit<GapReplayDto, 'reference' | 'sim' | 'real'> & { runs: GapReplayRunInfo[] }) | null;
  replaying: boolean;
  /** The metric contracts the comparison shows beside mb-metrics/1. */
  peerContracts: ('sonic-eval/1' | 'holomotion-eval/1')[];
  contracts: GapContractsDto | null;
  contractsBusy: boolean;
}

/** A run of the replay as the legend lists it. */
export interface GapReplayRunInfo {
  id: string;
  label: string;
  domain: 'simulation' | 'real_robot';
  rootMeasured: boolean;
  resampling: string;
  sourceRateHz: number;
  outcome: string | null;
}

export const useGapReviewStore = create<GapReviewState>(() => ({
  campaignDir: '',
  report: null,
  loading: false,
  error: null,
  sort: { column: 'mpjpe_l_mm', reversed: false },
  selected: null,
  replay: null,
  replaying: false,
  peerContracts: ['sonic-eval/1', 'holomotion-eval/1'],
  contracts: null,
  contractsBusy: false,
}));

export const setGapCampaignDir = (campaignDir: string): void => useGapReviewStore.setState({ campaignDir });
