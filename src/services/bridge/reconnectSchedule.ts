import {
  checkReconnectPolicy,
  nextReconnect,
  reconnectReset,
  type ReconnectPolicy,
  type ReconnectState,
} from '../../domain/robotLink/reconnectBackoff';
import type { LinkClock, TimerHandle } from '../robotLink/linkClock';

// The timer of a link's reconnects: the backoff of src/domain/robotLink/reconnectBackoff.ts on a
// LinkClock. One attempt is pending at a time; a success resets the backoff.

export interface ReconnectScheduleOptions {
  clock: LinkClock;
  /** Checked here: a bad policy throws RangeError. */
  policy: ReconnectPolicy;
  /** Connects again. */
  connect: () => void;
  /** The attempts are used up (none is scheduled any more). */
  gaveUp: (attempts: number) => void;
}

export class ReconnectSchedule {
  private readonly policy: ReconnectPolicy;
  private state: ReconnectState;
  private timer: TimerHandle | null = null;

  constructor(private readonly o: ReconnectScheduleOptions) {
    this.policy = checkReconnectPolicy(o.policy);
    this.state = reconnectReset(this.policy);
  }

  /** A connection succeeded (its server is known): the next loss starts the backoff afresh. */
  succeeded(): void {
    this.state = reconnectReset(this.policy);
  }

  /** The link failed: connect again after the backoff's delay, unless an attempt is pending already. */
  schedule(): void {
    if (this.timer) return;
    const d = nextReconnect(this.state, this.policy);
    this.state = d.state;
    if (d.kind === 'give_up') {
      this.o.gaveUp(d.attempts);
      return;
    }
    this.timer = this.o.clock.setTimeout(
      () => {
        this.timer = null;
        this.o.connect();
      },
      d.delayMs,
      { keepAlive: false },
    );
  }

  cancel(): void {
    this.o.clock.clearTimeout(this.timer);
  }
}
