import { create } from 'zustand';
import type { SensitivityDocument } from '../../../src/api/contract';

// The Analysis panel's start-state sensitivity (low rate): the pair and the run's settings asked
// for, the last document (analysis.sensitivity: what `motionbench sensitivity --json` prints), and
// which response's Grams the charts show. Actions in analysisActions.ts.

export type SensitivityResponse = SensitivityDocument['responses'][number]['response'];

export interface SensitivityState {
  /** A matched pair's parent trace id (the pair sensitivity perturbs). */
  pairId: string;
  /** Scales in σ, comma-separated as typed. */
  scales: string;
  seconds: number;
  response: SensitivityResponse;
  doc: SensitivityDocument | null;
  running: boolean;
  error: string | null;
}

export const useSensitivityStore = create<SensitivityState>(() => ({
  pairId: '',
  scales: '1, 3, 10',
  seconds: 2,
  response: 'body_position_mm',
  doc: null,
  running: false,
  error: null,
}));
