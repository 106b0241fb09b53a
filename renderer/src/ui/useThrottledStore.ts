import { useEffect, useRef, useState } from 'react';
import type { StoreApi } from 'zustand/vanilla';

/**
 * A value derived from a transient (vanilla) store, re-rendered at most `hz` times a second and
 * once more after the last change. For panels that show numbers computed at the frame rate.
 */
export function useThrottledStore<S, T>(store: StoreApi<S>, select: (s: S) => T, hz = 10): T {
  const selectRef = useRef(select);
  selectRef.current = select;
  const [value, setValue] = useState(() => select(store.getState()));
  useEffect(() => {
    const intervalMs = 1000 / hz;
    let lastMs = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = (): void => {
      timer = null;
      lastMs = performance.now();
      setValue(selectRef.current(store.getState()));
    };
    flush();
    const unsubscribe = store.subscribe(() => {
      if (timer !== null) return;
      timer = setTimeout(flush, Math.max(0, lastMs + intervalMs - performance.now()));
    });
    return () => {
      unsubscribe();
      if (timer !== null) clearTimeout(timer);
    };
  }, [store, hz]);
  return value;
}
