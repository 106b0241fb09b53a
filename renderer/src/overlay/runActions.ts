import { clipFromDto } from '../../../src/api/clipDto';
import type { ClipDto } from '../../../src/api/contract';
import { useClipStore } from '../playback/clipStore';
import { pause, resetPlayhead, seekTimeS } from '../playback/playback';
import { poseStore } from '../playback/poseStore';
import { useRobotStore } from '../robot/robotStore';
import type { ErrorMode } from './overlayCompute';
import {
  clearRunBuffers,
  createRunBuffers,
  deleteRunBuffers,
  hasRunBuffers,
  recomputeOverlay,
  requireRunTrajectory,
} from './overlayEngine';
import { nextRunColorSlot } from './runColors';
import { MAX_RUNS, patchRun, useRunStore, type OverlayColorMode, type RunDomain, type RunMeta } from './runStore';
import type { PackedTrajectory, RunSample } from './runTrajectory';

// Executed runs overlaid on the reference clip (DESIGN §8: "reference ghost vs executed solid,
// per-body error colour; live and replay; several runs of one clip overlaid"): adding, feeding,
// ending and removing runs, and the overlay's display settings. Each action keeps the run list
// (runStore.ts), the trajectories (overlayEngine.ts) and the overlay at the shown time
// (overlayStore.ts) in step.

export interface RunInit {
  id: string;
  label?: string;
  domain?: RunDomain;
  source?: string;
  /** Default true: frames will be appended. */
  live?: boolean;
  visible?: boolean;
  note?: string;
}

/** Adds an (empty) run of the clip on display. */
export function addRun(init: RunInit): void {
  const clip = useClipStore.getState().loaded?.clip;
  const { fk } = useRobotStore.getState();
  if (!clip) throw new Error('load the reference clip before adding runs of it');
  if (!fk) throw new Error('the robot model is not loaded');
  if (!/^[\w.:-]{1,128}$/.test(init.id)) throw new Error(`run id "${init.id}": use 1-128 letters, digits, . _ : -`);
  const state = useRunStore.getState();
  if (state.clipId !== clip.id) clearRuns();
  if (hasRunBuffers(init.id)) throw new Error(`run "${init.id}" already exists`);
  if (useRunStore.getState().runs.length >= MAX_RUNS) throw new Error(`at most ${MAX_RUNS} runs can be overlaid`);
  createRunBuffers(init.id, fk.bodyCount, fk.jointCount);
  const meta: RunMeta = {
    id: init.id,
    label: init.label ?? init.id,
    domain: init.domain ?? 'simulation',
    source: init.source ?? 'unknown',
    visible: init.visible ?? true,
    live: init.live ?? true,
    outcome: null,
    note: init.note ?? null,
    colorSlot: nextRunColorSlot(useRunStore.getState().runs.map((r) => r.colorSlot)),
  };
  useRunStore.setState((s) => ({ clipId: clip.id, runs: [...s.runs, meta] }));
  recomputeOverlay();
}

/**
 * Appends live samples (StateFrames fit: timeS, rootPosM, rootQuatWxyz, jointPosRad). With
 * follow-live on, the playhead moves to the newest sample.
 */
export function appendRunFrames(id: string, samples: readonly RunSample[]): void {
  const t = requireRunTrajectory(id);
  for (const s of samples) t.append(s);
  const meta = useRunStore.getState().runs.find((r) => r.id === id);
  if (meta?.live && useRunStore.getState().followLive && t.count > 0) {
    pause();
    seekTimeS(t.lastTimeS); // publishes the reference pose, which recomputes the overlay
    recomputeOverlay(); // the frame may not have changed
  } else recomputeOverlay();
}

/** Replaces a run's samples with a recorded trajectory (replay). */
export function setRunTrajectory(id: string, packed: PackedTrajectory): void {
  requireRunTrajectory(id).setPacked(packed);
  recomputeOverlay();
}

/** No more frames will arrive. */
export function endRun(id: string, outcome: string | null = null): void {
  requireRunTrajectory(id);
  patchRun(id, { live: false, outcome });
}

export function removeRun(id: string): void {
  deleteRunBuffers(id);
  useRunStore.setState((s) => ({ runs: s.runs.filter((r) => r.id !== id) }));
  recomputeOverlay();
}

/** Drops every run. The colour mode returns to `error`: "by run" is chosen per set of runs (a Gap review replay). */
export function clearRuns(): void {
  clearRunBuffers();
  useRunStore.setState({ runs: [], clipId: null, colorMode: 'error' });
  recomputeOverlay();
}

/**
 * Puts a reference clip from the services on display for a fresh set of runs (a replay of a
 * qualification pair or a matched pair, a trial's reference): playback paused, the runs of the
 * previous clip dropped, the playhead at frame 0. Nothing to reload it from (lastSource null).
 */
export function showReferenceForRuns(reference: ClipDto): void {
  pause();
  clearRuns();
  useClipStore.setState({ loaded: clipFromDto(reference), error: null, lastSource: null });
  resetPlayhead();
}

export function setRunVisible(id: string, visible: boolean): void {
  patchRun(id, { visible });
}

export function setErrorMode(errorMode: ErrorMode): void {
  useRunStore.setState({ errorMode });
  recomputeOverlay(); // panels re-read the figures in the new mode
}
export const setColorMode = (colorMode: OverlayColorMode): void => useRunStore.setState({ colorMode });
export const setShowReference = (showReference: boolean): void => useRunStore.setState({ showReference });
export const setFollowLive = (followLive: boolean): void => useRunStore.setState({ followLive });

/**
 * Keeps the overlay in step with the playhead and drops the runs when another clip is loaded.
 * Returns a function that stops it.
 */
export function startOverlayEngine(): () => void {
  const offPose = poseStore.subscribe(recomputeOverlay);
  const offClip = useClipStore.subscribe((s, prev) => {
    const id = s.loaded?.clip.id ?? null;
    if (
      id !== (prev.loaded?.clip.id ?? null) &&
      useRunStore.getState().runs.length > 0 &&
      id !== useRunStore.getState().clipId
    )
      clearRuns();
  });
  return () => {
    offPose();
    offClip();
  };
}
