import { Buffer } from 'node:buffer';
import WebSocket from 'ws';
import type {
  Backend,
  BackendCapabilities,
  BackendEvent,
  BackendLease,
  BackendListener,
  EpisodeEnd,
  EpisodeOutcome,
  InitialState,
  Presence,
  Problem,
  RunRequest,
  StopDelivery,
} from '../../domain/backend/backend';
import {
  G1_BRIDGE_CONTRACT,
  G1_BRIDGE_METADATA,
  G1_BRIDGE_TOPICS,
  wireStopOutcome,
  type CommandName,
  type RootStateMsg,
  type StopOutcome,
  type WbcStatusMsg,
  type WireCommand,
} from '../../domain/bridge/g1BridgeContract';
import { frameFromLowState, prepareCommand, resetCommand } from '../../domain/bridge/g1BridgeEncode';
import { g1BridgeChannel } from '../../domain/bridge/g1BridgeSchemas';
import { decodeLowState, decodeRootState, decodeWbcStatus } from '../../domain/bridge/g1BridgeValidate';
import type { StateFrame } from '../../domain/backend/stateFrame';
import type { WbcBindingKind } from '../../domain/wbc/wbcBinding';
import { SampleRing } from '../../domain/interlock/sampleRing';
import { registerEmergencyStop } from '../safety/lastResort';
import { checkedServerSocket } from './checkedServerSocket';
import { FOXGLOVE_SUBPROTOCOL, FoxgloveClient, StatusLevel, type Channel, type FoxgloveClientInstance, type MessageData, type ServerInfo, type StatusMessage } from './foxgloveWs';

// The console's one client of `g1-bridge/1` (Foxglove WebSocket protocol): a Backend for a
// simulator reached by URL (`motionbench serve-sim`, or any simulator that speaks it), the robot
// emulator, or the physical robot through its bridge. The two uses differ only in defaults:
// connectRemoteSimulator (link present while any message arrives within 500 ms, lost after 2 s)
// and connectRobot (freshness from lowstate only, stale after 50 ms — DESIGN §6 — and lost within
// 100 ms, when a running episode ends `link_lost`).
// It subscribes to /g1/lowstate, /g1/root_state and /g1/wbc_status, advertises
// /console/command, and maps the lease onto commands: reset → reset, run → prepare + start
// (then waits for the episode's end in wbc_status), stop → stop. Link state is presence
// (connecting → present; stale and lost by the age of the last message; lost at once when the
// socket closes) plus problems, never exceptions: malformed, duplicate and out-of-order frames
// are counted, reported and dropped; the socket reconnects with exponential backoff. Frames go
// to the listener through a bounded queue: while the listener is busy they are coalesced, and
// beyond the bound the oldest are dropped and counted as a problem.

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
  /** Frames held while the listener is busy; beyond it the oldest are dropped (default 2000). */
  maxQueuedFrames?: number;
  /** How long a command waits for its ack, ms (default 15000; prepare carries the whole clip). */
  commandTimeoutMs?: number;
  /** acquire() waits this long for the link to be present, ms (default 5000). */
  connectTimeoutMs?: number;
  /** A root_state is paired with a lowstate whose stamp is within this, ms (default 20). */
  rootStateMaxSkewMs?: number;
  /** Problems of one code are reported at most this often, ms (default 1000); all are counted. */
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
   * listener: the frame, its publisher stamp (ns) and when it was received (performance.now(),
   * ms). For consumers that time their own processing (oneWayLatencyMs turns a stamp into a
   * latency). The frame is the one the listener will get; do not modify it.
   */
  onFrameReceived?: (frame: StateFrame, stampNs: number, receivedAtMs: number) => void;
  log?: (line: string) => void;
}

/** Link figures (the Connections panel reads `latencyMs`; the rest is for the trial runner and benchmarks). */
export interface BridgeLinkStats {
  /** Round-trip time of the last WebSocket ping, ms; null before the first pong. */
  latencyMs: number | null;
  /** Accepted lowstates over the last second, Hz. */
  stateRateHz: number;
  /** Age of the last accepted lowstate, ms; null before the first. */
  lastStateAgeMs: number | null;
  /** Tick gaps since the backend was made: ticks missing between accepted lowstates, and how many gaps. */
  missingTicks: number;
  tickGapEvents: number;
  /**
   * One-way latency publisher stamp → receipt, ms, over the last `latencyWindow` frames; null
   * unless the server declares `stamp_origin_unix_ms` (the Unix time of its stamp clock's zero).
   * Meaningful only when both machines' wall clocks agree (same host, or NTP/PTP to < 1 ms).
   */
  oneWayLatencyMs: { p50: number; p99: number; max: number; count: number } | null;
  /** Frames dropped because the listener fell behind. */
  dropped: number;
}

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

/** Server metadata key of the stamp clock's origin (Unix ms at stamp_ns = 0). */
const STAMP_ORIGIN_KEY = G1_BRIDGE_METADATA.stampOriginUnixMs;
/** Receive times kept for the rate over the last second (enough for a 5 kHz stream). */
const STATE_TIME_RING = 8192;
/**
 * Default lostMarginMs: the deadline timer's lateness it absorbs. Measured lateness of the lost
 * deadline on loopback: ~1–2 ms idle (Node timers have 1 ms granularity and start from the
 * loop's cached clock); 5 ms leaves room for a busy loop while a 100 ms robot link still
 * declares its loss no earlier than 95 ms after the last lowstate.
 */
const LOST_MARGIN_MS = 5;

interface PendingAck {
  command: CommandName;
  resolve: (message: string) => void;
  reject: (err: Error) => void;
  /** The ack deadline; null for a safety command, whose delivery loop keeps its own retry timer. */
  timer: NodeJS.Timeout | null;
}

/** The server answered a command with a refusal (its ack said no, or a refused status). */
export class CommandRefusedError extends Error {
  override readonly name = 'CommandRefusedError';
}

/** A stop/damp is written again this often until answered (ms). */
export const SAFETY_RETRY_MS = 100;
/** … at most this many times (2 s of retries). */
export const SAFETY_MAX_ATTEMPTS = 20;
/**
 * A socket whose lowstate fell silent is kept this long at least (ms), so that the stop and damp of
 * the trip that follows go out on it and their acks can come back (the server may be alive with
 * only its state stream frozen); it is dropped once no stop/damp is in flight, at the latest
 * SAFETY_RETRY_MS × SAFETY_MAX_ATTEMPTS + this after the loss.
 */
const SILENT_SOCKET_GRACE_MS = 300;
const SILENT_SOCKET_MAX_MS = SILENT_SOCKET_GRACE_MS + SAFETY_RETRY_MS * SAFETY_MAX_ATTEMPTS;

interface ActiveRun {
  runId: string;
  started: boolean;
  episodeStartNs: number | null;
  frames: number;
  lastTimeS: number;
  wallStartMs: number;
  /**
   * Set by the first stop or damp sent while the run is active (a trip, the operator, a lease
   * release): a latch — nothing that moves the robot (start) is written for this run after it.
   */
  stopRequested: { outcome: EpisodeOutcome; reason: string } | null;
  ended: boolean;
  resolve: (end: EpisodeEnd) => void;
  promise: Promise<EpisodeEnd>;
}

export class BridgeClientBackend implements Backend {
  readonly id: string;
  readonly name: string;
  private readonly opts: Required<Omit<BridgeClientOptions, 'id' | 'name' | 'log' | 'onFrameReceived'>>;
  private readonly onFrameReceived: BridgeClientOptions['onFrameReceived'];
  private readonly log: (line: string) => void;
  private _presence: Presence = 'connecting';
  private listener: BackendListener | null = null;
  private ws: WebSocket | null = null;
  private client: FoxgloveClientInstance | null = null;
  /** Bumped on every new socket: events of older sockets are ignored. */
  private generation = 0;
  private closed = false;
  private everPresent = false;
  /** This connection's serverInfo has arrived (reset on every connect). */
  private serverInfoSeen = false;
  private reconnectDelay: number;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly presenceTimer: NodeJS.Timeout;
  /** Fires when the freshness age reaches the next threshold (stale or lost); re-armed lazily. */
  private deadlineTimer: NodeJS.Timeout | null = null;
  private deadlineAt = 0;
  /** A stale/lost verdict waiting for this loop turn's I/O to be read (checkPresence). */
  private verdictCheck: NodeJS.Immediate | null = null;
  /** The freshness age at which the link is declared lost: lostAfterMs − lostMarginMs (≥ staleAfterMs). */
  private readonly lostAtAgeMs: number;

  private metadata: Record<string, string> = {};
  private readonly channels = new Map<number, Channel>();
  private readonly subscriptions = new Map<number, string>();
  private commandChannel: number | null = null;
  private controlRefused = false;
  /** true/false once the server said whether we control it; null before (or never, for bridges that do not say). */
  private controlKnown: boolean | null = null;
  /** When the link was last fresh (performance.now(), ms): the last message, or the last accepted lowstate (freshnessFrom). */
  private lastMessageAt = 0;
  /** When the last lowstate was accepted (performance.now(), ms), 0 before the first. */
  private lastStateAt = 0;
  /** Receive times of recent accepted lowstates (ring, for the rate over the last second). */
  private readonly stateTimes = new Float64Array(STATE_TIME_RING);
  private stateTimesNext = 0;
  private stateTimesFilled = 0;
  /** Smallest positive tick step seen (a source may count ticks in other units than samples). */
  private tickStep = 0;
  private readonly latency: SampleRing;
  private lastTick: number | null = null;
  private lastStampNs: number | null = null;
  private baseStampNs: number | null = null;
  private latestRoot: RootStateMsg | null = null;
  private lastStatus: WbcStatusMsg | null = null;
  private seq = 0;
  private readonly pending = new Map<number, PendingAck>();
  private lease: BackendLease | null = null;
  private run: ActiveRun | null = null;

  private queue: BackendEvent[] = [];
  private queuedFrames = 0;
  private delivering = false;
  private droppedSinceReport = 0;
  private readonly problemLast = new Map<string, number>();
  private readonly counts: BridgeClientStats = {
    connects: 0,
    received: 0,
    accepted: 0,
    malformed: 0,
    duplicate: 0,
    outOfOrder: 0,
    dropped: 0,
    malformedOther: 0,
    malformedControl: 0,
    oversized: 0,
    missingTicks: 0,
    tickGapEvents: 0,
  };
  private readonly presenceWaiters = new Set<() => void>();
  /** Removes this link from the last-resort handler's list (close()). */
  private readonly unregisterEmergencyStop: () => void;
  /** Stop/damp deliveries still waiting for an answer (the silent socket is kept while any is). */
  private safetyInFlight = 0;
  /** The drop of a silent socket, pending until its stop/damp deliveries settle. */
  private silentDrop: { timer: NodeJS.Timeout | null; sinceMs: number; ws: WebSocket } | null = null;
  private rttMs: number | null = null;
  private pingSentAt: number | null = null;
  private pingTicks = 0;

  constructor(options: BridgeClientOptions) {
    this.id = options.id ?? `remote:${options.url}`;
    this.name = options.name ?? `simulator at ${options.url}`;
    this.log = options.log ?? (() => {});
    this.onFrameReceived = options.onFrameReceived;
    this.opts = {
      url: options.url,
      staleAfterMs: options.staleAfterMs ?? 500,
      lostAfterMs: options.lostAfterMs ?? 2000,
      lostMarginMs: options.lostMarginMs ?? LOST_MARGIN_MS,
      reconnect: options.reconnect ?? true,
      reconnectInitialDelayMs: options.reconnectInitialDelayMs ?? 250,
      reconnectMaxDelayMs: options.reconnectMaxDelayMs ?? 5000,
      maxQueuedFrames: options.maxQueuedFrames ?? 2000,
      commandTimeoutMs: options.commandTimeoutMs ?? 15000,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      rootStateMaxSkewMs: options.rootStateMaxSkewMs ?? 20,
      problemIntervalMs: options.problemIntervalMs ?? 1000,
      freshnessFrom: options.freshnessFrom ?? 'any_message',
      latencyWindow: options.latencyWindow ?? 1000,
    };
    if (!(this.opts.staleAfterMs > 0 && this.opts.lostAfterMs >= this.opts.staleAfterMs)) {
      throw new RangeError(`${this.name}: need 0 < staleAfterMs ≤ lostAfterMs, got ${this.opts.staleAfterMs} and ${this.opts.lostAfterMs}`);
    }
    if (!(this.opts.lostMarginMs >= 0)) throw new RangeError(`${this.name}: lostMarginMs must be ≥ 0, got ${this.opts.lostMarginMs}`);
    this.lostAtAgeMs = Math.max(this.opts.staleAfterMs, this.opts.lostAfterMs - this.opts.lostMarginMs);
    this.latency = new SampleRing(Math.max(1, Math.floor(this.opts.latencyWindow)));
    this.reconnectDelay = this.opts.reconnectInitialDelayMs;
    // The interval pings and is a backstop; the thresholds themselves are met by the deadline
    // timer (armDeadline), so 'lost' comes lostAfterMs − lostMarginMs after the last fresh message
    // plus only the timer's own lateness (~1–2 ms on an idle loop), not plus a polling period.
    this.presenceTimer = setInterval(() => this.checkPresence(), Math.max(20, Math.min(100, this.opts.staleAfterMs / 4)));
    this.presenceTimer.unref();
    this.unregisterEmergencyStop = registerEmergencyStop({ name: this.name, stopNow: (reason) => this.emergencyStopNow(reason) });
    this.connect();
  }

  /**
   * The last resort's stop (src/services/safety/lastResort.ts): stop — and damp, for a robot —
   * written on the open socket now, synchronously, no ack awaited (the process is about to exit).
   */
  private emergencyStopNow(reason: string): void {
    const path = this.openCommandPath();
    if (!path) return;
    const cmds: WireCommand[] = [{ command: 'stop', args: { reason } }];
    if (this.capabilities.executionDomain === 'real_robot') cmds.push({ command: 'damp', args: { reason } });
    for (const cmd of cmds) {
      try {
        this.write(path.client, path.channel, cmd, ++this.seq);
      } catch {
        // The socket is going; nothing more can be done from here.
      }
    }
  }

  get presence(): Presence {
    return this._presence;
  }

  get capabilities(): BackendCapabilities {
    const m = this.metadata;
    const domain = m[G1_BRIDGE_METADATA.executionDomain] === 'real_robot' ? 'real_robot' : 'simulation';
    const rate = Number(m[G1_BRIDGE_METADATA.stateRateHz]);
    const kinds = (m[G1_BRIDGE_METADATA.bindingKinds] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s): s is WbcBindingKind => s === 'builtin' || s === 'onnx' || s === 'remote');
    const exact = m[G1_BRIDGE_METADATA.exactReset];
    return {
      executionDomain: domain,
      globalRootPosition: [...this.channels.values()].some((c) => c.topic === G1_BRIDGE_TOPICS.rootState),
      rootOrientation: true,
      contacts: m[G1_BRIDGE_METADATA.contacts] === 'true',
      jointTorque: m[G1_BRIDGE_METADATA.jointTorque] !== 'false',
      stateRateHz: Number.isFinite(rate) && rate > 0 ? rate : 50,
      exactReset: exact === undefined ? domain === 'simulation' : exact === 'true',
      bindingKinds: kinds.length > 0 ? kinds : ['remote'],
    };
  }

  stats(): BridgeClientStats {
    return { ...this.counts };
  }

  /**
   * Link figures (duck-typed by the console's ConnectionRegistry, which shows `latencyMs`):
   * ping round trip, state rate over the last second, age of the last lowstate, tick gaps and,
   * when the server declares its stamp clock's origin, one-way latency percentiles.
   */
  linkStats(): BridgeLinkStats {
    const now = performance.now();
    let n = 0;
    const cap = this.stateTimes.length;
    for (let i = 1; i <= this.stateTimesFilled; i++) {
      if (now - this.stateTimes[(this.stateTimesNext - i + cap) % cap] > 1000) break;
      n++;
    }
    const p50 = this.latency.percentile(50);
    return {
      latencyMs: this.rttMs,
      stateRateHz: n,
      lastStateAgeMs: this.lastStateAt === 0 ? null : now - this.lastStateAt,
      missingTicks: this.counts.missingTicks,
      tickGapEvents: this.counts.tickGapEvents,
      oneWayLatencyMs: p50 === null ? null : { p50, p99: this.latency.percentile(99) as number, max: this.latency.maxEver as number, count: this.latency.count },
      dropped: this.counts.dropped,
    };
  }

  /**
   * One-way latency of a frame stamped `stampNs` by the publisher, as of `atMs`
   * (performance.now() of this process, default now), ms: (wall clock now − stamp origin) −
   * stamp. Null unless the server declared `stamp_origin_unix_ms`.
   */
  oneWayLatencyMs(stampNs: number, atMs: number = performance.now()): number | null {
    const origin = this.stampOriginUnixMs;
    return origin === null ? null : performance.timeOrigin + atMs - origin - stampNs / 1e6;
  }

  /** `stamp_origin_unix_ms` of the server's metadata, parsed; null when absent or invalid. */
  get stampOriginUnixMs(): number | null {
    const v = this.metadata[STAMP_ORIGIN_KEY];
    if (v === undefined) return null;
    const n = Number(v);
    return v.trim() !== '' && Number.isFinite(n) ? n : null;
  }

  /** The latest wbc_status received, if any. */
  get wbcStatus(): WbcStatusMsg | null {
    return this.lastStatus;
  }

  setListener(listener: BackendListener | null): void {
    this.listener = listener;
    if (listener) this.kick();
    else {
      this.queue = [];
      this.queuedFrames = 0;
    }
  }

  async acquire(runId: string): Promise<BackendLease> {
    if (this.closed) throw new Error(`${this.name} is closed`);
    if (this.lease) throw new Error(`${this.name} is leased by run ${this.lease.runId}`);
    const placeholder = { runId } as BackendLease;
    this.lease = placeholder; // reserve at once: a second acquire rejects even while this one waits
    try {
      await this.whenPresent(this.opts.connectTimeoutMs);
      // A g1-bridge/1 server says whether we control it right after we advertise; give it a moment.
      for (let i = 0; i < 25 && this.controlKnown === null; i++) await new Promise((r) => setTimeout(r, 20));
      if (this.commandChannel === null) throw new Error(`${this.name}: the server does not accept commands (no ${G1_BRIDGE_TOPICS.command})`);
      if (this.controlRefused) throw new Error(`${this.name} is controlled by another client; this console can only watch`);
    } catch (err) {
      if (this.lease === placeholder) this.lease = null;
      throw err;
    }
    const lease = this.makeLease(runId);
    this.lease = lease;
    return lease;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.run && !this.run.ended) {
      await this.sendStop('stop', 'console closed the link', 'aborted_by_operator');
      this.endRun(this.run, this.run.stopRequested?.outcome ?? 'aborted_by_operator', 'console closed the link');
    }
    this.closed = true;
    this.unregisterEmergencyStop();
    clearInterval(this.presenceTimer);
    this.clearDeadline();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.failPending(new Error(`${this.name} closed`));
    const ws = this.ws;
    this.ws = null;
    this.client = null;
    this.generation++;
    if (ws) {
      await new Promise<void>((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        const t = setTimeout(() => {
          ws.terminate();
          resolve();
        }, 1000);
        ws.once('close', () => {
          clearTimeout(t);
          resolve();
        });
        if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
        else ws.close(1000, 'console closed the link');
      });
    }
    this.setPresence('disconnected');
  }

  // -------------------------------------------------------------------------------------------
  // Lease

  private makeLease(runId: string): BackendLease {
    let released = false;
    const check = (): void => {
      if (released) throw new Error(`lease ${runId} was released`);
    };
    return {
      runId,
      reset: async (initial: InitialState) => {
        check();
        if (this.run && !this.run.ended) throw new Error(`reset refused: run ${runId} is running`);
        await this.sendCommand(resetCommand(initial, { runId }));
      },
      run: async (request: RunRequest) => {
        check();
        if (this.run && !this.run.ended) throw new Error(`run ${runId} is already running`);
        let resolve!: (end: EpisodeEnd) => void;
        const promise = new Promise<EpisodeEnd>((r) => (resolve = r));
        const run: ActiveRun = {
          runId,
          started: false,
          episodeStartNs: null,
          frames: 0,
          lastTimeS: 0,
          wallStartMs: performance.now(),
          stopRequested: null,
          ended: false,
          resolve,
          promise,
        };
        this.run = run;
        try {
          await this.sendCommand(prepareCommand({ clip: request.clip, binding: request.binding, seed: request.seed, runId }));
          let permission: true | string = true;
          // Asked even when a stop latched the run meanwhile: its answer is the caller's record of
          // why nothing started (the gate's refusal); the latch blocks the start whatever it says.
          if (request.beforeStart) {
            try {
              permission = await request.beforeStart();
            } catch (err) {
              permission = `the start check failed: ${(err as Error)?.message ?? String(err)}`;
            }
          }
          if (permission !== true) run.stopRequested ??= { outcome: 'aborted_by_operator', reason: `start refused: ${permission}` };
          // The last check and the write in one turn: nothing is awaited between the gate's answer
          // and the start on the socket, and a stop/damp sent while beforeStart awaited latched
          // run.stopRequested (issue 10 item 1).
          if (!run.stopRequested && request.mayTransmit) {
            let last: true | string;
            try {
              last = request.mayTransmit('start');
            } catch (err) {
              last = `the last start check failed: ${(err as Error)?.message ?? String(err)}`;
            }
            if (last !== true) run.stopRequested = { outcome: 'aborted_by_operator', reason: `start not sent: ${last}` };
          }
          if (!run.stopRequested) {
            // Written in this turn; from now on a link loss ends the run link_lost (it may move).
            const started = this.sendCommand({ command: 'start', args: { run_id: runId } });
            run.started = true;
            try {
              await started;
            } catch (err) {
              run.started = false; // refused or unanswered: the robot did not start it
              throw err;
            }
          }
        } catch (err) {
          // Refused or unanswered: nothing ran. (A start cancelled by our own stop is not an error.)
          if (!run.stopRequested) {
            if (!run.ended) {
              run.ended = true;
              if (this.run === run) this.run = null;
            }
            throw err;
          }
        }
        if (!run.started && run.stopRequested) {
          // Stopped before it began: an empty episode with the stop's outcome.
          this.endRun(run, run.stopRequested.outcome, `${run.stopRequested.reason} (stopped before the episode started)`);
        }
        return promise;
      },
      stop: async (outcome: StopOutcome, reason: string) => {
        const run = this.run;
        const d = await this.sendStop('stop', reason, outcome);
        // Not confirmed (link down, no ack): end the episode here with the requested outcome;
        // the server ends it on its own when the controller goes away.
        if (d.answer !== 'ok' && run && !run.ended && run.started) this.endRun(run, outcome, `${reason} (stop not confirmed by the server: ${d.message})`);
      },
      release: async () => {
        if (released) return;
        const run = this.run;
        if (run && !run.ended && run.started) {
          run.stopRequested ??= { outcome: 'aborted_by_operator', reason: 'lease released' };
          await this.sendCommand({ command: 'stop', args: { reason: 'lease released', outcome: 'aborted_by_operator' } }, 3000).catch(() => {});
          await Promise.race([run.promise, new Promise((r) => setTimeout(r, 3000))]);
          if (!run.ended) this.endRun(run, 'aborted_by_operator', 'lease released');
        } else if (this.ws && this.commandChannel !== null) {
          // Lets the server drop a prepared-but-unstarted episode and its lease.
          await this.sendCommand({ command: 'stop', args: { reason: `lease ${runId} released` } }, 3000).catch(() => {});
        }
        released = true;
        if (this.lease?.runId === runId) this.lease = null;
      },
    };
  }

  private endRun(run: ActiveRun, outcome: EpisodeOutcome, reason: string): void {
    if (run.ended) return;
    run.ended = true;
    if (this.run === run) this.run = null;
    const end: EpisodeEnd = {
      runId: run.runId,
      outcome,
      reason,
      frames: run.frames,
      simSeconds: run.lastTimeS,
      wallSeconds: (performance.now() - run.wallStartMs) / 1000,
    };
    this.enqueue({ type: 'episode_end', end });
    run.resolve(end);
  }

  /**
   * Sends `stop` or `damp` whoever holds the lease (a safety trip must reach the robot at once):
   * written at once on any open socket, whatever the link's freshness, and again every
   * SAFETY_RETRY_MS until answered or the socket closes (StopDelivery says what happened; never
   * rejects). Any stop or damp latches the active run: no start follows it. `outcome` is the
   * episode's outcome as the console records it; on the wire a stop carries it only when
   * g1-bridge/1 has it (a `link_lost` stop goes out as a plain stop).
   */
  sendStop(command: 'stop' | 'damp', reason: string, outcome?: EpisodeOutcome): Promise<StopDelivery> {
    const run = this.run;
    if (run && !run.ended) run.stopRequested ??= { outcome: outcome ?? 'aborted_by_operator', reason };
    const wireOutcome = wireStopOutcome(outcome);
    const cmd: WireCommand = command === 'stop' ? { command: 'stop', args: { reason, ...(wireOutcome ? { outcome: wireOutcome } : {}) } } : { command: 'damp', args: { reason } };
    return this.deliverSafety(command, reason, cmd);
  }

  private deliverSafety(command: 'stop' | 'damp', reason: string, cmd: WireCommand): Promise<StopDelivery> {
    this.safetyInFlight++;
    return new Promise<StopDelivery>((resolve) => {
      const seqs: number[] = [];
      let attempts = 0;
      let firstSentAtMs: number | null = null;
      let retry: NodeJS.Timeout | null = null;
      let settled = false;
      const finish = (answer: StopDelivery['answer'], message: string): void => {
        if (settled) return;
        settled = true;
        if (retry) clearTimeout(retry);
        for (const q of seqs) this.pending.delete(q);
        this.safetyInFlight--;
        resolve({ command, reason, attempts, answer, message, firstSentAtMs, settledAtMs: performance.now() });
        this.dropSilentSocketIfDrained();
      };
      const attempt = (): void => {
        retry = null;
        if (settled) return;
        if (attempts >= SAFETY_MAX_ATTEMPTS) return finish(null, `no answer from ${this.name} to ${attempts} writes over ${attempts * SAFETY_RETRY_MS} ms`);
        const path = this.openCommandPath();
        if (!path) {
          return finish(null, attempts === 0 ? `not sent: no open socket to ${this.opts.url} (${this._presence})` : `the socket to ${this.opts.url} closed after ${attempts} write(s), unanswered`);
        }
        const seq = ++this.seq;
        seqs.push(seq);
        this.pending.set(seq, {
          command: cmd.command,
          resolve: (m) => finish('ok', m),
          // A refusal is an answer (retrying cannot change it); a failPending (the socket closed) is not.
          reject: (err) => (err instanceof CommandRefusedError ? finish('refused', err.message) : finish(null, `${err.message} after ${attempts} write(s)`)),
          timer: null,
        });
        try {
          this.write(path.client, path.channel, cmd, seq);
          attempts++;
          firstSentAtMs ??= performance.now();
        } catch (err) {
          return finish(null, `${command} not written: ${(err as Error).message}`);
        }
        retry = setTimeout(attempt, SAFETY_RETRY_MS);
      };
      attempt();
    });
  }

  private sendCommand(cmd: WireCommand, timeoutMs = this.opts.commandTimeoutMs): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const client = this.client;
      if (!client || this.commandChannel === null || this._presence === 'lost' || this._presence === 'connecting' || this._presence === 'disconnected') {
        reject(new Error(`${this.name} is not connected (${this._presence})`));
        return;
      }
      const channel = this.commandChannel;
      const seq = ++this.seq;
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        reject(new Error(`${cmd.command}: no answer from ${this.name} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(seq, { command: cmd.command, resolve, reject, timer });
      try {
        this.write(client, channel, cmd, seq);
      } catch (err) {
        clearTimeout(timer);
        this.pending.delete(seq);
        reject(new Error(`${cmd.command}: send failed: ${(err as Error).message}`));
      }
    });
  }

  /** Writes one command with its seq on the command channel (throws what the socket throws). */
  private write(client: FoxgloveClientInstance, channel: number, cmd: WireCommand, seq: number): void {
    client.sendMessage(channel, Buffer.from(JSON.stringify({ ...cmd, seq, contract: G1_BRIDGE_CONTRACT }), 'utf8'));
  }

  /** The client and channel when a socket is open and commands can be written on it (freshness aside). */
  private openCommandPath(): { client: FoxgloveClientInstance; channel: number } | null {
    const { client, ws, commandChannel } = this;
    return client && ws && ws.readyState === WebSocket.OPEN && commandChannel !== null ? { client, channel: commandChannel } : null;
  }

  private failPending(err: Error): void {
    for (const [seq, p] of this.pending) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new Error(`${p.command}: ${err.message}`));
      this.pending.delete(seq);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Connection

  private connect(): void {
    if (this.closed) return;
    const gen = ++this.generation;
    this.channels.clear();
    this.subscriptions.clear();
    this.commandChannel = null;
    this.controlRefused = false;
    this.controlKnown = null;
    this.metadata = {};
    this.serverInfoSeen = false;
    this.lastTick = null;
    this.lastStampNs = null;
    this.baseStampNs = null;
    this.latestRoot = null;
    this.tickStep = 0;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.opts.url, [FOXGLOVE_SUBPROTOCOL], { perMessageDeflate: false, handshakeTimeout: this.opts.connectTimeoutMs });
    } catch (err) {
      this.problem('error', 'bad_url', `cannot connect to ${this.opts.url}: ${(err as Error).message}`);
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    this.pingSentAt = null;
    ws.on('pong', () => {
      if (gen !== this.generation || this.pingSentAt === null) return;
      this.rttMs = performance.now() - this.pingSentAt;
      this.pingSentAt = null;
    });
    const live = (): boolean => gen === this.generation && !this.closed;
    // Every frame is checked before the library parses it; a bad one is a counted problem.
    const client = new FoxgloveClient({ ws: checkedServerSocket(ws, { onBadFrame: (reason) => live() && this.onBadServerFrame(reason) }) });
    this.client = client;
    client.on('open', () => {
      if (!live()) return;
      this.counts.connects++;
      this.log(`bridge client: connected to ${this.opts.url}`);
    });
    client.on('serverInfo', (info) => live() && this.onServerInfo(client, info));
    client.on('advertise', (chs) => live() && this.onAdvertise(client, chs));
    client.on('unadvertise', (ids) => {
      if (!live()) return;
      for (const id of ids) this.channels.delete(id);
      for (const [sub, topic] of this.subscriptions) if (![...this.channels.values()].some((c) => c.topic === topic)) this.subscriptions.delete(sub);
    });
    client.on('message', (m) => live() && this.onMessage(m));
    client.on('status', (s) => live() && this.onServerStatus(s));
    client.on('error', (err) => {
      if (!live()) return;
      this.log(`bridge client: ${this.opts.url}: ${err?.message ?? String(err)}`);
    });
    client.on('close', () => {
      if (!live()) return;
      this.onSocketClosed('connection closed');
    });
  }

  private onSocketClosed(why: string): void {
    this.clearDeadline();
    this.ws = null;
    this.client = null;
    this.commandChannel = null;
    this.generation++;
    this.failPending(new Error(`link to ${this.opts.url} lost (${why})`));
    if (this.everPresent) {
      this.setPresence('lost');
      this.problem('error', 'link_lost', `link to ${this.opts.url} lost: ${why}`);
    } else {
      this.problem('warn', 'connect_failed', `cannot reach ${this.opts.url} (${why}); retrying`);
    }
    const run = this.run;
    if (run && !run.ended && run.started) {
      const req = run.stopRequested;
      this.endRun(run, req ? req.outcome : 'link_lost', req ? `${req.reason} (link lost before the server confirmed the end)` : `link to ${this.opts.url} lost during the episode: ${why}`);
    }
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || !this.opts.reconnect || this.reconnectTimer) return;
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(this.opts.reconnectMaxDelayMs, this.reconnectDelay * 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }

  private onServerInfo(client: FoxgloveClientInstance, info: ServerInfo): void {
    this.metadata = { ...(info.metadata ?? {}) };
    const contract = this.metadata[G1_BRIDGE_METADATA.contract];
    if (contract !== undefined && contract !== G1_BRIDGE_CONTRACT) {
      this.problem('error', 'unsupported_contract', `${this.opts.url} speaks ${contract}, not ${G1_BRIDGE_CONTRACT}; not using it`);
      this.ws?.close(1000, 'unsupported contract');
      return;
    }
    if (!info.capabilities.includes('clientPublish')) {
      this.problem('warn', 'watch_only', `${this.opts.url} does not accept client messages: it can be watched, not controlled`);
    } else {
      this.commandChannel = client.advertise(g1BridgeChannel('command', G1_BRIDGE_TOPICS.command));
    }
    if (this.metadata[STAMP_ORIGIN_KEY] !== undefined && this.stampOriginUnixMs === null) {
      this.problem('warn', 'bad_metadata', `${this.opts.url}: ${STAMP_ORIGIN_KEY} is not a number ("${this.metadata[STAMP_ORIGIN_KEY]}"); one-way latency not measured`);
    }
    this.serverInfoSeen = true;
    this.presentWhenKnown();
  }

  /**
   * Present once the server has said what it is (serverInfo: contract, execution domain, rate)
   * and has advertised its lowstate channel — not at serverInfo alone: the channels decide the
   * capabilities (a root_state channel = a global root), and a caller that starts work on
   * presence reads them at once. The advertisement is a separate WebSocket message, which on a
   * loaded machine can arrive in a later read than serverInfo.
   */
  private presentWhenKnown(): void {
    if (!this.serverInfoSeen || this._presence === 'present') return;
    if (![...this.channels.values()].some((c) => c.topic === G1_BRIDGE_TOPICS.lowstate)) return;
    this.markFresh(performance.now());
    this.reconnectDelay = this.opts.reconnectInitialDelayMs;
    this.everPresent = true;
    this.setPresence('present');
  }

  /** The link is fresh as of `now`: re-arms the deadline and leaves stale/lost at once. */
  private markFresh(now: number): void {
    this.lastMessageAt = now;
    if (this._presence !== 'present' && this.everPresent && this.client) this.setPresence('present');
    this.armDeadline();
  }

  /**
   * Keeps one timer set for the next threshold (stale, then lost) of the current freshness age.
   * Fresh messages only move lastMessageAt; when the timer fires early (because fresher messages
   * came meanwhile) it re-arms for the remainder, so a 500 Hz stream costs one timer per
   * staleAfterMs, not one per frame.
   */
  private armDeadline(): void {
    if (this.closed || !this.client || this.lastMessageAt === 0 || this._presence === 'lost') return;
    if (this.verdictCheck) return; // a verdict is pending; it re-arms after
    const threshold = this._presence === 'stale' ? this.lostAtAgeMs : this.opts.staleAfterMs;
    const at = this.lastMessageAt + threshold;
    if (this.deadlineTimer && this.deadlineAt <= at) return; // fires no later than needed; re-arms then
    this.clearDeadline();
    this.deadlineAt = at;
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = null;
      this.checkPresence();
      this.armDeadline();
    }, Math.max(0, at - performance.now()) + 0.5);
    this.deadlineTimer.unref();
  }

  private clearDeadline(): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = null;
    if (this.verdictCheck) clearImmediate(this.verdictCheck);
    this.verdictCheck = null;
  }

  private onAdvertise(client: FoxgloveClientInstance, chs: Channel[]): void {
    const wanted: string[] = [G1_BRIDGE_TOPICS.lowstate, G1_BRIDGE_TOPICS.rootState, G1_BRIDGE_TOPICS.wbcStatus];
    for (const ch of chs) {
      if (!wanted.includes(ch.topic)) continue;
      if (ch.schemaName.startsWith('g1-bridge/') && !ch.schemaName.startsWith(`${G1_BRIDGE_CONTRACT}/`)) {
        this.problem('error', 'unsupported_contract', `${ch.topic} has schema ${ch.schemaName}; this console reads ${G1_BRIDGE_CONTRACT}; not subscribed`);
        continue;
      }
      if (ch.encoding !== 'json') {
        this.problem('error', 'unsupported_encoding', `${ch.topic} is ${ch.encoding}-encoded; ${G1_BRIDGE_CONTRACT} is JSON; not subscribed`);
        continue;
      }
      if ([...this.channels.values()].some((c) => c.topic === ch.topic)) continue;
      this.channels.set(ch.id, ch);
      this.subscriptions.set(client.subscribe(ch.id), ch.topic);
    }
    this.presentWhenKnown();
  }

  private onBadServerFrame(reason: string): void {
    this.counts.malformedControl++;
    this.problem('warn', 'malformed_server_message', `${this.opts.url}: ${reason} (${this.counts.malformedControl} refused so far)`);
  }

  private onServerStatus(s: StatusMessage): void {
    // The server marks control and command refusals (docs/G1_BRIDGE.md, "Status messages").
    if (s.id === 'g1-bridge/control-refused') this.controlRefused = true;
    if (s.id === 'g1-bridge/control-granted') this.controlRefused = false;
    if (s.id === 'g1-bridge/control-refused' || s.id === 'g1-bridge/control-granted') this.controlKnown = !this.controlRefused;
    const refused = /^g1-bridge\/refused\/(\d+)$/.exec(s.id ?? '');
    if (refused) {
      const p = this.pending.get(Number(refused[1]));
      if (p) {
        if (p.timer) clearTimeout(p.timer);
        this.pending.delete(Number(refused[1]));
        p.reject(new CommandRefusedError(s.message));
      }
    }
    const severity = s.level === StatusLevel.ERROR ? 'error' : s.level === StatusLevel.WARNING ? 'warn' : 'info';
    this.problem(severity, 'server_status', s.message, true);
  }

  private ping(): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    if (this.pingSentAt !== null && performance.now() - this.pingSentAt < 5000) return; // one in flight
    this.pingSentAt = performance.now();
    try {
      ws.ping();
    } catch {
      this.pingSentAt = null;
    }
  }

  private checkPresence(afterIo = false): void {
    if (!afterIo && ++this.pingTicks % 10 === 1) this.ping();
    // Only a live, answered connection ages; 'lost' lasts until a message or a reconnect.
    if (this.closed || !this.client || !this.everPresent || this._presence === 'lost' || this.lastMessageAt === 0) return;
    const age = performance.now() - this.lastMessageAt;
    const next: Presence = age < this.opts.staleAfterMs ? 'present' : age < this.lostAtAgeMs ? 'stale' : 'lost';
    if (next === this._presence) return;
    if (!afterIo) {
      // Judge silence only once the socket has been read. Timers run before the poll phase of a
      // loop turn, so after a pause of this process (a GC, the CPU taken by others) lowstates
      // that arrived in time would still sit unread and the link would be judged silent for the
      // console's own pause. setImmediate runs right after this turn's poll phase: a genuine
      // silence is declared < 1 ms later, a console stall does not end an episode link_lost.
      this.verdictCheck ??= setImmediate(() => {
        this.verdictCheck = null;
        this.checkPresence(true);
        this.armDeadline();
      });
      return;
    }
    this.setPresence(next);
    if (next === 'stale') this.problem('warn', 'link_stale', `nothing from ${this.opts.url} for ${Math.round(age)} ms`);
    if (next === 'lost') {
      this.problem('error', 'link_lost', `nothing from ${this.opts.url} for ${Math.round(age)} ms`);
      const run = this.run;
      if (run && !run.ended) {
        // DESIGN §6: a lost link stops the robot at once — a prepared run too (its start must
        // never follow). The stop goes out on the socket, which is still open, and is retried
        // until answered; the safety gate's stop and damp follow on the same socket.
        void this.sendStop('stop', `link lost (console side): no state for ${Math.round(age)} ms`, 'link_lost');
        if (run.started) this.endRun(run, 'link_lost', `no state from ${this.opts.url} for ${Math.round(age)} ms during the episode`);
      }
      // A silent socket is then dropped and the link reconnects — but only once the stop/damp
      // deliveries on it have settled (or their retries ran out), and not before a short grace
      // for the trip's own stop and damp to arrive (the gate trips on this presence event).
      this.scheduleSilentDrop();
    }
  }

  private scheduleSilentDrop(): void {
    const ws = this.ws;
    if (!ws || this.silentDrop) return;
    this.silentDrop = { timer: null, sinceMs: performance.now(), ws };
    this.dropSilentSocketIfDrained();
  }

  /**
   * Drops the silent socket once SILENT_SOCKET_GRACE_MS passed and no stop/damp is in flight on it
   * (at the latest SILENT_SOCKET_MAX_MS after the loss); until then re-checks when that can change.
   */
  private dropSilentSocketIfDrained(): void {
    const d = this.silentDrop;
    if (!d) return;
    if (d.timer) clearTimeout(d.timer);
    d.timer = null;
    if (d.ws !== this.ws || this._presence !== 'lost') {
      // Another socket by now, or this one came back to life (state flows again): nothing to drop.
      this.silentDrop = null;
      return;
    }
    const age = performance.now() - d.sinceMs;
    const waitMs = age < SILENT_SOCKET_GRACE_MS ? SILENT_SOCKET_GRACE_MS - age : this.safetyInFlight > 0 ? SILENT_SOCKET_MAX_MS - age : 0;
    if (waitMs > 0) {
      d.timer = setTimeout(() => this.dropSilentSocketIfDrained(), waitMs);
      d.timer.unref();
      return;
    }
    this.silentDrop = null;
    const ws = d.ws;
    this.onSocketClosed('silent');
    try {
      ws.close(1001, 'no state');
    } catch {
      ws.terminate();
    }
    setTimeout(() => ws.terminate(), 1000).unref();
  }

  private setPresence(p: Presence): void {
    if (p === this._presence) return;
    this._presence = p;
    this.enqueue({ type: 'presence', presence: p });
    if (p === 'present') for (const w of [...this.presenceWaiters]) w();
  }

  /** Resolves once the link is present; rejects naming the presence after `timeoutMs`. */
  whenPresent(timeoutMs: number): Promise<void> {
    if (this._presence === 'present') return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(t);
        this.presenceWaiters.delete(done);
        resolve();
      };
      const t = setTimeout(() => {
        this.presenceWaiters.delete(done);
        reject(new Error(`${this.name} is not connected (${this._presence} after ${timeoutMs} ms)`));
      }, timeoutMs);
      this.presenceWaiters.add(done);
    });
  }

  // -------------------------------------------------------------------------------------------
  // Messages

  private onMessage(m: MessageData): void {
    const topic = this.subscriptions.get(m.subscriptionId);
    if (topic === undefined) return;
    if (this.opts.freshnessFrom === 'any_message') this.markFresh(performance.now());
    switch (topic) {
      case G1_BRIDGE_TOPICS.lowstate:
        return this.onLowState(m.data);
      case G1_BRIDGE_TOPICS.rootState: {
        const r = decodeRootState(m.data);
        if (!r.ok) {
          this.counts.malformedOther++;
          this.problem('warn', 'malformed_root_state', `root_state dropped (${this.counts.malformedOther} malformed non-lowstate messages): ${r.reason}`);
          return;
        }
        this.latestRoot = r.value;
        return;
      }
      case G1_BRIDGE_TOPICS.wbcStatus: {
        const s = decodeWbcStatus(m.data);
        if (!s.ok) {
          this.counts.malformedOther++;
          this.problem('warn', 'malformed_wbc_status', `wbc_status dropped (${this.counts.malformedOther} malformed non-lowstate messages): ${s.reason}`);
          return;
        }
        return this.onWbcStatus(s.value);
      }
    }
  }

  private onLowState(data: ArrayBufferView): void {
    const receivedAt = performance.now();
    this.counts.received++;
    const d = decodeLowState(data);
    if (!d.ok) {
      this.counts.malformed++;
      if (d.code === 'oversized') this.counts.oversized++;
      this.problem('warn', d.code === 'oversized' ? 'oversized_frame' : 'malformed_frame', `lowstate dropped (${this.counts.malformed} malformed so far): ${d.reason}`);
      return;
    }
    const low = d.value;
    if (this.lastTick !== null) {
      if (low.tick === this.lastTick) {
        this.counts.duplicate++;
        this.problem('warn', 'duplicate_frame', `lowstate tick ${low.tick} received twice; dropped (${this.counts.duplicate} duplicates so far)`);
        return;
      }
      if (low.tick < this.lastTick || (this.lastStampNs !== null && low.stamp_ns < this.lastStampNs)) {
        this.counts.outOfOrder++;
        this.problem('warn', 'out_of_order_frame', `lowstate tick ${low.tick} (stamp ${low.stamp_ns}) arrived after tick ${this.lastTick}; dropped (${this.counts.outOfOrder} out of order so far)`);
        return;
      }
    }
    if (this.lastTick !== null) {
      // A step larger than the smallest step seen means samples never arrived (dropped by the
      // bridge, the network or the publisher's own send buffer).
      const step = low.tick - this.lastTick;
      if (this.tickStep === 0 || step < this.tickStep) this.tickStep = step;
      const missing = Math.round(step / this.tickStep) - 1;
      if (missing > 0) {
        this.counts.missingTicks += missing;
        this.counts.tickGapEvents++;
        this.problem('warn', 'tick_gap', `lowstate ticks ${this.lastTick} → ${low.tick}: ${missing} samples missing (${this.counts.missingTicks} in ${this.counts.tickGapEvents} gaps so far)`);
      }
    }
    this.lastTick = low.tick;
    this.lastStampNs = low.stamp_ns;
    this.lastStateAt = receivedAt;
    this.stateTimes[this.stateTimesNext] = receivedAt;
    this.stateTimesNext = (this.stateTimesNext + 1) % this.stateTimes.length;
    if (this.stateTimesFilled < this.stateTimes.length) this.stateTimesFilled++;
    const origin = this.stampOriginUnixMs;
    if (origin !== null) this.latency.add(performance.timeOrigin + receivedAt - origin - low.stamp_ns / 1e6);
    if (this.opts.freshnessFrom === 'lowstate') this.markFresh(receivedAt);
    this.baseStampNs ??= low.stamp_ns;
    const root = this.latestRoot && Math.abs(this.latestRoot.stamp_ns - low.stamp_ns) <= this.opts.rootStateMaxSkewMs * 1e6 ? this.latestRoot : null;
    const run = this.run && !this.run.ended && this.run.episodeStartNs !== null ? this.run : null;
    const t0 = run ? (run.episodeStartNs as number) : this.baseStampNs;
    const frame = frameFromLowState(low, root, (low.stamp_ns - t0) / 1e9);
    if (run) {
      run.frames++;
      run.lastTimeS = frame.timeS;
    }
    this.counts.accepted++;
    if (this.onFrameReceived) {
      try {
        this.onFrameReceived(frame, low.stamp_ns, receivedAt);
      } catch (err) {
        this.log(`bridge client: onFrameReceived failed: ${(err as Error)?.message ?? String(err)}`);
      }
    }
    // A frame belongs to a run only while that episode runs (its clock is the episode's); frames
    // before the start or after the end carry no run id.
    this.enqueue({ type: 'frames', runId: run ? run.runId : '', frames: [frame] });
  }

  private onWbcStatus(s: WbcStatusMsg): void {
    this.lastStatus = s;
    if (s.ack && s.ack.seq !== null) {
      const p = this.pending.get(s.ack.seq);
      if (p) {
        if (p.timer) clearTimeout(p.timer);
        this.pending.delete(s.ack.seq);
        if (s.ack.ok) p.resolve(s.ack.message);
        else p.reject(new CommandRefusedError(`${s.ack.command ?? p.command} refused by ${this.name} (${s.ack.code}): ${s.ack.message}`));
      }
    }
    const run = this.run;
    if (!run || run.ended || s.run_id !== run.runId) return;
    if (s.state === 'tracking') {
      run.episodeStartNs ??= s.episode_start_ns ?? s.stamp_ns ?? this.lastStampNs ?? 0;
      return;
    }
    const startedHere = run.started || (s.ack?.command === 'start' && s.ack.ok);
    if (!startedHere && run.episodeStartNs === null) return;
    if (s.state === 'done' || s.state === 'damping' || s.state === 'fault' || s.state === 'idle') {
      const outcome: EpisodeOutcome = s.outcome ?? (s.state === 'fault' ? 'infrastructure_error' : (run.stopRequested?.outcome ?? 'aborted_by_operator'));
      this.endRun(run, outcome, s.reason ?? `wbc state ${s.state}`);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Delivery to the listener (bounded queue, coalescing, drops counted)

  private enqueue(ev: BackendEvent): void {
    if (!this.listener) return;
    if (ev.type === 'frames') {
      const tail = this.queue[this.queue.length - 1];
      if (tail && tail.type === 'frames' && tail.runId === ev.runId) tail.frames.push(...ev.frames);
      else this.queue.push({ type: 'frames', runId: ev.runId, frames: [...ev.frames] });
      this.queuedFrames += ev.frames.length;
      while (this.queuedFrames > this.opts.maxQueuedFrames) {
        const i = this.queue.findIndex((e) => e.type === 'frames' && e.frames.length > 0);
        if (i < 0) break;
        const e = this.queue[i] as Extract<BackendEvent, { type: 'frames' }>;
        const n = Math.min(e.frames.length, this.queuedFrames - this.opts.maxQueuedFrames);
        e.frames.splice(0, n);
        if (e.frames.length === 0) this.queue.splice(i, 1);
        this.queuedFrames -= n;
        this.counts.dropped += n;
        this.droppedSinceReport += n;
      }
    } else {
      this.queue.push(ev);
    }
    this.kick();
  }

  private kick(): void {
    if (this.delivering || !this.listener || this.queue.length === 0) return;
    this.delivering = true;
    void (async () => {
      try {
        while (this.listener && (this.queue.length > 0 || this.droppedSinceReport > 0)) {
          const batch = this.queue;
          this.queue = [];
          this.queuedFrames = 0;
          if (this.droppedSinceReport > 0) {
            const n = this.droppedSinceReport;
            this.droppedSinceReport = 0;
            batch.unshift({
              type: 'problem',
              problem: { severity: 'warn', code: 'frames_dropped', message: `${n} frames dropped: the listener fell behind the stream (${this.counts.dropped} in all)`, atMs: Date.now() },
            });
          }
          try {
            await this.listener(batch);
          } catch (err) {
            this.log(`bridge client: listener failed: ${(err as Error)?.message ?? String(err)}`);
          }
        }
      } finally {
        this.delivering = false;
      }
    })();
  }

  private problem(severity: Problem['severity'], code: string, message: string, always = false): void {
    const now = Date.now();
    const last = this.problemLast.get(code);
    if (!always && last !== undefined && now - last < this.opts.problemIntervalMs) return;
    this.problemLast.set(code, now);
    this.log(`bridge client: ${severity}: ${code}: ${message}`);
    this.enqueue({ type: 'problem', problem: { severity, code, message, atMs: now } });
  }
}

/** Creates the backend for a simulator and starts connecting (presence 'connecting' until the server answers). */
export function connectRemoteSimulator(options: BridgeClientOptions): BridgeClientBackend {
  return new BridgeClientBackend(options);
}

/** Link thresholds of the robot (DESIGN §6, issue 6 item 10). */
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

