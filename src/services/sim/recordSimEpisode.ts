import { randomBytes } from 'node:crypto';
import type { InitialState } from '../../domain/backend/backend';
import type { StateFrame } from '../../domain/robot/stateFrame';
import { MB_METRICS_1 } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import { resampleClip } from '../../domain/motion/resample';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { TRAJECTORY_HASH_LAYOUT } from '../../domain/sim/trajectoryHash';
import { makeRunId } from '../../domain/trace/ids';
import type { EpisodeRecord } from '../../domain/trace/records';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { BeginEpisodeRequest, CampaignStore } from '../trace';
import type { EpisodeRecorder } from '../trace/episodeRecorder';
import { referenceFramesOf } from '../episode/episodeWriter';
import type { EmbeddedSimulator, SimFrameExtras } from './embeddedSimulator';
import { runSimEpisode, type SimEpisodeResult } from './runSimEpisode';
import { describeFailure } from './simEngine';

// One simulated episode recorded into a campaign (DESIGN §7): the episode begun in the trace
// store (running row, MCAP file with the 50 Hz reference), every batch of frames streamed into it
// as the simulator produces them (a crash loses at most the open chunk), the hard failure as an
// event, and the episode finished (file closed, row, metrics and events in one transaction) — or
// aborted as interrupted when anything throws. Used by qualification rollouts and by the
// simulation branch of a matched pair; each adds its own metadata, per-frame work and events.

export interface RecordSimEpisodeRequest {
  store: CampaignStore;
  sim: EmbeddedSimulator;
  profile: RobotProfile;
  parentTraceId: string;
  clip: MotionClip;
  binding: WbcBinding;
  seed: number;
  initial: InitialState;
  /** Default: a new `sim-<time>-<random>` id. */
  runId?: string;
  /** The rest of the episode's row and file metadata. */
  episode: Pick<BeginEpisodeRequest, 'rolloutIndex' | 'snapshotHash' | 'fileMetadata' | 'meta'>;
  /** Per-batch work besides recording (measurements, progress); runs after the frames are written. */
  onFrames?: (frames: StateFrame[], extras: SimFrameExtras[]) => void;
  /** Events and file results to add once the episode ran, before it is finished. */
  beforeFinish?: (
    rec: EpisodeRecorder,
    r: SimEpisodeResult,
  ) => Promise<Record<string, string | number | boolean | null> | void>;
  /** What the abort says when something fails (default "simulated episode failed"). */
  what?: string;
}

export interface RecordedSimEpisode extends SimEpisodeResult {
  episode: EpisodeRecord;
}

export async function recordSimEpisode(o: RecordSimEpisodeRequest): Promise<RecordedSimEpisode> {
  const runId = o.runId ?? makeRunId('simulation', Date.now(), randomBytes(4).toString('hex'));
  const ref50 = resampleClip(o.clip, MB_METRICS_1.rateHz);
  const rec = await o.store.beginEpisode({
    ...o.episode,
    parentTraceId: o.parentTraceId,
    executionDomain: 'simulation',
    backendId: o.sim.id,
    seed: o.seed,
    runId,
    robot: o.profile,
    reference: referenceFramesOf(ref50),
  });
  // The simulator swallows a listener's exception (and the episode goes on): keep the first one.
  let frameError: unknown = null;
  try {
    const r = await runSimEpisode(o.sim, {
      clip: o.clip,
      binding: o.binding,
      profile: o.profile,
      seed: o.seed,
      initial: o.initial,
      runId,
      keepFrames: false,
      onFrames: async (frames, extras) => {
        if (frameError !== null) return;
        try {
          await rec.frames(frames, extras);
          o.onFrames?.(frames, extras);
        } catch (err) {
          frameError = err;
        }
      },
    });
    if (frameError !== null) throw frameError;
    const { end } = r;
    if (end.failure)
      await rec.event('hard_failure', {
        tS: end.failure.timeS,
        reason: describeFailure(end.failure),
        detail: { ...end.failure },
      });
    const result = (await o.beforeFinish?.(rec, r)) ?? {};
    const episode = await rec.finish({ ...end }, r.metrics, {
      trajectorySha256: end.trajectorySha256,
      result: {
        trajectory_hash_layout: TRAJECTORY_HASH_LAYOUT,
        worker: end.workerIndex,
        reference_lift_m: end.referenceLiftM,
        ...result,
      },
      // The row names a placement only when there is one (an unplaced episode's row is unchanged).
      ...(end.referenceLiftM ? { meta: { reference_lift_m: end.referenceLiftM } } : {}),
    });
    return { ...r, episode };
  } catch (err) {
    if (rec.status === 'recording')
      await rec
        .abort(`${o.what ?? 'simulated episode failed'}: ${(err as Error)?.message ?? String(err)}`)
        .catch(() => undefined);
    throw err;
  }
}
