import type { StateFrame } from '../../domain/robot/stateFrame';
import type { LinkClock } from '../robotLink/linkClock';

// The bridge client's options, their defaults (a simulator's), and the robot's link thresholds.

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

/** The options with every default filled in (the URL included). */
export type ResolvedBridgeClientOptions = Required<
  Omit<BridgeClientOptions, 'id' | 'name' | 'log' | 'onFrameReceived' | 'clock'>
>;

/**
 * Default lostMarginMs: the deadline timer's lateness it absorbs. Measured lateness of the lost
 * deadline on loopback: ~1–2 ms idle (Node timers have 1 ms granularity and start from the
 * loop's cached clock); 5 ms leaves room for a busy loop while a 100 ms robot link still
 * declares its loss no earlier than 95 ms after the last lowstate.
 */
const LOST_MARGIN_MS = 5;

/** Fills in the defaults. */
export function resolveBridgeClientOptions(options: BridgeClientOptions): ResolvedBridgeClientOptions {
  return {
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
