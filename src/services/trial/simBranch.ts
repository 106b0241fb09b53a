import type { InitialState } from '../../domain/backend/backend';
import type { StateFrame } from '../../domain/robot/stateFrame';
import { MB_METRICS_1, type EpisodeMetrics } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { CalibrationRecord, EpisodeRecord } from '../../domain/trace/records';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { EmbeddedSimulator, SimEpisodeEnd } from '../sim/embeddedSimulator';
import { recordSimEpisode, type RecordSimEpisodeRequest } from '../sim/recordSimEpisode';
import { runSimEpisode } from '../sim/runSimEpisode';

// The simulation side of a matched pair (DESIGN §3): the embedded simulator started from the
// calibration's simulator initial state, recorded into the pair's simulation branch; and the
// settle run that gives residual (a), the simulator's settled state vs the measurement.

/** How long the simulator holds the measured pose before its state counts as settled, s. */
export const SETTLE_SECONDS = 1;

export function initialStateOf(cal: CalibrationRecord): InitialState {
  const s = cal.simulatorInitialState;
  if (!s) throw new RangeError('the calibration has no simulator initial state (it was captured without a clip)');
  return {
    rootPosM: [s.rootPosM[0], s.rootPosM[1], s.rootPosM[2]],
    rootQuatWxyz: [s.rootQuatWxyz[0], s.rootQuatWxyz[1], s.rootQuatWxyz[2], s.rootQuatWxyz[3]],
    jointPosRad: [...s.jointPosRad],
    ...(s.jointVelRadS ? { jointVelRadS: [...s.jointVelRadS] } : {}),
    placeOnFloor: s.placeOnFloor,
  };
}

/**
 * The simulator's state after holding the calibrated start pose for SETTLE_SECONDS under the
 * binding's joint PD without the root assist (the robot stands on its own feet, as it did when
 * measured). Not an episode: nothing is recorded.
 */
export async function settledState(
  sim: EmbeddedSimulator,
  cal: CalibrationRecord,
  binding: WbcBinding,
  profile: RobotProfile,
): Promise<StateFrame> {
  const initial = initialStateOf(cal);
  const fps = MB_METRICS_1.rateHz;
  const n = Math.round(SETTLE_SECONDS * fps) + 1;
  const J = profile.joints.length;
  const hold: MotionClip = {
    id: 'settle-hold',
    name: 'settle (hold the calibrated pose)',
    fps,
    frameCount: n,
    rootPosM: new Float64Array(3 * n),
    rootQuatWxyz: new Float64Array(4 * n),
    jointPosRad: new Float64Array(J * n),
    provenance: { file: '', format: 'motionbench-json', fileSha256: '', fpsSource: 'file' },
    warnings: [],
  };
  for (let k = 0; k < n; k++) {
    hold.rootPosM.set(initial.rootPosM, 3 * k);
    hold.rootQuatWxyz.set(initial.rootQuatWxyz, 4 * k);
    hold.jointPosRad.set(initial.jointPosRad, J * k);
  }
  const noAssist: WbcBinding = binding.kind === 'builtin' ? { ...binding, rootAssist: null } : binding;
  const r = await runSimEpisode(sim, { clip: hold, binding: noAssist, profile, initial, seed: 0, keepFrames: true });
  const last = r.frames[r.frames.length - 1];
  if (!last) throw new Error(`the settle run recorded no frame: ${r.end.reason}`);
  return last;
}

export interface SimBranchRun {
  episode: EpisodeRecord;
  end: SimEpisodeEnd;
  metrics: EpisodeMetrics;
}

/** Runs and records the pair's simulation episode from the calibration's initial state. */
export async function runSimBranch(
  o: Pick<
    RecordSimEpisodeRequest,
    'store' | 'sim' | 'profile' | 'parentTraceId' | 'clip' | 'binding' | 'initial' | 'seed'
  > & {
    calibrationId: string;
    snapshotHash: string | null;
  },
): Promise<SimBranchRun> {
  const r = await recordSimEpisode({
    ...o,
    what: 'simulation branch failed',
    episode: {
      snapshotHash: o.snapshotHash,
      fileMetadata: {
        clip_name: o.clip.name,
        binding_kind: o.binding.kind,
        binding_label: o.binding.label,
        calibration_id: o.calibrationId,
        matched_pair: true,
      },
      meta: { matchedPair: { calibrationId: o.calibrationId, initialState: o.initial } },
    },
  });
  return { episode: r.episode, end: r.end, metrics: r.metrics };
}
