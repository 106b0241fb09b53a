import { performance } from 'node:perf_hooks';

// The clock a robot link's parts read and schedule on, injected so that their timing can be
// tested deterministically (test/helpers/fakeLinkClock.ts advances time by hand: no real
// timers, no sleeps). The real clock is performance.now() and Node's timers.

/** An opaque handle of a scheduled callback. */
export type TimerHandle = { readonly __linkTimer: true };

export interface LinkClock {
  /** Monotonic time, ms (performance.now() in the real clock): every threshold and age is measured on it. */
  nowMs(): number;
  /** Wall-clock time, ms since the Unix epoch (the stamp of a problem). */
  wallNowMs(): number;
  /** Unix time, ms, of nowMs() = 0 (performance.timeOrigin): a monotonic reading + this = wall time. */
  readonly timeOriginUnixMs: number;
  /**
   * Runs fn once after ms. `keepAlive: false` lets the process exit while it is pending (a
   * housekeeping timer: freshness deadline, reconnect); default true, as Node's timers.
   */
  setTimeout(fn: () => void, ms: number, options?: { keepAlive?: boolean }): TimerHandle;
  clearTimeout(handle: TimerHandle | null): void;
  /** Runs fn right after this loop turn's I/O has been read (setImmediate). */
  afterIo(fn: () => void): TimerHandle;
  cancelAfterIo(handle: TimerHandle | null): void;
}

export const realLinkClock: LinkClock = {
  nowMs: () => performance.now(),
  wallNowMs: () => Date.now(),
  timeOriginUnixMs: performance.timeOrigin,
  setTimeout(fn, ms, options) {
    const t = setTimeout(fn, ms);
    if (options?.keepAlive === false) t.unref();
    return t as unknown as TimerHandle;
  },
  clearTimeout(handle) {
    if (handle) clearTimeout(handle as unknown as NodeJS.Timeout);
  },
  afterIo(fn) {
    return setImmediate(fn) as unknown as TimerHandle;
  },
  cancelAfterIo(handle) {
    if (handle) clearImmediate(handle as unknown as NodeJS.Immediate);
  },
};

/** Resolves after ms on the clock (keeps the process alive, as a plain timer). */
export function clockDelay(clock: LinkClock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}
