import { createStore } from 'zustand/vanilla';
import type { LiveFramesOf } from '../../../src/api/contract';
import { SampleRing } from './sampleRing';

// The running real trial's live readings over the last LIVE_WINDOW_S seconds, for the Trial
// runner's rolling plot: every sample of every trial_job live batch (50 Hz on the contract timeline:
// frame MPJPE-l in mm, frame joint RMS error in rad) goes into a fixed ring; a new run starts it
// over. Transient (no React): `liveTrialRingStore.revision` moves with every batch, and the plot
// reads the ring at ≤ 10 Hz.

export const LIVE_WINDOW_S = 20;
const RING_CAPACITY = LIVE_WINDOW_S * 50;

export const liveTrialRing = new SampleRing(RING_CAPACITY, 2);

export interface LiveTrialRingState {
  revision: number;
  runId: string | null;
  /** Clip time of the first sample flagged failed in this run (the failure latches), s. */
  failureTimeS: number | null;
  failure: string | null;
}

export const liveTrialRingStore = createStore<LiveTrialRingState>(() => ({
  revision: 0,
  runId: null,
  failureTimeS: null,
  failure: null,
}));

const values = new Float64Array(2);

/** Adds one live batch of a real trial (trial/trialPushes.ts). */
export function recordTrialLive(e: Pick<LiveFramesOf<'trial_job'>, 'runId' | 'count' | 'timeS' | 'readings'>): void {
  const prev = liveTrialRingStore.getState();
  const sameRun = prev.runId === e.runId;
  if (!sameRun) liveTrialRing.clear();
  let failureTimeS = sameRun ? prev.failureTimeS : null;
  const r = e.readings;
  for (let i = 0; i < e.count; i++) {
    values[0] = r?.mpjpeLMm[i] ?? Number.NaN;
    values[1] = r?.jointRmseRad[i] ?? Number.NaN;
    liveTrialRing.push(e.timeS[i], values);
    if (failureTimeS === null && r?.failed?.[i]) failureTimeS = e.timeS[i];
  }
  liveTrialRingStore.setState({
    revision: prev.revision + 1,
    runId: e.runId,
    failureTimeS,
    failure: failureTimeS !== null ? (r?.failure ?? (sameRun ? prev.failure : null)) : null,
  });
}
