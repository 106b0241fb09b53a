import { performance } from 'node:perf_hooks';
import type { SerialPort } from 'serialport';
import { openInterlockSerial } from './hangupAwareBinding';
import {
  INTERLOCK_PROTOCOL,
  InterlockMonitor,
  LineFramer,
  formatConsoleMessage,
  type ArmFailure,
  type DisarmFailure,
  type InterlockProblem,
  type InterlockSnapshot,
  type InterlockState,
  type InterlockTimings,
  type InterlockTrip,
  type MonitorEffect,
  type DeviceEvent,
  type DeviceState,
} from '../../domain/interlock';

// The console's end of the serial interlock (DESIGN §5.2, docs/INTERLOCK.md): a serialport
// (115200 8N1) driven by the pure InterlockMonitor. This file only does I/O and timing:
//
//   - one self-rescheduling timer wakes at the monitor's next deadline (heartbeat slot, silence
//     limit, arm/disarm deadline) and at least every `checkPeriodMs` (default 5 ms, ≤ 10);
//     heartbeats follow a drift-free schedule (slot i at open + i·20 ms), so setTimeout jitter
//     delays a heartbeat but never accumulates; a slot the timer overshoots entirely is skipped
//     and counted, not sent in a burst;
//   - silence is judged at the deadline itself: a trip fires at (last status + 100 ms) plus
//     the timer's lateness (≈ 1 ms on an idle loop);
//   - a port `close` (unplugged, pty gone) or `error` (read/write failure) trips at once;
//   - no automatic reconnect, ever: after a trip by port loss the link is dead; the operator
//     opens it again and re-arms;
//   - callbacks run synchronously, trip first; an exception in a callback is reported, never
//     allowed to stop the heartbeat.
//
// A blocked event loop cannot be hidden: heartbeats stop (the box trips itself after 100 ms)
// and the first tick after the block sees the old last-status time and trips for silence
// before it reads whatever statuses queued up meanwhile (Node runs timers before poll I/O).
// That trip is conservative and intended.

export type ArmResult = { ok: true; latencyMs: number } | { ok: false; reason: ArmFailure; detail: string };
export type DisarmResult = { ok: true } | { ok: false; reason: DisarmFailure; detail: string };

export interface OpenInterlockOptions {
  /** The serial device (e.g. /dev/ttyUSB0, /dev/serial/by-id/…, or a pty link). */
  path: string;
  baudRate?: number;
  /** Called at once on every trip (e-stop, interlock lost, port loss, …): stop the robot. */
  onTrip: (trip: InterlockTrip, snapshot: InterlockSnapshot) => void;
  /** Called on every state change and every counted status (≤ 50 Hz). */
  onStatus?: (snapshot: InterlockSnapshot) => void;
  /** Called for each line that is not a counted message (garbage, stale seq, …). */
  onProblem?: (problem: InterlockProblem, line: string) => void;
  onEvent?: (event: DeviceEvent, atMs: number) => void;
  /** Called for each counted status (≤ 50 Hz): what a safety gate records as `interlock_status`. */
  onDeviceStatus?: (status: { state: DeviceState; seq: number; rttMs: number; atMs: number }) => void;
  /** Where callback exceptions and transport trouble are reported (default: stderr). */
  log?: (line: string) => void;
  timings?: Partial<InterlockTimings>;
  /** Longest gap between two checks of the deadlines, ms (default 5, at most 10). */
  checkPeriodMs?: number;
  /** Heartbeats are dropped (counted) while more than this many bytes wait to be written. */
  maxWriteBacklogBytes?: number;
  /** Exclusive lock on the device (default true): two consoles cannot share one box. */
  lock?: boolean;
  /** Monotonic clock in ms (default performance.now). */
  now?: () => number;
}

export interface InterlockLink {
  readonly path: string;
  readonly state: InterlockState;
  /** The safety gate's question: armed by this console, ARMED status at most freshLimitMs old, port open. */
  isArmedAndFresh(): boolean;
  snapshot(): InterlockSnapshot;
  /** Sends ARM; resolves ok when the box answers ARMED within armTimeoutMs. Refusals and timeouts resolve ok:false with a reason (never throw). */
  arm(): Promise<ArmResult>;
  /** Closes the arm gate at once, sends DISARM; resolves when the box reports SAFE (or ok:false on timeout/loss). */
  disarm(): Promise<DisarmResult>;
  /** Sends DISARM (best effort) and closes the port. A trip fires if it was armed. */
  close(): Promise<void>;
  /** Resolves when the port has closed, for whatever reason. */
  readonly closed: Promise<void>;
}

/**
 * The link as the process that owns the port sees it. The interlock keeper (interlockKeeper.ts)
 * also reports the console's main loop stalling and resuming (InterlockMonitor.consoleStalled).
 */
export interface LocalInterlockLink extends InterlockLink {
  consoleStalled(detail: string): void;
  consoleResumed(): void;
}

/**
 * Runs a user callback so that its exception is logged, never allowed to stop the heartbeat or the
 * relay that called it (both ends of the link use it).
 */
export function callbackGuard(log: (line: string) => void): (what: string, fn: () => void) => void {
  return (what, fn) => {
    try {
      fn();
    } catch (err) {
      log(`${what} callback threw: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
}

export async function openInterlock(options: OpenInterlockOptions): Promise<LocalInterlockLink> {
  const checkPeriodMs = options.checkPeriodMs ?? 5;
  if (!(checkPeriodMs >= 1 && checkPeriodMs <= 10)) throw new RangeError('checkPeriodMs must be in [1, 10]');
  const monitor = new InterlockMonitor({ timings: options.timings });
  const port = await openInterlockSerial({ ...options, lock: options.lock ?? true }, 'interlock');
  return new SerialInterlockLink(port, monitor, options, checkPeriodMs);
}

/** The open port driven by the monitor: the effects it returns carried out, its deadlines kept by one timer. */
class SerialInterlockLink implements LocalInterlockLink {
  readonly path: string;
  readonly closed: Promise<void>;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly safely: (what: string, fn: () => void) => void;
  private readonly maxBacklog: number;
  private readonly framer = new LineFramer(INTERLOCK_PROTOCOL.maxLineBytes);
  private timer: NodeJS.Timeout | null = null;
  private ended = false;
  private armWaiter: ((r: ArmResult) => void) | null = null;
  private disarmWaiter: ((r: DisarmResult) => void) | null = null;
  private resolveClosed!: () => void;

  constructor(
    private readonly port: SerialPort,
    private readonly monitor: InterlockMonitor,
    private readonly options: OpenInterlockOptions,
    private readonly checkPeriodMs: number,
  ) {
    this.path = options.path;
    this.now = options.now ?? (() => performance.now());
    this.log = options.log ?? ((line: string) => process.stderr.write(`interlock: ${line}\n`));
    this.safely = callbackGuard(this.log);
    this.maxBacklog = options.maxWriteBacklogBytes ?? 256;
    this.closed = new Promise<void>((r) => (this.resolveClosed = r));
    port.on('data', (chunk: Buffer) => {
      if (this.ended) return;
      this.run(this.monitor.onFramed(this.framer.push(chunk), this.now()));
    });
    port.on('error', (err: Error) => this.portGone('error', err.message));
    port.on('close', (err?: Error & { disconnected?: boolean }) => {
      this.portGone(
        err?.disconnected ? 'closed' : err ? 'error' : 'closed',
        err ? `${err.message}${err.disconnected ? ' (disconnected)' : ''}` : 'port closed',
      );
    });
    this.run(this.monitor.portOpened(this.now()));
    this.schedule();
  }

  get state(): InterlockState {
    return this.monitor.state;
  }

  isArmedAndFresh(): boolean {
    return this.monitor.isArmedAndFresh(this.now());
  }

  snapshot(): InterlockSnapshot {
    return this.monitor.snapshot(this.now());
  }

  arm(): Promise<ArmResult> {
    return new Promise<ArmResult>((resolve) => {
      if (this.armWaiter) {
        resolve({ ok: false, reason: 'busy', detail: 'an ARM is already waiting for the box' });
        return;
      }
      this.armWaiter = resolve;
      this.run(this.monitor.requestArm(this.now()));
      this.rescheduleNow();
    });
  }

  disarm(): Promise<DisarmResult> {
    return new Promise<DisarmResult>((resolve) => {
      const previous = this.disarmWaiter;
      this.disarmWaiter = (r) => {
        previous?.(r);
        resolve(r);
      };
      this.run(this.monitor.requestDisarm(this.now()));
      this.rescheduleNow();
    });
  }

  async close(): Promise<void> {
    if (this.ended) return;
    const port = this.port;
    if (port.isOpen && this.monitor.state !== 'lost') {
      // Best effort: tell the box to disarm before we stop heartbeating (its watchdog would trip it 100 ms later anyway).
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        port.write(formatConsoleMessage({ kind: 'disarm' }), () => port.drain(() => (clearTimeout(t), resolve())));
      });
    }
    const t = this.now();
    this.finish();
    this.run(this.monitor.portClosed(t, 'console', 'closed by the console'));
    if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  consoleStalled(detail: string): void {
    if (this.ended) return;
    this.run(this.monitor.consoleStalled(this.now(), detail));
    this.rescheduleNow();
  }

  consoleResumed(): void {
    if (this.ended) return;
    this.run(this.monitor.consoleResumed(this.now()));
    this.rescheduleNow();
  }

  /** Carries out the monitor's effects in order (a trip first when it comes first); one status callback at the end. */
  private run(fx: MonitorEffect[]): void {
    const options = this.options;
    let statusChanged = false;
    for (const e of fx) {
      switch (e.type) {
        case 'trip': {
          const snap = this.monitor.snapshot(e.trip.atMs);
          this.safely('onTrip', () => options.onTrip(e.trip, snap));
          break;
        }
        case 'send':
          this.send(e.message.kind === 'heartbeat' ? e.message.seq : null, formatConsoleMessage(e.message));
          break;
        case 'status':
          if (options.onDeviceStatus)
            this.safely('onDeviceStatus', () =>
              options.onDeviceStatus!({ state: e.state, seq: e.seq, rttMs: e.rttMs, atMs: e.atMs }),
            );
          statusChanged = true;
          break;
        case 'state':
          statusChanged = true;
          break;
        case 'event':
          if (options.onEvent) this.safely('onEvent', () => options.onEvent!(e.event, e.atMs));
          break;
        case 'problem':
          if (options.onProblem) this.safely('onProblem', () => options.onProblem!(e.problem, e.line));
          break;
        case 'arm': {
          const w = this.armWaiter;
          this.armWaiter = null;
          w?.(e.ok ? { ok: true, latencyMs: e.latencyMs } : { ok: false, reason: e.reason, detail: e.detail });
          break;
        }
        case 'disarm': {
          const w = this.disarmWaiter;
          this.disarmWaiter = null;
          w?.(e.ok ? { ok: true } : { ok: false, reason: e.reason, detail: e.detail });
          break;
        }
      }
    }
    if (statusChanged && options.onStatus) {
      const snap = this.monitor.snapshot(this.now());
      this.safely('onStatus', () => options.onStatus!(snap));
    }
  }

  private send(heartbeatSeq: number | null, text: string): void {
    const port = this.port;
    if (this.ended || !port.isOpen) {
      if (heartbeatSeq !== null) this.monitor.heartbeatDropped(heartbeatSeq);
      return;
    }
    // A box that stopped reading must not make us buffer without bound: heartbeats are skipped
    // (the silence rule trips us anyway); ARM/DISARM always go out.
    if (heartbeatSeq !== null && port.writableLength > this.maxBacklog) {
      this.monitor.heartbeatDropped(heartbeatSeq);
      return;
    }
    port.write(text, (err) => {
      if (err && !this.ended) this.portGone('error', `write failed: ${err.message}`);
    });
  }

  private schedule(): void {
    if (this.ended) return;
    const wake = this.monitor.nextWakeMs();
    if (wake === null) return;
    const delay = Math.min(this.checkPeriodMs, Math.max(1, Math.ceil(wake - this.now())));
    this.timer = setTimeout(this.onTimer, delay);
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    this.run(this.monitor.tick(this.now()));
    this.schedule();
  };

  /** An operator request adds a deadline (arm/disarm timeout): make sure the timer is not parked past it. */
  private rescheduleNow(): void {
    if (this.ended) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.schedule();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.resolveClosed();
  }

  private portGone(cause: 'closed' | 'error', detail: string): void {
    if (this.ended) return;
    const t = this.now();
    this.finish();
    this.run(this.monitor.portClosed(t, cause, detail));
    if (this.port.isOpen) this.port.close(() => {});
  }
}
