import type { EpisodeOutcome } from '../../domain/backend/backend';
import type { RunnerMotionSwitcherStatus } from '../../domain/bridge/g1BridgeContract';
import type { StateFrame } from '../../domain/robot/stateFrame';
import type { AfterClip, RunnerMode } from '../../domain/g1Runner/g1RunnerSafety';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';

// Messages between the runner's bridge thread (g1Runner.ts: the console's WebSocket) and its
// real-time thread (g1RunnerWorker.ts: DDS, the safety reducer, the 500 Hz LowCmd loop).

export interface RunnerWorkerInit {
  interfaceName: string;
  domainId: number;
  afterClip: AfterClip;
  /** The standing controller's policy folder (unitree_rl_lab velocity); required with afterClip standing_policy. */
  standingPolicyPath: string | null;
  modelFile?: string;
  /**
   * A Unix-domain socket this thread listens on for the interlock keeper's e-stop lines
   * (`ESTOP <detail>\n`, docs/G1_RUNNER.md "Interlock e-stop"); null: the runner does not hear
   * the interlock.
   */
  interlockTripSocket: string | null;
  /** How long `prepare` waits for the motion switcher's answer to CheckMode, ms. */
  motionSwitcherTimeoutMs: number;
  /** process.hrtime.bigint() at stamp_ns 0 (the clock is shared by every thread of the process). */
  originMonoNs: bigint;
}

export type ToRunnerWorker =
  | { type: 'prepare'; id: number; runId: string; clip: MotionClip; binding: WbcBinding }
  | { type: 'start'; id: number; runId: string; startNs: number }
  | { type: 'stop' | 'hold' | 'damp'; reason: string }
  | { type: 'console' }
  | { type: 'close' };

export interface RunnerWorkerStats {
  lowCmdSent: number;
  lowStateReceived: number;
  crcErrors: number;
  /** LowCmd period figures over the last report interval, ms. */
  periodMeanMs: number;
  periodMaxMs: number;
  periodP99Ms: number;
  mode: RunnerMode;
  /** The wireless remote's stop combination is held in the latest lowstate. */
  remoteStopHeld: boolean;
}

export type FromRunnerWorker =
  | { type: 'ready' }
  | { type: 'fatal'; message: string }
  | { type: 'reply'; id: number; ok: boolean; message: string }
  | { type: 'frame'; frame: StateFrame }
  | { type: 'episode_end'; runId: string; outcome: EpisodeOutcome; reason: string; frames: number; simSeconds: number }
  | { type: 'mode'; mode: RunnerMode; cause: string }
  | { type: 'trace'; line: string }
  | { type: 'motion_switcher'; status: RunnerMotionSwitcherStatus }
  | { type: 'stats'; stats: RunnerWorkerStats };
