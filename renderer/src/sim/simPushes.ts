import type { LiveFramesOf, SimEndEvent, SimRunResult } from '../../../src/api/contract';
import { errorMessage } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import { runTrajectory } from '../overlay/overlayEngine';
import { appendRunFrames, endRun, setRunTrajectory } from '../overlay/runActions';
import { useRunStore } from '../overlay/runStore';
import { writeLiveFrames } from '../robot/liveStreams';
import { bumpSimLive, patchSimRun, simLive, useSimStore } from './simStore';

// Following a simulation run started from this console (simActions.ts) by its pushes: its frames
// (live.frames of source sim_run) go into its connection's live store (robot/liveStreams.ts) and
// from there into the overlay's run store as a live run (solid over the reference ghost,
// follow-live moves the playhead), the live figures into the transient simLiveStore; its end closes the run there
// and fills the readings table; after the end the run stays for replay. If frames were skipped for
// display on the way (the console fell behind), the full recording is fetched (sim.result) so
// replay shows exactly what was recorded.

type SimFrames = LiveFramesOf<'sim_run'>;

/** Events of runs whose sim.run answer has not arrived yet (frames can overtake it). */
const early = new Map<string, (SimFrames | SimEndEvent)[]>();
const MAX_EARLY_EVENTS = 256;

const inOverlay = (runId: string): boolean => useRunStore.getState().runs.some((r) => r.id === runId);
const isOurs = (runId: string): boolean => useSimStore.getState().runs.some((r) => r.runId === runId);

/** The pushes this feature handles (signed up in app/featurePushes.ts). */
export const SIM_PUSH_TYPES = ['live.frames/sim_run', 'sim.end'] as const;

/** One batch of a simulation run's frames or its sim.end (api/pushRouter.ts). */
export function handleSimPush(e: SimFrames | SimEndEvent): void {
  const runId = e.runId!; // a sim_run batch names its run
  if (!isOurs(runId)) {
    // Not (yet) ours: keep a few in case sim.run's answer is on its way.
    let list = early.get(runId);
    if (!list) early.set(runId, (list = []));
    list.push(e);
    let total = 0;
    for (const l of early.values()) total += l.length;
    if (total > MAX_EARLY_EVENTS) early.delete(early.keys().next().value as string);
    return;
  }
  if (e.type === 'live.frames') onFrames(e);
  else onEnd(e);
}

/** Plays the pushes of `runId` that arrived before its sim.run answer (now in the sim store). */
export function replayEarlyPushes(runId: string): void {
  const pending = early.get(runId);
  early.delete(runId);
  for (const e of pending ?? []) {
    if (e.type === 'live.frames') onFrames(e);
    else if (e.type === 'sim.end') onEnd(e);
  }
}

function onFrames(e: SimFrames): void {
  const runId = e.runId!;
  const { rows } = writeLiveFrames(e);
  if (inOverlay(runId)) appendRunFrames(runId, rows);
  const l = simLive(runId);
  const last = e.count - 1;
  l.framesReceived += e.count;
  l.droppedFrames = e.droppedFrames;
  if (last >= 0) {
    l.lastTimeS = e.timeS[last];
    l.mpjpeLMm = e.readings?.mpjpeLMm[last] ?? null;
    l.jointRmseRad = e.readings?.jointRmseRad[last] ?? null;
    l.firstFailureFrame = e.readings?.firstFailureFrame?.[last] ?? null;
  }
  const r = useSimStore.getState().runs.find((x) => x.runId === runId);
  if (r && r.state === 'starting') patchSimRun(runId, { state: 'running' });
  bumpSimLive();
}

function onEnd(e: SimEndEvent): void {
  patchSimRun(e.runId, { state: 'ended', end: e, endReceivedAtMs: Date.now() });
  const shownInOverlay = inOverlay(e.runId);
  if (shownInOverlay) endRun(e.runId, e.outcome);
  const l = simLive(e.runId);
  l.droppedFrames = e.droppedFrames;
  bumpSimLive();
  // The display skipped frames: replay from the complete recording.
  const shown = runTrajectory(e.runId)?.count ?? 0;
  if (shownInOverlay && (e.droppedFrames > 0 || shown !== e.frames)) void fetchRecording(e.runId);
}

async function fetchRecording(runId: string): Promise<SimRunResult | null> {
  const c = useConnectionStore.getState().client;
  if (!c) return null;
  try {
    const res = await c.call('sim.result', { runId });
    const t = res.trajectory;
    if (inOverlay(runId) && t.frames > 0) {
      setRunTrajectory(runId, {
        timeS: t.timeS,
        rootPosM: t.rootPosM,
        rootQuatWxyz: t.rootQuatWxyz,
        jointPosRad: t.jointPosRad,
      });
      patchSimRun(runId, { replayFromRecording: true });
    }
    return res;
  } catch (err) {
    useSimStore.setState({ error: `run ${runId}: could not fetch its recording: ${errorMessage(err)}` });
    return null;
  }
}

/** After the link to the services came back: runs that were going on ended meanwhile (their client went away). */
export async function reconcileSimRuns(): Promise<void> {
  for (const r of useSimStore.getState().runs) {
    if (r.state === 'ended') continue;
    const res = await fetchRecording(r.runId);
    if (res?.end) onEnd({ ...res.end, droppedFrames: Math.max(1, res.end.droppedFrames) });
    else if (!res) patchSimRun(r.runId, { state: 'ended' });
  }
}
