import type { LinkClock, TimerHandle } from '../../src/services/robotLink/linkClock';

// A LinkClock whose time moves only when the test says so: timers fire in time order (ties in
// the order they were set) at exactly their due time, and the after-I/O callbacks queued by a
// timer run right after it, as Node's check phase follows its timer and poll phases. No real
// timer, no sleep: a test on it is deterministic on a busy machine.
//
// advanceTo/advanceBy run everything due; runTimersTo runs only the timer phase (the socket not
// read yet), so a test can put a message "in the poll phase" before runAfterIo().

interface FakeTimer {
  id: number;
  atMs: number;
  fn: () => void;
  keepAlive: boolean;
}

export class FakeLinkClock implements LinkClock {
  readonly timeOriginUnixMs: number;
  private t: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();
  private immediates: { id: number; fn: () => void }[] = [];

  constructor(startMs = 1000, timeOriginUnixMs = 1_750_000_000_000) {
    this.t = startMs;
    this.timeOriginUnixMs = timeOriginUnixMs;
  }

  nowMs(): number {
    return this.t;
  }

  wallNowMs(): number {
    return this.timeOriginUnixMs + this.t;
  }

  setTimeout(fn: () => void, ms: number, options?: { keepAlive?: boolean }): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, atMs: this.t + Math.max(0, ms), fn, keepAlive: options?.keepAlive !== false });
    return { id } as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle | null): void {
    if (handle) this.timers.delete((handle as unknown as { id: number }).id);
  }

  afterIo(fn: () => void): TimerHandle {
    const id = this.nextId++;
    this.immediates.push({ id, fn });
    return { id } as unknown as TimerHandle;
  }

  cancelAfterIo(handle: TimerHandle | null): void {
    if (!handle) return;
    const id = (handle as unknown as { id: number }).id;
    this.immediates = this.immediates.filter((i) => i.id !== id);
  }

  /** Timers pending (keepAlive ones only, with `keepAliveOnly`). */
  pendingTimers(keepAliveOnly = false): number {
    return [...this.timers.values()].filter((t) => !keepAliveOnly || t.keepAlive).length;
  }

  /** Due times of the pending timers, ascending. */
  dueTimes(): number[] {
    return [...this.timers.values()].map((t) => t.atMs).sort((a, b) => a - b);
  }

  /** Runs every timer due up to `targetMs`, each at its time followed by the after-I/O callbacks, then stops at targetMs. */
  advanceTo(targetMs: number): void {
    this.runTimersTo(targetMs, true);
  }

  advanceBy(ms: number): void {
    this.advanceTo(this.t + ms);
  }

  /**
   * Runs the timers due up to targetMs in order; with `thenAfterIo` the after-I/O callbacks after
   * each, else none (they wait for runAfterIo: the socket has not been read yet).
   */
  runTimersTo(targetMs: number, thenAfterIo = false): void {
    if (targetMs < this.t) throw new RangeError(`the fake clock does not go back (${targetMs} < ${this.t})`);
    for (;;) {
      let next: FakeTimer | null = null;
      for (const timer of this.timers.values())
        if (
          timer.atMs <= targetMs &&
          (!next || timer.atMs < next.atMs || (timer.atMs === next.atMs && timer.id < next.id))
        )
          next = timer;
      if (!next) break;
      this.timers.delete(next.id);
      this.t = next.atMs;
      next.fn();
      if (thenAfterIo) this.runAfterIo();
    }
    this.t = targetMs;
    if (thenAfterIo) this.runAfterIo();
  }

  /** Runs the pending after-I/O callbacks (and any they queue). */
  runAfterIo(): void {
    while (this.immediates.length > 0) {
      const batch = this.immediates;
      this.immediates = [];
      for (const i of batch) i.fn();
    }
  }
}
