import type { ApiParams, SimRunStarted } from '../../../src/api/contract';
import { POLICY_ID_RE } from '../../../src/api/policyContract';
import { errorMessage } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import { ApiCallError, type ConsoleClient } from '../api/consoleClient';
import { fetchClip, statedFps } from '../clips/clipActions';
import { useClipStore } from '../playback/clipStore';
import { useEndpointsStore } from '../connections/endpointsStore';
import { addRun } from '../overlay/runActions';
import { MAX_RUNS, useRunStore } from '../overlay/runStore';
import { policyMotionShown, reopenPolicy } from '../policies/policyActions';
import { usePolicyStore } from '../policies/policyStore';
import { BUILTIN_NOTE } from '../ui/format';
import { replayEarlyPushes } from './simPushes';
import { patchSimRun, useSimStore, type SimRunRecord } from './simStore';

// Running the clip on display in simulation (sim.run) under the builtin tracker or the policy
// open in the Policy panel (by its id): the form's request, the start (with the run added to the
// overlay as a live run), the stops. What follows a started run, its pushed frames and its end,
// is in simPushes.ts.

let ordinal = 0;
/** A STOP pressed while sim.run was in flight: the run it returns is stopped at once. */
let stopWhileStarting: string | null = null;

const client = (): ConsoleClient | null => useConnectionStore.getState().client;
const record = (runId: string): SimRunRecord | undefined => useSimStore.getState().runs.find((r) => r.runId === runId);

/** The sim.run params the form describes, or the reason it cannot be sent. */
export function simRequestFromForm(): { ok: true; params: ApiParams<'sim.run'> } | { ok: false; reason: string } {
  const clip = useClipStore.getState().loaded?.clip;
  if (!clip) return { ok: false, reason: 'open a clip first' };
  const f = useSimStore.getState().form;
  let binding = 'builtin';
  if (f.bindingChoice === 'assist') {
    const t = f.assistText.trim();
    if (!/^\d{1,7}(\.\d{1,6})?$/.test(t) || !(Number(t) > 0) || Number(t) > 1e6)
      return {
        ok: false,
        reason: `root assist "${f.assistText}": a stiffness in N/m, more than 0 and at most 1000000`,
      };
    binding = `builtin:assist=${Number(t)}`;
  } else if (f.bindingChoice === 'policy') {
    const { info, bakedClip } = usePolicyStore.getState();
    if (!info) return { ok: false, reason: 'open a policy first (Policy panel)' };
    if (!policyMotionShown(info, clip.id))
      return {
        ok: false,
        reason: `policy ${info.bindingId} tracks only the motion baked into it (${bakedClip?.clip.name ?? info.motion!.clipId}): show its motion (Policy panel) to run it`,
      };
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
    ...(f.allowDuringRealTrial && { allowDuringRealTrial: true }),
  };
  const ms = f.maxSecondsText.trim();
  if (ms !== '') {
    const v = Number(ms);
    if (!(Number.isFinite(v) && v > 0 && v <= 3600))
      return { ok: false, reason: `"first … s": a duration in seconds, more than 0 (empty: the whole clip)` };
    params.maxSeconds = v;
  }
  return { ok: true, params };
}

/**
 * The Sim trial's words for a sim.run failure: the refusal beside a real trial names the panel's
 * checkbox (the request field it sets is the API's word); everything else verbatim.
 */
export function simRunErrorText(err: unknown): string {
  if (err instanceof ApiCallError && err.error.code === 'conflict' && err.error.field === OVERRIDE_FIELD) {
    const why = err.error.message.split('; ')[0];
    return `${why}; wait for its end, or tick "run anyway" above`;
  }
  return errorMessage(err);
}

/** The sim.run field the "run anyway" checkbox sets. */
const OVERRIDE_FIELD = 'params.allowDuringRealTrial';

/** Sends the clip on display to the services again (they forgot it, e.g. after a restart). */
async function resendClip(c: ConsoleClient, clipId: string): Promise<boolean> {
  if (usePolicyStore.getState().info?.motion?.clipId === clipId) return reopenPolicy(c); // a policy's baked motion
  const { lastSource, fpsText } = useClipStore.getState();
  if (!lastSource) return false;
  const fps = statedFps(fpsText);
  const dto = await fetchClip(c, lastSource, fps !== undefined && !Number.isNaN(fps) ? { fps } : {});
  return dto.id === clipId;
}

/** Re-sends what sim.run's not_found names: the clip on display, or the open policy. */
function bringBack(c: ConsoleClient, params: ApiParams<'sim.run'>, field: string | undefined): Promise<boolean> {
  if (field === 'params.clipId') return resendClip(c, params.clipId);
  if (
    field === 'params.binding' &&
    POLICY_ID_RE.test(params.binding) &&
    usePolicyStore.getState().info?.policyId === params.binding
  )
    return reopenPolicy(c);
  return Promise.resolve(false);
}

export function runLabel(started: SimRunStarted, n: number): string {
  const b = started.binding;
  // A policy's version (adapter + content hash + physics) is long: its label goes in the run's note.
  const what =
    b.kind === 'builtin'
      ? b.assistNPerM !== null
        ? `builtin + assist ${b.assistNPerM} N/m`
        : 'builtin, no assist'
      : (b.id.split('/').at(-1) ?? b.id);
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
        if (
          attempt < 2 &&
          err instanceof ApiCallError &&
          err.error.code === 'not_found' &&
          (await bringBack(c, req.params, err.error.field))
        )
          continue;
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
        useSimStore.setState({ error: `the run is not overlaid: ${errorMessage(err)}` });
      }
    }
    if (stopWhileStarting !== null) void stopSimRun(started.runId, stopWhileStarting);
    replayEarlyPushes(started.runId);
  } catch (err) {
    useSimStore.setState({ error: simRunErrorText(err) });
  } finally {
    useSimStore.setState({ starting: false });
  }
}

/** Stops one run (its Stop button). */
export async function stopSimRun(runId: string, reason = 'stopped from the Sim trial panel'): Promise<void> {
  const r = record(runId);
  if (r && r.state !== 'ended')
    patchSimRun(runId, { state: 'stopping', stopRequestedAtMs: r.stopRequestedAtMs ?? Date.now() });
  try {
    await client()?.call('sim.stop', { runId, reason });
  } catch (err) {
    useSimStore.setState({ error: `stop ${runId}: ${errorMessage(err)}` });
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
    useSimStore.setState((s) => ({
      runs: s.runs.map((r) =>
        r.state !== 'ended' ? { ...r, state: 'stopping', stopRequestedAtMs: r.stopRequestedAtMs ?? now } : r,
      ),
    }));
  }
  if (useSimStore.getState().starting) stopWhileStarting = reason;
  const c = client();
  if (!c) return;
  void c
    .call('sim.stop', { all: true, reason })
    .catch((err: unknown) => useSimStore.setState({ error: `stop: ${errorMessage(err)}` }));
}
