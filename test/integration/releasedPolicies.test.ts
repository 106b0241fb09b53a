import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeMetrics } from '../../src/domain/metrics';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { SimEngine } from '../../src/services/sim/simEngine';
import { planPolicy, type PolicyPlan } from '../../src/services/wbc/policyRun';
import type { TrackingControllerOptions } from '../../src/services/wbc/trackingPolicyController';
import { sharedData } from '../helpers/sharedData';
import { closeSimAndEngine, openSimAndEngine, rolloutIntactAndFaulted } from '../helpers/policyRollout';

// Every released policy in ../shared/data/policies, as it is, in the embedded MuJoCo simulator
// (the worker path `motionbench sim` uses), on its family's physics, tracking its own motion:
// the baked reference, or the clip the policy was trained on (unitree_rl_mjlab: the CSV its
// deploy folder names; wbc-mjlab: its clip library). Each run prints frames, outcome, first
// failure, progress-soft, MPJPE-l and joint RMSE. Beside each family a negative control runs
// the same policy with one deliberate fault (joints read in the other common order, or the
// anchor pose zeroed): it must fall, or track far worse, so these tests can fail.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
let sim: EmbeddedSimulator;
let engine: SimEngine;
beforeAll(async () => ({ sim, engine } = await openSimAndEngine(DEFAULT_MODEL_FILE)));
afterAll(() => closeSimAndEngine(sim, engine));

interface Case {
  name: string;
  policy: string[];
  clip?: { file: string[]; fps?: number };
  /** What the run must achieve (see the comments per case). */
  expect: (m: EpisodeMetrics, outcome: string, failureTimeS: number | null) => void;
  /** The fault of the negative control. */
  fault: NonNullable<TrackingControllerOptions['fault']>;
}

const mpjpe = (m: EpisodeMetrics): number => (m.mpjpeLMm.available ? m.mpjpeLMm.value : NaN);

const noHardFailure = (maxMpjpeMm: number) => (m: EpisodeMetrics, outcome: string) => {
  expect(outcome).toBe('completed');
  expect(m.failure.available && m.failure.value).toBe(null);
  expect(mpjpe(m)).toBeLessThan(maxMpjpeMm);
};

const CASES: Case[] = [
  // BeyondMimic exports track their own motions with no hard failure; measured MPJPE-l 17–31 mm.
  {
    name: 'BeyondMimic Violin (160)',
    policy: ['policies/beyondmimic/Violin.onnx'],
    expect: noHardFailure(40),
    fault: 'wrong_joint_order',
  },
  {
    name: 'BeyondMimic Waltz (160)',
    policy: ['policies/beyondmimic/Waltz.onnx'],
    expect: noHardFailure(45),
    fault: 'anchor_zeroed',
  },
  {
    name: 'BeyondMimic Jump_wose (154)',
    policy: ['policies/beyondmimic/Jump_wose.onnx'],
    expect: noHardFailure(35),
    fault: 'wrong_joint_order',
  },
  {
    name: 'BeyondMimic EricCamper04 (154)',
    policy: ['policies/beyondmimic/EricCamper04.onnx'],
    expect: noHardFailure(35),
    fault: 'anchor_zeroed',
  },
  // wbc-mjlab's one policy over its clip library (reference-residual actions).
  {
    name: 'wbc-mjlab dance_03',
    policy: ['policies/wbc_mjlab'],
    clip: { file: ['policies/wbc_mjlab/clips/dance_03.npz'] },
    expect: noHardFailure(45),
    fault: 'wrong_joint_order',
  },
  {
    name: 'wbc-mjlab idle_02',
    policy: ['policies/wbc_mjlab'],
    clip: { file: ['policies/wbc_mjlab/clips/idle_02.npz'] },
    expect: noHardFailure(40),
    fault: 'wrong_joint_order',
  },
  {
    // unitree_rl_mjlab's dance policy on its 131 s CSV: it dances for over half a minute, then
    // (measured) under-kicks a 0.4 m left-foot kick at 34.4 s (end-effector height error
    // 0.26 m > 0.2 m) and keeps dancing to the end.
    name: 'unitree_rl_mjlab dance1_subject2',
    policy: ['policies/unitree_rl_mjlab_mimic_dance1_subject2'],
    clip: { file: ['policies/unitree_rl_mjlab_mimic_dance1_subject2/dance1_subject2.csv'], fps: 30 },
    expect: (m, _o, t) => {
      expect(t === null || t > 30).toBe(true);
      expect(mpjpe(m)).toBeLessThan(40);
    },
    fault: 'wrong_joint_order',
  },
  {
    // holosoma's crawl was trained on a slope: its reference climbs 0.45 m above z = 0 after
    // ~5 s, which a flat floor cannot reproduce. Before that it must track.
    name: 'holosoma WBT (crawl on a slope)',
    policy: ['policies/holosoma_wbt_locomotion/model_39999.onnx'],
    expect: (_m, _o, t) => expect(t === null || t > 5).toBe(true),
    fault: 'anchor_zeroed',
  },
];

function clipOf(c: Case, plan: PolicyPlan): MotionClip {
  if (c.clip) return loadClipFile(sharedData(...c.clip.file), c.clip.fps !== undefined ? { fps: c.clip.fps } : {});
  return plan.baked!.clip;
}

const fmt = (v: EpisodeMetrics['mpjpeLMm'], d: number) => (v.available ? v.value.toFixed(d) : 'n/a');

describe('released policies in the embedded simulator', () => {
  for (const c of CASES) {
    it(`${c.name}: tracks its motion; a deliberately broken run (${c.fault}) falls or tracks far worse`, async () => {
      const plan = planPolicy(sharedData(...c.policy), profile);
      const clip = clipOf(c, plan);
      const r = await runSimEpisode(sim, { clip, binding: plan.binding, profile, keepFrames: false });
      const m = r.metrics;
      const failT = r.end.failure ? r.end.failure.timeS : null;
      console.log(
        `${c.name}: ${r.end.frames}/${r.end.plannedFrames} frames, ${r.end.outcome}, first failure ${r.end.failure ? `frame ${r.end.failure.frame} (${failT!.toFixed(2)} s) ${r.end.failure.condition} of ${r.end.failure.body}` : 'none'}, progress-soft ${fmt(m.progressSoft, 3)}, MPJPE-l ${fmt(m.mpjpeLMm, 1)} mm, joint RMSE ${fmt(m.jointPosRmseRad, 4)} rad`,
      );
      c.expect(m, r.end.outcome, failT);

      // Negative control, in-thread with the same engine code: same policy, same clip, one fault.
      const { good, bad } = rolloutIntactAndFaulted(engine, plan, profile, clip, c.fault);
      console.log(
        `  control (${c.fault}): first failure ${bad.failureFrame === null ? 'none' : `frame ${bad.failureFrame} (${(bad.failureFrame / 50).toFixed(2)} s)`}, mean live MPJPE-l ${bad.meanLiveMpjpeMm.toFixed(1)} mm (intact ${good.failureFrame === null ? 'no failure' : `failure at frame ${good.failureFrame}`}, ${good.meanLiveMpjpeMm.toFixed(1)} mm)`,
      );
      const fellEarly =
        bad.failureFrame !== null && (good.failureFrame === null || bad.failureFrame < good.failureFrame / 2);
      const muchWorse = bad.meanLiveMpjpeMm > 2 * good.meanLiveMpjpeMm;
      expect(fellEarly || muchWorse).toBe(true);
    }, 120_000);
  }
});
