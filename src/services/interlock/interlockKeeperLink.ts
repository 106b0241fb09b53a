import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  CONSOLE_WATCHDOG_LIMIT_MS,
  DEFAULT_INTERLOCK_TIMINGS,
  keeperExitTrip,
  keeperSnapshotAt,
  type InterlockSnapshot,
  type InterlockState,
} from '../../domain/interlock';
import type { FromKeeper, ToKeeper } from './keeperProtocol';
import {
  callbackGuard,
  type ArmResult,
  type DisarmResult,
  type InterlockLink,
  type OpenInterlockOptions,
} from './serialInterlock';

// The console's end of its interlock keeper (interlockKeeper.ts, docs/INTERLOCK.md §3a): the same
// InterlockLink as openInterlock, but the port, the heartbeats and the monitor run in a process
// of their own, so a busy or starved main loop here cannot delay a heartbeat. This side:
//   - kicks the keeper every `kickPeriodMs` (10 ms) from a timer on this loop: the keeper's
//     watchdog trips and disarms the box when the kicks stop for > 100 ms or this process is
//     stopped or gone;
//   - relays the keeper's callbacks (trip first, in the keeper's order) to the options' callbacks;
//   - answers isArmedAndFresh() from the last snapshot the keeper sent, judged against *this*
//     moment's clock: the last counted ARMED status must be at most freshLimitMs old now, so a
//     snapshot that waited in the channel while this loop was busy can only make the answer
//     false, never a stale status look fresh;
//   - if the keeper process dies, that is a `port_closed` trip here (it took the port with it;
//     the box trips by its own watchdog).
// Times are this process's performance.now(); the keeper reads the same monotonic clock.

const BOOTSTRAP = new URL('./childBootstrap.mjs', import.meta.url);
const ENTRY = new URL('./interlockKeeper.ts', import.meta.url);
const KICK_PERIOD_MS = 10;

export interface OpenInterlockKeeperOptions extends OpenInterlockOptions {
  /** The keeper trips and disarms after this long without a kick from this loop (default 100 ms). */
  watchdogLimitMs?: number;
  /**
   * A g1-runner's e-stop socket (`g1-runner --interlock-trips`): the keeper writes every e-stop it
   * hears there itself, so the robot damps without this process (docs/G1_RUNNER.md).
   */
  runnerTripSocket?: string;
}

/** An InterlockLink whose port lives in the keeper process `keeperPid`. */
export interface KeeperInterlockLink extends InterlockLink {
  readonly keeperPid: number;
}

/**
 * Sends one message to the keeper. A keeper that has just died still looks connected until this
 * loop handles its exit, and the write then fails (EPIPE). Without a callback Node reports that as
 * an 'error' event on the child, an uncaught exception here; with one the failure is only logged,
 * and the keeper's exit, handled next, is the `port_closed` trip. Returns false when the channel
 * is already known closed.
 */
export function sendToKeeper(child: ChildProcess, m: ToKeeper, log: (line: string) => void): boolean {
  if (!child.connected) return false;
  child.send(m, (err) => {
    if (err) log(`keeper: ${m.t} not delivered (${err.message}); the keeper's exit trips`);
  });
  return true;
}

export async function openInterlockKeeper(options: OpenInterlockKeeperOptions): Promise<KeeperInterlockLink> {
  const child: ChildProcess = spawn(process.execPath, [fileURLToPath(BOOTSTRAP), ENTRY.href], {
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    // A session of its own, so that the keeper can raise its session's scheduling weight (the
    // autogroup: threadPriority.ts) above every other session's. It does not need this process
    // group either: it watches this process through the IPC channel and /proc.
    detached: true,
    // Electron's binary runs as plain Node for this process.
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    serialization: 'json',
  });
  const link = new KeeperLink(child, options);
  const o = await link.open();
  if (!o.ok) {
    link.abandon();
    throw new Error(o.message ?? `interlock: cannot open ${options.path}`);
  }
  return link;
}

/** What an ARM or DISARM resolves to once the keeper is gone. */
const keeperGone = (): { ok: false; reason: 'port_closed'; detail: string } => ({
  ok: false,
  reason: 'port_closed',
  detail: 'the interlock keeper is gone',
});

/** The keeper's messages relayed to the options' callbacks, its last snapshot kept, the kicks sent. */
class KeeperLink implements KeeperInterlockLink {
  readonly path: string;
  readonly keeperPid: number;
  readonly closed: Promise<void>;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly safely: (what: string, fn: () => void) => void;
  private readonly freshLimitMs: number;
  private snap: InterlockSnapshot | null = null;
  private ended = false;
  private nextId = 1;
  private readonly replies = new Map<number, (r: ArmResult | DisarmResult | null) => void>();
  private resolveClosed!: () => void;
  private opened!: (ok: boolean, message?: string) => void;
  private readonly openDone: Promise<{ ok: boolean; message?: string }>;
  /** The kick: proof that this loop runs. Unref'd: it must not keep the process alive by itself. */
  private readonly kick: NodeJS.Timeout;

  constructor(
    private readonly child: ChildProcess,
    private readonly options: OpenInterlockKeeperOptions,
  ) {
    this.path = options.path;
    this.keeperPid = child.pid!;
    this.now = options.now ?? (() => performance.now());
    const log = options.log ?? ((line: string) => process.stderr.write(`interlock: ${line}\n`));
    this.log = log;
    this.freshLimitMs = options.timings?.freshLimitMs ?? DEFAULT_INTERLOCK_TIMINGS.freshLimitMs;
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      for (const line of d.split('\n')) if (line.trim()) log(`keeper: ${line}`);
    });
    this.closed = new Promise<void>((r) => (this.resolveClosed = r));
    this.safely = callbackGuard(log);
    // Anything else the child process object reports (a failed kill, spawn errors after start):
    // logged; its exit is what trips.
    child.on('error', (err) => log(`keeper process: ${err.message}`));
    this.openDone = new Promise<{ ok: boolean; message?: string }>(
      (r) => (this.opened = (ok, message) => r({ ok, message })),
    );
    child.on('message', (m: FromKeeper) => this.onMessage(m));
    child.once('exit', (code, signal) => this.onExit(code, signal));
    this.kick = setInterval(() => this.toKeeper({ t: 'kick' }), KICK_PERIOD_MS);
    this.kick.unref();
  }

  get state(): InterlockState {
    return this.snap?.state ?? 'disconnected';
  }

  isArmedAndFresh(): boolean {
    return this.current()?.armedAndFresh ?? false;
  }

  snapshot(): InterlockSnapshot {
    return this.current()!;
  }

  arm(): Promise<ArmResult> {
    return this.request<ArmResult>('arm', keeperGone());
  }

  disarm(): Promise<DisarmResult> {
    return this.request<DisarmResult>('disarm', keeperGone());
  }

  async close(): Promise<void> {
    if (this.ended) return;
    const child = this.child;
    const id = this.nextId++;
    const done = new Promise<void>((resolve) => this.replies.set(id, () => resolve()));
    if (this.toKeeper({ t: 'close', id })) await Promise.race([done, this.closed]);
    // The keeper exits on its own once closed; make sure it does.
    const exited = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
    const t = setTimeout(() => child.kill('SIGKILL'), 1000);
    await exited;
    clearTimeout(t);
    this.finish();
  }

  /** Asks the keeper to open the port; resolves with its answer (or its exit before it). */
  open(): Promise<{ ok: boolean; message?: string }> {
    const options = this.options;
    this.toKeeper({
      t: 'open',
      options: {
        path: options.path,
        ...(options.baudRate !== undefined ? { baudRate: options.baudRate } : {}),
        ...(options.timings ? { timings: options.timings } : {}),
        ...(options.checkPeriodMs !== undefined ? { checkPeriodMs: options.checkPeriodMs } : {}),
        ...(options.maxWriteBacklogBytes !== undefined ? { maxWriteBacklogBytes: options.maxWriteBacklogBytes } : {}),
        ...(options.lock !== undefined ? { lock: options.lock } : {}),
      },
      clockOffsetMs: Number(process.hrtime.bigint()) / 1e6 - this.now(),
      watchdogLimitMs: options.watchdogLimitMs ?? CONSOLE_WATCHDOG_LIMIT_MS,
      runnerTripSocket: options.runnerTripSocket ?? null,
    });
    return this.openDone;
  }

  /** The open failed: stop, and kill the keeper if it still runs. */
  abandon(): void {
    this.finish();
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }

  private onMessage(m: FromKeeper): void {
    const options = this.options;
    switch (m.t) {
      case 'opened':
        this.snap = m.snapshot;
        this.opened(true);
        break;
      case 'open_failed':
        this.opened(false, m.message);
        break;
      case 'trip':
        this.snap = m.snapshot;
        this.safely('onTrip', () => options.onTrip(m.trip, m.snapshot));
        break;
      case 'status':
        this.snap = m.snapshot;
        if (options.onStatus) this.safely('onStatus', () => options.onStatus!(m.snapshot));
        break;
      case 'device_status':
        if (options.onDeviceStatus) this.safely('onDeviceStatus', () => options.onDeviceStatus!(m.status));
        break;
      case 'event':
        if (options.onEvent) this.safely('onEvent', () => options.onEvent!(m.event, m.atMs));
        break;
      case 'problem':
        if (options.onProblem) this.safely('onProblem', () => options.onProblem!(m.problem, m.line));
        break;
      case 'log':
        this.log(m.line);
        break;
      case 'reply': {
        const reply = this.replies.get(m.id);
        this.replies.delete(m.id);
        reply?.(m.result);
        break;
      }
      case 'closed':
        if (this.snap) this.snap = { ...this.snap, portOpen: false, armedAndFresh: false };
        this.finish();
        break;
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    const wasOpen = !this.ended;
    this.opened(false, `the interlock keeper exited (${signal ?? code}) before opening ${this.options.path}`);
    if (wasOpen && this.snap) {
      // The keeper took the port with it: as a port loss, a trip (the box trips by its watchdog).
      const { trip, snapshot } = keeperExitTrip(
        this.snap,
        this.now(),
        `the interlock keeper process exited (${signal ?? `code ${code}`})`,
      );
      this.snap = snapshot;
      this.safely('onTrip', () => this.options.onTrip(trip, snapshot));
      if (this.options.onStatus) this.safely('onStatus', () => this.options.onStatus!(snapshot));
    }
    this.finish();
  }

  private toKeeper(m: ToKeeper): boolean {
    if (this.ended || !this.child.connected) return false;
    return sendToKeeper(this.child, m, this.log);
  }

  private request<R extends ArmResult | DisarmResult>(t: 'arm' | 'disarm', lost: R): Promise<R> {
    return new Promise<R>((resolve) => {
      const id = this.nextId++;
      this.replies.set(id, (r) => resolve((r as R | null) ?? lost));
      if (!this.toKeeper({ t, id })) {
        this.replies.delete(id);
        resolve(lost);
      }
    });
  }

  /** The last snapshot, its freshness judged now. */
  private current(): InterlockSnapshot | null {
    return this.snap ? keeperSnapshotAt(this.snap, this.now(), this.freshLimitMs, !this.ended) : null;
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.kick);
    for (const [, reply] of this.replies) reply(null);
    this.replies.clear();
    this.resolveClosed();
  }
}
