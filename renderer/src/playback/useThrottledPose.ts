import { useThrottledStore } from '../ui/useThrottledStore';
import { poseStore, type PoseState } from './poseStore';

/**
 * A value derived from the transient pose store, re-rendered at most `hz` times a second (and
 * once more after the last change). For labels and tables: the viewport reads the store
 * directly, so React never runs at the playback rate.
 */
export function useThrottledPose<T>(select: (s: PoseState) => T, hz = 12): T {
  return useThrottledStore(poseStore, select, hz);
}
