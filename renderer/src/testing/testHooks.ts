import { useClipStore } from '../stores/clipStore';
import { useOperatorStore } from '../stores/operatorStore';
import { usePlaybackStore } from '../stores/playbackStore';
import { poseStore } from '../stores/poseStore';
import { formatApiError } from '../lib/formatApiError';

// Read-only view of the console for end-to-end tests, taken from the same stores the viewport
// and panels draw from (window.__motionbench).

export interface MotionbenchTestState {
  clipId: string | null;
  clipName: string | null;
  frame: number;
  frameCount: number;
  timeS: number;
  playing: boolean;
  jointPosRad: number[];
  /** Forward kinematics of the shown frame, bodyCount×3 metres. */
  bodyPosM: number[];
}

export interface MotionbenchTestHooks {
  state(): MotionbenchTestState;
  /** The error banner's text (location and reason), or null when no error is shown. */
  error(): string | null;
  operatorStops(): number;
}

export function installTestHooks(): void {
  const hooks: MotionbenchTestHooks = {
    state() {
      const pose = poseStore.getState();
      const clip = useClipStore.getState().loaded?.clip ?? null;
      return {
        clipId: clip?.id ?? null,
        clipName: clip?.name ?? null,
        frame: pose.frame,
        frameCount: clip?.frameCount ?? 0,
        timeS: pose.timeS,
        playing: usePlaybackStore.getState().playing,
        jointPosRad: Array.from(pose.jointPosRad),
        bodyPosM: Array.from(pose.bodyPosM),
      };
    },
    error() {
      const e = useClipStore.getState().error;
      return e ? formatApiError(e) : null;
    },
    operatorStops: () => useOperatorStore.getState().events.length,
  };
  Object.defineProperty(window, '__motionbench', { value: Object.freeze(hooks), configurable: false, writable: false });
}
