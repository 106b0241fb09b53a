import { errorReport } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import { useCalibrationStore } from '../calibration/calibrationStore';
import { refreshEndpoints } from '../connections/endpointsActions';
import { useEndpointsStore } from '../connections/endpointsStore';
import { showReferenceForRuns } from '../overlay/runActions';
import { useSafetyStore } from '../safety/safetyStore';
import { watchOnlyReason } from './linkControl';
import { trialCall } from './trialCall';
import { parseTrials } from './trialFormat';
import { trialLiveStore, useTrialStore } from './trialStore';

// The Trial runner's actions: the campaign's queue of admitted pairs
// (trial.queue), a matched pair started (trial.start: one simulation branch from the calibrated
// start, then the real trials), the runner's prompts answered (trial.confirm) and the job stopped
// (trial.stop; the operator STOP stops every job). What the job pushes back is handled in
// trialPushes.ts.

/** The robot connection of the form, or the first robot listed. */
export function robotConnectionId(): string | null {
  const id = useTrialStore.getState().form.connectionId;
  if (id) return id;
  return useSafetyStore.getState().robots[0]?.connectionId ?? null;
}

export async function loadQueue(): Promise<void> {
  const dir = useTrialStore.getState().form.campaignDir.trim();
  if (!dir) return;
  const t = parseTrials(useTrialStore.getState().form.trialsText);
  const q = await trialCall('queue', (c) =>
    c.call('trial.queue', { campaignDir: dir, ...(t.ok && { trials: t.trials }) }),
  );
  if (!q) return;
  const sel = useTrialStore.getState().selectedPairId;
  const admitted = q.pairs.filter((p) => p.admitted);
  useTrialStore.setState({
    queue: q,
    error: null,
    selectedPairId: sel && admitted.some((p) => p.pairId === sel) ? sel : (admitted[0]?.pairId ?? null),
  });
}

export async function startTrial(): Promise<void> {
  const { form, selectedPairId } = useTrialStore.getState();
  const { acceptedId } = useCalibrationStore.getState();
  const connectionId = robotConnectionId();
  const t = parseTrials(form.trialsText);
  if (!t.ok) return void useTrialStore.setState({ error: t.reason });
  if (!connectionId)
    return void useTrialStore.setState({
      error: 'connect the robot first (Connections: add its ws:// URL as a robot)',
    });
  if (!selectedPairId) return void useTrialStore.setState({ error: 'pick an admitted pair in the queue' });
  const watchOnly = watchOnlyReason(useEndpointsStore.getState().entries.find((e) => e.id === connectionId));
  if (watchOnly !== null) return void useTrialStore.setState({ error: `the robot link is watch-only: ${watchOnly}` });
  useTrialStore.setState({ starting: true, error: null });
  trialLiveStore.setState((s) => ({
    ...s,
    runId: null,
    samples: 0,
    failed: false,
    failure: null,
    mpjpeLMm: null,
    jointRmseRad: null,
    revision: s.revision + 1,
  }));
  const r = await trialCall('start', (c) =>
    c.call('trial.start', {
      campaignDir: form.campaignDir.trim(),
      pairId: selectedPairId,
      connectionId,
      trials: t.trials,
      ...(acceptedId && { calibrationId: acceptedId }),
    }),
  );
  useTrialStore.setState({ starting: false });
  if (!r) return;
  useTrialStore.setState({ job: r.status, jobStartedWithCalibrationId: acceptedId ?? null });
  if (r.reference) showReferenceForRuns(r.reference);
  void refreshEndpoints();
}

/** The operator's answer to the prompt on screen. */
export async function answerPrompt(ok: boolean): Promise<void> {
  const { job, form } = useTrialStore.getState();
  const p = job?.prompt;
  if (!job || !p) return;
  const note = p.kind === 'confirm_reset' ? form.resetNote.trim() : undefined;
  await trialCall('confirm', (c) =>
    c.call('trial.confirm', { jobId: job.jobId, promptId: p.promptId, ok, ...(note && { note }) }),
  );
}

/** The panel's Stop / Intervention buttons for the running job. */
export async function stopTrial(intervention = false): Promise<void> {
  const job = useTrialStore.getState().job;
  if (!job || job.state !== 'running') return;
  await trialCall('stop', (c) =>
    c.call('trial.stop', {
      jobId: job.jobId,
      ...(intervention && { intervention: true }),
      reason: intervention ? 'intervention (Trial runner)' : 'stopped from the Trial runner',
    }),
  );
}

/**
 * The operator's STOP (button, Space, Escape): every trial job in the services stops now and a
 * capture waiting for stillness is abandoned. Fire and forget: never waits on anything else.
 */
export function stopAllTrials(source: string): void {
  void useConnectionStore
    .getState()
    .client?.call('trial.stop', { all: true, reason: `operator stop (${source})` })
    .catch((err: unknown) => useTrialStore.setState({ error: `stop: ${errorReport(err)}` }));
}
