import { poseStore } from '../playback/poseStore';
import { useRobotStore } from '../robot/robotStore';
import { bodyErrors, computeRunFrame, createRunFrame } from './overlayCompute';
import { overlayStore, runFrames } from './overlayStore';
import { useRunStore } from './runStore';
import { RunTrajectory } from './runTrajectory';

// The overlay's engine: each run's trajectory (time, root pose, joint angles in growable typed
// arrays, appended to by live frames or replaced by a recorded episode) and, for every shown
// frame, each run sampled at the playhead (lerp / slerp as the contract resamples), its forward
// kinematics on the same RobotProfile as the reference and its per-body errors, written into the
// transient overlayStore. No React: the run list is in runStore.ts, the actions in runActions.ts.
//
// The playhead is the console's one playhead (playback.ts → poseStore, the reference frame on
// display). Replay: scrubbing moves it and the overlay follows. Live: appended frames move it to
// the newest sample when follow-live is on. One store, both modes.

const trajectories = new Map<string, RunTrajectory>();

/** The stored trajectory of a run (read-only use). */
export function runTrajectory(id: string): RunTrajectory | undefined {
  return trajectories.get(id);
}

/** The trajectory of run `id`; throws when there is no such run. */
export function requireRunTrajectory(id: string): RunTrajectory {
  const t = trajectories.get(id);
  if (!t) throw new Error(`no run "${id}"`);
  return t;
}

export const hasRunBuffers = (id: string): boolean => trajectories.has(id);

/** An empty trajectory and frame for a new run (sized for the robot model). */
export function createRunBuffers(id: string, bodyCount: number, jointCount: number): void {
  trajectories.set(id, new RunTrajectory(jointCount, 512));
  runFrames.set(id, createRunFrame(bodyCount, jointCount));
}

export function deleteRunBuffers(id: string): void {
  trajectories.delete(id);
  runFrames.delete(id);
}

export function clearRunBuffers(): void {
  trajectories.clear();
  runFrames.clear();
}

/** Recomputes every run at the shown reference frame (FK + errors); cheap: ~30 bodies per run. */
export function recomputeOverlay(): void {
  const { fk, profile } = useRobotStore.getState();
  const pose = poseStore.getState();
  const { clipId } = useRunStore.getState();
  if (fk && profile) {
    for (const [id, traj] of trajectories) {
      const frame = runFrames.get(id)!;
      if (clipId === null || pose.clipId !== clipId) frame.valid = false;
      else computeRunFrame(frame, traj, fk, pose, profile.rootBodyIndex, pose.timeS);
    }
  }
  overlayStore.setState((s) => ({ revision: s.revision + 1 }));
}

/** The errors the colours of run `id` follow now (mode from the run store). */
export function shownBodyErrors(id: string): Float64Array | null {
  const f = runFrames.get(id);
  return f && f.valid ? bodyErrors(f, useRunStore.getState().errorMode) : null;
}
