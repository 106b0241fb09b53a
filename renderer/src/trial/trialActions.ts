import type {
  CalibrationStillnessEvent,
  SafetyStatusEvent,
  TrialApiEvent,
  TrialJobStatus,
  TrialLiveEvent,
  TrialProgressPush,
  TrialPromptEvent,
} from '../../../src/api/contract';
import { clipFromDto } from '../../../src/api/clipDto';
import { ApiCallError, type ConsoleClient } from '../api/consoleClient';
import { unpackSamples } from '../overlay/runTrajectory';
import { pause, resetPlayhead } from '../playback/playback';
import { useClipStore } from '../stores/clipStore';
import { useConnectionStore } from '../stores/connectionStore';
import { refreshEndpoints } from '../stores/endpointsStore';
import { addRun, appendRunFrames, clearRuns, endRun, setRunTrajectory, useRunStore } from '../stores/runStore';
import { applyTrialLive, patchCapture, patchTrialForm, trialLiveStore, useSafetyStore, useTrialStore } from '../stores/trialStore';
import { parseTrials } from './trialFormat';

// The Trial runner and Calibration panels' actions (issue 6 item 9): calls to interlock.*,
// calibration.* and trial.*, and the pushes they answer with. The 50 Hz live readings (trial.live)
// go to the transient trialLiveStore and, with the robot's joint angles, into the overlay's run
// store as the live robot (domain real_robot) — never through React state. The simulation
// branch, once recorded, is fetched (trial.episode) and overlaid too, over the reference ghost.

const message = (err: unknown): string => (err instanceof ApiCallError ? err.error.message : err instanceof Error ? err.message : String(err));
const client = (): ConsoleClient | null => useConnectionStore.getState().client;

/** Overlay run ids of a job's episodes. */
export const liveRunOverlayId = (runId: string): string => `real:${runId}`.slice(0, 128);
export const simRunOverlayId = (runId: string): string => `sim:${runId}`.slice(0, 128);

async function act<T>(key: string, run: (c: ConsoleClient) => Promise<T>, onError: (msg: string) => void = (m) => useTrialStore.setState({ error: m })): Promise<T | null> {
  const c = client();
  if (!c) {
    onError('not connected to the console services');
    return null;
  }
  useTrialStore.setState((s) => ({ busy: [...s.busy, key] }));
  try {
    return await run(c);
  } catch (err) {
    onError(message(err));
    return null;
  } finally {
    useTrialStore.setState((s) => ({ busy: s.busy.filter((b) => b !== key) }));
  }
}

// ---- pushes --------------------------------------------------------------------------------

export function handleTrialEvent(e: TrialApiEvent): void {
  switch (e.type) {
    case 'safety.status':
      onSafetyStatus(e);
      return;
    case 'calibration.stillness':
      onStillness(e);
      return;
    case 'trial.progress':
      onProgress(e);
      return;
    case 'trial.prompt':
      onPrompt(e);
      return;
    case 'trial.live':
      onLive(e);
      return;
  }
}

function onSafetyStatus(e: SafetyStatusEvent): void {
  useSafetyStore.setState({ interlock: e.interlock, robots: e.robots, receivedAtMs: performance.now() });
}

function onStillness(e: CalibrationStillnessEvent): void {
  patchCapture({ stillness: e.progress });
}

function onPrompt(e: TrialPromptEvent): void {
  const job = useTrialStore.getState().job;
  if (job && job.jobId === e.jobId) useTrialStore.setState({ job: { ...job, prompt: e.prompt } });
}

function onProgress(e: TrialProgressPush): void {
  const cur = useTrialStore.getState().job;
  if (cur && cur.jobId !== e.jobId && cur.state === 'running') return; // another console's older job
  const prev = cur?.jobId === e.jobId ? cur : null;
  useTrialStore.setState({ job: e.status });
  syncOverlay(prev, e.status);
  const d = e.detail;
  if (d?.type === 'episode_end' && d.domain === 'simulation') void overlaySimBranch(e.status.campaignDir, d.runId, d.outcome);
  if (d?.type === 'ended') void loadQueue();
}

/** Adds the live robot when a real trial starts, closes it when it ends. */
function syncOverlay(prev: TrialJobStatus | null, s: TrialJobStatus): void {
  const clipId = useClipStore.getState().loaded?.clip.id;
  if (!clipId || (s.clip && s.clip.id !== clipId)) return; // the reference is not on display
  const runs = useRunStore.getState().runs;
  const prevLive = prev?.liveRunId ?? null;
  if (s.liveRunId && s.liveRunId !== prevLive && !runs.some((r) => r.id === liveRunOverlayId(s.liveRunId!))) {
    const index = s.trialIndex !== null ? s.trialIndex + 1 : '?';
    const globalRoot = useSafetyStore.getState().robots.find((r) => r.connectionId === s.connectionId)?.globalRoot ?? false;
    try {
      addRun({
        id: liveRunOverlayId(s.liveRunId),
        label: `robot · trial ${index}/${s.trials}`,
        domain: 'real_robot',
        source: s.connectionId,
        live: true,
        note: globalRoot ? 'live robot: root from motion capture' : 'live robot: no motion capture — drawn at the reference root',
      });
    } catch (err) {
      useTrialStore.setState({ error: `the live robot is not overlaid: ${message(err)}` });
    }
  }
  for (const ep of s.episodes) {
    if (ep.domain !== 'real_robot') continue;
    const id = liveRunOverlayId(ep.runId);
    const meta = useRunStore.getState().runs.find((r) => r.id === id);
    if (meta?.live) endRun(id, ep.outcome);
  }
  if (s.state !== 'running') {
    for (const r of useRunStore.getState().runs) if (r.live && r.id.startsWith('real:')) endRun(r.id, 'ended');
  }
}

function onLive(e: TrialLiveEvent): void {
  trialLiveStore.setState((prev) => applyTrialLive(prev, e, performance.now()));
  const id = liveRunOverlayId(e.runId);
  if (!useRunStore.getState().runs.some((r) => r.id === id && r.live)) return;
  try {
    appendRunFrames(id, unpackSamples(e));
  } catch {
    // the run was removed from the overlay meanwhile
  }
}

async function overlaySimBranch(campaignDir: string, runId: string, outcome: string): Promise<void> {
  const ep = await act('episode', (c) => c.call('trial.episode', { campaignDir, runId }));
  if (!ep || ep.executed.frames === 0) return;
  const id = simRunOverlayId(runId);
  if (useRunStore.getState().runs.some((r) => r.id === id)) return;
  try {
    addRun({ id, label: 'simulation branch', domain: 'simulation', source: 'embedded-sim', live: false });
    setRunTrajectory(id, ep.executed);
    endRun(id, outcome);
  } catch (err) {
    useTrialStore.setState({ error: `the simulation branch is not overlaid: ${message(err)}` });
  }
}

// ---- interlock -----------------------------------------------------------------------------

export async function listPorts(): Promise<void> {
  const ports = await act('ports', (c) => c.call('interlock.list', {}), (m) => useTrialStore.setState({ interlockError: m }));
  if (ports) {
    useTrialStore.setState({ ports });
    if (!useTrialStore.getState().form.interlockPath && ports.ports[0]) patchTrialForm({ interlockPath: ports.ports[0].path });
  }
}

const interlockErr = (m: string): void => useTrialStore.setState({ interlockError: m });

export async function openInterlockBox(): Promise<void> {
  const path = useTrialStore.getState().form.interlockPath.trim();
  if (!path) return interlockErr('give the interlock device path (e.g. /dev/ttyUSB0)');
  useTrialStore.setState({ interlockError: null });
  const st = await act('interlock', (c) => c.call('interlock.open', { path }), interlockErr);
  if (st) useSafetyStore.setState({ interlock: st, receivedAtMs: performance.now() });
}

export async function closeInterlockBox(): Promise<void> {
  useTrialStore.setState({ interlockError: null });
  await act('interlock', (c) => c.call('interlock.close', {}), interlockErr);
}

/** ARM / DISARM; a refusal is shown verbatim ("not_safe: the box reports ESTOP …"). */
export async function armInterlock(arm: boolean): Promise<void> {
  useTrialStore.setState({ interlockError: null });
  const r = await act('arm', (c) => c.call(arm ? 'interlock.arm' : 'interlock.disarm', {}), interlockErr);
  if (!r) return;
  useSafetyStore.setState({ interlock: r.status, receivedAtMs: performance.now() });
  if (!r.ok) interlockErr(`${arm ? 'ARM' : 'DISARM'} refused (${r.reason}): ${r.detail}`);
}

// ---- calibration ---------------------------------------------------------------------------

/** The robot connection of the form, or the first robot listed. */
export function robotConnectionId(): string | null {
  const id = useTrialStore.getState().form.connectionId;
  if (id) return id;
  return useSafetyStore.getState().robots[0]?.connectionId ?? null;
}

/** The clip the calibration is compared with: the form's, else the selected pair's. */
function calibrationClipRef(): string | undefined {
  const { form, queue, selectedPairId } = useTrialStore.getState();
  if (form.clipRef.trim()) return form.clipRef.trim();
  return queue?.pairs.find((p) => p.pairId === selectedPairId)?.clipId;
}

/** Capture (and Redo): waits for the robot to hold still, then shows the residuals vs the clip start. */
export async function captureCalibration(): Promise<void> {
  const { form } = useTrialStore.getState();
  const connectionId = robotConnectionId();
  if (!connectionId) return void useTrialStore.setState({ error: 'connect the robot first (Connections: add its ws:// URL as a robot)' });
  if (!form.campaignDir.trim()) return void useTrialStore.setState({ error: 'give the campaign folder first' });
  patchCapture({ running: true, stillness: null, result: null, acceptedId: null });
  useTrialStore.setState({ error: null });
  const clipId = calibrationClipRef();
  const r = await act('capture', (c) => c.call('calibration.capture', { connectionId, campaignDir: form.campaignDir.trim(), ...(clipId && { clipId }) }));
  patchCapture({ running: false, ...(r && { result: r }) });
}

export async function acceptCalibration(): Promise<void> {
  const r = useTrialStore.getState().capture.result;
  if (!r || !r.ok) return;
  patchCapture({ accepting: true });
  const a = await act('accept', (c) => c.call('calibration.accept', { captureId: r.captureId }));
  patchCapture({ accepting: false, ...(a && { acceptedId: a.calibrationId }) });
}

export async function cancelCapture(): Promise<void> {
  await act('cancel', (c) => c.call('calibration.cancel', {}));
}

// ---- trials --------------------------------------------------------------------------------

export async function loadQueue(): Promise<void> {
  const dir = useTrialStore.getState().form.campaignDir.trim();
  if (!dir) return;
  const t = parseTrials(useTrialStore.getState().form.trialsText);
  const q = await act('queue', (c) => c.call('trial.queue', { campaignDir: dir, ...(t.ok && { trials: t.trials }) }));
  if (!q) return;
  const sel = useTrialStore.getState().selectedPairId;
  const admitted = q.pairs.filter((p) => p.admitted);
  useTrialStore.setState({ queue: q, error: null, selectedPairId: sel && admitted.some((p) => p.pairId === sel) ? sel : (admitted[0]?.pairId ?? null) });
}

export async function startTrial(): Promise<void> {
  const { form, selectedPairId, capture } = useTrialStore.getState();
  const connectionId = robotConnectionId();
  const t = parseTrials(form.trialsText);
  if (!t.ok) return void useTrialStore.setState({ error: t.reason });
  if (!connectionId) return void useTrialStore.setState({ error: 'connect the robot first (Connections: add its ws:// URL as a robot)' });
  if (!selectedPairId) return void useTrialStore.setState({ error: 'pick an admitted pair in the queue' });
  useTrialStore.setState({ starting: true, error: null });
  trialLiveStore.setState((s) => ({ ...s, runId: null, samples: 0, failed: false, failure: null, mpjpeLMm: null, jointRmseRad: null, revision: s.revision + 1 }));
  const r = await act('start', (c) =>
    c.call('trial.start', { campaignDir: form.campaignDir.trim(), pairId: selectedPairId, connectionId, trials: t.trials, ...(capture.acceptedId && { calibrationId: capture.acceptedId }) }),
  );
  useTrialStore.setState({ starting: false });
  if (!r) return;
  useTrialStore.setState({ job: r.status });
  if (r.reference) {
    pause();
    clearRuns();
    useClipStore.setState({ loaded: clipFromDto(r.reference), error: null, lastSource: null });
    resetPlayhead();
  }
  void refreshEndpoints();
}

/** The operator's answer to the prompt on screen. */
export async function answerPrompt(ok: boolean): Promise<void> {
  const { job, form } = useTrialStore.getState();
  const p = job?.prompt;
  if (!job || !p) return;
  const note = p.kind === 'confirm_reset' ? form.resetNote.trim() : undefined;
  await act('confirm', (c) => c.call('trial.confirm', { jobId: job.jobId, promptId: p.promptId, ok, ...(note && { note }) }));
}

/** The panel's Stop / Intervention buttons for the running job. */
export async function stopTrial(intervention = false): Promise<void> {
  const job = useTrialStore.getState().job;
  if (!job || job.state !== 'running') return;
  await act('stop', (c) => c.call('trial.stop', { jobId: job.jobId, ...(intervention && { intervention: true }), reason: intervention ? 'intervention (Trial runner)' : 'stopped from the Trial runner' }));
}

/**
 * The operator's STOP (button, Space, Escape): every trial job in the services stops now and a
 * capture waiting for stillness is abandoned. Fire and forget: never waits on anything else.
 */
export function stopAllTrials(source: string): void {
  void client()
    ?.call('trial.stop', { all: true, reason: `operator stop (${source})` })
    .catch((err: unknown) => useTrialStore.setState({ error: `stop: ${message(err)}` }));
}
