import {
  INTERLOCK_PROTOCOL,
  LINE_PROBLEMS,
  nextSeq,
  parseDeviceLine,
  seqAfter,
  type ConsoleMessage,
  type DeviceEvent,
  type DeviceState,
  type FramedLine,
  type LineProblem,
} from './interlockProtocol';
import { RecentGaps } from '../timing/recentGaps';
import { TIMING_WINDOW_MS } from '../timing/timingHealth';
import { SampleRing } from './sampleRing';

// The console's side of the serial interlock (DESIGN §5.2, §6) as a pure state machine: no
// timers, no I/O. It is driven by the port's lines (`onLine`/`onFramed`), by time (`tick`), by
// port open/close and by operator requests, and answers with *effects* (lines to send, trips,
// state changes, arm/disarm results, counted problems) that the serial service carries out. Time
// is whatever monotonic millisecond clock the caller passes in, so every rule is testable
// deterministically.
//
// States (the console's view, not a copy of the box's):
//   disconnected  port closed, or open and no valid status yet
//   safe          the box reports SAFE, fresh
//   armed         the box reports ARMED *and this console armed it* (operator request answered)
//   estop         the box reports ESTOP or sent EV ESTOP
//   lost          no valid status for > silenceLimitMs, or the port closed/failed under us
// `estop` and `lost` are *tripped* states. Entering one from a non-tripped state is a trip
// (`onTrip` → stop the robot). Two more trips leave the state where the box says it is:
// `device_disarmed` (the box reports SAFE while we were armed) and `disarm_timeout`.
//
// Rules that matter for safety:
//   - isArmedAndFresh(now) needs: port open, state armed, the arm gate open (opened only by an
//     operator arm that the box confirmed, closed by any trip, disarm request or port change),
//     last status ARMED and at most freshLimitMs old *at the time of the query*, so a late or
//     missing tick() can never make a stale status look fresh.
//   - A status counts (refreshes freshness) only if it echoes a heartbeat we sent no more than
//     silenceLimitMs ago and comes after the last answered seq. Duplicates, regressions,
//     unknown or late seqs are counted and otherwise ignored, except ESTOP: any ST ESTOP is
//     obeyed, whatever its seq.
//   - Nothing re-arms by itself. After a trip the state stays tripped until the box reports
//     SAFE; a box that reports ARMED without our request (after a link glitch, an arm timeout,
//     a previous console) is sent DISARM, and the state does not become `armed`.

export type InterlockState = 'disconnected' | 'safe' | 'armed' | 'estop' | 'lost';
export const INTERLOCK_STATES: readonly InterlockState[] = ['disconnected', 'safe', 'armed', 'estop', 'lost'];
export const isTrippedState = (s: InterlockState): boolean => s === 'estop' || s === 'lost';

export type TripReason =
  | 'estop_event' // EV ESTOP
  | 'status_estop' // ST ESTOP
  | 'silence' // no valid status for > silenceLimitMs
  | 'port_closed' // the port went away (device unplugged, pty closed)
  | 'port_error' // the port failed (read/write error)
  | 'device_disarmed' // the box reported SAFE while we were armed
  | 'disarm_timeout' // the box still reports ARMED disarmTimeoutMs after DISARM
  | 'closed_by_console' // the console closed the interlock while armed
  | 'console_stalled'; // the console's main loop stopped answering its interlock keeper while armed

export interface InterlockTrip {
  reason: TripReason;
  atMs: number;
  fromState: InterlockState;
  toState: InterlockState;
  /** The arm gate was open: motion may have been permitted until this instant. */
  wasArmed: boolean;
  lastStatusAtMs: number | null;
  /** atMs − lastStatusAtMs (for `silence` this is the detection latency). */
  sinceLastStatusMs: number | null;
  detail: string;
}

/** Problems with a well-formed status that make it not count. */
export type StatusProblem = 'stale_seq' | 'unknown_seq' | 'late_status' | 'unsolicited_armed';
export type InterlockProblem = LineProblem | StatusProblem;
export const STATUS_PROBLEMS: readonly StatusProblem[] = [
  'stale_seq',
  'unknown_seq',
  'late_status',
  'unsolicited_armed',
];

export type ArmFailure =
  'not_open' | 'not_safe' | 'stale' | 'busy' | 'timeout' | 'estop' | 'lost' | 'port_closed' | 'cancelled';
export type DisarmFailure = 'lost' | 'port_closed' | 'timeout';

export type MonitorEffect =
  | { type: 'send'; message: ConsoleMessage }
  | { type: 'trip'; trip: InterlockTrip }
  | { type: 'state'; from: InterlockState; to: InterlockState; atMs: number }
  | { type: 'status'; state: DeviceState; seq: number; rttMs: number; atMs: number }
  | { type: 'event'; event: DeviceEvent; atMs: number }
  | { type: 'arm'; ok: true; atMs: number; latencyMs: number }
  | { type: 'arm'; ok: false; reason: ArmFailure; detail: string; atMs: number }
  | { type: 'disarm'; ok: true; atMs: number }
  | { type: 'disarm'; ok: false; reason: DisarmFailure; detail: string; atMs: number }
  | { type: 'problem'; problem: InterlockProblem; line: string; atMs: number };

export interface InterlockTimings {
  heartbeatPeriodMs: number;
  /** Trip when no valid status for longer than this. */
  silenceLimitMs: number;
  /** isArmedAndFresh needs the last status at most this old (≤ silenceLimitMs). */
  freshLimitMs: number;
  /** ARM must be confirmed by ST ARMED within this. */
  armTimeoutMs: number;
  /** DISARM must be confirmed by ST SAFE within this, else trip `disarm_timeout`. */
  disarmTimeoutMs: number;
  /** Minimum spacing of automatic DISARMs sent to a box that is ARMED without our consent. */
  disarmResendMs: number;
}

export const DEFAULT_INTERLOCK_TIMINGS: Readonly<InterlockTimings> = {
  heartbeatPeriodMs: INTERLOCK_PROTOCOL.heartbeatPeriodMs,
  silenceLimitMs: INTERLOCK_PROTOCOL.silenceLimitMs,
  freshLimitMs: INTERLOCK_PROTOCOL.silenceLimitMs,
  armTimeoutMs: 250,
  disarmTimeoutMs: 250,
  disarmResendMs: 60,
};

export interface InterlockCounters {
  linesReceived: number;
  statusesAccepted: number;
  events: number;
  heartbeatsSent: number;
  /** Heartbeat slots skipped because tick() came later than a whole period (timer jitter, blocked loop). */
  heartbeatSlotsMissed: number;
  /** Heartbeats the transport could not send (write backlog). */
  heartbeatsDropped: number;
  /** Heartbeat slots not sent on purpose while the console's main loop was stalled (consoleStalled). */
  heartbeatsWithheld: number;
  /** Times the console's main loop was reported stalled (consoleStalled), armed or not. */
  consoleStalls: number;
  /** Lines that were not messages, all problems together. */
  garbageLines: number;
  problems: Record<InterlockProblem, number>;
  trips: number;
}

export interface InterlockFreshness {
  lastStatusAtMs: number | null;
  /** now − lastStatusAtMs. */
  ageMs: number | null;
  lastAnsweredSeq: number | null;
  lastSentSeq: number | null;
  /** Round-trip of the last answered heartbeat (send → its ST). */
  rttMs: number | null;
  rttP50Ms: number | null;
  rttP99Ms: number | null;
  rttMaxMs: number | null;
  rttSamples: number;
  /**
   * The largest gap between counted statuses over the last TIMING_WINDOW_MS, the one open now
   * included (timing health: the trip is at freshLimitMs); null before the first status.
   */
  statusGapMaxMs: number | null;
}

export interface InterlockSnapshot {
  atMs: number;
  state: InterlockState;
  /** What the box last reported in a counted status (not necessarily fresh). */
  deviceState: DeviceState | null;
  portOpen: boolean;
  armedAndFresh: boolean;
  armPending: boolean;
  disarmPending: boolean;
  freshness: InterlockFreshness;
  heartbeat: { periodMs: number; latenessP99Ms: number | null; latenessMaxMs: number | null };
  counters: InterlockCounters;
  lastTrip: InterlockTrip | null;
  lastEvent: { event: DeviceEvent; atMs: number } | null;
}

const SENT_RING = 16;

export interface InterlockMonitorOptions {
  timings?: Partial<InterlockTimings>;
  /** seq of the first heartbeat (default 1); tests use it to cross the uint32 wrap. */
  firstSeq?: number;
}

export class InterlockMonitor {
  readonly timings: Readonly<InterlockTimings>;
  private _state: InterlockState = 'disconnected';
  private deviceState: DeviceState | null = null;
  private portOpen = false;
  private openedAtMs = 0;
  private gateOpen = false;
  private armPending: { sinceMs: number; deadlineMs: number } | null = null;
  private disarmPending: { deadlineMs: number } | null = null;
  private lastDisarmSentAtMs = Number.NEGATIVE_INFINITY;
  /** consoleStalled() without consoleResumed(): heartbeats are withheld while motion may have been permitted. */
  private withholdHeartbeats = false;
  private consoleStalledNow = false;

  // heartbeat schedule: heartbeat i is due at hbOriginMs + i·period (drift-free)
  private hbOriginMs = 0;
  private hbIndex = 0;
  private seq: number;
  private lastSentSeq: number | null = null;
  private readonly sentSeq = new Float64Array(SENT_RING).fill(-1);
  private readonly sentAt = new Float64Array(SENT_RING);
  private sentNext = 0;
  /** Gaps between counted statuses (50 Hz: 5 s is 250 of them). */
  private readonly statusGaps = new RecentGaps(1024);

  private lastStatusAtMs: number | null = null;
  private lastAnsweredSeq: number | null = null;
  private lastRttMs: number | null = null;
  private readonly rtt = new SampleRing(512);
  private readonly lateness = new SampleRing(512);
  private lastTrip: InterlockTrip | null = null;
  private lastEvent: { event: DeviceEvent; atMs: number } | null = null;
  private readonly counters: InterlockCounters;

  constructor(options: InterlockMonitorOptions = {}) {
    const t = { ...DEFAULT_INTERLOCK_TIMINGS, ...options.timings };
    if (!(t.heartbeatPeriodMs > 0)) throw new RangeError('heartbeatPeriodMs must be > 0');
    if (!(t.silenceLimitMs > t.heartbeatPeriodMs))
      throw new RangeError('silenceLimitMs must exceed the heartbeat period');
    if (!(t.freshLimitMs > 0 && t.freshLimitMs <= t.silenceLimitMs))
      throw new RangeError('freshLimitMs must be in (0, silenceLimitMs]');
    this.timings = t;
    this.seq = ((options.firstSeq ?? 1) - 1) >>> 0;
    const problems = {} as Record<InterlockProblem, number>;
    for (const p of [...LINE_PROBLEMS, ...STATUS_PROBLEMS]) problems[p] = 0;
    this.counters = {
      linesReceived: 0,
      statusesAccepted: 0,
      events: 0,
      heartbeatsSent: 0,
      heartbeatSlotsMissed: 0,
      heartbeatsDropped: 0,
      heartbeatsWithheld: 0,
      consoleStalls: 0,
      garbageLines: 0,
      problems,
      trips: 0,
    };
  }

  get state(): InterlockState {
    return this._state;
  }

  // ---- port ------------------------------------------------------------------------------

  /** The port is open: start heartbeating now (the first heartbeat is due at once). */
  portOpened(nowMs: number): MonitorEffect[] {
    const fx: MonitorEffect[] = [];
    this.portOpen = true;
    this.openedAtMs = nowMs;
    this.lastStatusAtMs = null;
    this.statusGaps.reset();
    this.deviceState = null;
    this.gateOpen = false;
    this.hbOriginMs = nowMs;
    this.hbIndex = 0;
    this.withholdHeartbeats = false;
    this.consoleStalledNow = false;
    this.setState('disconnected', nowMs, fx);
    fx.push(...this.tick(nowMs));
    return fx;
  }

  /**
   * The port is gone. `closed`/`error`: under us (unplugged, pty closed, I/O error) → trip to
   * `lost`. `console`: we closed it on purpose → `disconnected`, a trip only if armed.
   */
  portClosed(nowMs: number, cause: 'closed' | 'error' | 'console', detail = ''): MonitorEffect[] {
    const fx: MonitorEffect[] = [];
    if (!this.portOpen) return fx;
    this.portOpen = false;
    this.failArm('port_closed', `the port closed${detail ? `: ${detail}` : ''}`, nowMs, fx);
    if (this.disarmPending) {
      this.disarmPending = null;
      fx.push({
        type: 'disarm',
        ok: false,
        reason: 'port_closed',
        detail: 'the port closed before the box confirmed SAFE',
        atMs: nowMs,
      });
    }
    if (cause === 'console') {
      if (this.gateOpen || this._state === 'armed')
        this.trip(
          'disconnected',
          'closed_by_console',
          detail || 'the console closed the interlock while armed',
          nowMs,
          fx,
        );
      else this.setState('disconnected', nowMs, fx);
    } else if (isTrippedState(this._state)) {
      this.setState('lost', nowMs, fx);
    } else {
      this.trip(
        'lost',
        cause === 'error' ? 'port_error' : 'port_closed',
        detail || (cause === 'error' ? 'port error' : 'port closed'),
        nowMs,
        fx,
      );
    }
    this.gateOpen = false;
    return fx;
  }

  // ---- input -----------------------------------------------------------------------------

  /** Output of a LineFramer: lines are parsed, framing problems counted. */
  onFramed(items: readonly FramedLine[], nowMs: number): MonitorEffect[] {
    const fx: MonitorEffect[] = [];
    for (const item of items) {
      if (item.ok) fx.push(...this.onLine(item.text, nowMs));
      else {
        this.counters.linesReceived++;
        this.problem(item.problem, `<${item.bytes} bytes>`, nowMs, fx);
      }
    }
    return fx;
  }

  /** One received line (terminator removed). Never throws. */
  onLine(line: string, nowMs: number): MonitorEffect[] {
    const fx: MonitorEffect[] = [];
    this.counters.linesReceived++;
    const parsed = parseDeviceLine(line);
    if (!parsed.ok) {
      this.problem(parsed.problem, parsed.line, nowMs, fx);
      return fx;
    }
    const m = parsed.message;
    if (m.kind === 'event') {
      this.counters.events++;
      this.lastEvent = { event: m.event, atMs: nowMs };
      fx.push({ type: 'event', event: m.event, atMs: nowMs });
      if (m.event === 'ESTOP') this.enterEstop('estop_event', 'EV ESTOP: the e-stop was pressed', nowMs, fx);
      // EV RESET changes nothing by itself: the box reports SAFE next, and only an operator ARM re-arms.
      return fx;
    }
    // A status: does it count?
    const verdict = this.classify(m.seq, nowMs);
    if (verdict.problem) {
      this.problem(verdict.problem, line, nowMs, fx);
      // ESTOP is obeyed whatever its seq.
      if (m.state === 'ESTOP') this.enterEstop('status_estop', `ST ESTOP (${verdict.problem})`, nowMs, fx);
      return fx;
    }
    this.counters.statusesAccepted++;
    this.lastStatusAtMs = nowMs;
    this.statusGaps.record(nowMs);
    this.lastAnsweredSeq = m.seq;
    this.lastRttMs = verdict.rttMs;
    this.rtt.add(verdict.rttMs);
    this.deviceState = m.state;
    fx.push({ type: 'status', state: m.state, seq: m.seq, rttMs: verdict.rttMs, atMs: nowMs });
    switch (m.state) {
      case 'ESTOP':
        this.enterEstop('status_estop', 'ST ESTOP: the box is in e-stop', nowMs, fx);
        break;
      case 'SAFE':
        if (this.disarmPending) {
          this.disarmPending = null;
          fx.push({ type: 'disarm', ok: true, atMs: nowMs });
        }
        if (this._state === 'armed' && this.gateOpen)
          this.trip('safe', 'device_disarmed', 'the box reported SAFE while armed', nowMs, fx);
        else this.setState('safe', nowMs, fx);
        break;
      case 'ARMED':
        if (this.armPending && this._state === 'safe') {
          const latencyMs = nowMs - this.armPending.sinceMs;
          this.armPending = null;
          this.gateOpen = true;
          this.setState('armed', nowMs, fx);
          fx.push({ type: 'arm', ok: true, atMs: nowMs, latencyMs });
        } else if (this._state === 'armed' && this.gateOpen) {
          // steady armed
        } else if (this.disarmPending || this.armPending) {
          // waiting for the box to act on our DISARM / ARM
        } else {
          // ARMED without our consent: never adopt it; disarm the box.
          this.problem('unsolicited_armed', line, nowMs, fx);
          this.sendDisarm(nowMs, fx, true);
        }
        break;
    }
    return fx;
  }

  /** Time passes: heartbeats due, silence, arm/disarm deadlines. Call at least every 10 ms and at nextWakeMs(). */
  tick(nowMs: number): MonitorEffect[] {
    const fx: MonitorEffect[] = [];
    if (!this.portOpen) return fx;
    const period = this.timings.heartbeatPeriodMs;
    const dueMs = this.hbOriginMs + this.hbIndex * period;
    if (nowMs >= dueMs) {
      // Drift-free: heartbeat i belongs to slot origin + i·period, whenever tick comes. Slots a
      // late tick has overtaken entirely are skipped (counted), never sent in a burst.
      const latest = Math.floor((nowMs - this.hbOriginMs) / period);
      const skipped = Math.max(0, latest - this.hbIndex);
      this.counters.heartbeatSlotsMissed += skipped;
      this.lateness.add(nowMs - (this.hbOriginMs + (this.hbIndex + skipped) * period));
      this.hbIndex += skipped + 1;
    }
    if (nowMs >= dueMs && this.withholdHeartbeats) {
      this.counters.heartbeatsWithheld++;
    } else if (nowMs >= dueMs) {
      this.seq = nextSeq(this.seq);
      this.lastSentSeq = this.seq;
      this.sentSeq[this.sentNext] = this.seq;
      this.sentAt[this.sentNext] = nowMs;
      this.sentNext = (this.sentNext + 1) % SENT_RING;
      this.counters.heartbeatsSent++;
      fx.push({ type: 'send', message: { kind: 'heartbeat', seq: this.seq } });
    }
    if (this.armPending && nowMs > this.armPending.deadlineMs) {
      this.armPending = null;
      fx.push({
        type: 'arm',
        ok: false,
        reason: 'timeout',
        detail: `the box did not report ARMED within ${this.timings.armTimeoutMs} ms; DISARM sent`,
        atMs: nowMs,
      });
      this.sendDisarm(nowMs, fx, false);
    }
    if (this.disarmPending && nowMs > this.disarmPending.deadlineMs) {
      this.disarmPending = null;
      fx.push({
        type: 'disarm',
        ok: false,
        reason: 'timeout',
        detail: `the box did not report SAFE within ${this.timings.disarmTimeoutMs} ms`,
        atMs: nowMs,
      });
      if (this.deviceState === 'ARMED' && !isTrippedState(this._state)) {
        this.trip(
          this._state,
          'disarm_timeout',
          `the box still reports ARMED ${this.timings.disarmTimeoutMs} ms after DISARM`,
          nowMs,
          fx,
        );
        this.sendDisarm(nowMs, fx, false);
      }
    }
    if (this._state !== 'lost') {
      const since = this.lastStatusAtMs ?? this.openedAtMs;
      if (nowMs - since > this.timings.silenceLimitMs) {
        const detail =
          this.lastStatusAtMs === null
            ? `no status within ${this.timings.silenceLimitMs} ms of opening the port`
            : `no valid status for ${(nowMs - since).toFixed(1)} ms (limit ${this.timings.silenceLimitMs} ms)`;
        this.failArm('lost', detail, nowMs, fx);
        if (this.disarmPending) {
          this.disarmPending = null;
          fx.push({ type: 'disarm', ok: false, reason: 'lost', detail, atMs: nowMs });
        }
        if (isTrippedState(this._state)) this.setState('lost', nowMs, fx);
        else this.trip('lost', 'silence', detail, nowMs, fx);
      }
    }
    return fx;
  }

  /** When tick() must next run (heartbeat slot, silence limit, arm/disarm deadline); null when the port is closed. */
  nextWakeMs(): number | null {
    if (!this.portOpen) return null;
    let t = this.hbOriginMs + this.hbIndex * this.timings.heartbeatPeriodMs;
    if (this._state !== 'lost') t = Math.min(t, (this.lastStatusAtMs ?? this.openedAtMs) + this.timings.silenceLimitMs);
    if (this.armPending) t = Math.min(t, this.armPending.deadlineMs);
    if (this.disarmPending) t = Math.min(t, this.disarmPending.deadlineMs);
    return t;
  }

  // ---- the console behind a keeper -------------------------------------------------------

  /**
   * The console's main loop has stopped answering the process that runs this monitor (its
   * interlock keeper: docs/INTERLOCK.md §3a): it is hung, stopped (SIGSTOP) or starved past the
   * watchdog limit, so it could not stop the robot. If motion may have been permitted (arm gate
   * open, or an ARM pending) this is a trip to `lost` (`console_stalled`): the gate shuts, DISARM
   * goes out at once (the box drops to SAFE within one line), and heartbeats are withheld until
   * consoleResumed(), so a box that missed the DISARM trips by its own watchdog 100 ms later.
   * Outside motion nothing can move without a new operator ARM, so the stall is only counted.
   */
  consoleStalled(nowMs: number, detail: string): MonitorEffect[] {
    const fx: MonitorEffect[] = [];
    if (this.consoleStalledNow) return fx;
    this.consoleStalledNow = true;
    this.counters.consoleStalls++;
    const armed = this.gateOpen || this.armPending !== null || this._state === 'armed';
    this.failArm('lost', detail, nowMs, fx);
    if (!armed || !this.portOpen) return fx;
    this.withholdHeartbeats = true;
    if (isTrippedState(this._state)) {
      this.gateOpen = false;
      this.setState('lost', nowMs, fx);
    } else this.trip('lost', 'console_stalled', detail, nowMs, fx);
    this.sendDisarm(nowMs, fx, false);
    return fx;
  }

  /** The console's main loop answers again: heartbeats resume on a fresh drift-free schedule. Nothing re-arms. */
  consoleResumed(nowMs: number): MonitorEffect[] {
    const fx: MonitorEffect[] = [];
    if (!this.consoleStalledNow) return fx;
    this.consoleStalledNow = false;
    if (this.withholdHeartbeats && this.portOpen) {
      this.withholdHeartbeats = false;
      this.hbOriginMs = nowMs;
      this.hbIndex = 0;
      fx.push(...this.tick(nowMs));
    }
    this.withholdHeartbeats = false;
    return fx;
  }

  /** The transport could not send heartbeat `seq` (write backlog); it will never be answered. */
  heartbeatDropped(seq: number): void {
    this.counters.heartbeatsDropped++;
    for (let i = 0; i < SENT_RING; i++) if (this.sentSeq[i] === seq) this.sentSeq[i] = -1;
  }

  // ---- operator --------------------------------------------------------------------------

  /** Operator asks to arm. Refused (effect `arm` ok:false) unless open, SAFE and fresh; else sends ARM. */
  requestArm(nowMs: number): MonitorEffect[] {
    const fx: MonitorEffect[] = [];
    const refuse = (reason: ArmFailure, detail: string): MonitorEffect[] => {
      fx.push({ type: 'arm', ok: false, reason, detail, atMs: nowMs });
      return fx;
    };
    if (!this.portOpen) return refuse('not_open', 'the interlock port is not open');
    if (this.armPending) return refuse('busy', 'an ARM is already waiting for the box');
    if (this._state === 'armed' && this.gateOpen) return refuse('busy', 'already armed');
    if (this._state !== 'safe') return refuse('not_safe', `the interlock is ${this._state}, not safe`);
    if (!this.isFresh(nowMs))
      return refuse(
        'stale',
        `the last status is ${this.ageMs(nowMs)?.toFixed(1) ?? '∞'} ms old (limit ${this.timings.freshLimitMs} ms)`,
      );
    this.armPending = { sinceMs: nowMs, deadlineMs: nowMs + this.timings.armTimeoutMs };
    fx.push({ type: 'send', message: { kind: 'arm' } });
    return fx;
  }

  /** Operator asks to disarm. Closes the arm gate at once; sends DISARM; done when the box reports SAFE. */
  requestDisarm(nowMs: number): MonitorEffect[] {
    const fx: MonitorEffect[] = [];
    this.failArm('cancelled', 'disarm requested', nowMs, fx);
    this.gateOpen = false;
    if (!this.portOpen) {
      fx.push({ type: 'disarm', ok: true, atMs: nowMs });
      return fx;
    }
    this.sendDisarm(nowMs, fx, false);
    if (this.deviceState === 'ARMED' && this.isFresh(nowMs) && !isTrippedState(this._state)) {
      this.disarmPending = { deadlineMs: nowMs + this.timings.disarmTimeoutMs };
    } else {
      fx.push({ type: 'disarm', ok: true, atMs: nowMs });
    }
    return fx;
  }

  // ---- queries ---------------------------------------------------------------------------

  /** The safety gate's question: may motion be commanded now? */
  isArmedAndFresh(nowMs: number): boolean {
    return (
      this.portOpen &&
      this._state === 'armed' &&
      this.gateOpen &&
      this.disarmPending === null &&
      this.deviceState === 'ARMED' &&
      this.isFresh(nowMs)
    );
  }

  snapshot(nowMs: number): InterlockSnapshot {
    return {
      atMs: nowMs,
      state: this._state,
      deviceState: this.deviceState,
      portOpen: this.portOpen,
      armedAndFresh: this.isArmedAndFresh(nowMs),
      armPending: this.armPending !== null,
      disarmPending: this.disarmPending !== null,
      freshness: {
        lastStatusAtMs: this.lastStatusAtMs,
        ageMs: this.ageMs(nowMs),
        lastAnsweredSeq: this.lastAnsweredSeq,
        lastSentSeq: this.lastSentSeq,
        rttMs: this.lastRttMs,
        rttP50Ms: this.rtt.percentile(50),
        rttP99Ms: this.rtt.percentile(99),
        rttMaxMs: this.rtt.maxEver,
        rttSamples: this.rtt.count,
        statusGapMaxMs: this.statusGaps.maxGapMs(nowMs, TIMING_WINDOW_MS),
      },
      heartbeat: {
        periodMs: this.timings.heartbeatPeriodMs,
        latenessP99Ms: this.lateness.percentile(99),
        latenessMaxMs: this.lateness.maxEver,
      },
      counters: { ...this.counters, problems: { ...this.counters.problems } },
      lastTrip: this.lastTrip,
      lastEvent: this.lastEvent,
    };
  }

  // ---- internals -------------------------------------------------------------------------

  private ageMs(nowMs: number): number | null {
    return this.lastStatusAtMs === null ? null : nowMs - this.lastStatusAtMs;
  }

  private isFresh(nowMs: number): boolean {
    const age = this.ageMs(nowMs);
    return age !== null && age >= 0 && age <= this.timings.freshLimitMs;
  }

  private classify(
    seq: number,
    nowMs: number,
  ): { problem: StatusProblem; rttMs?: undefined } | { problem?: undefined; rttMs: number } {
    let sentAt = -1;
    for (let i = 0; i < SENT_RING; i++) {
      if (this.sentSeq[i] === seq) sentAt = this.sentAt[i];
    }
    if (this.lastAnsweredSeq !== null && !seqAfter(seq, this.lastAnsweredSeq)) return { problem: 'stale_seq' };
    if (sentAt < 0) return { problem: 'unknown_seq' };
    if (nowMs - sentAt > this.timings.silenceLimitMs) return { problem: 'late_status' };
    return { rttMs: nowMs - sentAt };
  }

  private problem(problem: InterlockProblem, line: string, nowMs: number, fx: MonitorEffect[]): void {
    this.counters.problems[problem]++;
    if ((LINE_PROBLEMS as readonly string[]).includes(problem)) this.counters.garbageLines++;
    fx.push({ type: 'problem', problem, line: line.length > 80 ? `${line.slice(0, 80)}…` : line, atMs: nowMs });
  }

  private enterEstop(reason: TripReason, detail: string, nowMs: number, fx: MonitorEffect[]): void {
    this.failArm('estop', detail, nowMs, fx);
    if (this.disarmPending) {
      this.disarmPending = null;
      fx.push({ type: 'disarm', ok: true, atMs: nowMs });
    }
    if (this._state === 'estop') return;
    if (isTrippedState(this._state)) this.setState('estop', nowMs, fx);
    else this.trip('estop', reason, detail, nowMs, fx);
    this.gateOpen = false;
  }

  private trip(to: InterlockState, reason: TripReason, detail: string, nowMs: number, fx: MonitorEffect[]): void {
    const wasArmed = this.gateOpen;
    this.gateOpen = false;
    const trip: InterlockTrip = {
      reason,
      atMs: nowMs,
      fromState: this._state,
      toState: to,
      wasArmed,
      lastStatusAtMs: this.lastStatusAtMs,
      sinceLastStatusMs: this.lastStatusAtMs === null ? null : nowMs - this.lastStatusAtMs,
      detail,
    };
    this.lastTrip = trip;
    this.counters.trips++;
    // The trip goes first: whoever stops the robot hears of it before anything else.
    fx.unshift({ type: 'trip', trip });
    // A box that may still be armed (we stopped hearing it, not it us) is told to disarm.
    if (wasArmed && this.portOpen && reason === 'silence') this.sendDisarm(nowMs, fx, false);
    this.setState(to, nowMs, fx);
  }

  private failArm(reason: ArmFailure, detail: string, nowMs: number, fx: MonitorEffect[]): void {
    if (!this.armPending) return;
    this.armPending = null;
    fx.push({ type: 'arm', ok: false, reason, detail, atMs: nowMs });
  }

  private sendDisarm(nowMs: number, fx: MonitorEffect[], rateLimited: boolean): void {
    if (!this.portOpen) return;
    if (rateLimited && nowMs - this.lastDisarmSentAtMs < this.timings.disarmResendMs) return;
    this.lastDisarmSentAtMs = nowMs;
    fx.push({ type: 'send', message: { kind: 'disarm' } });
  }

  private setState(to: InterlockState, nowMs: number, fx: MonitorEffect[]): void {
    if (to === this._state) return;
    const from = this._state;
    this._state = to;
    if (to !== 'armed') this.gateOpen = false;
    fx.push({ type: 'state', from, to, atMs: nowMs });
  }
}
