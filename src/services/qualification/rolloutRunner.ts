// One qualification rollout, recorded into a campaign: begin the episode in the trace store
// (running row, MCAP file), run it on the simulator through runSimEpisode, streaming every batch
// of frames into the episode file while measuring saturation and contacts, then evaluate the
// posture margins on the mb-metrics/1 timeline (FK of reference and executed motion) and finish
// the episode (file closed, row, metrics and events committed in one transaction).

import { randomBytes } from 'node:crypto';
import { ClipPairEvaluator, MB_METRICS_1, type EpisodeMetrics } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import { resampleClip } from '../../domain/motion/resample';
import {
  perturbedInitialState,
  postureMargins,
  RolloutMeasurer,
  type ActuatorLimits,
  type AdmissionPolicy,
  type AppliedPerturbation,
  type RolloutMeasures,
} from '../../domain/qualification';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { TRAJECTORY_HASH_LAYOUT } from '../../domain/sim/trajectoryHash';
import { makeRunId } from '../../domain/trace/ids';
import type { EpisodeRecord } from '../../domain/trace/records';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import type { EmbeddedSimulator, SimEpisodeEnd } from '../sim/embeddedSimulator';
import { runSimEpisode } from '../sim/runSimEpisode';
import { describeFailure } from '../sim/simEngine';
import type { CampaignStore } from '../trace';

/** The `note` event that carries a rollout's measures (detail.kind). */
export const MEASURES_EVENT_KIND = 'qualification_measures';

export interface RolloutContext {
  store: CampaignStore;
  sim: EmbeddedSimulator;
  profile: RobotProfile;
  policy: AdmissionPolicy;
  policyKey: string;
  protocolKey: string;
  snapshotHash: string;
  /** Force and control limits per joint (modelActuatorLimits). */
  limits: ActuatorLimits;
  /** Simulated seconds of this rollout so far (for progress and ETA). */
  onSimSeconds?: (runId: string, simSeconds: number) => void;
}

export interface RolloutRequest {
  parentTraceId: string;
  binding: WbcBinding;
  clip: MotionClip;
  rolloutIndex: number;
  seed: number;
  attempt: number;
}

export interface RolloutResult {
  episode: EpisodeRecord;
  end: SimEpisodeEnd;
  metrics: EpisodeMetrics;
  measures: RolloutMeasures;
  perturbation: AppliedPerturbation;
}

export async function runRollout(ctx: RolloutContext, req: RolloutRequest): Promise<RolloutResult> {
  const { store, sim, profile, policy } = ctx;
  const { clip, binding } = req;
  const runId = makeRunId('simulation', Date.now(), randomBytes(4).toString('hex'));
  const ref50 = resampleClip(clip, MB_METRICS_1.rateHz);
  const { initial, applied } = perturbedInitialState(
    clip,
    req.seed,
    policy.parameters.perturbation,
    profile.joints.map((j) => j.rangeRad),
  );
  const measurer = new RolloutMeasurer(
    ctx.limits,
    profile.bodies.map((b) => b.name),
    policy.parameters.measurement,
    MB_METRICS_1.rateHz,
  );
  const rec = await store.beginEpisode({
    parentTraceId: req.parentTraceId,
    executionDomain: 'simulation',
    backendId: sim.id,
    seed: req.seed,
    runId,
    rolloutIndex: req.rolloutIndex,
    snapshotHash: ctx.snapshotHash,
    reference: { frameCount: ref50.frameCount, rateHz: ref50.fps, rootPosM: ref50.rootPosM, rootQuatWxyz: ref50.rootQuatWxyz, jointPosRad: ref50.jointPosRad },
    fileMetadata: {
      clip_name: clip.name,
      clip_group: clip.capabilityGroup ?? null,
      binding_kind: binding.kind,
      binding_label: binding.label,
      admission_policy: ctx.policyKey,
      rollout_protocol: ctx.protocolKey,
      attempt: req.attempt,
    },
    meta: {
      qualification: {
        policy: ctx.policyKey,
        protocol: ctx.protocolKey,
        rollout: req.rolloutIndex,
        attempt: req.attempt,
        perturbation: applied,
      },
    },
  });
  let k = 0;
  // The simulator swallows a listener's exception (and the episode goes on): keep the first one.
  let frameError: unknown = null;
  try {
    const r = await runSimEpisode(sim, {
      clip,
      binding,
      profile,
      seed: req.seed,
      initial,
      runId,
      keepFrames: false,
      onFrames: async (frames, extras) => {
        if (frameError !== null) return;
        try {
          for (let i = 0; i < frames.length; i++, k++) measurer.addFrame(k, frames[i].jointTauNm, extras[i]?.command?.jointTargetRad ?? null, frames[i].contacts);
          await rec.frames(frames, extras);
        } catch (err) {
          frameError = err;
          return;
        }
        ctx.onSimSeconds?.(runId, k > 0 ? (k - 1) / MB_METRICS_1.rateHz : 0);
      },
    });
    if (frameError !== null) throw frameError;
    const { end, metrics, executed } = r;
    let measures: RolloutMeasures;
    if (executed.frameCount >= 2) {
      const evaluator = new ClipPairEvaluator(MB_METRICS_1, profile);
      const t = evaluator.timeline(clip, executed);
      measures = measurer.result(postureMargins(evaluator.layout, t.ref, t.exec, t.K));
    } else {
      measures = measurer.result(null, `the episode recorded ${executed.frameCount} frame(s): ${end.reason}`);
    }
    if (end.failure) {
      await rec.event('hard_failure', { tS: end.failure.timeS, reason: describeFailure(end.failure), detail: { ...end.failure } });
    }
    await rec.event('note', {
      message: `qualification measures (${ctx.policyKey})`,
      detail: { kind: MEASURES_EVENT_KIND, policy: ctx.policyKey, protocol: ctx.protocolKey, rollout: req.rolloutIndex, binding: bindingKey(binding), clip_id: clip.id, measures },
    });
    const m = measures.margins;
    const episode = await rec.finish({ ...end }, metrics, {
      trajectorySha256: end.trajectorySha256,
      result: {
        trajectory_hash_layout: TRAJECTORY_HASH_LAYOUT,
        worker: end.workerIndex,
        max_root_dz_m: m ? m.rootHeight.maxM : null,
        max_root_angle_rad: m ? m.rootOrientation.maxRad : null,
        max_ee_dz_m: m ? m.endEffectorHeight.maxM : null,
        saturation_fraction: measures.saturation.fraction,
        floor_contact_bodies: measures.floorContacts.map((c) => c.body).join(','),
      },
    });
    return { episode, end, metrics, measures, perturbation: applied };
  } catch (err) {
    if (rec.status === 'recording') await rec.abort(`qualification rollout failed: ${(err as Error)?.message ?? String(err)}`).catch(() => undefined);
    throw err;
  }
}
