import type { AnalysisDocument, GapCellDoc } from '../../../src/api/contract';

// The cells that stand for a binding's row of Table 11 in the Analysis panel. A binding's row is a
// pair-cluster bootstrap over its matched pairs; with a single matched pair there is none (the
// document says so, with the reason), and the row is that pair's clip cell instead: its simulation
// rollouts and hardware trials resampled (docs/ANALYSIS.md §1), as `motionbench analyze` prints it.
// The label says which, so a one-pair CI is never read as a CI over clips.

export interface BindingGapRows {
  readonly label: string;
  readonly cells: readonly GapCellDoc[];
  /** The one matched pair whose episodes the cells resample, or null for a row over pairs. */
  readonly onePair: string | null;
}

export function bindingGapRows(g: AnalysisDocument['gaps'][number]): BindingGapRows {
  const only = g.clips.length === 1 ? g.clips[0] : null;
  if (!only) return { label: g.binding_name, cells: g.readings, onePair: null };
  return {
    label: `${g.binding_name} (1 pair, ${only.clip_name}: its episodes resampled)`,
    cells: only.readings,
    onePair: only.clip_name,
  };
}
