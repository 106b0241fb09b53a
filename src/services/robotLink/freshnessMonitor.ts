import type { Presence } from '../../domain/backend/backend';
import {
  initialFreshness,
  reduceFreshness,
  type FreshnessConfig,
  type FreshnessEffects,
  type FreshnessInput,
  type FreshnessState,
} from '../../domain/robotLink/linkFreshness';
import type { LinkClock, TimerHandle } from './linkClock';

// The timers of a link's freshness (the rules are the pure reducer's, src/domain/robotLink/linkFreshness.ts):
// - one deadline timer for the next threshold of the current age (stale, then lost), re-armed
//   lazily: fresh messages only move the last fresh time, and a timer that fires early (fresher
//   messages came meanwhile) re-arms for the remainder — a 500 Hz stream costs one timer per
//   staleAfterMs, not one per frame. It fires 0.5 ms after the threshold, so the age has reached it;
// - a verdict's verification right after the loop's I/O (clock.afterIo), as the reducer asks;
// - a backstop tick every tickMs (also the caller's cue to ping), which checks too.
// Every timer but the verification lets the process exit (housekeeping).

export interface FreshnessChange {
  /** The new presence, when it changed. */
  presence: Presence | null;
  /** A silence verdict taken now, with the age it was taken at. */
  verdict: FreshnessEffects['verdict'];
}

export interface FreshnessMonitorOptions {
  clock: LinkClock;
  config: FreshnessConfig;
  /** Backstop period, ms. */
  tickMs: number;
  /** Called on every backstop tick (before its check). */
  onTick?: () => void;
  /** Called after an input changed the presence or took a verdict (the state is already updated). */
  onChange: (change: FreshnessChange) => void;
}

/** How long after a threshold the deadline timer fires, ms: the age has surely reached it then. */
const DEADLINE_SLACK_MS = 0.5;

export class FreshnessMonitor {
  private state: FreshnessState = initialFreshness();
  private deadline: TimerHandle | null = null;
  private deadlineAtMs = 0;
  private verification: TimerHandle | null = null;
  private tickTimer: TimerHandle | null = null;

  constructor(private readonly o: FreshnessMonitorOptions) {
    if (!(o.tickMs > 0)) throw new RangeError(`freshness tick must be > 0 ms, got ${o.tickMs}`);
    this.scheduleTick();
  }

  get presence(): Presence {
    return this.state.presence;
  }

  get everPresent(): boolean {
    return this.state.everPresent;
  }

  /** A new socket is being opened. */
  attach(): void {
    this.input({ type: 'attach' });
  }

  /** The server is known: present, fresh now. */
  ready(): void {
    this.input({ type: 'ready', atMs: this.o.clock.nowMs() });
  }

  /** A message that keeps the link fresh arrived at atMs (default now). */
  fresh(atMs: number = this.o.clock.nowMs()): void {
    this.input({ type: 'fresh', atMs });
  }

  /** The socket closed: lost at once (if it was ever present); nothing ages until the next attach. */
  detach(): void {
    this.clearTimers();
    this.input({ type: 'detach' });
  }

  /** Stops every timer, presence kept (the link is closing; close() follows). */
  halt(): void {
    this.clearTimers();
    this.o.clock.clearTimeout(this.tickTimer);
    this.tickTimer = null;
  }

  /** For good: disconnected, every timer cleared. */
  close(): void {
    this.halt();
    this.input({ type: 'close' });
  }

  private check(afterIo: boolean): void {
    this.input({ type: 'check', atMs: this.o.clock.nowMs(), afterIo });
  }

  private input(i: FreshnessInput): void {
    const { state, effects } = reduceFreshness(this.state, i, this.o.config);
    this.state = state;
    if (effects.verifyAfterIo && !this.verification) {
      this.verification = this.o.clock.afterIo(() => {
        this.verification = null;
        this.check(true);
      });
    }
    // While a verification is pending nothing is armed: the verification's own check re-arms.
    if (!this.verification) {
      if (effects.deadlineAtMs === null) this.clearDeadline();
      else this.armDeadline(effects.deadlineAtMs);
    }
    if (effects.presence !== null || effects.verdict !== null)
      this.o.onChange({ presence: effects.presence, verdict: effects.verdict });
  }

  private armDeadline(atMs: number): void {
    if (this.deadline && this.deadlineAtMs <= atMs) return; // fires no later than needed; re-arms then
    this.clearDeadline();
    this.deadlineAtMs = atMs;
    this.deadline = this.o.clock.setTimeout(
      () => {
        this.deadline = null;
        this.check(false);
      },
      Math.max(0, atMs - this.o.clock.nowMs()) + DEADLINE_SLACK_MS,
      { keepAlive: false },
    );
  }

  private clearDeadline(): void {
    this.o.clock.clearTimeout(this.deadline);
    this.deadline = null;
  }

  private clearTimers(): void {
    this.clearDeadline();
    this.o.clock.cancelAfterIo(this.verification);
    this.verification = null;
  }

  private scheduleTick(): void {
    this.tickTimer = this.o.clock.setTimeout(
      () => {
        this.scheduleTick();
        this.o.onTick?.();
        if (!this.state.closed) this.check(false);
      },
      this.o.tickMs,
      { keepAlive: false },
    );
  }
}
