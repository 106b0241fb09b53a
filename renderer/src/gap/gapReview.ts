import { create } from 'zustand';
import type { GapClipDto, GapReplayDto, GapReportDto, GapValueDto } from '../../../src/api/contract';
import { clipFromDto } from '../../../src/api/clipDto';
import { BUILTIN_LABEL } from '../../../src/domain/sim/builtinBinding';
import { ApiCallError } from '../api/consoleClient';
import { pause, resetPlayhead, seekTimeS } from '../playback/playback';
import { useClipStore } from '../stores/clipStore';
import { useConnectionStore } from '../stores/connectionStore';
import { addRun, clearRuns, endRun, setColorMode, setRunTrajectory, setRunVisible, useRunStore } from '../stores/runStore';

// The Gap review panel's state and actions (DESIGN §8 "Gap review"): a campaign's Table 11 per
// binding (gap.report, the numbers of `motionbench report`), the per-clip table sorted by a
// column the operator clicks (the report's rule: |Gap %| largest first, unavailable last, ties by
// clip name), and a click on a clip (gap.replay) that puts the reference on display as the ghost,
// overlays the simulation branch and the real trials through the run store (the same overlay as
// the Runs panel and the Qualification board), colours them by run (each its own colour; the
// operator can switch back to error colours) and moves the playhead to the worst frame.

/** A column of the per-clip table: a reading's JSON name or `clip`. */
export type GapSortColumn = string;

export interface GapSortState {
  column: GapSortColumn;
  /** false: the report's order (|Gap %| descending; clip names A→Z); true: reversed. */
  reversed: boolean;
}

export interface GapReviewState {
  open: boolean;
  campaignDir: string;
  report: GapReportDto | null;
  loading: boolean;
  error: string | null;
  sort: GapSortState;
  selected: string | null;
  replay: Omit<GapReplayDto, 'reference' | 'sim' | 'real'> & { runs: GapReplayRunInfo[] } | null;
  replaying: boolean;
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
  open: false,
  campaignDir: '',
  report: null,
  loading: false,
  error: null,
  sort: { column: 'mpjpe_l_mm', reversed: false },
  selected: null,
  replay: null,
  replaying: false,
}));

const message = (err: unknown): string => (err instanceof ApiCallError ? err.error.message : err instanceof Error ? err.message : String(err));
const client = () => useConnectionStore.getState().client;

export const toggleGapReview = (): void => useGapReviewStore.setState((s) => ({ open: !s.open }));
export const setGapCampaignDir = (campaignDir: string): void => useGapReviewStore.setState({ campaignDir });

/** A click on a column header: that column in the report's order, or reversed when it is already the sort column. */
export function clickSortColumn(column: GapSortColumn): void {
  useGapReviewStore.setState((s) => ({ sort: s.sort.column === column ? { column, reversed: !s.sort.reversed } : { column, reversed: false } }));
}

// ------------------------------------------------------------------ pure shaping (unit-tested)

/**
 * Per-clip rows in the order of `sort`: by |Gap %| of the reading, largest first, unavailable
 * gaps last, ties by clip name (as sortedClips in src/services/report/gapSection.ts); `clip`: by
 * name. `reversed` reverses the whole order (unavailable gaps then come first).
 */
export function sortGapClips(clips: readonly GapClipDto[], sort: GapSortState): GapClipDto[] {
  const mag = (c: GapClipDto) => {
    if (sort.column === 'clip') return 0;
    const g = c.readings[sort.column]?.gapPercent;
    return g && g.value !== null ? Math.abs(g.value) : -1;
  };
  const out = [...clips].sort((a, b) => mag(b) - mag(a) || a.clip.localeCompare(b.clip));
  return sort.reversed ? out.reverse() : out;
}

/** Four significant digits without exponent form (as the report's Markdown). */
function sig4(v: number): string {
  if (v === 0 || !Number.isFinite(v)) return String(v);
  const d = Math.max(0, 3 - Math.floor(Math.log10(Math.abs(v))));
  return v.toFixed(Math.min(d, 12));
}

/** Display unit of a reading (SR in %, MPJPE-l in cm, the rest in their stored unit). */
export function displayUnit(reading: string, storedUnit: string): string {
  if (reading === 'sr') return '%';
  if (reading === 'mpjpe_l_mm') return 'cm';
  return storedUnit === '1' ? '' : storedUnit;
}

/**
 * A value as the panel shows it, with the conventions of `motionbench report`'s Markdown: SR in %
 * (1 decimal), MPJPE-l in cm (2 decimals, stored in mm), progress-soft with 3 decimals, the rest
 * with 4 significant digits. Unavailable: `n/a` (the reason is shown beside it, never 0).
 */
export function formatGapValue(reading: string, v: GapValueDto): string {
  if (v.value === null) return 'n/a';
  if (reading === 'sr') return `${(100 * v.value).toFixed(1)}%`;
  if (reading === 'mpjpe_l_mm') return (v.value / 10).toFixed(2);
  if (reading === 'progress_soft') return v.value.toFixed(3);
  return sig4(v.value);
}

/** Gap % with its sign and 1 decimal; `n/a` when unavailable. */
export function formatGapPercent(v: GapValueDto): string {
  if (v.value === null) return 'n/a';
  return `${v.value >= 0 ? '+' : '-'}${Math.abs(v.value).toFixed(1)}%`;
}

/** Why a Gap % is unavailable, shortened for a cell ("Real is unavailable: …" keeps its reason). */
export const unavailableReason = (v: GapValueDto): string | null => (v.value === null ? (v.reason ?? 'unavailable') : null);

/** Trial counts as "3 (1 failed, 1 stopped)". */
export function trialCountsText(c: { used: number; failed: number; stopped: number }): string {
  return `${c.used}${c.failed ? ` (${c.failed} failed${c.stopped ? `, ${c.stopped} stopped` : ''})` : ''}`;
}

/** Label of a replayed run in the overlay and the legend. */
export function replayRunLabel(r: { domain: 'simulation' | 'real_robot'; trialIndex: number | null; outcome: string | null; rootMeasured: boolean }): string {
  const what = r.domain === 'simulation' ? 'sim branch' : `real trial ${r.trialIndex ?? '?'}`;
  const root = r.domain === 'real_robot' && !r.rootMeasured ? ' · root at reference' : '';
  return `${what}${r.outcome && r.outcome !== 'completed' ? ` · ${r.outcome.replace(/_/g, ' ')}` : ''}${root}`;
}

// ------------------------------------------------------------------ actions

/** Reads Table 11 of the campaign in the field. */
export async function openGapCampaign(): Promise<void> {
  const c = client();
  const dir = useGapReviewStore.getState().campaignDir.trim();
  if (!c) return;
  if (!dir) {
    useGapReviewStore.setState({ error: 'give the campaign folder (an absolute path on the machine running the services)' });
    return;
  }
  useGapReviewStore.setState({ loading: true });
  try {
    const report = await c.call('gap.report', { campaignDir: dir });
    useGapReviewStore.setState({ report, campaignDir: report.campaignDir, error: null, selected: null, replay: null });
  } catch (err) {
    useGapReviewStore.setState({ error: message(err), report: null });
  } finally {
    useGapReviewStore.setState({ loading: false });
  }
}

/** Click on a clip: reference ghost + sim branch + real trials in the viewport, playhead at the worst frame. */
export async function replayGapPair(parentTraceId: string): Promise<void> {
  const c = client();
  const dir = useGapReviewStore.getState().campaignDir.trim();
  if (!c || !dir) return;
  useGapReviewStore.setState({ selected: parentTraceId, replaying: true, error: null });
  try {
    const r = await c.call('gap.replay', { campaignDir: dir, parentTraceId });
    const { reference, sim, real, ...info } = r;
    pause();
    clearRuns();
    useClipStore.setState({ loaded: clipFromDto(reference), error: null, lastSource: null });
    resetPlayhead();
    const note = r.binding.startsWith('builtin') ? `builtin = ${BUILTIN_LABEL}` : undefined;
    const runs: GapReplayRunInfo[] = [];
    // Sim branch first: it gets colour slot 0 (blue), the real trials the next ones.
    for (const run of [...(sim ? [sim] : []), ...real]) {
      const id = `gap:${run.runId}`;
      const label = replayRunLabel(run);
      addRun({ id, label, domain: run.domain, source: 'campaign', live: false, ...(note && { note }) });
      setRunTrajectory(id, run.trajectory);
      endRun(id, run.outcome);
      runs.push({ id, label, domain: run.domain, rootMeasured: run.rootMeasured, resampling: run.resampling, sourceRateHz: run.sourceRateHz, outcome: run.outcome });
    }
    setColorMode('run');
    if (r.worst) seekTimeS(r.worst.timeS);
    useGapReviewStore.setState({ replay: { ...info, runs } });
  } catch (err) {
    useGapReviewStore.setState({ error: `replay ${parentTraceId}: ${message(err)}` });
  } finally {
    useGapReviewStore.setState({ replaying: false });
  }
}

/** Shows one run of the replay alone (the others hidden), or all again when it is already alone. */
export function soloGapRun(id: string): void {
  const replay = useGapReviewStore.getState().replay;
  if (!replay) return;
  const runs = useRunStore.getState().runs.filter((r) => replay.runs.some((x) => x.id === r.id));
  const alone = runs.every((r) => r.visible === (r.id === id));
  for (const r of runs) setRunVisible(r.id, alone ? true : r.id === id);
}
