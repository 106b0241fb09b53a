import { create } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { SimBindingInfo, SimEndEvent } from '../../../src/api/contract';

// Simulation runs started from this console (the Sim trial panel). Low rate, React state: the
// form, each run's identity, state and end. The live figures (frames received, the latest live
// readings) change ~15 times a second and live in a transient store read by throttled panels.

export type SimRunUiState = 'starting' | 'running' | 'stopping' | 'ended';

export interface SimRunRecord {
  runId: string;
  /** #1, #2, … in the order they were started in this console. */
  ordinal: number;
  clipId: string;
  clipName: string;
  connectionId: string;
  connectionName: string;
  binding: SimBindingInfo;
  seed: number;
  paceRealTime: number | null;
  durationS: number;
  plannedFrames: number;
  state: SimRunUiState;
  /** Renderer clock (Date.now) when the run was accepted, a stop was asked, the end arrived. */
  startedAtMs: number;
  stopRequestedAtMs: number | null;
  endReceivedAtMs: number | null;
  end: SimEndEvent | null;
  /** The full recording replaced the streamed frames (some were skipped for display). */
  replayFromRecording: boolean;
}

/** The builtin tracker with or without root assist, or the policy open in the Policy panel. */
export type BindingChoice = 'builtin' | 'assist' | 'policy';
export type PaceChoice = '1' | '2' | '5' | 'max';

export interface SimFormState {
  connectionId: string;
  bindingChoice: BindingChoice;
  /** N/m, as typed. */
  assistText: string;
  seedText: string;
  pace: PaceChoice;
  /** Run only the first N s ('' = the whole clip). */
  maxSecondsText: string;
  /** The operator's override: run even while a real trial runs on this machine (sim.run allowDuringRealTrial). */
  allowDuringRealTrial: boolean;
}

export interface SimState {
  form: SimFormState;
  runs: SimRunRecord[];
  /** sim.run in flight. */
  starting: boolean;
  /** The last refusal or failure, shown under the form. */
  error: string | null;
}

export const DEFAULT_ASSIST_N_PER_M = 3000;

export const useSimStore = create<SimState>(() => ({
  form: {
    connectionId: 'embedded-sim',
    bindingChoice: 'assist',
    assistText: String(DEFAULT_ASSIST_N_PER_M),
    seedText: '0',
    pace: '1',
    maxSecondsText: '',
    allowDuringRealTrial: false,
  },
  runs: [],
  starting: false,
  error: null,
}));

export const patchSimForm = (patch: Partial<SimFormState>): void =>
  useSimStore.setState((s) => ({ form: { ...s.form, ...patch }, error: null }));

export const patchSimRun = (runId: string, patch: Partial<SimRunRecord>): void =>
  useSimStore.setState((s) => ({ runs: s.runs.map((r) => (r.runId === runId ? { ...r, ...patch } : r)) }));

export interface SimLive {
  framesReceived: number;
  droppedFrames: number;
  lastTimeS: number;
  /** Latest live readings (streaming mb-metrics/1): frame MPJPE-l (mm), frame joint RMS error (rad), first failure frame (−1 none). */
  mpjpeLMm: number | null;
  jointRmseRad: number | null;
  firstFailureFrame: number | null;
}

export interface SimLiveState {
  revision: number;
  runs: ReadonlyMap<string, SimLive>;
}

const live = new Map<string, SimLive>();
export const simLiveStore = createStore<SimLiveState>(() => ({ revision: 0, runs: live }));

/** The live figures of a run before its first frame. */
export const emptySimLive = (): SimLive => ({
  framesReceived: 0,
  droppedFrames: 0,
  lastTimeS: Number.NaN,
  mpjpeLMm: null,
  jointRmseRad: null,
  firstFailureFrame: null,
});

/** The live figures of run `runId`, written in place by its pushes (sim/simPushes.ts). */
export function simLive(runId: string): SimLive {
  let l = live.get(runId);
  if (!l) live.set(runId, (l = emptySimLive()));
  return l;
}

export const bumpSimLive = (): void => simLiveStore.setState((s) => ({ revision: s.revision + 1 }));
