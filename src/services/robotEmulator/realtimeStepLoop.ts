import { performance } from 'node:perf_hooks';

// The real-time loop both emulated robots run (the g1-bridge/1 emulator and the G1 on DDS): a
// physics step k runs (and its sample is published) at or after its due time, never earlier; a
// late loop catches up step by step, so the stream neither runs ahead nor drifts. Each turn
// computes the steps that are due for at most CATCH_UP_SLICE_MS, then yields — at once
// (setImmediate: I/O is polled first) while still behind, else with a timer until the next step
// is due.

/**
 * Longest run of steps computed in one go while catching up, ms of wall time, before the loop
 * yields to I/O. A budget in time, not in steps: on a busy machine (or with a cold JIT) one step
 * can cost more than the 2 ms it stands for, and a fixed batch of steps then blocks the process
 * for 100 ms and more — the lowstate stream stalls, and the console's safety gate trips on a
 * robot link silent for 100 ms and damps the (standing) robot, which falls. (The emulated
 * interlock box runs in its own process so that such a stall cannot also silence its heartbeats.)
 * 5 ms keeps the 500 Hz stream's gaps far inside the limit.
 */
export const CATCH_UP_SLICE_MS = 5;
/** Behind real time by more than this, ms, the loop says so (and again when it caught up). */
export const BEHIND_LOG_MS = 50;

export interface RealtimeStepLoopOptions {
  /** The tick of the next step. */
  tick(): number;
  /** When the step of `tick` is due, on the clock `now` (ms). */
  dueMs(tick: number): number;
  /** Computes the next step and publishes its sample. */
  step(): void;
  /** The monotonic clock, ms (default performance.now). */
  now?: () => number;
  /** The loop fell more than BEHIND_LOG_MS behind real time: `lateMs` at `tick`. */
  onBehind(lateMs: number, tick: number): void;
  /** It caught up at `tick`, `afterMs` after it fell behind, at worst `worstMs` behind. */
  onCaughtUp(tick: number, afterMs: number, worstMs: number): void;
}

export class RealtimeStepLoop {
  private maxLate = 0;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private stopped = false;
  /** Set while the loop is more than BEHIND_LOG_MS behind: when it started and the worst lateness. */
  private behind: { sinceMs: number; worstMs: number } | null = null;

  private readonly now: () => number;

  constructor(private readonly o: RealtimeStepLoopOptions) {
    this.now = o.now ?? (() => performance.now());
  }

  /** Largest lateness of a step behind its due time, ms. */
  get maxLateMs(): number {
    return this.maxLate;
  }

  start(): void {
    this.turn();
  }

  /** No step runs after this. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
  }

  private readonly turn = (): void => {
    this.timer = null;
    this.immediate = null;
    if (this.stopped) return;
    const o = this.o;
    const sliceEnd = this.now() + CATCH_UP_SLICE_MS;
    for (;;) {
      const now = this.now();
      const due = o.dueMs(o.tick());
      if (due > now) break;
      const lateMs = now - due;
      if (lateMs > this.maxLate) this.maxLate = lateMs;
      if (lateMs > BEHIND_LOG_MS) {
        if (!this.behind) {
          this.behind = { sinceMs: now, worstMs: lateMs };
          o.onBehind(lateMs, o.tick());
        } else if (lateMs > this.behind.worstMs) this.behind.worstMs = lateMs;
      }
      o.step();
      if (this.now() >= sliceEnd) {
        this.immediate = setImmediate(this.turn);
        return;
      }
    }
    if (this.behind) {
      o.onCaughtUp(o.tick(), this.now() - this.behind.sinceMs, this.behind.worstMs);
      this.behind = null;
    }
    this.timer = setTimeout(this.turn, Math.max(0, Math.floor(o.dueMs(o.tick()) - this.now())));
  };
}
