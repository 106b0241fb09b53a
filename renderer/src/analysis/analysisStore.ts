import { create } from 'zustand';
import type { AnalysisDocument } from '../../../src/api/contract';

// The Analysis panel's state (low rate): the campaign field, the reading and share asked for, the
// last analysis document (analysis.run: what `motionbench analyze --json` prints). Actions in
// analysisActions.ts.

export interface AnalysisState {
  campaignDir: string;
  reading: string;
  share: number;
  doc: AnalysisDocument | null;
  running: boolean;
  error: string | null;
}

export const useAnalysisStore = create<AnalysisState>(() => ({
  campaignDir: '',
  reading: 'mpjpe_l_mm',
  share: 0.8,
  doc: null,
  running: false,
  error: null,
}));
