import { create } from 'zustand';
import { createStore } from 'zustand/vanilla';
import { bodyErrors, computeRunFrame, createRunFrame, type ErrorMode, type RunFrame } from '../overlay/overlayCompute';
import { nextRunColorSlot } from '../overlay/runColors';
import { RunTrajectory, type PackedTrajectory, type RunSample } from '../overlay/runTrajectory';
import { pause, seekTimeS } from '../playback/playback';
import { useClipStore } from './clipStore';
import { poseStore } from './poseStore';
import { useRobotStore } from './robotStore';

// Executed runs overlaid on the reference clip (DESIGN §8: "reference ghost vs executed solid,
// per-body error colour; live and replay; several runs of one clip overlaid").
//
// Three layers, by rate:
//   useRunStore      React, low rate: which runs exist, their labels, visibility, live/ended,
//                    colour slots, the colour and error modes and the ghost and follow-live
//                    toggles.
//   trajectories     per run, a RunTrajectory of typed arrays (time, root pose, joint angles),
//                    appended to by live frames or replaced by a recorded episode. No React.
//   overlayStore     transient, rewritten for every shown frame: each run's pose at the
//                    playhead, its forward kinematics and per-body errors against the reference.
//                    Read in useFrame by the viewport and by throttled panels.
//
// The playhead is the console's one playhead (playback.ts → poseStore, the reference frame on
// display). Replay: scrubbing moves it and the overlay follows. Live: appended frames move it to
// the newest sample when follow-live is on. One store, both modes.

export type RunDomain = 'simulation' | 'real_robot';

/**
 * What the executed robots' body colours show: `error` — each body's position error against the
 * reference (green → yellow → red, the default); `run` — the run's identity colour (runColors.ts),
 * one colour per run, so overlaid runs are told apart.
 */
export type OverlayColorMode = 'error' | 'run';

export interface RunMeta {
  id: string;
  label: string;
  domain: RunDomain;
  /** Where the run came from: a connection id, a trace file, 'synthetic'. */
  source: string;
  visible: boolean;
  /** Frames may still arrive. */
  live: boolean;
  /** How the episode ended, once it has. */
  outcome: string | null;
  /** Shown with the run wherever its results are (e.g. "builtin = reference tracker, not a policy"). */
  note: string | null;
  /** Its identity colour (runColor(colorSlot)), fixed while it is overlaid; distinct among the runs shown. */
  colorSlot: number;
}

export interface RunListState {
  /** The reference clip the runs belong to; runs are cleared when another clip is loaded. */
  clipId: string | null;
  runs: RunMeta[];
  /** Body colours by error or by run; back to `error` whenever the runs are cleared. */
  colorMode: OverlayColorMode;
  /** Which error the body colours (in `error` colour mode) and the figures show. */
  errorMode: ErrorMode;
  /** Draw the reference (as a ghost) while runs are shown. */
  showReference: boolean;
  /** Live runs move the playhead to their newest sample. */
  followLive: boolean;
}

export const MAX_RUNS = 8;

export const useRunStore = create<RunListState>(() => ({
  clipId: null,
  runs: [],
  colorMode: 'error',
  errorMode: 'local',
  showReference: true,
  followLive: true,
}));

export interface OverlayState {
  /** Bumped on every recomputation. */
  revision: number;
  /** Per run id: the run at the shown time (arrays reused across frames). */
  frames: ReadonlyMap<string, RunFrame>;
}

const frames = new Map<string, RunFrame>();
const trajectories = new Map<string, RunTrajectory>();

export const overlayStore = createStore<OverlayState>(() => ({ revision: 0, frames }));

/** The stored trajectory of a run (read-only use). */
export function runTrajectory(id: string): RunTrajectory | undefined {
  return trajectories.get(id);
}

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

function requireRun(id: string): RunTrajectory {
  const t = trajectories.get(id);
  if (!t) throw new Error(`no run "${id}"`);
  return t;
}

const patchRun = (id: string, patch: Partial<RunMeta>): void =>
  useRunStore.setState((s) => ({ runs: s.runs.map((r) => (r.id === id ? { ...r, ...patch } : r)) }));

/** Adds an (empty) run of the clip on display. */
export function addRun(init: RunInit): void {
  const clip = useClipStore.getState().loaded?.clip;
  const { fk } = useRobotStore.getState();
  if (!clip) throw new Error('load the reference clip before adding runs of it');
  if (!fk) throw new Error('the robot model is not loaded');
  if (!/^[\w.:-]{1,128}$/.test(init.id)) throw new Error(`run id "${init.id}": use 1-128 letters, digits, . _ : -`);
  const state = useRunStore.getState();
  if (state.clipId !== clip.id) clearRuns();
  if (trajectories.has(init.id)) throw new Error(`run "${init.id}" already exists`);
  if (useRunStore.getState().runs.length >= MAX_RUNS) throw new Error(`at most ${MAX_RUNS} runs can be overlaid`);
  trajectories.set(init.id, new RunTrajectory(fk.jointCount, 512));
  frames.set(init.id, createRunFrame(fk.bodyCount, fk.jointCount));
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
  const t = requireRun(id);
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
  requireRun(id).setPacked(packed);
  recomputeOverlay();
}

/** No more frames will arrive. */
export function endRun(id: string, outcome: string | null = null): void {
  requireRun(id);
  patchRun(id, { live: false, outcome });
}

export function removeRun(id: string): void {
  trajectories.delete(id);
  frames.delete(id);
  useRunStore.setState((s) => ({ runs: s.runs.filter((r) => r.id !== id) }));
  recomputeOverlay();
}

/** Drops every run. The colour mode returns to `error`: "by run" is chosen per set of runs (a Gap review replay). */
export function clearRuns(): void {
  trajectories.clear();
  frames.clear();
  useRunStore.setState({ runs: [], clipId: null, colorMode: 'error' });
  recomputeOverlay();
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

/** Recomputes every run at the shown reference frame (FK + errors); cheap: ~30 bodies per run. */
export function recomputeOverlay(): void {
  const { fk, profile } = useRobotStore.getState();
  const pose = poseStore.getState();
  const { clipId } = useRunStore.getState();
  if (fk && profile) {
    for (const [id, traj] of trajectories) {
      const frame = frames.get(id)!;
      if (clipId === null || pose.clipId !== clipId) frame.valid = false;
      else computeRunFrame(frame, traj, fk, pose, profile.rootBodyIndex, pose.timeS);
    }
  }
  overlayStore.setState((s) => ({ revision: s.revision + 1 }));
}

/** The errors the colours of run `id` follow now (mode from the run store). */
export function shownBodyErrors(id: string): Float64Array | null {
  const f = frames.get(id);
  return f && f.valid ? bodyErrors(f, useRunStore.getState().errorMode) : null;
}

/**
 * Keeps the overlay in step with the playhead and drops the runs when another clip is loaded.
 * Returns a function that stops it.
 */
export function startOverlayEngine(): () => void {
  const offPose = poseStore.subscribe(recomputeOverlay);
  const offClip = useClipStore.subscribe((s, prev) => {
    const id = s.loaded?.clip.id ?? null;
    if (id !== (prev.loaded?.clip.id ?? null) && useRunStore.getState().runs.length > 0 && id !== useRunStore.getState().clipId) clearRuns();
  });
  return () => {
    offPose();
    offClip();
  };
}
