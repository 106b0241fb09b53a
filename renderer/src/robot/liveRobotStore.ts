import { create } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { RobotLiveEvent } from '../../../src/api/contract';

// The live robot outside trials: each connected robot's newest measured joints and
// root, from the robot.live push (src/services/console/robotLive.ts, 15 Hz). Two stores, as for the
// poses: the ids of the robots to draw in React state (they change when a robot connects or goes
// away), the joint angles and roots in a transient store written in place and read in useFrame
// (viewport/LiveRobotModel.tsx) — never React state per frame.

export interface LiveRobotPose {
  tick: number;
  /** 29, rad, canonical Unitree order. */
  jointPosRad: Float64Array;
  /** World frame, m: the link's motion capture; null without one (drawn at the reference root). */
  rootPosM: Float64Array | null;
  /** wxyz: the measured root, or without motion capture the IMU attitude; null when unknown. */
  rootQuatWxyz: Float64Array | null;
}

export interface LiveRobotPoses {
  poses: ReadonlyMap<string, LiveRobotPose>;
  /** Bumped on every push. */
  revision: number;
}

const poses = new Map<string, LiveRobotPose>();

export const liveRobotStore = createStore<LiveRobotPoses>(() => ({ poses, revision: 0 }));

/** The connection ids drawn, in push order. */
export const useLiveRobotIds = create<{ ids: string[] }>(() => ({ ids: [] }));

function copyInto(dst: Float64Array | null, src: number[] | null): Float64Array | null {
  if (!src) return null;
  const out = dst && dst.length === src.length ? dst : new Float64Array(src.length);
  out.set(src);
  return out;
}

/**
 * Below these changes since the pose last drawn, a push asks for no new frame: a standing robot's
 * encoder and IMU noise (σ ≈ 1e-3 rad) would otherwise re-render the canvas 15 times a second
 * for nothing visible (0.3° of a joint, 2 mm, ~0.3° of attitude). Slow drifts add up against
 * the pose last drawn and are drawn once they pass.
 */
const VISIBLE = { jointRad: 0.005, rootPosM: 0.002, quat: 0.0025 } as const;

/** Per robot, the pose as last drawn: joints, root position, root quaternion (29 + 3 + 4). */
const lastDrawn = new Map<string, Float64Array>();

function maxDiff(a: ArrayLike<number>, b: Float64Array, at: number, n: number): number {
  let m = 0;
  for (let i = 0; i < n; i++) m = Math.max(m, Math.abs(a[i] - b[at + i]));
  return m;
}

/** Whether the new pose differs visibly from the one last drawn (and, if so, remembers it as drawn). */
function visiblyMoved(id: string, p: LiveRobotPose): boolean {
  let d = lastDrawn.get(id);
  const fresh = d === undefined;
  d ??= new Float64Array(36);
  const moved =
    fresh ||
    maxDiff(p.jointPosRad, d, 0, 29) > VISIBLE.jointRad ||
    (p.rootPosM !== null && maxDiff(p.rootPosM, d, 29, 3) > VISIBLE.rootPosM) ||
    (p.rootQuatWxyz !== null && maxDiff(p.rootQuatWxyz, d, 32, 4) > VISIBLE.quat);
  if (moved) {
    d.set(p.jointPosRad, 0);
    if (p.rootPosM) d.set(p.rootPosM, 29);
    if (p.rootQuatWxyz) d.set(p.rootQuatWxyz, 32);
    lastDrawn.set(id, d);
  }
  return moved;
}

/** Applies one robot.live push: exactly the robots it lists are drawn; a frame is asked for only when one moved visibly. */
export function applyRobotLive(e: RobotLiveEvent): void {
  const seen = new Set<string>();
  let moved = false;
  for (const r of e.robots) {
    seen.add(r.connectionId);
    const cur = poses.get(r.connectionId);
    const pose: LiveRobotPose = {
      tick: r.tick,
      jointPosRad: copyInto(cur?.jointPosRad ?? null, r.jointPosRad)!,
      rootPosM: copyInto(cur?.rootPosM ?? null, r.rootPosM),
      rootQuatWxyz: copyInto(cur?.rootQuatWxyz ?? null, r.rootQuatWxyz),
    };
    poses.set(r.connectionId, pose);
    if (visiblyMoved(r.connectionId, pose)) moved = true;
  }
  for (const id of [...poses.keys()])
    if (!seen.has(id)) {
      poses.delete(id);
      lastDrawn.delete(id);
      moved = true;
    }
  const ids = [...poses.keys()];
  const prev = useLiveRobotIds.getState().ids;
  if (ids.length !== prev.length || ids.some((id, k) => prev[k] !== id)) useLiveRobotIds.setState({ ids });
  if (moved) liveRobotStore.setState((s) => ({ poses, revision: s.revision + 1 }));
}

/**
 * Keeps only the live robots the services list as connected (safety.status, 5 Hz, which robot.live
 * never crowds out): the robot.live that would have removed one may have been skipped for a client
 * behind on its acknowledgements.
 */
export function retainLiveRobots(connectedIds: readonly string[]): void {
  let removed = false;
  for (const id of [...poses.keys()])
    if (!connectedIds.includes(id)) {
      poses.delete(id);
      lastDrawn.delete(id);
      removed = true;
    }
  if (!removed) return;
  useLiveRobotIds.setState({ ids: [...poses.keys()] });
  liveRobotStore.setState((s) => ({ poses, revision: s.revision + 1 }));
}
