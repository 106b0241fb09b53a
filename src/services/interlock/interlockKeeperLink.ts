import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  CONSOLE_WATCHDOG_LIMIT_MS,
  DEFAULT_INTERLOCK_TIMINGS,
  type InterlockSnapshot,
  type InterlockTrip,
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
  const now = options.now ?? (() => performance.now());
  const log = options.log ?? ((line: string) => process.stderr.write(`interlock: ${line}\n`));
  const freshLimitMs = options.timings?.freshLimitMs ?? DEFAULT_INTERLOCK_TIMINGS.freshLimitMs;
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
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    for (const line of d.split('\n')) if (line.trim()) log(`keeper: ${line}`);
  });

  let snap: InterlockSnapshot | null = null;
  let ended = false;
  let nextId = 1;
  const replies = new Map<number, (r: ArmResult | DisarmResult | null) => void>();
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const safely = callbackGuard(log);
  const toKeeper = (m: ToKeeper): boolean => {
    if (ended || !child.connected) return false;
    return sendToKeeper(child, m, log);
  };
  // Anything else the child process object reports (a failed kill, spawn errors after start):
  // logged; its exit is what trips.
  child.on('error', (err) => log(`keeper process: ${err.message}`));

  let opened!: (ok: boolean, message?: string) => void;
  const openDone = new Promise<{ ok: boolean; message?: string }>(
    (r) => (opened = (ok, message) => r({ ok, message })),
  );

  const finish = (): void => {
    if (ended) return;
    ended = true;
    clearInterval(kick);
    for (const [, reply] of replies) reply(null);
    replies.clear();
    resolveClosed();
  };

  child.on('message', (m: FromKeeper) => {
    switch (m.t) {
      case 'opened':
        snap = m.snapshot;
        opened(true);
        break;
      case 'open_failed':
        opened(false, m.message);
        break;
      case 'trip':
        snap = m.snapshot;
        safely('onTrip', () => options.onTrip(m.trip, m.snapshot));
        break;
      case 'status':
        snap = m.snapshot;
        if (options.onStatus) safely('onStatus', () => options.onStatus!(m.snapshot));
        break;
      case 'device_status':
        if (options.onDeviceStatus) safely('onDeviceStatus', () => options.onDeviceStatus!(m.status));
        break;
      case 'event':
        if (options.onEvent) safely('onEvent', () => options.onEvent!(m.event, m.atMs));
        break;
      case 'problem':
        if (options.onProblem) safely('onProblem', () => options.onProblem!(m.problem, m.line));
        break;
      case 'log':
        log(m.line);
        break;
      case 'reply': {
        const reply = replies.get(m.id);
        replies.delete(m.id);
        reply?.(m.result);
        break;
      }
      case 'closed':
        if (snap) snap = { ...snap, portOpen: false, armedAndFresh: false };
        finish();
        break;
    }
  });

  child.once('exit', (code, signal) => {
    const wasOpen = !ended;
    opened(false, `the interlock keeper exited (${signal ?? code}) before opening ${options.path}`);
    if (wasOpen && snap) {
      // The keeper took the port with it: as a port loss, a trip (the box trips by its watchdog).
      const t = now();
      const lastStatusAtMs = snap.freshness.lastStatusAtMs;
      const trip: InterlockTrip = {
        reason: 'port_closed',
        atMs: t,
        fromState: snap.state,
        toState: 'lost',
        wasArmed: snap.state === 'armed',
        lastStatusAtMs,
        sinceLastStatusMs: lastStatusAtMs === null ? null : t - lastStatusAtMs,
        detail: `the interlock keeper process exited (${signal ?? `code ${code}`})`,
      };
      snap = { ...snap, state: 'lost', portOpen: false, armedAndFresh: false, lastTrip: trip };
      const s = snap;
      safely('onTrip', () => options.onTrip(trip, s));
      if (options.onStatus) safely('onStatus', () => options.onStatus!(s));
    }
    finish();
  });

  // The kick: proof that this loop runs. Unref'd: it must not keep the process alive by itself.
  const kick = setInterval(() => toKeeper({ t: 'kick' }), KICK_PERIOD_MS);
  kick.unref();

  toKeeper({
    t: 'open',
    options: {
      path: options.path,
      ...(options.baudRate !== undefined ? { baudRate: options.baudRate } : {}),
      ...(options.timings ? { timings: options.timings } : {}),
      ...(options.checkPeriodMs !== undefined ? { checkPeriodMs: options.checkPeriodMs } : {}),
      ...(options.maxWriteBacklogBytes !== undefined ? { maxWriteBacklogBytes: options.maxWriteBacklogBytes } : {}),
      ...(options.lock !== undefined ? { lock: options.lock } : {}),
    },
    clockOffsetMs: Number(process.hrtime.bigint()) / 1e6 - now(),
    watchdogLimitMs: options.watchdogLimitMs ?? CONSOLE_WATCHDOG_LIMIT_MS,
    runnerTripSocket: options.runnerTripSocket ?? null,
  });
  const o = await openDone;
  if (!o.ok) {
    finish();
    if (child.exitCode === null) child.kill('SIGKILL');
    throw new Error(o.message ?? `interlock: cannot open ${options.path}`);
  }

  const request = <R extends ArmResult | DisarmResult>(t: 'arm' | 'disarm', lost: R): Promise<R> =>
    new Promise<R>((resolve) => {
      const id = nextId++;
      replies.set(id, (r) => resolve((r as R | null) ?? lost));
      if (!toKeeper({ t, id })) {
        replies.delete(id);
        resolve(lost);
      }
    });

  /** The last snapshot, its freshness judged now. */
  const current = (): InterlockSnapshot | null => {
    if (!snap) return null;
    const t = now();
    const last = snap.freshness.lastStatusAtMs;
    const ageMs = last === null ? null : t - last;
    const fresh = ageMs !== null && ageMs >= 0 && ageMs <= freshLimitMs;
    return {
      ...snap,
      atMs: t,
      armedAndFresh: !ended && snap.armedAndFresh && fresh,
      freshness: { ...snap.freshness, ageMs },
    };
  };

  return {
    path: options.path,
    keeperPid: child.pid!,
    get state() {
      return snap?.state ?? 'disconnected';
    },
    isArmedAndFresh: () => current()?.armedAndFresh ?? false,
    snapshot: () => current()!,
    arm: () => request<ArmResult>('arm', { ok: false, reason: 'port_closed', detail: 'the interlock keeper is gone' }),
    disarm: () =>
      request<DisarmResult>('disarm', {
        ok: false,
        reason: 'port_closed',
        detail: 'the interlock keeper is gone',
      }),
    async close() {
      if (ended) return;
      const id = nextId++;
      const done = new Promise<void>((resolve) => replies.set(id, () => resolve()));
      if (toKeeper({ t: 'close', id })) await Promise.race([done, closed]);
      // The keeper exits on its own once closed; make sure it does.
      const exited = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
      const t = setTimeout(() => child.kill('SIGKILL'), 1000);
      await exited;
      clearTimeout(t);
      finish();
    },
    closed,
  };
}
