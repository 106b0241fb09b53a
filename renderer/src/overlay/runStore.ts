import { create } from 'zustand';
import type { ErrorMode } from './overlayCompute';

// Executed runs overlaid on the reference clip (DESIGN §8: "reference ghost vs executed solid,
// per-body error colour; live and replay; several runs of one clip overlaid").
//
// The low-rate half of the overlay, in React state: which runs exist, their labels, visibility,
// live/ended, colour slots, the colour and error modes and the ghost and follow-live toggles.
// The per-run trajectories and the per-frame poses and errors are not React state: they live in
// overlayEngine.ts (typed arrays) and the transient overlayStore.ts. The actions that change runs
// are in runActions.ts.

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

/** Merges `patch` into run `id`'s metadata (no run, no change). */
export const patchRun = (id: string, patch: Partial<RunMeta>): void =>
  useRunStore.setState((s) => ({ runs: s.runs.map((r) => (r.id === id ? { ...r, ...patch } : r)) }));
