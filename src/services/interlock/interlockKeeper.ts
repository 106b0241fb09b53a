import fs from 'node:fs';
import net from 'node:net';
import { ConsoleWatchdog, type ConsoleProcessState, type ConsoleWatchRule } from '../../domain/interlock';
import { CONSOLE_SILENT_HOLD_MS } from '../../domain/g1Runner/g1RunnerSafety';
import type { FromKeeper, ToKeeper } from './keeperProtocol';
import { raiseProcessThreadsPriority, raiseTimekeeperPriority, setRealtimeFifo } from '../os/threadPriority';
import { openInterlock, type LocalInterlockLink } from './serialInterlock';

// The interlock keeper: a small process of its own that owns the serial port, heartbeats the box
// and runs the InterlockMonitor (openInterlock), so the box hears the console every 20 ms whatever
// the console's main loop is doing (docs/INTERLOCK.md §3a). Started by openInterlockKeeper
// (interlockKeeperLink.ts) through childBootstrap.mjs; it talks to the console over Node's IPC
// channel only (keeperProtocol.ts).
//
// Why a process, not a worker thread: serialport 13 registers its read poller on the *main*
// thread's libuv loop (docs/INTERLOCK.md §5), so in a worker its reads would wait for the very
// loop this keeper exists to be independent of, or crash the process.
//
// The console watchdog (ConsoleWatchdog): the console kicks every 10 ms. No kick for more than
// the limit (100 ms), or /proc saying the console process is stopped (SIGSTOP, a debugger) or
// gone, is a stall: the monitor trips `console_stalled` and DISARMs the box if motion may have
// been permitted, and withholds heartbeats until the console runs again. A console that really
// hangs can therefore not leave the box armed: stopped → disarmed within one check (5 ms); a
// main loop stuck in a computation → disarmed after 100 ms; this keeper itself stopped or dead
// (a SIGSTOP, a kill, a crash) → no heartbeats, and the box trips by its own 100 ms watchdog.
// It runs in a session of its own (spawned detached), so a SIGSTOP of the console's process group
// (Ctrl-Z) stops the console only, and the keeper disarms the box within one check.

const CHECK_PERIOD_MS = 5;
/** The keeper asks to run before ordinary work (threadPriority.ts); granted only with the privilege. */
export const KEEPER_NICE = -10;
const raised = raiseTimekeeperPriority(KEEPER_NICE);

const send = (m: FromKeeper): void => {
  if (process.connected) process.send!(m);
};

const hrMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Linux: the console process's scheduler state from /proc (field 3 of /proc/<pid>/stat). */
function consoleProcessState(pid: number): ConsoleProcessState {
  if (process.ppid !== pid) return 'gone';
  if (process.platform !== 'linux') return 'running';
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'T' || state === 't') return 'stopped';
    if (state === 'Z' || state === 'X') return 'gone';
    return 'running';
  } catch {
    return 'gone';
  }
}

/** How often a lost connection to the runner's e-stop socket is tried again, ms. */
const RUNNER_RECONNECT_MS = 200;

/**
 * The g1-runner's e-stop socket: every e-stop this keeper hears goes there as `ESTOP <detail>\n`,
 * written from this process, so the robot damps whatever the console's process is doing
 * (stopped, busy, gone). Connected at open, reconnected every RUNNER_RECONNECT_MS while lost.
 */
class RunnerTripSocket {
  private sock: net.Socket | null = null;
  private connected = false;
  private closed = false;
  private warned = false;
  constructor(private readonly path: string) {
    this.connect();
  }
  /** Whether the runner is listening now: its socket connected. */
  isConnected(): boolean {
    return this.connected;
  }
  private connect(): void {
    if (this.closed) return;
    const sock = net.createConnection(this.path);
    this.sock = sock;
    sock.on('connect', () => {
      this.connected = true;
      this.warned = false;
      send({ t: 'log', line: `runner e-stop socket ${this.path}: connected` });
    });
    sock.on('error', (err) => {
      if (!this.warned) send({ t: 'log', line: `runner e-stop socket ${this.path}: ${err.message}; retrying` });
      this.warned = true;
    });
    sock.on('close', () => {
      this.connected = false;
      if (this.sock === sock) this.sock = null;
      if (!this.closed) setTimeout(() => this.connect(), RUNNER_RECONNECT_MS).unref();
    });
  }
  estop(detail: string): void {
    const line = `ESTOP ${detail.replace(/[\r\n]/g, ' ').slice(0, 200)}\n`;
    if (this.sock && this.connected) this.sock.write(line);
    else
      send({ t: 'log', line: `runner e-stop socket ${this.path}: not connected, the e-stop (${detail}) was not sent` });
  }
  close(): void {
    this.closed = true;
    this.sock?.destroy();
  }
}
let runnerTrips: RunnerTripSocket | null = null;
let lastDeviceState: string | null = null;

let link: LocalInterlockLink | null = null;
let watchdog: ConsoleWatchdog | null = null;
let now: () => number = () => hrMs();
const consolePid = process.ppid;

async function open(m: Extract<ToKeeper, { t: 'open' }>): Promise<void> {
  now = () => hrMs() - m.clockOffsetMs;
  if (m.runnerTripSocket !== null) runnerTrips = new RunnerTripSocket(m.runnerTripSocket);
  try {
    link = await openInterlock({
      ...m.options,
      now,
      log: (line) => send({ t: 'log', line }),
      onTrip: (trip, snapshot) => send({ t: 'trip', trip, snapshot }),
      onStatus: (snapshot) => send({ t: 'status', snapshot }),
      // The runner hears the box's e-stop first (it damps the robot), the console after. Both the
      // event and the box's status entering ESTOP are sent: the monitor raises no trip for an
      // e-stop once it is tripped already (e.g. by the console's own stall), the runner must damp.
      onDeviceStatus: (status) => {
        if (status.state === 'ESTOP' && lastDeviceState !== 'ESTOP')
          runnerTrips?.estop('ST ESTOP from the interlock box');
        lastDeviceState = status.state;
        send({ t: 'device_status', status });
      },
      onEvent: (event, atMs) => {
        if (event === 'ESTOP') runnerTrips?.estop('EV ESTOP: the e-stop was pressed');
        send({ t: 'event', event, atMs });
      },
      onProblem: (problem, line) => send({ t: 'problem', problem, line }),
    });
  } catch (err) {
    send({ t: 'open_failed', message: (err as Error).message });
    process.exit(0);
  }
  watchdog = new ConsoleWatchdog(m.watchdogLimitMs, now());
  setInterval(checkConsole, CHECK_PERIOD_MS);
  void link.closed.then(() => {
    send({ t: 'closed' });
    // Let the IPC channel drain the last messages, then go.
    setTimeout(() => process.exit(0), 20);
  });
  send({ t: 'opened', snapshot: link.snapshot() });
  // serialport reads and writes through libuv's thread pool, which exists now: its threads too.
  if (raised) raiseProcessThreadsPriority(KEEPER_NICE);
  // Real-time: a nice only shares the CPUs in proportion, it does not bound how long a woken
  // keeper waits for one (threadPriority.ts setRealtimeFifo); a heartbeat or a status that waits
  // 100 ms is indistinguishable from a lost box.
  const realtime = setRealtimeFifo(process.pid);
  if (!raised)
    send({
      t: 'log',
      line: `runs at normal priority (nice ${KEEPER_NICE} was refused: grant CAP_SYS_NICE for a loaded machine)`,
    });
  else if (!realtime)
    send({
      t: 'log',
      line: `runs at nice ${KEEPER_NICE}, not real-time (SCHED_FIFO was refused or chrt is missing): on a loaded machine a status can wait behind other work`,
    });
}

/**
 * The rule the console is judged by now: while a runner hears this keeper's e-stops (its socket
 * connected), the runner's own rule for a silent console (CONSOLE_SILENT_HOLD_MS), so that a
 * console frozen for a few hundred ms does not disarm the box under a trial the runner carries;
 * otherwise the console is on the path that stops the robot and the limit is the box's 100 ms.
 */
function consoleRule(w: ConsoleWatchdog): ConsoleWatchRule {
  return runnerTrips?.isConnected()
    ? { limitMs: CONSOLE_SILENT_HOLD_MS, stoppedStallsAtOnce: false }
    : { limitMs: w.limitMs, stoppedStallsAtOnce: true };
}

function checkConsole(): void {
  if (!link || !watchdog) return;
  const state = consoleProcessState(consolePid);
  const v = watchdog.check(now(), state, consoleRule(watchdog));
  if (v.type === 'stalled') {
    link.consoleStalled(v.detail);
    send({ t: 'log', line: `console watchdog: ${v.detail}` });
  }
  if (state === 'gone') void shutDown();
}

let shuttingDown = false;
async function shutDown(): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  runnerTrips?.close();
  link?.consoleStalled('the console process is gone');
  await link?.close().catch(() => undefined);
  process.exit(0);
}

process.on('message', (m: ToKeeper) => {
  switch (m.t) {
    case 'open':
      void open(m);
      break;
    case 'kick': {
      const v = watchdog?.kick(now());
      if (v?.type === 'resumed') {
        link?.consoleResumed();
        send({ t: 'log', line: `console watchdog: the console runs again after ${v.stalledForMs.toFixed(1)} ms` });
      }
      break;
    }
    case 'arm':
      if (!link) send({ t: 'reply', id: m.id, result: { ok: false, reason: 'not_open', detail: 'not open' } });
      else void link.arm().then((result) => send({ t: 'reply', id: m.id, result }));
      break;
    case 'disarm':
      if (!link) send({ t: 'reply', id: m.id, result: { ok: true } });
      else void link.disarm().then((result) => send({ t: 'reply', id: m.id, result }));
      break;
    case 'close':
      if (!link) {
        send({ t: 'reply', id: m.id, result: null });
        process.exit(0);
      }
      void link.close().then(() => send({ t: 'reply', id: m.id, result: null }));
      break;
  }
});
// The console closed the channel or died: disarm and close the port, then exit.
process.on('disconnect', () => void shutDown());
// In its own session a terminal's Ctrl-C does not reach this keeper; a SIGINT sent to it anyway is
// ignored: the console closes the keeper itself (DISARM first), and a keeper that died first would
// leave the box to trip by its watchdog instead.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => void shutDown());
