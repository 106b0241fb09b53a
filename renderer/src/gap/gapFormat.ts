import type { GapClipDto, GapValueDto } from '../../../src/api/contract';
import type { GapSortState } from './gapStore';
import { trialNumber } from '../../../src/domain/trial/trialNumber';

// How the Gap review panel orders and writes the report's numbers, with the conventions of
// `motionbench report`'s Markdown (docs/GAP_REPORT.md). Pure: unit-tested in test/unit/apiGap.test.ts.

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
export const unavailableReason = (v: GapValueDto): string | null =>
  v.value === null ? (v.reason ?? 'unavailable') : null;

/** Trial counts as "3 (1 failed, 1 stopped)". */
export function trialCountsText(c: { used: number; failed: number; stopped: number }): string {
  return `${c.used}${c.failed ? ` (${c.failed} failed${c.stopped ? `, ${c.stopped} stopped` : ''})` : ''}`;
}

/** Label of a replayed run in the overlay and the legend. */
export function replayRunLabel(r: {
  domain: 'simulation' | 'real_robot';
  trialIndex: number | null;
  outcome: string | null;
  rootMeasured: boolean;
}): string {
  const what = r.domain === 'simulation' ? 'sim branch' : `real trial ${trialNumber(r.trialIndex)}`;
  const root = r.domain === 'real_robot' && !r.rootMeasured ? ' · root at reference' : '';
  return `${what}${r.outcome && r.outcome !== 'completed' ? ` · ${r.outcome.replace(/_/g, ' ')}` : ''}${root}`;
}
