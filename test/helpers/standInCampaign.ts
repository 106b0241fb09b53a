import { MB_METRICS_1 } from '../../src/domain/metrics/metricContract';
import { computeClipId } from '../../src/domain/motion/clipCommon';
import type { CapabilityGroup, MotionClip } from '../../src/domain/motion/motionClip';
import { resampleClip } from '../../src/domain/motion/resample';
import type { RobotProfile } from '../../src/domain/robot/robotProfile';
import type { CalibrationRecord } from '../../src/domain/trace/records';
import {
  snapshotHash,
  WORKLOAD_SNAPSHOT_FORMAT,
  type WorkloadClipMeta,
  type WorkloadSnapshot,
} from '../../src/domain/workload/snapshot';
import { resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { openCampaign, type CampaignStore } from '../../src/services/trace';
import { referenceFramesOf } from '../../src/services/episode/episodeWriter';
import { fixtureInputs } from './traceFixtures';

// A small real campaign of matched pairs built WITHOUT a robot, by the existing services: per clip (an excerpt of the given length) a parent trace
// with a calibration, its simulation branch a real MuJoCo run of `simSpec`, and its "real_robot"
// trials SYNTHETIC STAND-INS FOR HARDWARE TRIALS — real simulator runs with other controllers
// (`standInSpecs`), recorded through the trace store as execution domain real_robot. They give
// honest, different trajectories; they say nothing about a G1.

export interface StandInCampaignOptions {
  dir: string;
  profile: RobotProfile;
  clips: MotionClip[];
  excerptS: number;
  simSpec: string;
  standInSpecs: string[];
  /** Capability group of each clip, in `clips` order (default: all `upper_body`). */
  groups?: CapabilityGroup[];
}

export function excerpt(c: MotionClip, seconds: number): MotionClip {
  const n = Math.floor(seconds * c.fps) + 1;
  const rootPosM = c.rootPosM.slice(0, 3 * n);
  const rootQuatWxyz = c.rootQuatWxyz.slice(0, 4 * n);
  const jointPosRad = c.jointPosRad.slice(0, 29 * n);
  const out: MotionClip = {
    ...c,
    id: computeClipId(c.fps, n, rootPosM, rootQuatWxyz, jointPosRad),
    name: `${c.name}_excerpt`,
    frameCount: n,
    rootPosM,
    rootQuatWxyz,
    jointPosRad,
    warnings: [],
  };
  if (c.jointVelRadS) out.jointVelRadS = c.jointVelRadS.slice(0, 29 * n);
  delete out.bodyPosW;
  return out;
}

function calibration(clip: MotionClip): CalibrationRecord {
  const q = Array.from(clip.jointPosRad.slice(0, 29));
  const quat = Array.from(clip.rootQuatWxyz.slice(0, 4));
  return {
    robotUnit: 'stand-in (simulator; no robot)',
    capturedAt: '2026-12-01T10:00:00.000Z',
    clipId: clip.id,
    measured: { jointPosRad: q, imuQuatWxyz: quat, rootPosM: null, rootQuatWxyz: null },
    stillness: { durationS: 1, samples: 500, maxJointStdRad: 0.001, gyroRmsRadS: 0.002 },
    simulatorInitialState: {
      rootPosM: Array.from(clip.rootPosM.slice(0, 3)),
      rootQuatWxyz: quat,
      jointPosRad: q,
      placeOnFloor: true,
    },
    residuals: {
      settledVsMeasured: { maxJointRad: 0, attitudeRad: 0 },
      measuredVsClipStart: { maxJointRad: 0, attitudeRad: 0 },
    },
  };
}

async function record(
  store: CampaignStore,
  sim: EmbeddedSimulator,
  profile: RobotProfile,
  o: {
    parentTraceId: string;
    clip: MotionClip;
    spec: string;
    domain: 'simulation' | 'real_robot';
    trial: number;
    snapshot: string;
  },
): Promise<void> {
  const binding = await resolveBindingSpec(o.spec);
  const ref50 = resampleClip(o.clip, MB_METRICS_1.rateHz);
  const rec = await store.beginEpisode({
    parentTraceId: o.parentTraceId,
    executionDomain: o.domain,
    backendId: o.domain === 'simulation' ? sim.id : `stand-in:${o.spec}`,
    robotUnit: o.domain === 'real_robot' ? 'stand-in (simulator; no robot)' : null,
    seed: o.trial,
    rolloutIndex: o.trial,
    snapshotHash: o.snapshot,
    robot: profile,
    reference: referenceFramesOf(ref50),
    fileMetadata: {
      clip_name: o.clip.name,
      stand_in: o.domain === 'real_robot' ? `synthetic stand-in for a real trial: simulator with ${o.spec}` : null,
    },
    flush: { fsync: false },
  });
  try {
    const r = await runSimEpisode(sim, {
      clip: o.clip,
      binding,
      profile,
      seed: o.trial,
      runId: rec.runId,
      keepFrames: false,
      onFrames: (frames, extras) => rec.frames(frames, extras),
    });
    await rec.finish({ ...r.end }, r.metrics);
  } catch (err) {
    await rec.abort(`test recording failed: ${(err as Error).message}`).catch(() => undefined);
    throw err;
  }
}

/** Builds the campaign in `o.dir`; returns the excerpts recorded, in order. */
export async function buildStandInCampaign(o: StandInCampaignOptions): Promise<MotionClip[]> {
  const clips = o.clips.map((c) => excerpt(c, o.excerptS));
  const metas: WorkloadClipMeta[] = clips.map((c, i) => ({
    id: c.id,
    name: c.name,
    group: o.groups?.[i] ?? 'upper_body',
    duration_s: (c.frameCount - 1) / c.fps,
    frames: c.frameCount,
    fps: c.fps,
  }));
  const snapshot: WorkloadSnapshot = {
    format: WORKLOAD_SNAPSHOT_FORMAT,
    id: 'stand-in-excerpts',
    version: '1',
    source: 'folder',
    clips: metas,
    snapshot_hash: snapshotHash(metas),
  };
  const store = await openCampaign(o.dir, { create: true, name: 'stand-in campaign' });
  const sim = new EmbeddedSimulator({ modelFile: o.profile.sourceFile, workers: 1 });
  try {
    store.putWorkloadSnapshot(snapshot);
    await sim.ready();
    const binding = await resolveBindingSpec(o.simSpec);
    for (const clip of clips) {
      const cal = store.putCalibration(calibration(clip)).id;
      const parent = store.ensureParentTrace(
        fixtureInputs({ binding, clipId: clip.id, referenceSha256: clip.provenance.fileSha256, calibrationId: cal }),
      ).id;
      await record(store, sim, o.profile, {
        parentTraceId: parent,
        clip,
        spec: o.simSpec,
        domain: 'simulation',
        trial: 0,
        snapshot: snapshot.snapshot_hash,
      });
      for (const [trial, spec] of o.standInSpecs.entries())
        await record(store, sim, o.profile, {
          parentTraceId: parent,
          clip,
          spec,
          domain: 'real_robot',
          trial,
          snapshot: snapshot.snapshot_hash,
        });
    }
  } finally {
    await sim.close();
    store.close();
  }
  return clips;
}
