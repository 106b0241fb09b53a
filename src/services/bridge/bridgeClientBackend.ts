import type {
  BackendCapabilities,
  BackendLease,
  BackendListener,
  EpisodeOutcome,
  Presence,
  Problem,
  RobotBackend,
  RobotLinkCapabilities,
  RobotLinkStats,
  StopDelivery,
} from '../../domain/backend/backend';
import { WatchOnlyLinkError } from '../../domain/backend/backend';
import { BackendEventQueue } from '../../domain/backend/backendEventQueue';
import type { BackendProblemCode } from '../../domain/backend/problemCodes';
import type { StateFrame } from '../../domain/robot/stateFrame';
import {
  G1_BRIDGE_TOPICS,
  wireStopOutcome,
  type WbcStatusMsg,
  type WireCommand,
} from '../../domain/bridge/g1BridgeContract';
import { SampleRing } from '../../domain/interlock/sampleRing';
import { ArrivalTimes } from '../../domain/robotLink/arrivalRate';
import { resolveFreshnessConfig } from '../../domain/robotLink/linkFreshness';
import { ProblemLedger } from '../../domain/robotLink/problemLedger';
import {
  checkReconnectPolicy,
  nextReconnect,
  reconnectReset,
  type ReconnectPolicy,
  type ReconnectState,
} from '../../domain/robotLink/reconnectBackoff';
import { declaresEmulatorControl } from '../../domain/robotEmulator/emulatorControl';
import {
  capabilitiesFromServer,
  ROS2_LINK_WATCH_ONLY_REASON,
  ROS2_LOWSTATE_CAPABILITIES,
} from '../../domain/robotLink/serverCapabilities';
import { StateIntake, type LowStateResult, type StateIntakeStats } from '../../domain/robotLink/stateIntake';
import { UNITREE_LOWSTATE_TOPIC } from '../../domain/robotLink/unitreeLowState';
import { UnitreeLowStateIntake } from '../../domain/robotLink/unitreeLowStateIntake';
import { CommandChannel, SAFETY_MAX_ATTEMPTS, SAFETY_RETRY_MS } from '../robotLink/commandChannel';
import { EpisodeRuns } from '../robotLink/episodeRuns';
import { FreshnessMonitor, type FreshnessChange } from '../robotLink/freshnessMonitor';
import { G1BridgeConnection } from '../robotLink/g1BridgeConnection';
import { clockDelay, realLinkClock, type LinkClock, type TimerHandle } from '../robotLink/linkClock';
import { registerEmergencyStop } from '../safety/lastResort';
import { StatusLevel, type StatusMessage } from '../robotLink/foxgloveWs';

export { CommandRefusedError, SAFETY_MAX_ATTEMPTS, SAFETY_RETRY_MS } from '../robotLink/commandChannel';

// The console's one client of `g1-bridge/1` (Foxglove WebSocket protocol): a RobotBackend for a
// simulator reached by URL (`motionbench serve-sim`, or any simulator that speaks it), the robot
// emulator, or the physical robot through its bridge. The two uses differ only in defaults:
// connectRemoteSimulator (link present while any message arrives within 500 ms, lost after 2 s)
// and connectRobot (freshness from lowstate only, stale after 50 ms — DESIGN §6 — and lost within
// 100 ms, when a running episode ends `link_lost`).
//
// This class composes the parts, each in its own file, on one injected clock (LinkClock: the
// real one in use, a fake one in unit tests):
//   G1BridgeConnection  src/services/robotLink/g1BridgeConnection.ts  one socket: serverInfo, channels, control, ping, writes
//   StateIntake         src/domain/robotLink/stateIntake.ts           decode + sequence lowstate (LowStateSequencer), root pairing
//   FreshnessMonitor    src/services/robotLink/freshnessMonitor.ts    presence by age (the reducer of src/domain/robotLink/linkFreshness.ts)
//   CommandChannel      src/services/robotLink/commandChannel.ts      seq, acks, timeouts, stop/damp retries
//   EpisodeRuns         src/services/robotLink/episodeRuns.ts         the lease and the episode run, the stop latch
//   BackendEventQueue   src/domain/backend/backendEventQueue.ts       bounded delivery to the listener (shared with the robot emulator)
//   ProblemLedger       src/domain/robotLink/problemLedger.ts         incidents rate-limited, conditions raised and withdrawn
//   reconnect backoff   src/domain/robotLink/reconnectBackoff.ts      when to connect again, and when to give up
// Link state is presence (connecting → present; stale and lost by the age of the last fresh
// message; lost at once when the socket closes) plus problems, never exceptions: malformed,
// duplicate and out-of-order frames are counted, reported and dropped; a condition (stale, lost,
// watch-only…) is withdrawn when it ends; the socket reconnects with exponential backoff.
//
// The same client reads a ROS 2 robot through foxglove_bridge (docs/ROS2_LINK.md): when the
// connection finds one (G1BridgeConnection.ros2: no contract, a ROS bridge, `/lowstate` in
// unitree_hg/msg/LowState CDR), its lowstate goes through UnitreeLowStateIntake
// (src/domain/robotLink/unitreeLowStateIntake.ts) instead of StateIntake, the capabilities are
// ROS2_LOWSTATE_CAPABILITIES, and the link declares itself watch-only for good (`watchOnlyReason`):
// acquire() refuses with WatchOnlyLinkError, stop and damp come back unsent (there is nothing on
// the robot to receive them). Freshness, presence, problems, rates and the fan-out are the same.

export interface BridgeClientOptions {
  /** ws://host:port of a g1-bridge/1 server. */
  url: string;
  id?: string;
  name?: string;
  /** Presence becomes 'stale' when nothing arrived for this long, ms (default 500). */
  staleAfterMs?: number;
  /**
   * … and 'lost' after this long, ms (default 2000); a running episode then ends as link_lost.
   * An upper bound: the loss is declared lostMarginMs earlier (see there), so that it comes
   * within lostAfterMs even when the deadline timer fires late.
   */
  lostAfterMs?: number;
  /**
   * How much earlier than lostAfterMs the loss is declared, ms (default 5, at most
   * lostAfterMs − staleAfterMs). A Node timer fires late by its own lateness (~1–2 ms on an
   * idle loop with 1 ms timer granularity, a few ms on a loaded one); declaring 'lost' when the
   * last fresh message is lostAfterMs − lostMarginMs old keeps the worst case within lostAfterMs
   * as long as the lateness stays below the margin.
   */
  lostMarginMs?: number;
  /** Reconnect after a loss (default true), first after initialDelayMs, doubling up to maxDelayMs. */
  reconnect?: boolean;
  reconnectInitialDelayMs?: number;
  reconnectMaxDelayMs?: number;
  /** Consecutive failed attempts before the client gives up (problem `reconnect_gave_up`); default Infinity. */
  reconnectMaxAttempts?: number;
  /** Frames held while the listener is busy; beyond it the oldest are dropped (default 2000). */
  maxQueuedFrames?: number;
  /** How long a command waits for its ack, ms (default 15000; prepare carries the whole clip). */
  commandTimeoutMs?: number;
  /** acquire() waits this long for the link to be present, ms (default 5000). */
  connectTimeoutMs?: number;
  /** A root_state is paired with a lowstate whose stamp is within this, ms (default 20). */
  rootStateMaxSkewMs?: number;
  /** Incidents of one code are reported at most this often, ms (default 1000); all are counted. */
  problemIntervalMs?: number;
  /**
   * What keeps the link fresh: 'any_message' (default: lowstate, root_state or wbc_status — a
   * simulator between episodes may only send its status heartbeat) or 'lowstate' (the robot: only
   * an accepted lowstate counts, so a bridge that keeps its heartbeat but freezes, repeats or
   * garbles lowstate goes stale and lost like a silent one).
   */
  freshnessFrom?: 'any_message' | 'lowstate';
  /** One-way latency percentiles are over this many most recent frames (default 1000). */
  latencyWindow?: number;
  /**
   * Called synchronously for every accepted lowstate, before the frame is queued for the
   * listener: the frame, its publisher stamp (ns) and when it was received (the clock's nowMs(),
   * performance.now() by default). For consumers that time their own processing
   * (oneWayLatencyMs turns a stamp into a latency). The frame is the one the listener will get;
   * do not modify it.
   */
  onFrameReceived?: (frame: StateFrame, stampNs: number, receivedAtMs: number) => void;
  /** The clock every timer and age is on (default: performance.now() and Node's timers). */
  clock?: LinkClock;
  log?: (line: string) => void;
}

/** Link figures (the Connections panel reads `latencyMs`; the rest is for the trial runner and benchmarks). */
export type BridgeLinkStats = RobotLinkStats;

export interface BridgeClientStats {
  connects: number;
  /** lowstate messages received / accepted as frames. */
  received: number;
  accepted: number;
  malformed: number;
  duplicate: number;
  outOfOrder: number;
  /** Frames dropped because the listener was too slow. */
  dropped: number;
  /** Messages of other topics that failed validation (root_state, wbc_status). */
  malformedOther: number;
  /** Protocol (control or binary) frames refused before parsing, or whose handling threw. */
  malformedControl: number;
  /** lowstates larger than G1_BRIDGE_LIMITS.lowStateBytes (also counted as malformed). */
  oversized: number;
  /** Ticks missing between consecutive accepted lowstates, and the number of such gaps. */
  missingTicks: number;
  tickGapEvents: number;
}

type ResolvedOptions = Required<Omit<BridgeClientOptions, 'id' | 'name' | 'log' | 'onFrameReceived' | 'clock'>>;

/** Receive times kept for the rate over the last second (enough for a 5 kHz stream). */
const STATE_TIME_RING = 8192;
/**
 * Default lostMarginMs: the deadline timer's lateness it absorbs. Measured lateness of the lost
 * deadline on loopback: ~1–2 ms idle (Node timers have 1 ms granularity and start from the
 * loop's cached clock); 5 ms leaves room for a busy loop while a 100 ms robot link still
 * declares its loss no earlier than 95 ms after the last lowstate.
 */
const LOST_MARGIN_MS = 5;
/**
 * A socket whose lowstate fell silent is kept this long at least (ms), so that the stop and damp of
 * the trip that follows go out on it and their acks can come back (the server may be alive with
 * only its state stream frozen); it is dropped once no stop/damp is in flight, at the latest
 * SAFETY_RETRY_MS × SAFETY_MAX_ATTEMPTS + this after the loss.
 */
const SILENT_SOCKET_GRACE_MS = 300;
const SILENT_SOCKET_MAX_MS = SILENT_SOCKET_GRACE_MS + SAFETY_RETRY_MS * SAFETY_MAX_ATTEMPTS;
/** Conditions that describe one connection's server: withdrawn when a later connection is ready without them. */
const SERVER_CONDITIONS: readonly BackendProblemCode[] = [
  'unsupported_contract',
  'unsupported_encoding',
  'watch_only',
  'bad_metadata',
];
/** A ping goes out every this many freshness ticks. */
const PING_EVERY_TICKS = 10;

export class BridgeClientBackend implements RobotBackend {
  readonly id: string;
  readonly name: string;
  private readonly opts: ResolvedOptions;
  private readonly clock: LinkClock;
  private readonly onFrameReceived: BridgeClientOptions['onFrameReceived'];
  private readonly log: (line: string) => void;
  private readonly freshness: FreshnessMonitor;
  private readonly intake: StateIntake;
  private readonly ros2Intake = new UnitreeLowStateIntake();
  private readonly arrivals = new ArrivalTimes(STATE_TIME_RING);
  private readonly latency: SampleRing;
  private readonly queue: BackendEventQueue;
  private readonly problems: ProblemLedger;
  private readonly commands: CommandChannel;
  private readonly runs: EpisodeRuns;
  private readonly reconnectPolicy: ReconnectPolicy;
  private reconnectState: ReconnectState;
  private reconnectTimer: TimerHandle | null = null;
  /** The latest connection (kept after its socket closed: the capabilities are its server's until the next). */
  private conn: G1BridgeConnection | null = null;
  /** The latest connection's socket is still in use. */
  private connLive = false;
  /** Server conditions raised on the latest connection. */
  private connConditions = new Set<BackendProblemCode>();
  private closed = false;
  private lastStatus: WbcStatusMsg | null = null;
  private connects = 0;
  private malformedControl = 0;
  private rttMs: number | null = null;
  private pingTicks = 0;
  private readonly presenceWaiters = new Set<() => void>();
  /** Removes this link from the last-resort handler's list (close()). */
  private readonly unregisterEmergencyStop: () => void;
  /** The drop of a silent socket, pending until its stop/damp deliveries settle. */
  private silentDrop: { timer: TimerHandle | null; sinceMs: number; conn: G1BridgeConnection } | null = null;

  constructor(options: BridgeClientOptions) {
    this.id = options.id ?? `remote:${options.url}`;
    this.name = options.name ?? `simulator at ${options.url}`;
    this.log = options.log ?? (() => {});
    this.onFrameReceived = options.onFrameReceived;
    this.clock = options.clock ?? realLinkClock;
    this.opts = {
      url: options.url,
      staleAfterMs: options.staleAfterMs ?? 500,
      lostAfterMs: options.lostAfterMs ?? 2000,
      lostMarginMs: options.lostMarginMs ?? LOST_MARGIN_MS,
      reconnect: options.reconnect ?? true,
      reconnectInitialDelayMs: options.reconnectInitialDelayMs ?? 250,
      reconnectMaxDelayMs: options.reconnectMaxDelayMs ?? 5000,
      reconnectMaxAttempts: options.reconnectMaxAttempts ?? Infinity,
      maxQueuedFrames: options.maxQueuedFrames ?? 2000,
      commandTimeoutMs: options.commandTimeoutMs ?? 15000,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      rootStateMaxSkewMs: options.rootStateMaxSkewMs ?? 20,
      problemIntervalMs: options.problemIntervalMs ?? 1000,
      freshnessFrom: options.freshnessFrom ?? 'any_message',
      latencyWindow: options.latencyWindow ?? 1000,
    };
    const url = this.opts.url;
    const freshnessConfig = resolveFreshnessConfig(this.opts, this.name);
    this.reconnectPolicy = checkReconnectPolicy({
      initialDelayMs: this.opts.reconnectInitialDelayMs,
      maxDelayMs: this.opts.reconnectMaxDelayMs,
      maxAttempts: this.opts.reconnectMaxAttempts,
    });
    this.reconnectState = reconnectReset(this.reconnectPolicy);
    this.latency = new SampleRing(Math.max(1, Math.floor(this.opts.latencyWindow)));
    this.intake = new StateIntake(this.opts.rootStateMaxSkewMs);
    this.problems = new ProblemLedger(this.opts.problemIntervalMs);
    this.queue = new BackendEventQueue({
      maxQueuedFrames: this.opts.maxQueuedFrames,
      owner: this,
      dropNotice: (n, total) => ({
        type: 'problem',
        problem: {
          severity: 'warn',
          code: 'frames_dropped',
          message: `${n} frames dropped: the listener fell behind the stream (${total} in all)`,
          atMs: this.clock.wallNowMs(),
        },
      }),
      onListenerError: (err) => this.log(`bridge client: listener failed: ${(err as Error)?.message ?? String(err)}`),
    });
    this.commands = new CommandChannel({
      clock: this.clock,
      name: this.name,
      url,
      openPath: () => {
        const c = this.liveConn;
        return c && c.canWrite() ? (cmd, seq) => c.write(cmd, seq) : null;
      },
      presence: () => this.presence,
      onSafetySettled: () => this.dropSilentSocketIfDrained(),
    });
    this.runs = new EpisodeRuns({
      name: this.name,
      url,
      clock: this.clock,
      sendCommand: (cmd, timeoutMs) => this.sendCommand(cmd, timeoutMs),
      sendStop: (reason, outcome) => this.sendStop(reason, outcome),
      canCommand: () => this.liveConn?.hasCommandChannel ?? false,
      emit: (ev) => this.queue.push(ev),
    });
    // The tick pings and is a backstop; the thresholds themselves are met by the monitor's
    // deadline timer, so 'lost' comes lostAfterMs − lostMarginMs after the last fresh message
    // plus only the timer's own lateness (~1–2 ms on an idle loop), not plus a polling period.
    this.freshness = new FreshnessMonitor({
      clock: this.clock,
      config: freshnessConfig,
      tickMs: Math.max(20, Math.min(100, this.opts.staleAfterMs / 4)),
      onTick: () => {
        if (++this.pingTicks % PING_EVERY_TICKS === 1) this.liveConn?.ping();
      },
      onChange: (c) => this.onFreshnessChange(c),
    });
    this.unregisterEmergencyStop = registerEmergencyStop({
      name: this.name,
      stopNow: (reason) => this.emergencyStopNow(reason),
    });
    this.connect();
  }

  get presence(): Presence {
    return this.freshness.presence;
  }

  get capabilities(): BackendCapabilities {
    if (this.conn?.ros2) return { ...ROS2_LOWSTATE_CAPABILITIES, bindingKinds: [] };
    return capabilitiesFromServer(this.conn?.metadata ?? {}, this.conn?.advertisedTopics() ?? new Set());
  }

  /**
   * `runClips` while the server accepts our commands and has not given control to another client;
   * `emulatorControl` when the server's metadata declares the robot emulator's control channel.
   */
  get robotLink(): RobotLinkCapabilities {
    const c = this.liveConn;
    if (this.conn?.ros2)
      return { control: 'watchOnly', emulatorControl: false, watchOnlyReason: ROS2_LINK_WATCH_ONLY_REASON };
    return {
      control: c && c.hasCommandChannel && !c.controlRefused ? 'runClips' : 'watchOnly',
      emulatorControl: declaresEmulatorControl(this.conn?.metadata ?? {}),
    };
  }

  /** Both intakes' counts (one connection uses one of them; a URL may serve either over time). */
  private intakeStats(): StateIntakeStats {
    const a = this.intake.stats();
    const b = this.ros2Intake.stats();
    const sum = {} as Record<keyof StateIntakeStats, number>;
    for (const k of Object.keys(a) as (keyof StateIntakeStats)[]) sum[k] = a[k] + b[k];
    return sum;
  }

  stats(): BridgeClientStats {
    const s = this.intakeStats();
    return {
      connects: this.connects,
      received: s.received,
      accepted: s.accepted,
      malformed: s.malformed,
      duplicate: s.duplicate,
      outOfOrder: s.outOfOrder,
      dropped: this.queue.dropped,
      malformedOther: s.malformedOther,
      malformedControl: this.malformedControl,
      oversized: s.oversized,
      missingTicks: s.missingTicks,
      tickGapEvents: s.tickGapEvents,
    };
  }

  /**
   * Link figures (RobotBackend; the console's ConnectionRegistry shows `latencyMs`): ping round
   * trip, state rate over the last second, age of the last lowstate, tick gaps and, when the
   * server declares its stamp clock's origin, one-way latency percentiles.
   */
  linkStats(): BridgeLinkStats {
    const now = this.clock.nowMs();
    const s = this.intakeStats();
    const last = this.arrivals.lastAtMs;
    const p50 = this.latency.percentile(50);
    return {
      latencyMs: this.rttMs,
      stateRateHz: this.arrivals.countWithin(now, 1000),
      lastStateAgeMs: last === null ? null : now - last,
      missingTicks: s.missingTicks,
      tickGapEvents: s.tickGapEvents,
      oneWayLatencyMs:
        p50 === null
          ? null
          : {
              p50,
              p99: this.latency.percentile(99) as number,
              max: this.latency.maxEver as number,
              count: this.latency.count,
            },
      dropped: this.queue.dropped,
    };
  }

  /**
   * One-way latency of a frame stamped `stampNs` by the publisher, as of `atMs` (the clock's
   * nowMs(), default now), ms: (wall clock then − stamp origin) − stamp. Null unless the server
   * declared `stamp_origin_unix_ms`.
   */
  oneWayLatencyMs(stampNs: number, atMs: number = this.clock.nowMs()): number | null {
    const origin = this.stampOriginUnixMs;
    return origin === null ? null : this.clock.timeOriginUnixMs + atMs - origin - stampNs / 1e6;
  }

  /** `stamp_origin_unix_ms` of the server's metadata, parsed; null when absent or invalid. */
  get stampOriginUnixMs(): number | null {
    return this.conn?.stampOriginUnixMs ?? null;
  }

  /** The latest wbc_status received, if any. */
  get wbcStatus(): WbcStatusMsg | null {
    return this.lastStatus;
  }

  setListener(listener: BackendListener | null): void {
    this.queue.setListener(listener);
  }

  async acquire(runId: string): Promise<BackendLease> {
    if (this.closed) throw new Error(`${this.name} is closed`);
    if (this.conn?.ros2) throw new WatchOnlyLinkError(this.name, ROS2_LINK_WATCH_ONLY_REASON);
    return this.runs.acquire(runId, async () => {
      await this.whenPresent(this.opts.connectTimeoutMs);
      if (this.conn?.ros2) throw new WatchOnlyLinkError(this.name, ROS2_LINK_WATCH_ONLY_REASON);
      // A g1-bridge/1 server says whether we control it right after we advertise; give it a moment.
      for (let i = 0; i < 25 && (this.conn?.controlKnown ?? null) === null; i++) await clockDelay(this.clock, 20);
      if (!this.liveConn?.hasCommandChannel)
        throw new Error(`${this.name}: the server does not accept commands (no ${G1_BRIDGE_TOPICS.command})`);
      if (this.conn?.controlRefused)
        throw new Error(`${this.name} is controlled by another client; this console can only watch`);
    });
  }

  /** Resolves once the link is present; rejects naming the presence after `timeoutMs`. */
  whenPresent(timeoutMs: number): Promise<void> {
    if (this.presence === 'present') return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        this.clock.clearTimeout(t);
        this.presenceWaiters.delete(done);
        resolve();
      };
      const t = this.clock.setTimeout(() => {
        this.presenceWaiters.delete(done);
        reject(new Error(`${this.name} is not connected (${this.presence} after ${timeoutMs} ms)`));
      }, timeoutMs);
      this.presenceWaiters.add(done);
    });
  }

  /**
   * Sends `stop` whoever holds the lease (a safety trip must reach the robot at once): written at
   * once on any open socket, whatever the link's freshness, and again every SAFETY_RETRY_MS until
   * answered or the socket closes (StopDelivery says what happened; never rejects). Latches the
   * active run: no start follows it. `outcome` is the episode's outcome as the console records it;
   * on the wire a stop carries it only when g1-bridge/1 has it (a `link_lost` stop goes out plain).
   */
  sendStop(reason: string, outcome?: EpisodeOutcome): Promise<StopDelivery> {
    this.runs.latchStop(outcome ?? 'aborted_by_operator', reason);
    if (this.conn?.ros2) return Promise.resolve(this.unsentToRos2('stop', reason));
    const wireOutcome = wireStopOutcome(outcome);
    return this.commands.sendSafety('stop', reason, {
      command: 'stop',
      args: { reason, ...(wireOutcome ? { outcome: wireOutcome } : {}) },
    });
  }

  /** Sends `damp` as sendStop sends `stop` (unleased, retried until answered, latches the run). */
  damp(reason: string): Promise<StopDelivery> {
    this.runs.latchStop('aborted_by_operator', reason);
    if (this.conn?.ros2) return Promise.resolve(this.unsentToRos2('damp', reason));
    return this.commands.sendSafety('damp', reason, { command: 'damp', args: { reason } });
  }

  /** A stop or damp on a ROS 2 link: nothing on the robot would receive it (no g1-bridge/1 runner). */
  private unsentToRos2(command: 'stop' | 'damp', reason: string): StopDelivery {
    return {
      command,
      reason,
      attempts: 0,
      answer: null,
      message: `not sent: ${ROS2_LINK_WATCH_ONLY_REASON}`,
      firstSentAtMs: null,
      settledAtMs: this.clock.nowMs(),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.runs.close();
    const conn = this.liveConn; // read before `closed` is set: liveConn is null once closed
    this.closed = true;
    this.unregisterEmergencyStop();
    this.freshness.halt();
    this.clock.clearTimeout(this.reconnectTimer);
    this.clock.clearTimeout(this.silentDrop?.timer ?? null);
    this.silentDrop = null;
    this.commands.failAll(new Error(`${this.name} closed`));
    this.connLive = false;
    if (conn) await conn.close('console closed the link');
    this.freshness.close();
  }

  // -------------------------------------------------------------------------------------------
  // The connection

  private get liveConn(): G1BridgeConnection | null {
    return this.connLive && !this.closed ? this.conn : null;
  }

  private connect(): void {
    if (this.closed) return;
    this.intake.newConnection();
    this.ros2Intake.newConnection();
    this.connConditions = new Set();
    this.conn = null;
    this.connLive = false;
    let conn: G1BridgeConnection | null = null;
    const live = (): boolean => conn !== null && conn === this.conn && this.connLive && !this.closed;
    const url = this.opts.url;
    try {
      conn = new G1BridgeConnection(
        url,
        { clock: this.clock, handshakeTimeoutMs: this.opts.connectTimeoutMs },
        {
          opened: () => {
            if (!live()) return;
            this.connects++;
            this.log(`bridge client: connected to ${url} (subprotocol ${conn?.subprotocol ?? '?'})`);
          },
          ready: () => live() && this.onReady(),
          message: (topic, data, logTimeNs) => live() && this.onMessage(topic, data, logTimeNs),
          status: (s) => live() && this.onServerStatus(s),
          badFrame: (reason) => live() && this.onBadServerFrame(reason),
          problem: (severity, code, message) => {
            if (!live()) return;
            this.connConditions.add(code);
            this.raise(severity, code, message);
          },
          pong: (rttMs) => {
            if (live()) this.rttMs = rttMs;
          },
          log: (line) => this.log(line),
          closed: (why) => live() && this.onSocketClosed(why),
        },
      );
    } catch (err) {
      this.raise('error', 'bad_url', `cannot connect to ${url}: ${(err as Error).message}`);
      this.scheduleReconnect();
      return;
    }
    this.conn = conn;
    this.connLive = true;
    this.freshness.attach();
  }

  /** The server is known: present; its connection's conditions replace the earlier ones. */
  private onReady(): void {
    this.reconnectState = reconnectReset(this.reconnectPolicy);
    for (const code of SERVER_CONDITIONS) if (!this.connConditions.has(code)) this.withdraw(code);
    this.freshness.ready();
  }

  private onSocketClosed(why: string): void {
    this.connLive = false;
    const everPresent = this.freshness.everPresent;
    this.commands.failAll(new Error(`link to ${this.opts.url} lost (${why})`));
    this.freshness.detach();
    if (everPresent) this.raise('error', 'link_lost', `link to ${this.opts.url} lost: ${why}`);
    else this.raise('warn', 'connect_failed', `cannot reach ${this.opts.url} (${why}); retrying`);
    this.runs.onSocketClosed(why);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || !this.opts.reconnect || this.reconnectTimer) return;
    const d = nextReconnect(this.reconnectState, this.reconnectPolicy);
    this.reconnectState = d.state;
    if (d.kind === 'give_up') {
      this.raise(
        'error',
        'reconnect_gave_up',
        `gave up reconnecting to ${this.opts.url} after ${d.attempts} attempts without an answer`,
      );
      return;
    }
    this.reconnectTimer = this.clock.setTimeout(
      () => {
        this.reconnectTimer = null;
        this.connect();
      },
      d.delayMs,
      { keepAlive: false },
    );
  }

  private onFreshnessChange(c: FreshnessChange): void {
    if (c.presence !== null) {
      this.queue.push({ type: 'presence', presence: c.presence });
      if (c.presence === 'present') {
        for (const code of ['link_stale', 'link_lost', 'connect_failed'] as const) this.withdraw(code);
        for (const w of [...this.presenceWaiters]) w();
      }
      if (c.presence === 'lost') this.withdraw('link_stale'); // lost says more
    }
    const v = c.verdict;
    if (!v) return;
    const silence = `nothing from ${this.opts.url} for ${Math.round(v.ageMs)} ms`;
    if (v.to === 'stale') {
      this.raise('warn', 'link_stale', silence);
      return;
    }
    this.raise('error', 'link_lost', silence);
    // DESIGN §6: a lost link stops the robot at once (the runs send the stop on the still-open socket).
    this.runs.onLinkLost(v.ageMs);
    // A silent socket is then dropped and the link reconnects — but only once the stop/damp
    // deliveries on it have settled (or their retries ran out), and not before a short grace
    // for the trip's own stop and damp to arrive (the gate trips on this presence event).
    this.scheduleSilentDrop();
  }

  private scheduleSilentDrop(): void {
    const conn = this.liveConn;
    if (!conn || this.silentDrop) return;
    this.silentDrop = { timer: null, sinceMs: this.clock.nowMs(), conn };
    this.dropSilentSocketIfDrained();
  }

  /**
   * Drops the silent socket once SILENT_SOCKET_GRACE_MS passed and no stop/damp is in flight on it
   * (at the latest SILENT_SOCKET_MAX_MS after the loss); until then re-checks when that can change.
   */
  private dropSilentSocketIfDrained(): void {
    const d = this.silentDrop;
    if (!d) return;
    this.clock.clearTimeout(d.timer);
    d.timer = null;
    if (d.conn !== this.liveConn || this.presence !== 'lost') {
      // Another socket by now, or this one came back to life (state flows again): nothing to drop.
      this.silentDrop = null;
      return;
    }
    const age = this.clock.nowMs() - d.sinceMs;
    const waitMs =
      age < SILENT_SOCKET_GRACE_MS
        ? SILENT_SOCKET_GRACE_MS - age
        : this.commands.safetyInFlight > 0
          ? SILENT_SOCKET_MAX_MS - age
          : 0;
    if (waitMs > 0) {
      d.timer = this.clock.setTimeout(() => this.dropSilentSocketIfDrained(), waitMs, { keepAlive: false });
      return;
    }
    this.silentDrop = null;
    d.conn.drop(1001, 'no state');
    this.onSocketClosed('silent');
  }

  /**
   * The last resort's stop (src/services/safety/lastResort.ts): stop — and damp, for a robot —
   * written on the open socket now, synchronously, no ack awaited (the process is about to exit).
   */
  private emergencyStopNow(reason: string): void {
    const conn = this.liveConn;
    if (!conn || !conn.canWrite()) return;
    const cmds: WireCommand[] = [{ command: 'stop', args: { reason } }];
    if (this.capabilities.executionDomain === 'real_robot') cmds.push({ command: 'damp', args: { reason } });
    for (const cmd of cmds) {
      try {
        conn.write(cmd, this.commands.nextSeq());
      } catch {
        // The socket is going; nothing more can be done from here.
      }
    }
  }

  private sendCommand(cmd: WireCommand, timeoutMs = this.opts.commandTimeoutMs): Promise<string> {
    const conn = this.liveConn;
    const p = this.presence;
    if (!conn || !conn.hasCommandChannel || p === 'lost' || p === 'connecting' || p === 'disconnected')
      return Promise.reject(new Error(`${this.name} is not connected (${p})`));
    return this.commands.send(cmd, (c, seq) => conn.write(c, seq), timeoutMs);
  }

  // -------------------------------------------------------------------------------------------
  // Messages

  private onMessage(topic: string, data: ArrayBufferView, logTimeNs: bigint): void {
    if (this.opts.freshnessFrom === 'any_message') this.freshness.fresh();
    const ros2 = this.conn?.ros2LowState ?? null;
    if (topic === UNITREE_LOWSTATE_TOPIC && ros2) {
      const receivedAt = this.clock.nowMs();
      return this.acceptLowState(this.ros2Intake.lowState(ros2.decode(data), logTimeNs), receivedAt, null);
    }
    switch (topic) {
      case G1_BRIDGE_TOPICS.lowstate:
        return this.onLowState(data);
      case G1_BRIDGE_TOPICS.rootState: {
        const problem = this.intake.rootState(data);
        if (problem) this.incident('warn', problem.code, problem.message);
        return;
      }
      case G1_BRIDGE_TOPICS.wbcStatus: {
        const r = this.intake.wbcStatus(data);
        if (!r.ok) return this.incident('warn', r.problem.code, r.problem.message);
        return this.onWbcStatus(r.status);
      }
    }
  }

  private onLowState(data: ArrayBufferView): void {
    const receivedAt = this.clock.nowMs();
    // A frame belongs to a run only while that episode runs (its clock is the episode's); frames
    // before the start or after the end carry no run id.
    const episode = this.runs.episodeClock();
    this.acceptLowState(this.intake.lowState(data, episode?.episodeStartNs ?? null), receivedAt, episode);
  }

  /** An intake's verdict on one lowstate: a problem, or a frame counted, timed and queued. */
  private acceptLowState(
    r: LowStateResult,
    receivedAt: number,
    episode: ReturnType<EpisodeRuns['episodeClock']>,
  ): void {
    if (r.kind === 'rejected') return this.incident('warn', r.problem.code, r.problem.message);
    if (r.gap) this.incident('warn', r.gap.code, r.gap.message);
    this.arrivals.record(receivedAt);
    const origin = this.stampOriginUnixMs;
    if (origin !== null) this.latency.add(this.clock.timeOriginUnixMs + receivedAt - origin - r.stampNs / 1e6);
    if (this.opts.freshnessFrom === 'lowstate') this.freshness.fresh(receivedAt);
    this.runs.countFrame(r.frame.timeS);
    if (this.onFrameReceived) {
      try {
        this.onFrameReceived(r.frame, r.stampNs, receivedAt);
      } catch (err) {
        this.log(`bridge client: onFrameReceived failed: ${(err as Error)?.message ?? String(err)}`);
      }
    }
    this.queue.push({ type: 'frames', runId: episode ? episode.runId : '', frames: [r.frame] });
  }

  private onWbcStatus(s: WbcStatusMsg): void {
    this.lastStatus = s;
    if (s.ack && s.ack.seq !== null) this.commands.answer(s.ack.seq, s.ack);
    this.runs.onStatus(s, this.intake.lastStampNs);
  }

  private onBadServerFrame(reason: string): void {
    this.malformedControl++;
    this.incident(
      'warn',
      'malformed_server_message',
      `${this.opts.url}: ${reason} (${this.malformedControl} refused so far)`,
    );
  }

  private onServerStatus(s: StatusMessage): void {
    // The server refuses a command in a status named for its seq (docs/G1_BRIDGE.md, "Status messages").
    const refused = /^g1-bridge\/refused\/(\d+)$/.exec(s.id ?? '');
    if (refused) this.commands.refuse(Number(refused[1]), s.message);
    const severity = s.level === StatusLevel.ERROR ? 'error' : s.level === StatusLevel.WARNING ? 'warn' : 'info';
    this.incident(severity, 'server_status', s.message, true);
  }

  // -------------------------------------------------------------------------------------------
  // Problems

  private incident(severity: Problem['severity'], code: BackendProblemCode, message: string, always = false): void {
    const r = this.problems.incident(severity, code, message, this.clock.wallNowMs(), always);
    if (!r) return;
    this.log(`bridge client: ${severity}: ${code}: ${message}`);
    this.queue.push({ type: 'problem', problem: r.problem });
  }

  private raise(severity: Problem['severity'], code: BackendProblemCode, message: string): void {
    const r = this.problems.raise(severity, code, message, this.clock.wallNowMs());
    if (!r) return;
    if (r.log) this.log(`bridge client: ${severity}: ${code}: ${message}`);
    this.queue.push({ type: 'problem', problem: r.problem });
  }

  private withdraw(code: BackendProblemCode): void {
    if (!this.problems.clear(code)) return;
    this.queue.push({ type: 'problem_cleared', code, atMs: this.clock.wallNowMs() });
  }
}

/** Creates the backend for a simulator and starts connecting (presence 'connecting' until the server answers). */
export function connectRemoteSimulator(options: BridgeClientOptions): BridgeClientBackend {
  return new BridgeClientBackend(options);
}

/** Link thresholds of the robot (DESIGN §6). */
export const ROBOT_LINK_DEFAULTS = {
  /** Moving the robot needs a lowstate younger than this (DESIGN §6): presence 'stale' beyond it. */
  staleAfterMs: 50,
  /**
   * A running episode ends `link_lost` within this long after the last accepted lowstate: the
   * loss is declared at 95 ms (lostMarginMs 5 absorbs the timer's lateness).
   */
  lostAfterMs: 100,
  /** 2 s of frames at 500 Hz held while the listener is busy. */
  maxQueuedFrames: 1000,
  freshnessFrom: 'lowstate',
} as const satisfies Partial<BridgeClientOptions>;

/**
 * Creates the backend for the robot (its bridge, or `motionbench emulate-robot`) and starts
 * connecting: ROBOT_LINK_DEFAULTS unless overridden.
 */
export function connectRobot(options: BridgeClientOptions): BridgeClientBackend {
  return new BridgeClientBackend({
    id: `robot:${options.url}`,
    name: `robot at ${options.url}`,
    ...ROBOT_LINK_DEFAULTS,
    ...options,
  });
}
