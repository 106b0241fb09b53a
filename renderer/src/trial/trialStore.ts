import { create } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { InterlockListDto, LiveFramesOf, TrialJobStatus, TrialQueueDto } from '../../../src/api/contract';
import type { LiveReading } from '../../../src/domain/trial/liveReading';

// The Trial runner. Two layers, by rate:
//   useTrialStore     React, low rate: the form, the interlock row, the queue, the job's status
//                     and prompt, what is in flight and the errors (the Calibration panel's calls
//                     report here too: calibrationStore.ts holds the capture)
//   trialLiveStore    transient: the running trial's 50 Hz live readings (its live.frames batches);
//                     read by throttled panels and the overlay, never through React state
// The lights' 5 Hz safety.status pushes are in safety/safetyStore.ts.

export interface TrialForm {
  campaignDir: string;
  /** The robot connection. */
  connectionId: string;
  trialsText: string;
  interlockPath: string;
  /** The reset note the operator confirms with. */
  resetNote: string;
}

export interface TrialUiState {
  form: TrialForm;
  ports: InterlockListDto | null;
  queue: TrialQueueDto | null;
  /** The pair selected in the queue. */
  selectedPairId: string | null;
  job: TrialJobStatus | null;
  /** The accepted calibration the job was started with (trial.start calibrationId); null: none sent. */
  jobStartedWithCalibrationId: string | null;
  starting: boolean;
  /** Why the last action failed (verbatim from the services). */
  error: string | null;
  /** Interlock arm/disarm refusal, verbatim. */
  interlockError: string | null;
  busy: string[];
}

export const useTrialStore = create<TrialUiState>(() => ({
  form: {
    campaignDir: '',
    connectionId: '',
    trialsText: '3',
    interlockPath: '',
    resetNote: 'robot put back at its start pose by the operator',
  },
  ports: null,
  queue: null,
  selectedPairId: null,
  job: null,
  jobStartedWithCalibrationId: null,
  starting: false,
  error: null,
  interlockError: null,
  busy: [],
}));

export const patchTrialForm = (patch: Partial<TrialForm>): void =>
  useTrialStore.setState((s) => ({ form: { ...s.form, ...patch } }));

// ---- the transient live store ----------------------------------------------------------------

/** The newest live reading of the running trial (`failed` latched for the run), and its stream's counts. */
export interface TrialLiveState extends LiveReading {
  revision: number;
  runId: string | null;
  /** Samples received for this run, and samples the services skipped for this console. */
  samples: number;
  skipped: number;
  /** performance.now() of the last batch. */
  receivedAtMs: number | null;
}

export const emptyTrialLive = (): TrialLiveState => ({
  revision: 0,
  runId: null,
  samples: 0,
  skipped: 0,
  frame: 0,
  timeS: 0,
  mpjpeLMm: null,
  jointRmseRad: null,
  failed: false,
  failure: null,
  receivedAtMs: null,
});

export const trialLiveStore = createStore<TrialLiveState>(() => emptyTrialLive());

/**
 * The live state after one live batch of a real trial (pure): a new run starts from zero; readings
 * are the newest sample's; the failure flag latches from the first failed sample on.
 */
export function applyTrialLive(
  prev: TrialLiveState,
  e: Pick<LiveFramesOf<'trial_job'>, 'runId' | 'count' | 'frame' | 'timeS' | 'readings' | 'droppedFrames'>,
  nowMs: number,
): TrialLiveState {
  const base = prev.runId === e.runId ? prev : { ...emptyTrialLive(), revision: prev.revision };
  const last = e.count - 1;
  const r = e.readings;
  const failed = base.failed || (r?.failed?.some(Boolean) ?? false);
  return {
    revision: base.revision + 1,
    runId: e.runId,
    samples: base.samples + e.count,
    skipped: e.droppedFrames,
    frame: e.frame?.[last] ?? base.frame,
    timeS: e.timeS[last] ?? base.timeS,
    mpjpeLMm: r?.mpjpeLMm[last] ?? null,
    jointRmseRad: r?.jointRmseRad[last] ?? null,
    failed,
    failure: failed ? (r?.failure ?? base.failure ?? 'hard failure') : null,
    receivedAtMs: nowMs,
  };
}
