import {
  INTERLOCK_PROTOCOL,
  formatDeviceMessage,
  parseConsoleLine,
  type DeviceMessage,
  type DeviceState,
  type LineProblem,
} from './interlockProtocol';

// The interlock box's own logic, pure (the emulator runs it behind a real serial port; a real
// box implements the same rules in firmware):
//   - every `HB <seq>` is answered at once with `ST <state> <seq>`;
//   - `ARM` arms only from SAFE, with the e-stop released and a heartbeat seen within the
//     watchdog limit; otherwise it is ignored (the next ST shows the box did not arm);
//   - `DISARM` returns ARMED → SAFE (ESTOP stays ESTOP);
//   - watchdog: ARMED with no heartbeat for > watchdogMs → the box trips itself (to SAFE by
//     default, or to a latched ESTOP); the robot's power path opens without the console;
//   - pressing the e-stop → ESTOP at once and `EV ESTOP`; releasing it → `EV RESET` and SAFE.
//     Nothing re-arms without a new ARM.

export interface InterlockDeviceOptions {
  watchdogMs?: number;
  /** Where the watchdog trips to: SAFE (default) or a latched ESTOP that needs a release. */
  watchdogTripTo?: 'SAFE' | 'ESTOP';
}

export interface InterlockDeviceCounters {
  heartbeats: number;
  arms: number;
  armsRefused: number;
  disarms: number;
  watchdogTrips: number;
  garbageLines: number;
  problems: Partial<Record<LineProblem, number>>;
}

export class InterlockDeviceModel {
  readonly watchdogMs: number;
  readonly watchdogTripTo: 'SAFE' | 'ESTOP';
  private _state: DeviceState = 'SAFE';
  private estopLatched = false;
  private lastHeartbeatAtMs: number | null = null;
  private _lastSeq: number | null = null;
  readonly counters: InterlockDeviceCounters = {
    heartbeats: 0,
    arms: 0,
    armsRefused: 0,
    disarms: 0,
    watchdogTrips: 0,
    garbageLines: 0,
    problems: {},
  };

  constructor(options: InterlockDeviceOptions = {}) {
    this.watchdogMs = options.watchdogMs ?? INTERLOCK_PROTOCOL.silenceLimitMs;
    this.watchdogTripTo = options.watchdogTripTo ?? 'SAFE';
  }

  get state(): DeviceState {
    return this._state;
  }

  get lastSeq(): number | null {
    return this._lastSeq;
  }

  get lastHeartbeatMs(): number | null {
    return this.lastHeartbeatAtMs;
  }

  /** One line from the console; returns the lines to send back. */
  onLine(line: string, nowMs: number): DeviceMessage[] {
    // Apply the watchdog first: a heartbeat arriving after the limit does not undo the trip.
    const out = this.tick(nowMs);
    const parsed = parseConsoleLine(line);
    if (!parsed.ok) {
      this.countProblem(parsed.problem);
      return out;
    }
    const m = parsed.message;
    switch (m.kind) {
      case 'heartbeat':
        this.counters.heartbeats++;
        this.lastHeartbeatAtMs = nowMs;
        this._lastSeq = m.seq;
        out.push({ kind: 'status', state: this._state, seq: m.seq });
        break;
      case 'arm':
        if (this._state === 'SAFE' && !this.estopLatched && this.heartbeatFresh(nowMs)) {
          this._state = 'ARMED';
          this.counters.arms++;
        } else {
          this.counters.armsRefused++;
        }
        break;
      case 'disarm':
        if (this._state === 'ARMED') {
          this._state = 'SAFE';
          this.counters.disarms++;
        }
        break;
    }
    return out;
  }

  /** A line the framer already refused (overlong, non-ASCII): counted, nothing else. */
  countProblem(problem: LineProblem): void {
    this.counters.garbageLines++;
    this.counters.problems[problem] = (this.counters.problems[problem] ?? 0) + 1;
  }

  /** Time passes: the heartbeat watchdog. Returns lines to send (none: a watchdog trip is seen in the next ST). */
  tick(nowMs: number): DeviceMessage[] {
    if (this._state === 'ARMED' && !this.heartbeatFresh(nowMs)) {
      this.counters.watchdogTrips++;
      if (this.watchdogTripTo === 'ESTOP') {
        this._state = 'ESTOP';
        this.estopLatched = true;
        return [{ kind: 'event', event: 'ESTOP' }];
      }
      this._state = 'SAFE';
    }
    return [];
  }

  pressEstop(): DeviceMessage[] {
    this.estopLatched = true;
    this._state = 'ESTOP';
    return [{ kind: 'event', event: 'ESTOP' }];
  }

  /** Releasing the e-stop: EV RESET and SAFE (never ARMED). Nothing happens if it was not pressed. */
  releaseEstop(): DeviceMessage[] {
    if (!this.estopLatched) return [];
    this.estopLatched = false;
    this._state = 'SAFE';
    return [{ kind: 'event', event: 'RESET' }];
  }

  private heartbeatFresh(nowMs: number): boolean {
    return this.lastHeartbeatAtMs !== null && nowMs - this.lastHeartbeatAtMs <= this.watchdogMs;
  }
}

export const formatDeviceMessages = (ms: readonly DeviceMessage[]): string => ms.map(formatDeviceMessage).join('');
