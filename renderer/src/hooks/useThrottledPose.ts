import { useEffect, useRef, useState } from 'react';
import { poseStore, type PoseState } from '../stores/poseStore';

/**
 * A value derived from the transient pose store, re-rendered at most `hz` times a second (and
 * once more after the last change). For labels and tables: the viewport reads the store
 * directly, so React never runs at the playback rate.
 */
export function useThrottledPose<T>(select: (s: PoseState) => T, hz = 12): T {
  const selectRef = useRef(select);
  selectRef.current = select;
  const [value, setValue] = useState(() => select(poseStore.getState()));
  useEffect(() => {
    const intervalMs = 1000 / hz;
    let lastMs = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = (): void => {
      timer = null;
      lastMs = performance.now();
      setValue(selectRef.current(poseStore.getState()));
    };
    flush();
    const unsubscribe = poseStore.subscribe(() => {
      if (timer !== null) return;
      const wait = Math.max(0, lastMs + intervalMs - performance.now());
      timer = setTimeout(flush, wait);
    });
    return () => {
      unsubscribe();
      if (timer !== null) clearTimeout(timer);
    };
  }, [hz]);
  return value;
}
