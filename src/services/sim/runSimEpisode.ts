// One simulated episode end to end: lease a worker, reset, run the clip under the binding,
// collect the executed frames, reduce them with the batch mb-metrics/1 reducer against the
// reference as placed for the run (the simulator's referenceLiftM, src/domain/sim/
// referencePlacement.ts; the file's reference channel stays the clip as given and its results
// name the lift), and optionally write the episode file (MCAP). Several episodes may run at once on
// one EmbeddedSimulator (one per worker): each episode subscribes to the simulator's one hub
// (src/services/stream/backendHub.ts, the owner of its single listener, shared with the console's
// connection registry) and takes its own run's frames, every one in order.

import fs from 'node:fs/promises';
import type { InitialState } from '../../domain/backend/backend';
import type { StateFrame } from '../../domain/robot/stateFrame';
import {
  allReadingsUnavailable,
  ClipPairEvaluator,
  MB_METRICS_1,
  episodeMetricsJson,
  type EpisodeMetrics,
} from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import { resampleClip } from '../../domain/motion/resample';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { placedClip } from '../../domain/sim/referencePlacement';
import { TRAJECTORY_HASH_LAYOUT } from '../../domain/sim/trajectoryHash';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import { EpisodeWriter, referenceFramesOf } from '../episode/episodeWriter';
import { backendHub } from '../stream/backendHub';
import { describeFailure } from './simEngine';
import { isSimFramesEvent, type EmbeddedSimulator, type SimEpisodeEnd, type SimFrameExtras } from './embeddedSimulator';
import type { SimRunOptions } from './simProtocol';

let runSerial = 0;

export interface SimEpisodeRequest {
  clip: MotionClip;
  binding: WbcBinding;
  profile: RobotProfile;
  seed?: number;
  /** Default: the clip's first frame with its joint velocities, placed on the floor. */
  initial?: InitialState;
  /** Write the episode file here. */
  out?: string | null;
  /** Refuse to replace an existing `out` file (EEXIST) instead of truncating it (default false). */
  outExclusive?: boolean;
  runId?: string;
  runOptions?: SimRunOptions;
  /** Keep the executed frames in the result (default true). */
  keepFrames?: boolean;
  /**
   * Receives every batch of executed frames while the episode runs (awaited: a slow consumer
   * pauses the worker). Used to stream an episode into the trace store's EpisodeRecorder so a
   * crash loses at most the open chunk.
   */
  onFrames?: (frames: StateFrame[], extras: SimFrameExtras[]) => Promise<void> | void;
  /** Called after each batch with simulated seconds so far and the clip's duration. */
  onProgress?: (simSeconds: number, plannedSeconds: number) => void;
  /** Wait for a free worker instead of failing when all are leased (default true). */
  waitForWorker?: boolean;
}

export interface SimEpisodeResult {
  end: SimEpisodeEnd;
  metrics: EpisodeMetrics;
  /** The executed trajectory on the 50 Hz timeline, as a clip-like record. */
  executed: {
    fps: number;
    frameCount: number;
    rootPosM: Float64Array;
    rootQuatWxyz: Float64Array;
    jointPosRad: Float64Array;
  };
  frames: StateFrame[];
  extras: SimFrameExtras[];
  episodeFile: string | null;
}

export async function runSimEpisode(sim: EmbeddedSimulator, req: SimEpisodeRequest): Promise<SimEpisodeResult> {
  const runId = req.runId ?? `sim-${process.pid}-${Date.now().toString(36)}-${++runSerial}`;
  const seed = req.seed ?? 0;
  const keep = req.keepFrames ?? true;
  const ref50 = resampleClip(req.clip, MB_METRICS_1.rateHz);
  const plannedSeconds = (ref50.frameCount - 1) / MB_METRICS_1.rateHz;
  const J = req.profile.joints.length;
  // Executed pose, grown as frames arrive (the clip length bounds it).
  const cap = ref50.frameCount;
  const pos = new Float64Array(3 * cap);
  const quat = new Float64Array(4 * cap);
  const q = new Float64Array(J * cap);
  let n = 0;
  const frames: StateFrame[] = [];
  const extras: SimFrameExtras[] = [];
  let writer: EpisodeWriter | null = null;
  let unsubscribe: () => void = () => {};
  const startMs = Date.now();
  const lease = await (req.waitForWorker === false ? sim.acquire(runId) : sim.acquireWhenFree(runId));
  try {
    if (req.out) {
      writer = await EpisodeWriter.create(req.out, {
        exclusive: req.outExclusive ?? false,
        startMs,
        robot: req.profile,
        reference: referenceFramesOf(ref50),
        episode: {
          run_id: runId,
          execution_domain: 'simulation',
          backend: sim.id,
          clip_id: req.clip.id,
          clip_name: req.clip.name,
          clip_file: req.clip.provenance.file,
          clip_sha256: req.clip.provenance.fileSha256,
          clip_fps: req.clip.fps,
          binding: bindingKey(req.binding),
          binding_kind: req.binding.kind,
          binding_label: req.binding.label,
          binding_json: JSON.stringify(req.binding),
          model_file: req.profile.sourceFile,
          model_name: req.profile.modelName,
          seed,
          contract: MB_METRICS_1.id,
          started_at: new Date(startMs).toISOString(),
        },
      });
      await writer.writeEvent(
        0,
        'episode_start',
        `episode ${runId}: ${req.clip.name} under ${bindingKey(req.binding)} (${req.binding.label})`,
        { seed },
      );
    }
    const onFrames = async (fs: StateFrame[], xs: SimFrameExtras[]): Promise<void> => {
      for (let i = 0; i < fs.length && n < cap; i++, n++) {
        const f = fs[i];
        pos.set(f.rootPosM!, 3 * n);
        quat.set(f.rootQuatWxyz!, 4 * n);
        q.set(f.jointPosRad, J * n);
      }
      if (keep) {
        frames.push(...fs);
        extras.push(...xs);
      }
      if (writer) await writer.writeFrames(fs, xs);
      if (req.onFrames) await req.onFrames(fs, xs);
      req.onProgress?.(n > 0 ? (n - 1) / MB_METRICS_1.rateHz : 0, plannedSeconds);
    };
    unsubscribe = backendHub(sim).subscribe({
      name: `episode ${runId}`,
      delivery: 'every',
      onEvents: async (events) => {
        for (const e of events) if (isSimFramesEvent(e) && e.runId === runId) await onFrames(e.frames, e.sim.extras);
      },
    });
    if (req.initial) await lease.reset(req.initial);
    const end = await lease.run({
      clip: req.clip,
      binding: req.binding,
      seed,
      ...(req.runOptions ? { options: req.runOptions } : {}),
    });
    // Every frame was delivered before run() resolved: the worker goes back to the pool now, and
    // the metrics and the file's tail below run beside the next episode instead of before it.
    unsubscribe();
    await lease.release();
    const executed = {
      fps: MB_METRICS_1.rateHz,
      frameCount: n,
      rootPosM: pos.subarray(0, 3 * n),
      rootQuatWxyz: quat.subarray(0, 4 * n),
      jointPosRad: q.subarray(0, J * n),
    };
    const metrics =
      n >= 2
        ? new ClipPairEvaluator(MB_METRICS_1, req.profile).evaluate(
            placedClip(req.clip, end.referenceLiftM ?? 0),
            executed,
          ).metrics
        : emptyMetrics(end);
    if (writer) {
      const t = end.simSeconds;
      if (end.failure)
        await writer.writeEvent(end.failure.timeS, 'hard_failure', describeFailure(end.failure), { ...end.failure });
      if (end.outcome === 'aborted_by_operator' || end.outcome === 'estop' || end.outcome === 'intervention') {
        await writer.writeEvent(t, 'stop_requested', `${end.outcome}: ${end.reason}`);
      }
      await writer.writeEvent(t, 'episode_end', `${end.outcome}: ${end.reason}`, {
        outcome: end.outcome,
        frames: end.frames,
        trajectory_sha256: end.trajectorySha256,
      });
      await writer.writeFinalMetrics(t, episodeMetricsJson(metrics));
      await writer.close({
        outcome: end.outcome,
        reason: end.reason,
        frames: end.frames,
        planned_frames: end.plannedFrames,
        sim_seconds: end.simSeconds,
        wall_seconds: end.wallSeconds,
        trajectory_sha256: end.trajectorySha256,
        trajectory_hash_layout: TRAJECTORY_HASH_LAYOUT,
        reference_lift_m: end.referenceLiftM,
      });
      writer = null;
    }
    return { end, metrics, executed, frames, extras, episodeFile: req.out ?? null };
  } catch (err) {
    // Refused before anything ran (bad initial state, binding): no episode, so no episode file.
    if (writer) {
      await writer.abandon();
      writer = null;
      if (n === 0 && req.out) await fs.rm(req.out, { force: true });
    }
    throw err;
  } finally {
    unsubscribe();
    if (writer) await writer.abandon();
    await lease.release();
  }
}

/** Readings of an episode with fewer than two frames: every reading unavailable. */
function emptyMetrics(end: SimEpisodeEnd): EpisodeMetrics {
  return allReadingsUnavailable(
    MB_METRICS_1.id,
    end.frames,
    `the episode recorded ${end.frames} frame(s): ${end.reason}`,
  );
}
