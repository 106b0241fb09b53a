import type { MotionClip } from '../motion/motionClip';
import type { WbcBinding, WbcBindingKind } from '../wbc/wbcBinding';
import type { StateFrame } from './stateFrame';

// One interface for every execution substrate (embedded MuJoCo, remote simulator, real robot),
// modelled on Foxglove's Player: a single listener receives batches and the backend waits for
// the listener's promise before delivering more (backpressure), capabilities are declared up
// front, and link state is reported as presence + problems — never as thrown errors.

export type ExecutionDomain = 'simulation' | 'real_robot';

export type EpisodeOutcome =
  | 'completed'
  | 'hard_failure'
  | 'intervention'
  | 'estop'
  | 'link_lost'
  | 'aborted_by_operator'
  | 'infrastructure_error';

/** Only infrastructure errors may be retried automatically (DESIGN §3). */
export const isRetryableOutcome = (o: EpisodeOutcome): boolean => o === 'infrastructure_error';

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

export interface InitialState {
  rootPosM: readonly [number, number, number];
  rootQuatWxyz: readonly [number, number, number, number];
  jointPosRad: readonly number[];
  jointVelRadS?: readonly number[];
  /** Lower the root so the lowest foot contact point touches the floor. */
  placeOnFloor: boolean;
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
  | { type: 'problem'; problem: Problem }
  | { type: 'frames'; runId: string; frames: StateFrame[] }
  | { type: 'episode_end'; end: EpisodeEnd };

/**
 * Receives batches of events. The backend does not deliver the next batch until the returned
 * promise settles; meanwhile it coalesces (simulators pause, robot links queue up to a bound
 * and count what they drop as a problem).
 */
export type BackendListener = (events: BackendEvent[]) => Promise<void>;

export interface BackendLease {
  readonly runId: string;
  reset(initial: InitialState): Promise<void>;
  /** Runs the clip to its end or until stopped; resolves with how the episode ended. */
  run(request: RunRequest): Promise<EpisodeEnd>;
  /** Ends the running episode at once with the given outcome. */
  stop(outcome: Extract<EpisodeOutcome, 'aborted_by_operator' | 'estop' | 'intervention'>, reason: string): Promise<void>;
  release(): Promise<void>;
}

export interface Backend {
  readonly id: string;
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  readonly presence: Presence;
  setListener(listener: BackendListener | null): void;
  /** Exclusive use for one episode, bound to its run_id. Rejects if already leased. */
  acquire(runId: string): Promise<BackendLease>;
  close(): Promise<void>;
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
