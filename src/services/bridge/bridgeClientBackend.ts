import type {
  BackendCapabilities,
  BackendLease,
  BackendListener,
  EpisodeOutcome,
  Presence,
  RobotBackend,
  RobotLinkCapabilities,
  StopDelivery,
} from '../../domain/backend/backend';
import { WatchOnlyLinkError } from '../../domain/backend/backend';
import { BackendEventQueue } from '../../domain/backend/backendEventQueue';
import {
  G1_BRIDGE_TOPICS,
  wireStopOutcome,
  type WbcStatusMsg,
  type WireCommand,
} from '../../domain/bridge/g1BridgeContract';
import { resolveFreshnessConfig } from '../../domain/robotLink/linkFreshness';
import { declaresEmulatorControl } from '../../domain/robotEmulator/emulatorControl';
import {
  capabilitiesFromServer,
  ROS2_LINK_WATCH_ONLY_REASON,
  ROS2_LOWSTATE_CAPABILITIES,
} from '../../domain/robotLink/serverCapabilities';
import { StateIntake, type LowStateResult } from '../../domain/robotLink/stateIntake';
import { UNITREE_LOWSTATE_TOPIC } from '../../domain/robotLink/unitreeLowState';
import { UnitreeLowStateIntake } from '../../domain/robotLink/unitreeLowStateIntake';
import { CommandChannel } from '../robotLink/commandChannel';
import { EpisodeRuns } from '../robotLink/episodeRuns';
import { FreshnessMonitor, type FreshnessChange } from '../robotLink/freshnessMonitor';
import { G1BridgeConnection } from '../robotLink/g1BridgeConnection';
import { clockDelay, realLinkClock, type LinkClock } from '../robotLink/linkClock';
import { registerEmergencyStop } from '../safety/lastResort';
import { StatusLevel, type StatusMessage } from '../robotLink/foxgloveWs';

import { LinkFigures, type BridgeClientStats, type BridgeLinkStats } from './bridgeLinkFigures';
import {
  resolveBridgeClientOptions,
  ROBOT_LINK_DEFAULTS,
  type BridgeClientOptions,
  type ResolvedBridgeClientOptions,
} from './bridgeClientOptions';
import { LinkProblems } from './bridgeLinkProblems';
import { PresenceWaiters } from './presenceWaiters';
import { ReconnectSchedule } from './reconnectSchedule';
import { SilentSocketDrop } from './silentSocketDrop';

export { CommandRefusedError, SAFETY_MAX_ATTEMPTS, SAFETY_RETRY_MS } from '../robotLink/commandChannel';
export { ROBOT_LINK_DEFAULTS, type BridgeClientOptions } from './bridgeClientOptions';
export type { BridgeClientStats, BridgeLinkStats } from './bridgeLinkFigures';

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
//   LinkProblems        src/services/bridge/bridgeLinkProblems.ts     incidents rate-limited, conditions raised and withdrawn
//                                                                     (ProblemLedger, src/domain/robotLink/problemLedger.ts)
//   ReconnectSchedule   src/services/bridge/reconnectSchedule.ts      when to connect again, and when to give up
//                                                                     (src/domain/robotLink/reconnectBackoff.ts)
//   SilentSocketDrop    src/services/bridge/silentSocketDrop.ts       a lost link's open socket dropped once its stop/damp settled
//   LinkFigures         src/services/bridge/bridgeLinkFigures.ts      counts, rates, round trip, one-way latency
//   PresenceWaiters     src/services/bridge/presenceWaiters.ts        acquire() waiting for the link to be present
// The options and their defaults are in src/services/bridge/bridgeClientOptions.ts.
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

/** A ping goes out every this many freshness ticks. */
const PING_EVERY_TICKS = 10;

export class BridgeClientBackend implements RobotBackend {
  readonly id: string;
  readonly name: string;
  private readonly opts: ResolvedBridgeClientOptions;
  private readonly clock: LinkClock;
  private readonly onFrameReceived: BridgeClientOptions['onFrameReceived'];
  private readonly log: (line: string) => void;
  private readonly freshness: FreshnessMonitor;
  private readonly intake: StateIntake;
  private readonly ros2Intake = new UnitreeLowStateIntake();
  private readonly figures: LinkFigures;
  private readonly queue: BackendEventQueue;
  private readonly problems: LinkProblems;
  private readonly commands: CommandChannel;
  private readonly runs: EpisodeRuns;
  private readonly reconnects: ReconnectSchedule;
  /** The latest connection (kept after its socket closed: the capabilities are its server's until the next). */
  private conn: G1BridgeConnection | null = null;
  /** The latest connection's socket is still in use. */
  private connLive = false;
  private closed = false;
  private lastStatus: WbcStatusMsg | null = null;
  private pingTicks = 0;
  private readonly presenceWaiters: PresenceWaiters;
  /** Removes this link from the last-resort handler's list (close()). */
  private readonly unregisterEmergencyStop: () => void;
  private readonly silentDrop: SilentSocketDrop;

  constructor(options: BridgeClientOptions) {
    this.id = options.id ?? `remote:${options.url}`;
    this.name = options.name ?? `simulator at ${options.url}`;
    this.log = options.log ?? (() => {});
    this.onFrameReceived = options.onFrameReceived;
    this.clock = options.clock ?? realLinkClock;
    this.opts = resolveBridgeClientOptions(options);
    this.presenceWaiters = new PresenceWaiters(this.clock);
    const url = this.opts.url;
    const freshnessConfig = resolveFreshnessConfig(this.opts, this.name);
    this.reconnects = new ReconnectSchedule({
      clock: this.clock,
      policy: {
        initialDelayMs: this.opts.reconnectInitialDelayMs,
        maxDelayMs: this.opts.reconnectMaxDelayMs,
        maxAttempts: this.opts.reconnectMaxAttempts,
      },
      connect: () => this.connect(),
      gaveUp: (attempts) =>
        this.problems.raise(
          'error',
          'reconnect_gave_up',
          `gave up reconnecting to ${url} after ${attempts} attempts without an answer`,
        ),
    });
    this.intake = new StateIntake(this.opts.rootStateMaxSkewMs);
    this.queue = new BackendEventQueue({
      maxQueuedFrames: this.opts.maxQueuedFrames,
      owner: this,
      dropNotice: (n, total) => this.problems.framesDropped(n, total),
      onListenerError: (err) => this.log(`bridge client: listener failed: ${(err as Error)?.message ?? String(err)}`),
    });
    this.problems = new LinkProblems({
      clock: this.clock,
      intervalMs: this.opts.problemIntervalMs,
      emit: (ev) => this.queue.push(ev),
      log: this.log,
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
      onSafetySettled: () => this.silentDrop.dropIfDrained(),
    });
    this.figures = new LinkFigures({
      clock: this.clock,
      latencyWindow: this.opts.latencyWindow,
      intakes: [this.intake, this.ros2Intake],
      dropped: () => this.queue.dropped,
      stampOriginUnixMs: () => this.stampOriginUnixMs,
    });
    this.silentDrop = new SilentSocketDrop({
      clock: this.clock,
      liveConn: () => this.liveConn,
      presence: () => this.presence,
      safetyInFlight: () => this.commands.safetyInFlight,
      drop: (conn) => {
        conn.drop(1001, 'no state');
        this.onSocketClosed('silent');
      },
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

  stats(): BridgeClientStats {
    return this.figures.stats();
  }

  /**
   * Link figures (RobotBackend; the console's ConnectionRegistry shows `latencyMs`): ping round
   * trip, state rate over the last second, age of the last lowstate, tick gaps and, when the
   * server declares its stamp clock's origin, one-way latency percentiles.
   */
  linkStats(): BridgeLinkStats {
    return this.figures.linkStats();
  }

  /** One-way latency of a frame stamped `stampNs`, as of `atMs` (LinkFigures.oneWayLatencyMs). */
  oneWayLatencyMs(stampNs: number, atMs?: number): number | null {
    return this.figures.oneWayLatencyMs(stampNs, atMs);
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
    return this.presenceWaiters.wait(
      timeoutMs,
      () => new Error(`${this.name} is not connected (${this.presence} after ${timeoutMs} ms)`),
    );
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
    if (this.conn?.ros2) return Promise.resolve(unsentToRos2('stop', reason, this.clock.nowMs()));
    const wireOutcome = wireStopOutcome(outcome);
    return this.commands.sendSafety('stop', reason, {
      command: 'stop',
      args: { reason, ...(wireOutcome ? { outcome: wireOutcome } : {}) },
    });
  }

  /** Sends `damp` as sendStop sends `stop` (unleased, retried until answered, latches the run). */
  damp(reason: string): Promise<StopDelivery> {
    this.runs.latchStop('aborted_by_operator', reason);
    if (this.conn?.ros2) return Promise.resolve(unsentToRos2('damp', reason, this.clock.nowMs()));
    return this.commands.sendSafety('damp', reason, { command: 'damp', args: { reason } });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.runs.close();
    const conn = this.liveConn; // read before `closed` is set: liveConn is null once closed
    this.closed = true;
    this.unregisterEmergencyStop();
    this.freshness.halt();
    this.reconnects.cancel();
    this.silentDrop.cancel();
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
    this.problems.newConnection();
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
            this.figures.connects++;
            this.log(`bridge client: connected to ${url} (subprotocol ${conn?.subprotocol ?? '?'})`);
          },
          ready: () => live() && this.onReady(),
          message: (topic, data, logTimeNs) => live() && this.onMessage(topic, data, logTimeNs),
          status: (s) => live() && this.onServerStatus(s),
          badFrame: (reason) => live() && this.onBadServerFrame(reason),
          problem: (severity, code, message) => {
            if (!live()) return;
            this.problems.raiseServerCondition(severity, code, message);
          },
          pong: (rttMs) => {
            if (live()) this.figures.rttMs = rttMs;
          },
          log: (line) => this.log(line),
          closed: (why) => live() && this.onSocketClosed(why),
        },
      );
    } catch (err) {
      this.problems.raise('error', 'bad_url', `cannot connect to ${url}: ${(err as Error).message}`);
      this.scheduleReconnect();
      return;
    }
    this.conn = conn;
    this.connLive = true;
    this.freshness.attach();
  }

  /** The server is known: present; its connection's conditions replace the earlier ones. */
  private onReady(): void {
    this.reconnects.succeeded();
    this.problems.serverReady();
    this.freshness.ready();
  }

  private onSocketClosed(why: string): void {
    this.connLive = false;
    const everPresent = this.freshness.everPresent;
    this.commands.failAll(new Error(`link to ${this.opts.url} lost (${why})`));
    this.freshness.detach();
    if (everPresent) this.problems.raise('error', 'link_lost', `link to ${this.opts.url} lost: ${why}`);
    else this.problems.raise('warn', 'connect_failed', `cannot reach ${this.opts.url} (${why}); retrying`);
    this.runs.onSocketClosed(why);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || !this.opts.reconnect) return;
    this.reconnects.schedule();
  }

  private onFreshnessChange(c: FreshnessChange): void {
    if (c.presence !== null) {
      this.queue.push({ type: 'presence', presence: c.presence });
      if (c.presence === 'present') {
        for (const code of ['link_stale', 'link_lost', 'connect_failed'] as const) this.problems.withdraw(code);
        this.presenceWaiters.present();
      }
      if (c.presence === 'lost') this.problems.withdraw('link_stale'); // lost says more
    }
    const v = c.verdict;
    if (!v) return;
    const silence = `nothing from ${this.opts.url} for ${Math.round(v.ageMs)} ms`;
    if (v.to === 'stale') {
      this.problems.raise('warn', 'link_stale', silence);
      return;
    }
    this.problems.raise('error', 'link_lost', silence);
    // DESIGN §6: a lost link stops the robot at once (the runs send the stop on the still-open socket).
    this.runs.onLinkLost(v.ageMs);
    // A silent socket is then dropped and the link reconnects — but only once the stop/damp
    // deliveries on it have settled (or their retries ran out), and not before a short grace
    // for the trip's own stop and damp to arrive (the gate trips on this presence event).
    this.silentDrop.schedule();
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
        if (problem) this.problems.incident('warn', problem.code, problem.message);
        return;
      }
      case G1_BRIDGE_TOPICS.wbcStatus: {
        const r = this.intake.wbcStatus(data);
        if (!r.ok) return this.problems.incident('warn', r.problem.code, r.problem.message);
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
    if (r.kind === 'rejected') return this.problems.incident('warn', r.problem.code, r.problem.message);
    if (r.gap) this.problems.incident('warn', r.gap.code, r.gap.message);
    this.figures.frameArrived(receivedAt, r.stampNs);
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
    const refused = ++this.figures.malformedControl;
    this.problems.incident(
      'warn',
      'malformed_server_message',
      `${this.opts.url}: ${reason} (${refused} refused so far)`,
    );
  }

  private onServerStatus(s: StatusMessage): void {
    // The server refuses a command in a status named for its seq (docs/G1_BRIDGE.md, "Status messages").
    const refused = /^g1-bridge\/refused\/(\d+)$/.exec(s.id ?? '');
    if (refused) this.commands.refuse(Number(refused[1]), s.message);
    const severity = s.level === StatusLevel.ERROR ? 'error' : s.level === StatusLevel.WARNING ? 'warn' : 'info';
    this.problems.incident(severity, 'server_status', s.message, true);
  }
}

/** A stop or damp on a ROS 2 link: nothing on the robot would receive it (no g1-bridge/1 runner). */
function unsentToRos2(command: 'stop' | 'damp', reason: string, nowMs: number): StopDelivery {
  return {
    command,
    reason,
    attempts: 0,
    answer: null,
    message: `not sent: ${ROS2_LINK_WATCH_ONLY_REASON}`,
    firstSentAtMs: null,
    settledAtMs: nowMs,
  };
}

/** Creates the backend for a simulator and starts connecting (presence 'connecting' until the server answers). */
export function connectRemoteSimulator(options: BridgeClientOptions): BridgeClientBackend {
  return new BridgeClientBackend(options);
}

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
