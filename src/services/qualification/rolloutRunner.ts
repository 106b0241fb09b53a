// One qualification rollout, recorded into a campaign (recordSimEpisode) from a perturbed start:
// saturation and contacts are measured on every batch of frames, the posture margins on the
// mb-metrics/1 timeline (FK of the reference as placed for the run and of the executed motion)
// once it ran; the measures become a
// `note` event and the file's results before the episode is finished.

import { randomBytes } from 'node:crypto';
import { ClipPairEvaluator, MB_METRICS_1, type EpisodeMetrics } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
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
import { placedClip } from '../../domain/sim/referencePlacement';
import { makeRunId } from '../../domain/trace/ids';
import type { EpisodeRecord } from '../../domain/trace/records';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import type { EmbeddedSimulator, SimEpisodeEnd } from '../sim/embeddedSimulator';
import { recordSimEpisode } from '../sim/recordSimEpisode';
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
  const runId = makeRunId('simulation', Date.now(), randomBytes(4).toString('hex'));
  let k = 0;
  let measures: RolloutMeasures | null = null;
  const r = await recordSimEpisode({
    runId,
    store,
    sim,
    profile,
    parentTraceId: req.parentTraceId,
    clip,
    binding,
    seed: req.seed,
    initial,
    what: 'qualification rollout failed',
    episode: {
      rolloutIndex: req.rolloutIndex,
      snapshotHash: ctx.snapshotHash,
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
    },
    onFrames: (frames, extras) => {
      for (let i = 0; i < frames.length; i++, k++)
        measurer.addFrame(k, frames[i].jointTauNm, extras[i]?.command?.jointTargetRad ?? null, frames[i].contacts);
      ctx.onSimSeconds?.(runId, k > 0 ? (k - 1) / MB_METRICS_1.rateHz : 0);
    },
    beforeFinish: async (rec, run) => {
      const { end, executed } = run;
      if (executed.frameCount >= 2) {
        const evaluator = new ClipPairEvaluator(MB_METRICS_1, profile);
        const t = evaluator.timeline(placedClip(clip, end.referenceLiftM ?? 0), executed);
        measures = measurer.result(postureMargins(evaluator.layout, t.ref, t.exec, t.K));
      } else {
        measures = measurer.result(null, `the episode recorded ${executed.frameCount} frame(s): ${end.reason}`);
      }
      await rec.event('note', {
        message: `qualification measures (${ctx.policyKey})`,
        detail: {
          kind: MEASURES_EVENT_KIND,
          policy: ctx.policyKey,
          protocol: ctx.protocolKey,
          rollout: req.rolloutIndex,
          binding: bindingKey(binding),
          clip_id: clip.id,
          measures,
        },
      });
      const m = measures.margins;
      return {
        max_root_dz_m: m ? m.rootHeight.maxM : null,
        max_root_angle_rad: m ? m.rootOrientation.maxRad : null,
        max_ee_dz_m: m ? m.endEffectorHeight.maxM : null,
        saturation_fraction: measures.saturation.fraction,
        floor_contact_bodies: measures.floorContacts.map((c) => c.body).join(','),
      };
    },
  });
  return { episode: r.episode, end: r.end, metrics: r.metrics, measures: measures!, perturbation: applied };
}
