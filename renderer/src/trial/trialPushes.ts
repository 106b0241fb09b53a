import type {
  CalibrationStillnessEvent,
  LiveFramesOf,
  SafetyStatusEvent,
  TrialApiEvent,
  TrialJobStatus,
  TrialProgressPush,
  TrialPromptEvent,
} from '../../../src/api/contract';
import { errorReport } from '../api/apiErrors';
import { patchCapture } from './calibrationStore';
import { useClipStore } from '../playback/clipStore';
import { addRun, appendRunFrames, endRun, setRunTrajectory } from '../overlay/runActions';
import { useRunStore } from '../overlay/runStore';
import { recordTrialLive } from '../plots/liveTrialRing';
import { retainLiveRobots, writeLiveFrames } from '../robot/liveStreams';
import { useSafetyStore } from '../safety/safetyStore';
import { loadQueue } from './trialActions';
import { trialCall } from './trialCall';
import { applyTrialLive, trialLiveStore, useTrialStore } from './trialStore';

// The pushes of the Trial runner and Calibration panels (api/pushRouter.ts): safety.status (the
// lights), calibration.stillness (the meter), trial.progress and trial.prompt (the job), and the
// running trial's live stream (live.frames of source trial_job): its 50 Hz readings go to the
// transient trialLiveStore and the rolling plot, its rows (the robot's measured pose) into the
// connection's live store (robot/liveStreams.ts) and from there into the overlay's run store as the
// live robot (domain real_robot) — never through React state. The simulation branch, once recorded, is fetched (trial.episode) and overlaid too,
// over the reference ghost.

/** Overlay run ids of a job's episodes. */
export const liveRunOverlayId = (runId: string): string => `real:${runId}`.slice(0, 128);
export const simRunOverlayId = (runId: string): string => `sim:${runId}`.slice(0, 128);

/** Every push of the trial contract, each once (the compiler refuses a missing one), and the trial's live stream. */
const TRIAL_PUSHES: Record<TrialApiEvent['type'] | 'live.frames/trial_job', true> = {
  'safety.status': true,
  'calibration.stillness': true,
  'trial.progress': true,
  'trial.prompt': true,
  'live.frames/trial_job': true,
};
/** The pushes this feature handles (signed up in app/featurePushes.ts). */
export const TRIAL_PUSH_TYPES = Object.keys(TRIAL_PUSHES) as (keyof typeof TRIAL_PUSHES)[];

export function handleTrialEvent(e: TrialApiEvent | LiveFramesOf<'trial_job'>): void {
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
    case 'live.frames':
      onLive(e);
      return;
  }
}

function onSafetyStatus(e: SafetyStatusEvent): void {
  useSafetyStore.setState({ interlock: e.interlock, robots: e.robots, host: e.host, receivedAtMs: performance.now() });
  retainLiveRobots(e.robots.filter((r) => r.presence !== 'disconnected').map((r) => r.connectionId));
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
  if (d?.type === 'episode_end' && d.domain === 'simulation')
    void overlaySimBranch(e.status.campaignDir, d.runId, d.outcome);
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
    const globalRoot =
      useSafetyStore.getState().robots.find((r) => r.connectionId === s.connectionId)?.globalRoot ?? false;
    try {
      addRun({
        id: liveRunOverlayId(s.liveRunId),
        label: `robot · trial ${index}/${s.trials}`,
        domain: 'real_robot',
        source: s.connectionId,
        live: true,
        note: globalRoot
          ? 'live robot: root from motion capture'
          : 'live robot: no motion capture — drawn at the reference root',
      });
    } catch (err) {
      useTrialStore.setState({ error: `the live robot is not overlaid: ${errorReport(err)}` });
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

function onLive(e: LiveFramesOf<'trial_job'>): void {
  const { rows } = writeLiveFrames(e);
  recordTrialLive(e);
  trialLiveStore.setState((prev) => applyTrialLive(prev, e, performance.now()));
  const id = liveRunOverlayId(e.runId!);
  if (!useRunStore.getState().runs.some((r) => r.id === id && r.live)) return;
  try {
    appendRunFrames(id, rows);
  } catch {
    // the run was removed from the overlay meanwhile
  }
}

async function overlaySimBranch(campaignDir: string, runId: string, outcome: string): Promise<void> {
  const ep = await trialCall('episode', (c) => c.call('trial.episode', { campaignDir, runId }));
  if (!ep || ep.executed.frames === 0) return;
  const id = simRunOverlayId(runId);
  if (useRunStore.getState().runs.some((r) => r.id === id)) return;
  try {
    addRun({ id, label: 'simulation branch', domain: 'simulation', source: 'embedded-sim', live: false });
    setRunTrajectory(id, ep.executed);
    endRun(id, outcome);
  } catch (err) {
    useTrialStore.setState({ error: `the simulation branch is not overlaid: ${errorReport(err)}` });
  }
}
