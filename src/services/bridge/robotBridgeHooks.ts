import type { RunnerStatus } from '../../domain/bridge/g1BridgeContract';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';

/** What the bridge server needs from a live robot backend (robot mode; see bridgeServer.ts). */
export interface RobotBridgeHooks {
  /** Unix time, ms (may be fractional), of stamp_ns = 0. */
  stampOriginUnixMs: number;
  /** The robot clock now, integer ns since the origin. */
  nowNs(): number;
  /** Loads the clip and binding for `runId` (a prepare); rejects with the reason to refuse it. */
  prepare(runId: string, clip: MotionClip, binding: WbcBinding): Promise<void>;
  /** stamp_ns of time 0 of the episode lease.run() has just begun (called right after run()); null if it did not begin. */
  episodeStartNs(runId: string): number | null;
  /** Damps the motors at once (every damp command, before any episode is stopped). */
  damp(reason: string): void;
  /** Holds the current pose (every hold command, after the episode, if any, is stopped). */
  hold(reason: string): void;
  /** True while the motors are damped: an episode ending then leaves the state `damping`. */
  isDamping(): boolean;
  /** Optional: true while a runner's declared standing controller drives the motors (an episode ending then leaves `standing`). */
  isStanding?(): boolean;
  /** Optional: the runner's own state, sent as `wbc_status.runner` with every status. */
  runnerStatus?(): RunnerStatus;
}
