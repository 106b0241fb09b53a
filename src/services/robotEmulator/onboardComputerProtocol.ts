import type { ControlObservation, ControlReference } from '../../domain/wbc/controller';
import type { PhysicsProfile } from '../../domain/robot/physicsProfile';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { BackendNeed } from '../../domain/wbc/trackingPolicy';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { VelocityRobotState } from '../../domain/wbc/velocityPolicy';
import type { StandingPolicyIdentity } from '../wbc/standingPolicy';

// The messages between the robot emulator's main thread (the G1's motor board: the 500 Hz loop
// and its lowstate stream) and its onboard-computer worker (the robot PC running the policy).
//
// Two channels, because they are read differently:
//   - the worker itself (postMessage / 'message' events, asynchronous): start-up, load, unload;
//   - a MessagePort pair handed over at start-up, read by the main thread only with
//     receiveMessageOnPort after an Atomics.wait on `signal`: reset and step, which the 500 Hz loop
//     needs answered within its turn. Each call carries a seq; a reply to an earlier call (one
//     that timed out) is discarded, never taken for this one's.

/** Main → worker, on the worker. */
export type ToOnboard =
  | { type: 'init'; steps: MessagePortLike; signal: SharedArrayBuffer }
  | { type: 'load'; id: number; binding: WbcBinding; profile: RobotProfile }
  /** The standing controller (a velocity policy folder), held beside the binding's policy. */
  | { type: 'load_standing'; id: number; policyPath: string }
  | { type: 'unload' };

/** Worker → main, on the worker. */
export type FromOnboard =
  | { type: 'ready'; /** The onboard thread's Linux thread id (null elsewhere). */ tid: number | null }
  | {
      type: 'loaded';
      id: number;
      physics: PhysicsProfile | null;
      needs: BackendNeed[];
      loadMs: number;
      /** The worker thread's nice while it loaded and now, for the steps (null: not readable). */
      loadNice: number | null;
      stepNice: number | null;
      /** The SCHED_FIFO priority the thread steps at (null: SCHED_OTHER, at stepNice). */
      stepRtPriority: number | null;
      /** The onboard thread's Linux thread id (null elsewhere). */
      tid: number | null;
    }
  | { type: 'load_failed'; id: number; message: string }
  | {
      type: 'standing_loaded';
      id: number;
      identity: StandingPolicyIdentity;
      kp: Float64Array;
      kd: Float64Array;
      loadMs: number;
    };

/** Main → worker, on the step port. `reference` is sent when it changed since the last step (null: the same). */
export type StepCall =
  | { type: 'reset'; seq: number }
  | { type: 'step'; seq: number; obs: Omit<ControlObservation, 'reference'>; reference: ControlReference | null }
  /** The standing controller: reset its histories from `state`, or step it on `state`. */
  | { type: 'standing_reset'; seq: number; state: VelocityRobotState }
  | { type: 'standing_step'; seq: number; state: VelocityRobotState };

/** Worker → main, on the step port; then `signal[0]` is incremented and notified. */
export type StepReply =
  | { seq: number; ok: true; jointTargetRad: Float64Array; kp: Float64Array | null; kd: Float64Array | null }
  | { seq: number; ok: false; message: string };

/** The port type without importing node:worker_threads into a type file. */
export interface MessagePortLike {
  postMessage(value: unknown): void;
}
