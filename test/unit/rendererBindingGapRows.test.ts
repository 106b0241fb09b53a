import { describe, expect, it } from 'vitest';
import type { AnalysisDocument, GapCellDoc } from '../../src/api/contract';
import { bindingGapRows } from '../../renderer/src/analysis/bindingGapRows';

type Gap = AnalysisDocument['gaps'][number];
const cell = (gap: number | null, reason?: string): GapCellDoc =>
  ({
    reading: 'mpjpe_l_mm',
    gap_pct: gap,
    ci: gap === null ? null : [gap - 1, gap + 1],
    ...(reason ? { reason } : {}),
  }) as GapCellDoc;
const clip = (name: string, gap: number) => ({
  clip: `clip-${name}`,
  clip_name: name,
  parent_trace_id: null,
  readings: [cell(gap)],
});

describe('bindingGapRows: the cells that stand for a binding row in the Analysis panel', () => {
  it('a binding with several matched pairs: its row over pairs, labelled by the binding alone', () => {
    const g = {
      binding: 'b',
      binding_name: 'wbc',
      readings: [cell(6.5)],
      groups: [],
      clips: [clip('a', 1), clip('b', 2)],
    };
    const r = bindingGapRows(g as unknown as Gap);
    expect(r).toEqual({ label: 'wbc', cells: g.readings, onePair: null });
  });

  it("one matched pair: that pair's episode-resampled cell, and the label says so", () => {
    const g = {
      binding: 'b',
      binding_name: 'beyondmimic Jump_wose',
      readings: [cell(null, 'one matched pair: a pair-cluster bootstrap needs at least 2')],
      groups: [],
      clips: [clip('Jump_wose', 7.3)],
    };
    const r = bindingGapRows(g as unknown as Gap);
    expect(r.onePair).toBe('Jump_wose');
    expect(r.cells[0].gap_pct).toBe(7.3);
    expect(r.label).toMatch(/1 pair, Jump_wose: its episodes resampled/);
    // negative control: the row cell itself has no value to draw
    expect(g.readings[0].gap_pct).toBeNull();
  });
});
