/**
 * Watches this thread's event loop with a timer every `periodMs`; `stop()` returns the longest
 * time between two of its runs (to the stop itself included), ms: how long the loop could not run
 * anything else.
 */
export function watchLoopGaps(periodMs: number): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, periodMs);
  let result: number | null = null;
  return {
    /** The longest gap; the first call ends the watch, later calls return the same figure. */
    stop() {
      if (result === null) {
        clearInterval(timer);
        result = Math.max(longest, performance.now() - last);
      }
      return result;
    },
  };
}
