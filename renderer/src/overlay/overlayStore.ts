import { createStore } from 'zustand/vanilla';
import type { RunFrame } from './overlayCompute';

// The overlay at the shown time, transient (no React): per run, its pose sampled at the playhead,
// the forward kinematics of that pose and its per-body errors against the reference. Rewritten by
// overlayEngine.ts for every shown frame, in place (the RunFrames' arrays are reused); read in
// useFrame by the viewport and by throttled panels. `revision` changes with every rewrite, so
// subscribers (the viewport's on-demand rendering among them) can tell.

export interface OverlayState {
  /** Bumped on every recomputation. */
  revision: number;
  /** Per run id: the run at the shown time (arrays reused across frames). */
  frames: ReadonlyMap<string, RunFrame>;
}

/** The RunFrame of every run on display, by id: written only by overlayEngine.ts. */
export const runFrames = new Map<string, RunFrame>();

export const overlayStore = createStore<OverlayState>(() => ({ revision: 0, frames: runFrames }));
