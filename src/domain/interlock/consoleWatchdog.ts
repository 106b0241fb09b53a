// The interlock keeper's watch on the console (docs/INTERLOCK.md §3a), pure: the keeper is the
// process that owns the serial port and heartbeats the box; the console's main loop — which runs
// the safety gate and sends stop/damp to the robot — kicks it every few ms. Kicks that stop for
// longer than `limitMs`, or a console process the OS reports stopped (SIGSTOP, a debugger) or
// gone, mean the console could not stop the robot: the keeper reports a stall to its
// InterlockMonitor (consoleStalled), which trips and disarms the box if motion may have been
// permitted. Time is the caller's monotonic ms.

/** What the keeper learns about the console process from the OS at a check. */
export type ConsoleProcessState = 'running' | 'stopped' | 'gone';

export type WatchdogVerdict =
  { type: 'ok' } | { type: 'stalled'; detail: string } | { type: 'resumed'; stalledForMs: number };

/** Default kick limit: the same 100 ms the box allows the console's heartbeats (DESIGN §5.2). */
export const CONSOLE_WATCHDOG_LIMIT_MS = 100;

/**
 * How a check judges the console. The default: past `limitMs` without a kick, or a process the OS
 * reports stopped, is a stall at once. With a robot-side runner that hears this keeper's e-stops
 * itself (its e-stop socket connected), the console is not on the path that stops the robot: the
 * runner keeps its own watchdogs and its own rule for a silent console, so the keeper judges the
 * console by that rule's limit and a stopped process only by its kicks' age (DESIGN §5.2).
 */
export interface ConsoleWatchRule {
  limitMs: number;
  /** A console the OS reports stopped stalls at once (true), or only once its kicks are `limitMs` old. */
  stoppedStallsAtOnce: boolean;
}

export class ConsoleWatchdog {
  private lastKickMs: number;
  private stalledSinceMs: number | null = null;
  private longestGapMs = 0;

  constructor(
    readonly limitMs: number,
    startMs: number,
  ) {
    if (!(limitMs > 0)) throw new RangeError('the console watchdog limit must be > 0 ms');
    this.lastKickMs = startMs;
  }

  /** The console's main loop ran (its kick arrived at `nowMs`). */
  kick(nowMs: number): WatchdogVerdict {
    this.longestGapMs = Math.max(this.longestGapMs, nowMs - this.lastKickMs);
    this.lastKickMs = Math.max(this.lastKickMs, nowMs);
    if (this.stalledSinceMs === null) return { type: 'ok' };
    const stalledForMs = nowMs - this.stalledSinceMs;
    this.stalledSinceMs = null;
    return { type: 'resumed', stalledForMs };
  }

  /** A periodic check: the kick's age, and what the OS says of the console process. */
  check(
    nowMs: number,
    process: ConsoleProcessState,
    rule: ConsoleWatchRule = { limitMs: this.limitMs, stoppedStallsAtOnce: true },
  ): WatchdogVerdict {
    if (this.stalledSinceMs !== null) return { type: 'ok' };
    const ageMs = nowMs - this.lastKickMs;
    let detail: string | null = null;
    if (process === 'gone') detail = 'the console process is gone';
    else if (process === 'stopped' && (rule.stoppedStallsAtOnce || ageMs > rule.limitMs))
      detail = `the console process is stopped (last kick ${ageMs.toFixed(1)} ms ago)`;
    else if (ageMs > rule.limitMs)
      detail = `the console's main loop has not run for ${ageMs.toFixed(1)} ms (limit ${rule.limitMs} ms)`;
    if (detail === null) return { type: 'ok' };
    this.stalledSinceMs = nowMs;
    return { type: 'stalled', detail };
  }

  get stalled(): boolean {
    return this.stalledSinceMs !== null;
  }

  /** The longest interval between two kicks seen so far, ms. */
  get longestKickGapMs(): number {
    return this.longestGapMs;
  }
}
