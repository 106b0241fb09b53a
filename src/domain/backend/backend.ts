import type { WbcStatusMsg } from '../bridge/g1BridgeContract';
import type { MotionClip } from '../motion/motionClip';
import type { WbcBinding, WbcBindingKind } from '../wbc/wbcBinding';
import type { EpisodeOutcome } from '../episode/episodeOutcome';
import type { InitialState } from '../episode/initialState';
import type { BackendProblemCode } from './problemCodes';
import type { StateFrame } from '../robot/stateFrame';

// One interface for every execution substrate (embedded MuJoCo, remote simulator, real robot),
// modelled on Foxglove's Player: a single listener receives batches and the backend waits for
// the listener's promise before delivering more (backpressure), capabilities are declared up
// front, and link state is reported as presence + problems — never as thrown errors. A backend
// reached over a robot link declares so (`robotLink`) and offers the RobotBackend surface: an
// unleased stop and damp, and its link figures. Consumers read that declaration, never probe for
// methods (robotBackendOf).

export type ExecutionDomain = 'simulation' | 'real_robot';

// How an episode ends and the state it starts from are the backend's vocabulary and also the
// g1-bridge/1 wire's (src/domain/bridge), which sits below the backend: both are declared in
// src/domain/episode and re-exported here for the backend's users.
export { isRetryableOutcome, type EpisodeOutcome } from '../episode/episodeOutcome';
export type { InitialState } from '../episode/initialState';

export interface BackendCapabilities {
  executionDomain: ExecutionDomain;
  /** A global root position (simulator, or a robot with motion capture). */
  globalRootPosition: boolean;
  /** A root orientation (simulator; a robot's IMU). */
  rootOrientation: boolean;
  contacts: boolean;
  jointTorque: boolean;
  /** Rate of the state stream, Hz. */
  stateRateHz: number;
  /** `reset(initialState)` puts the robot in an exact state (simulators only). */
  exactReset: boolean;
  bindingKinds: WbcBindingKind[];
}

export type Presence = 'disconnected' | 'connecting' | 'present' | 'stale' | 'lost';

export interface Problem {
  severity: 'error' | 'warn' | 'info';
  code: string;
  message: string;
  /** Wall-clock ms since epoch. */
  atMs: number;
}

/**
 * A problem a backend reports: its code is one of the catalogue's (src/domain/backend/problemCodes.ts),
 * which also says whether it is a condition (withdrawn by a `problem_cleared` event when it ends)
 * or an incident.
 */
export interface BackendProblem extends Problem {
  code: BackendProblemCode;
}

export interface RunRequest {
  clip: MotionClip;
  binding: WbcBinding;
  /** Seed for anything stochastic (sensor noise, perturbations); recorded with the episode. */
  seed: number;
  /**
   * Asked after the backend has the clip prepared and right before the start goes out (a real
   * robot's last permission check: the safety gate). `true` starts; a string refuses with that
   * reason — nothing starts and run() resolves `aborted_by_operator` with the reason and 0 frames.
   * Backends that prepare and start in one step may ask it just before starting.
   */
  beforeStart?: () => Promise<true | string>;
  /**
   * The very last permission, asked synchronously right before the start is written, with nothing
   * awaited between the answer and the write (a real robot's safety gate: anything may have tripped
   * while beforeStart awaited). `true` writes the start; a string refuses as beforeStart does.
   * Backends that have no such write (a simulator in this process) ask it right before starting.
   */
  mayTransmit?: (command: 'start') => true | string;
}

export interface EpisodeEnd {
  runId: string;
  outcome: EpisodeOutcome;
  reason: string;
  frames: number;
  simSeconds: number;
  wallSeconds: number;
}

export type BackendEvent =
  | { type: 'presence'; presence: Presence }
  | { type: 'problem'; problem: BackendProblem }
  /** A condition reported earlier under `code` has ended (wall-clock ms since epoch). */
  | { type: 'problem_cleared'; code: BackendProblemCode; atMs: number }
  | { type: 'frames'; runId: string; frames: StateFrame[] }
  | { type: 'episode_end'; end: EpisodeEnd };

/**
 * Receives batches of events. The backend does not deliver the next batch until the returned
 * promise settles; meanwhile it coalesces (simulators pause, robot links queue up to a bound
 * and count what they drop as a problem).
 */
export type BackendListener = (events: BackendEvent[]) => Promise<void>;

/**
 * A backend's stream has exactly one owner (in the console's services, the BackendHub that fans it
 * out): setting a listener while one is set is refused with this error, never a silent replacement
 * that would leave the first owner waiting for frames that no longer come.
 */
export class ListenerTakenError extends Error {
  readonly backendId: string;
  readonly backendName: string;
  constructor(backend: { readonly id: string; readonly name: string }) {
    super(
      `backend "${backend.name}" (${backend.id}) has a listener already: its stream has one owner, so subscribe through that owner, or release it with setListener(null) first`,
    );
    this.name = 'ListenerTakenError';
    this.backendId = backend.id;
    this.backendName = backend.name;
  }
}

/**
 * The one-owner rule of Backend.setListener, for every implementation: returns the listener to
 * keep (`next`), or throws ListenerTakenError when `next` would replace a listener still set.
 * `null` always releases.
 */
export function claimListener(
  backend: { readonly id: string; readonly name: string },
  current: BackendListener | null,
  next: BackendListener | null,
): BackendListener | null {
  if (next !== null && current !== null) throw new ListenerTakenError(backend);
  return next;
}

export interface BackendLease {
  readonly runId: string;
  reset(initial: InitialState): Promise<void>;
  /** Runs the clip to its end or until stopped; resolves with how the episode ended. */
  run(request: RunRequest): Promise<EpisodeEnd>;
  /** Ends the running episode at once with the given outcome. */
  stop(
    outcome: Extract<EpisodeOutcome, 'aborted_by_operator' | 'estop' | 'intervention'>,
    reason: string,
  ): Promise<void>;
  release(): Promise<void>;
}

export interface Backend {
  readonly id: string;
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  readonly presence: Presence;
  /**
   * Declared by a backend reached over a robot link (g1-bridge/1: the robot, the robot emulator, a
   * simulator served under the contract): present exactly when the backend implements RobotBackend.
   * Absent for a backend in this process (the embedded simulator).
   */
  readonly robotLink?: RobotLinkCapabilities;
  /**
   * Sets the one listener of the backend's events, or releases it with `null`. Throws
   * ListenerTakenError while another listener is set (release it first).
   */
  setListener(listener: BackendListener | null): void;
  /** Exclusive use for one episode, bound to its run_id. Rejects if already leased. */
  acquire(runId: string): Promise<BackendLease>;
  close(): Promise<void>;
}

/**
 * What a robot link may be used for now: `runClips` — it accepts prepare/start from this console;
 * `watchOnly` — state only (no command channel, another client controls it, or not connected yet),
 * so calibration and live metrics work but a trial's acquire is refused with the reason.
 */
export type RobotControl = 'runClips' | 'watchOnly';

/** The declaration of a robot link (Foxglove Player-style: read by consumers, never probed for). */
export interface RobotLinkCapabilities {
  readonly control: RobotControl;
  /**
   * The server is the robot emulator and accepts its `/emulator/control` channel (declared in its
   * serverInfo metadata, `emulator_control`): the console may play the human beside the robot
   * (human_reset). False for a real robot's bridge.
   */
  readonly emulatorControl: boolean;
  /**
   * Set when the link can only ever be watched, whatever the connection's state: no runner on the
   * robot can prepare, start or stop a clip (a ROS 2 robot through foxglove_bridge, docs/ROS2_LINK.md).
   * The sentence says why; acquire() refuses with it and the gate driver refuses such a link for a
   * real-robot trial (WatchOnlyLinkError). Absent for a g1-bridge/1 link, whose `control` may change.
   */
  readonly watchOnlyReason?: string;
}

/** Link figures of a robot link (the Connections panel shows `latencyMs`; the rest is for trials and benchmarks). */
export interface RobotLinkStats {
  /** Round-trip time of the last ping, ms; null before the first answer. */
  latencyMs: number | null;
  /** Accepted state frames over the last second, Hz. */
  stateRateHz: number;
  /** Age of the last accepted state frame, ms; null before the first. */
  lastStateAgeMs: number | null;
  /** Tick gaps since the backend was made: ticks missing between accepted frames, and how many gaps. */
  missingTicks: number;
  tickGapEvents: number;
  /**
   * One-way latency publisher stamp → receipt, ms, over the most recent frames; null unless the
   * server declares its stamp clock's origin. Meaningful only when both machines' clocks agree.
   */
  oneWayLatencyMs: { p50: number; p99: number; max: number; count: number } | null;
  /** Frames dropped because the listener fell behind. */
  dropped: number;
}

/**
 * A backend behind a robot link. Beyond Backend it offers what a trip needs whoever holds the
 * lease (DESIGN §6: any trip sends stop and damp at once): `sendStop` and `damp` are written at
 * once whatever the link's freshness and retried until answered; they never reject — the
 * StopDelivery says what happened. Any stop or damp latches the active run: no start follows it.
 */
export interface RobotBackend extends Backend {
  readonly robotLink: RobotLinkCapabilities;
  /**
   * `outcome` is the episode's outcome as the console records it; on the wire a stop carries it
   * only when the link's contract has it (g1-bridge/1 sends a `link_lost` stop as a plain stop).
   */
  sendStop(reason: string, outcome?: EpisodeOutcome): Promise<StopDelivery>;
  damp(reason: string): Promise<StopDelivery>;
  linkStats(): RobotLinkStats;
  /** The robot controller's latest `/g1/wbc_status` (idle, damping, tracking, fault…); null before the first. */
  readonly wbcStatus: WbcStatusMsg | null;
}

/** The backend as a RobotBackend when it declares a robot link (`robotLink`), else null. */
export function robotBackendOf(backend: Backend): RobotBackend | null {
  // The declaration is the contract: a backend that declares a robot link implements RobotBackend.
  return backend.robotLink !== undefined ? (backend as RobotBackend) : null;
}

/** A backend was offered where a robot link that can stop the robot is required. */
export class NotARobotBackendError extends Error {
  override readonly name = 'NotARobotBackendError';
  constructor(
    readonly backendName: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * A robot link that can only be watched was asked to run a clip (it declares `watchOnlyReason`):
 * nothing was sent to the robot.
 */
export class WatchOnlyLinkError extends Error {
  override readonly name = 'WatchOnlyLinkError';
  constructor(
    readonly backendName: string,
    readonly reason: string,
  ) {
    super(`${backendName}: ${reason}`);
  }
}

/** Why `backend` can never run a clip (its declared `watchOnlyReason`), or null. */
export function watchOnlyRefusal(backend: Backend): string | null {
  return robotBackendOf(backend)?.robotLink.watchOnlyReason ?? null;
}

/** Why `backend` cannot carry a real-robot trial's stop and damp, or null when it can. */
export function stopPathRefusal(backend: Backend): string | null {
  return robotBackendOf(backend)
    ? null
    : `${backend.name} declares no robot link: it cannot send stop or damp, so a trip could not stop the robot; real-robot trials need a robot link (a g1-bridge/1 robot or motionbench emulate-robot)`;
}

/**
 * How a stop or damp reached the robot (DESIGN §6: a trip sends stop and damp at once). It is
 * written on the socket as long as one is open, whatever the link's freshness, and written again
 * at short intervals until the server answers it, the socket closes, or the retries run out. The trace keeps this record: what was sent, how often, and what came back.
 */
export interface StopDelivery {
  command: 'stop' | 'damp';
  reason: string;
  /** Times it was written on a socket (0: no socket was open). */
  attempts: number;
  /** The server's answer: acknowledged (`ok`), refused (`refused`, with its message), or none. */
  answer: 'ok' | 'refused' | null;
  /** The ack or refusal text, or why no answer came. */
  message: string;
  /** performance.now() of the first write and of the answer (or of giving up), ms. */
  firstSentAtMs: number | null;
  settledAtMs: number;
}
