import type { ApiEvent, ApiParams, SimEndEvent, SimFramesEvent, SimRunResult, SimRunStarted } from '../../../src/api/contract';
import { BUILTIN_LABEL } from '../../../src/domain/sim/builtinBinding';
import { POLICY_ID_RE } from '../../../src/api/policyContract';
import { ApiCallError, type ConsoleClient } from '../api/consoleClient';
import { unpackSamples } from '../overlay/runTrajectory';
import { useClipStore } from '../stores/clipStore';
import { useConnectionStore } from '../stores/connectionStore';
import { useEndpointsStore } from '../stores/endpointsStore';
import { onQualificationProgress } from '../qualification/qualificationActions';
import { policyMotionShown, reopenPolicy } from '../policies/policyActions';
import { usePolicyStore } from '../stores/policyStore';
import { handleTrialEvent } from '../trial/trialActions';
import { addRun, appendRunFrames, endRun, MAX_RUNS, runTrajectory, setRunTrajectory, useRunStore } from '../stores/runStore';
import { bumpSimLive, patchSimRun, simLive, useSimStore, type SimRunRecord } from '../stores/simStore';

// Running the clip on display in simulation (sim.run) under the builtin tracker or the policy
// open in the Policy panel (by its id), and following the run: its pushed frames go
// into the overlay's run store as a live run (solid over the reference ghost, follow-live moves
// the playhead), its end closes the run there and fills the readings table; after the end the run
// stays for replay. If frames were skipped for display on the way (the console fell behind), the
// full recording is fetched (sim.result) so replay shows exactly what was recorded.
//
// Every push is acknowledged once processed (events.ack): that is the services' flow control.

/** The note every result of a builtin binding carries (DESIGN §9). */
export const BUILTIN_NOTE = `builtin = ${BUILTIN_LABEL}`;

const message = (err: unknown): string => (err instanceof ApiCallError ? err.error.message : err instanceof Error ? err.message : String(err));

/** Events of runs whose sim.run answer has not arrived yet (frames can overtake it). */
const early = new Map<string, (SimFramesEvent | SimEndEvent)[]>();
const MAX_EARLY_EVENTS = 256;
let ordinal = 0;
/** A STOP pressed while sim.run was in flight: the run it returns is stopped at once. */
let stopWhileStarting: string | null = null;

const client = (): ConsoleClient | null => useConnectionStore.getState().client;
const record = (runId: string): SimRunRecord | undefined => useSimStore.getState().runs.find((r) => r.runId === runId);

function ack(seq: number): void {
  void client()
    ?.call('events.ack', { seq })
    .catch(() => undefined);
}

/** Handles one validated push from the services. */
export function handleApiEvent(e: ApiEvent): void {
  if (e.type === 'qualification.progress') {
    try {
      onQualificationProgress(e);
    } finally {
      ack(e.seq);
    }
    return;
  }
  if (e.type !== 'sim.frames' && e.type !== 'sim.end') {
    // interlock, calibration and trial pushes (src/api/trialContract.ts)
    try {
      handleTrialEvent(e);
    } finally {
      ack(e.seq);
    }
    return;
  }
  try {
    if (!record(e.runId)) {
      // Not (yet) ours: keep a few in case sim.run's answer is on its way.
      let list = early.get(e.runId);
      if (!list) early.set(e.runId, (list = []));
      list.push(e);
      let total = 0;
      for (const l of early.values()) total += l.length;
      if (total > MAX_EARLY_EVENTS) early.delete(early.keys().next().value as string);
      return;
    }
    if (e.type === 'sim.frames') onFrames(e);
    else onEnd(e);
  } finally {
    ack(e.seq);
  }
}

function onFrames(e: SimFramesEvent): void {
  if (useRunStore.getState().runs.some((r) => r.id === e.runId)) appendRunFrames(e.runId, unpackSamples(e));
  const l = simLive(e.runId);
  l.framesReceived += e.count;
  l.droppedFrames = e.droppedFrames;
  l.lastTimeS = e.timeS[e.count - 1];
  l.mpjpeLMm = e.live.mpjpeLMm[e.count - 1];
  l.jointRmseRad = e.live.jointRmseRad[e.count - 1];
  l.firstFailureFrame = e.live.firstFailureFrame[e.count - 1];
  const r = record(e.runId);
  if (r && r.state === 'starting') patchSimRun(e.runId, { state: 'running' });
  bumpSimLive();
}

function onEnd(e: SimEndEvent): void {
  patchSimRun(e.runId, { state: 'ended', end: e, endReceivedAtMs: Date.now() });
  const inOverlay = useRunStore.getState().runs.some((r) => r.id === e.runId);
  if (inOverlay) endRun(e.runId, e.outcome);
  const l = simLive(e.runId);
  l.droppedFrames = e.droppedFrames;
  bumpSimLive();
  // The display skipped frames: replay from the complete recording.
  const shown = runTrajectory(e.runId)?.count ?? 0;
  if (inOverlay && (e.droppedFrames > 0 || shown !== e.frames)) void fetchRecording(e.runId);
}

async function fetchRecording(runId: string): Promise<SimRunResult | null> {
  const c = client();
  if (!c) return null;
  try {
    const res = await c.call('sim.result', { runId });
    const t = res.trajectory;
    if (useRunStore.getState().runs.some((r) => r.id === runId) && t.frames > 0) {
      setRunTrajectory(runId, { timeS: t.timeS, rootPosM: t.rootPosM, rootQuatWxyz: t.rootQuatWxyz, jointPosRad: t.jointPosRad });
      patchSimRun(runId, { replayFromRecording: true });
    }
    return res;
  } catch (err) {
    useSimStore.setState({ error: `run ${runId}: could not fetch its recording: ${message(err)}` });
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

// ---- the form ------------------------------------------------------------------------------

/** The sim.run params the form describes, or the reason it cannot be sent. */
export function simRequestFromForm(): { ok: true; params: ApiParams<'sim.run'> } | { ok: false; reason: string } {
  const clip = useClipStore.getState().loaded?.clip;
  if (!clip) return { ok: false, reason: 'open a clip first' };
  const f = useSimStore.getState().form;
  let binding = 'builtin';
  if (f.bindingChoice === 'assist') {
    const t = f.assistText.trim();
    if (!/^\d{1,7}(\.\d{1,6})?$/.test(t) || !(Number(t) > 0) || Number(t) > 1e6) return { ok: false, reason: `root assist "${f.assistText}": a stiffness in N/m, more than 0 and at most 1000000` };
    binding = `builtin:assist=${Number(t)}`;
  } else if (f.bindingChoice === 'policy') {
    const { info, bakedClip } = usePolicyStore.getState();
    if (!info) return { ok: false, reason: 'open a policy first (Policy panel)' };
    if (!policyMotionShown(info, clip.id)) return { ok: false, reason: `policy ${info.bindingId} tracks only the motion baked into it (${bakedClip?.clip.name ?? info.motion!.clipId}): show its motion (Policy panel) to run it` };
    binding = info.policyId;
  }
  const seedText = f.seedText.trim();
  const seed = seedText === '' ? 0 : Number(seedText);
  if (!Number.isSafeInteger(seed) || seed < 0) return { ok: false, reason: `seed "${f.seedText}": a whole number ≥ 0` };
  const params: ApiParams<'sim.run'> = {
    connectionId: f.connectionId,
    clipId: clip.id,
    binding,
    seed,
    paceRealTime: f.pace === 'max' ? null : Number(f.pace),
  };
  const ms = f.maxSecondsText.trim();
  if (ms !== '') {
    const v = Number(ms);
    if (!(Number.isFinite(v) && v > 0 && v <= 3600)) return { ok: false, reason: `"first … s": a duration in seconds, more than 0 (empty: the whole clip)` };
    params.maxSeconds = v;
  }
  return { ok: true, params };
}

/** Sends the clip on display to the services again (they forgot it, e.g. after a restart). */
async function resendClip(c: ConsoleClient, clipId: string): Promise<boolean> {
  if (usePolicyStore.getState().info?.motion?.clipId === clipId) return reopenPolicy(c); // a policy's baked motion
  const { lastSource, fpsText } = useClipStore.getState();
  if (!lastSource) return false;
  const fps = Number(fpsText.trim());
  const fpsParam = fpsText.trim() !== '' && Number.isFinite(fps) && fps > 0 ? { fps } : {};
  const dto =
    lastSource.kind === 'bytes'
      ? await c.call('clips.decode', { fileName: lastSource.fileName, bytesBase64: lastSource.bytesBase64, ...fpsParam })
      : await c.call('clips.load', { path: lastSource.path, ...fpsParam });
  return dto.id === clipId;
}

/** Re-sends what sim.run's not_found names: the clip on display, or the open policy. */
function bringBack(c: ConsoleClient, params: ApiParams<'sim.run'>, field: string | undefined): Promise<boolean> {
  if (field === 'params.clipId') return resendClip(c, params.clipId);
  if (field === 'params.binding' && POLICY_ID_RE.test(params.binding) && usePolicyStore.getState().info?.policyId === params.binding) return reopenPolicy(c);
  return Promise.resolve(false);
}

export function runLabel(started: SimRunStarted, n: number): string {
  const b = started.binding;
  // A policy's version (adapter + content hash + physics) is long: its label goes in the run's note.
  const what = b.kind === 'builtin' ? (b.assistNPerM !== null ? `builtin + assist ${b.assistNPerM} N/m` : 'builtin, no assist') : (b.id.split('/').at(-1) ?? b.id);
  return `#${n} ${what} · seed ${started.seed}`;
}

/** Runs the clip on display with the form's settings. */
export async function startSimRun(): Promise<void> {
  const c = client();
  if (!c) {
    useSimStore.setState({ error: 'not connected to the console services' });
    return;
  }
  if (useSimStore.getState().starting) return;
  const req = simRequestFromForm();
  if (!req.ok) {
    useSimStore.setState({ error: req.reason });
    return;
  }
  if (useRunStore.getState().clipId === req.params.clipId && useRunStore.getState().runs.length >= MAX_RUNS) {
    useSimStore.setState({ error: `at most ${MAX_RUNS} runs can be overlaid: remove one in the Overlay panel first` });
    return;
  }
  const clip = useClipStore.getState().loaded!.clip;
  useSimStore.setState({ starting: true, error: null });
  stopWhileStarting = null;
  try {
    let started: SimRunStarted | null = null;
    // The services forgot the clip or the policy (restarted, cache eviction): send it again and retry, once each.
    for (let attempt = 0; !started; attempt++) {
      try {
        started = await c.call('sim.run', req.params);
      } catch (err) {
        if (attempt < 2 && err instanceof ApiCallError && err.error.code === 'not_found' && (await bringBack(c, req.params, err.error.field))) continue;
        throw err;
      }
    }
    const n = ++ordinal;
    const endpoint = useEndpointsStore.getState().entries.find((e) => e.id === started.connectionId);
    const rec: SimRunRecord = {
      runId: started.runId,
      ordinal: n,
      clipId: started.clipId,
      clipName: clip.name,
      connectionId: started.connectionId,
      connectionName: endpoint?.name ?? started.connectionId,
      binding: started.binding,
      seed: started.seed,
      paceRealTime: started.paceRealTime,
      durationS: started.durationS,
      plannedFrames: started.plannedFrames,
      state: 'starting',
      startedAtMs: Date.now(),
      stopRequestedAtMs: null,
      endReceivedAtMs: null,
      end: null,
      replayFromRecording: false,
    };
    useSimStore.setState((s) => ({ runs: [...s.runs, rec] }));
    if (useClipStore.getState().loaded?.clip.id === started.clipId) {
      try {
        addRun({
          id: started.runId,
          label: runLabel(started, n),
          domain: 'simulation',
          source: started.connectionId,
          live: true,
          note: started.binding.kind === 'builtin' ? BUILTIN_NOTE : started.binding.label,
        });
      } catch (err) {
        useSimStore.setState({ error: `the run is not overlaid: ${message(err)}` });
      }
    }
    if (stopWhileStarting !== null) void stopSimRun(started.runId, stopWhileStarting);
    const pending = early.get(started.runId);
    early.delete(started.runId);
    for (const e of pending ?? []) {
      if (e.type === 'sim.frames') onFrames(e);
      else if (e.type === 'sim.end') onEnd(e);
    }
  } catch (err) {
    useSimStore.setState({ error: message(err) });
  } finally {
    useSimStore.setState({ starting: false });
  }
}

/** Stops one run (its Stop button). */
export async function stopSimRun(runId: string, reason = 'stopped from the Sim trial panel'): Promise<void> {
  const r = record(runId);
  if (r && r.state !== 'ended') patchSimRun(runId, { state: 'stopping', stopRequestedAtMs: r.stopRequestedAtMs ?? Date.now() });
  try {
    await client()?.call('sim.stop', { runId, reason });
  } catch (err) {
    useSimStore.setState({ error: `stop ${runId}: ${message(err)}` });
  }
}

/**
 * The operator's STOP (button, Space, Escape): every simulation run in the services stops now,
 * including one whose sim.run has not answered yet. Never waits on anything else in the console.
 */
export function stopAllSimRuns(source: string): void {
  const reason = `operator stop (${source})`;
  const now = Date.now();
  const open = useSimStore.getState().runs.filter((r) => r.state !== 'ended');
  if (open.length > 0) {
    useSimStore.setState((s) => ({ runs: s.runs.map((r) => (r.state !== 'ended' ? { ...r, state: 'stopping', stopRequestedAtMs: r.stopRequestedAtMs ?? now } : r)) }));
  }
  if (useSimStore.getState().starting) stopWhileStarting = reason;
  const c = client();
  if (!c) return;
  void c.call('sim.stop', { all: true, reason }).catch((err: unknown) => useSimStore.setState({ error: `stop: ${message(err)}` }));
}
