import { createStore } from 'zustand/vanilla';

// The pose on display, written once per shown frame by renderer/src/playback/playback.ts and
// read by the viewport in useFrame (getState, no React) and by throttled subscribers (labels,
// joint table). The typed arrays are reused and written in place; `revision` changes with
// every update so subscribers can tell.

export interface PoseState {
  /** Clip the pose belongs to; null = the model's default pose. */
  clipId: string | null;
  frame: number;
  timeS: number;
  /** 29 joint angles, radians, canonical order. */
  jointPosRad: Float64Array;
  rootPosM: Float64Array;
  rootQuatWxyz: Float64Array;
  /** Forward kinematics of the shown frame: bodyCount×3 metres, bodyCount×4 wxyz. */
  bodyPosM: Float64Array;
  bodyQuatWxyz: Float64Array;
  revision: number;
}

export const poseStore = createStore<PoseState>(() => ({
  clipId: null,
  frame: 0,
  timeS: 0,
  jointPosRad: new Float64Array(29),
  rootPosM: new Float64Array(3),
  rootQuatWxyz: Float64Array.of(1, 0, 0, 0),
  bodyPosM: new Float64Array(0),
  bodyQuatWxyz: new Float64Array(0),
  revision: 0,
}));
