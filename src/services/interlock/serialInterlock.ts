import { performance } from 'node:perf_hooks';
import { createSerialPort } from './hangupAwareBinding';
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
  const now = options.now ?? (() => performance.now());
  const log = options.log ?? ((line: string) => process.stderr.write(`interlock: ${line}\n`));
  const checkPeriodMs = options.checkPeriodMs ?? 5;
  if (!(checkPeriodMs >= 1 && checkPeriodMs <= 10)) throw new RangeError('checkPeriodMs must be in [1, 10]');
  const maxBacklog = options.maxWriteBacklogBytes ?? 256;
  const monitor = new InterlockMonitor({ timings: options.timings });
  const framer = new LineFramer(INTERLOCK_PROTOCOL.maxLineBytes);

  const port = createSerialPort({
    path: options.path,
    baudRate: options.baudRate ?? INTERLOCK_PROTOCOL.baudRate,
    dataBits: 8,
    parity: 'none',
    stopBits: 1,
    rtscts: false,
    autoOpen: false,
    lock: options.lock ?? true,
  });
  await new Promise<void>((resolve, reject) => {
    port.open((err) => (err ? reject(new Error(`interlock: cannot open ${options.path}: ${err.message}`)) : resolve()));
  });

  let timer: NodeJS.Timeout | null = null;
  let ended = false;
  let armWaiter: ((r: ArmResult) => void) | null = null;
  let disarmWaiter: ((r: DisarmResult) => void) | null = null;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));

  const safely = callbackGuard(log);

  const run = (fx: MonitorEffect[]): void => {
    let statusChanged = false;
    for (const e of fx) {
      switch (e.type) {
        case 'trip': {
          const snap = monitor.snapshot(e.trip.atMs);
          safely('onTrip', () => options.onTrip(e.trip, snap));
          break;
        }
        case 'send':
          send(e.message.kind === 'heartbeat' ? e.message.seq : null, formatConsoleMessage(e.message));
          break;
        case 'status':
          if (options.onDeviceStatus)
            safely('onDeviceStatus', () =>
              options.onDeviceStatus!({ state: e.state, seq: e.seq, rttMs: e.rttMs, atMs: e.atMs }),
            );
          statusChanged = true;
          break;
        case 'state':
          statusChanged = true;
          break;
        case 'event':
          if (options.onEvent) safely('onEvent', () => options.onEvent!(e.event, e.atMs));
          break;
        case 'problem':
          if (options.onProblem) safely('onProblem', () => options.onProblem!(e.problem, e.line));
          break;
        case 'arm': {
          const w = armWaiter;
          armWaiter = null;
          w?.(e.ok ? { ok: true, latencyMs: e.latencyMs } : { ok: false, reason: e.reason, detail: e.detail });
          break;
        }
        case 'disarm': {
          const w = disarmWaiter;
          disarmWaiter = null;
          w?.(e.ok ? { ok: true } : { ok: false, reason: e.reason, detail: e.detail });
          break;
        }
      }
    }
    if (statusChanged && options.onStatus) {
      const snap = monitor.snapshot(now());
      safely('onStatus', () => options.onStatus!(snap));
    }
  };

  const send = (heartbeatSeq: number | null, text: string): void => {
    if (ended || !port.isOpen) {
      if (heartbeatSeq !== null) monitor.heartbeatDropped(heartbeatSeq);
      return;
    }
    // A box that stopped reading must not make us buffer without bound: heartbeats are skipped
    // (the silence rule trips us anyway); ARM/DISARM always go out.
    if (heartbeatSeq !== null && port.writableLength > maxBacklog) {
      monitor.heartbeatDropped(heartbeatSeq);
      return;
    }
    port.write(text, (err) => {
      if (err && !ended) portGone('error', `write failed: ${err.message}`);
    });
  };

  const schedule = (): void => {
    if (ended) return;
    const wake = monitor.nextWakeMs();
    if (wake === null) return;
    const delay = Math.min(checkPeriodMs, Math.max(1, Math.ceil(wake - now())));
    timer = setTimeout(onTimer, delay);
  };
  const onTimer = (): void => {
    timer = null;
    run(monitor.tick(now()));
    schedule();
  };

  const finish = (): void => {
    if (ended) return;
    ended = true;
    if (timer) clearTimeout(timer);
    timer = null;
    resolveClosed();
  };

  const portGone = (cause: 'closed' | 'error', detail: string): void => {
    if (ended) return;
    const t = now();
    finish();
    run(monitor.portClosed(t, cause, detail));
    if (port.isOpen) port.close(() => {});
  };

  port.on('data', (chunk: Buffer) => {
    if (ended) return;
    run(monitor.onFramed(framer.push(chunk), now()));
  });
  port.on('error', (err: Error) => portGone('error', err.message));
  port.on('close', (err?: Error & { disconnected?: boolean }) => {
    portGone(
      err?.disconnected ? 'closed' : err ? 'error' : 'closed',
      err ? `${err.message}${err.disconnected ? ' (disconnected)' : ''}` : 'port closed',
    );
  });

  run(monitor.portOpened(now()));
  schedule();

  const link: LocalInterlockLink = {
    path: options.path,
    get state() {
      return monitor.state;
    },
    isArmedAndFresh: () => monitor.isArmedAndFresh(now()),
    snapshot: () => monitor.snapshot(now()),
    arm() {
      return new Promise<ArmResult>((resolve) => {
        if (armWaiter) {
          resolve({ ok: false, reason: 'busy', detail: 'an ARM is already waiting for the box' });
          return;
        }
        armWaiter = resolve;
        run(monitor.requestArm(now()));
        schedule0();
      });
    },
    disarm() {
      return new Promise<DisarmResult>((resolve) => {
        const previous = disarmWaiter;
        disarmWaiter = (r) => {
          previous?.(r);
          resolve(r);
        };
        run(monitor.requestDisarm(now()));
        schedule0();
      });
    },
    async close() {
      if (ended) return;
      if (port.isOpen && monitor.state !== 'lost') {
        // Best effort: tell the box to disarm before we stop heartbeating (its watchdog would trip it 100 ms later anyway).
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 50);
          port.write(formatConsoleMessage({ kind: 'disarm' }), () => port.drain(() => (clearTimeout(t), resolve())));
        });
      }
      const t = now();
      finish();
      run(monitor.portClosed(t, 'console', 'closed by the console'));
      if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    },
    closed,
    consoleStalled(detail) {
      if (ended) return;
      run(monitor.consoleStalled(now(), detail));
      schedule0();
    },
    consoleResumed() {
      if (ended) return;
      run(monitor.consoleResumed(now()));
      schedule0();
    },
  };

  // An operator request adds a deadline (arm/disarm timeout): make sure the timer is not parked past it.
  function schedule0(): void {
    if (ended) return;
    if (timer) clearTimeout(timer);
    timer = null;
    schedule();
  }

  return link;
}
