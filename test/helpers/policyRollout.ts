import type { MotionClip } from '../../src/domain/motion/motionClip';
import { initialStateFromClipFrame } from '../../src/domain/sim/initialState';
import type { Controller } from '../../src/domain/wbc/controller';
import type { WbcBinding } from '../../src/domain/wbc/wbcBinding';
import type { RobotProfile } from '../../src/domain/robot/robotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { SimEngine } from '../../src/services/sim/simEngine';
import type { PolicyPlan } from '../../src/services/wbc/policyRun';
import {
  createTrackingPolicyController,
  type TrackingControllerOptions,
} from '../../src/services/wbc/trackingPolicyController';
import type { FrameBatch } from '../../src/services/sim/simProtocol';

// One episode of a controller in a SimEngine on this thread (real MuJoCo, the simulator
// worker's engine), from the clip's first frame placed on the floor, as `motionbench sim`
// starts it. Returns what the engine's streaming mb-metrics/1 detector saw: the outcome, the
// first hard failure, and the live per-frame MPJPE-l (mean over the frames before the failure).

export interface InThreadRollout {
  outcome: string;
  reason: string;
  frames: number;
  plannedFrames: number;
  failureFrame: number | null;
  /** Mean of the live MPJPE-l (mm) over the recorded frames up to the failure (or the end). */
  meanLiveMpjpeMm: number;
  /** Executed joint angles, frames × 29 (canonical order). */
  q: Float64Array;
}

export function rolloutInThread(
  engine: SimEngine,
  binding: WbcBinding,
  controller: Controller,
  clip: MotionClip,
  seed = 1,
): InThreadRollout {
  const L = engine.layout;
  const J = engine.jointCount;
  const batches: FrameBatch[] = [];
  const end = engine.run(
    { clip, binding, controller, seed, initial: initialStateFromClipFrame(clip) },
    { emit: (b) => batches.push(b), stopRequested: () => 0 },
  );
  const failureFrame = end.failure ? end.failure.frame : null;
  const q = new Float64Array(end.frames * J);
  let sum = 0;
  let n = 0;
  for (const b of batches) {
    for (let i = 0; i < b.count; i++) {
      const k = b.firstFrame + i;
      const o = i * L.width;
      q.set(b.data.subarray(o + L.q, o + L.q + J), k * J);
      const m = b.data[o + L.liveMpjpe];
      if (Number.isFinite(m) && (failureFrame === null || k <= failureFrame)) {
        sum += m;
        n++;
      }
    }
  }
  return {
    outcome: end.outcome,
    reason: end.reason,
    frames: end.frames,
    plannedFrames: end.plannedFrames,
    failureFrame,
    meanLiveMpjpeMm: n > 0 ? sum / n : NaN,
    q,
  };
}

/**
 * A released policy's negative control: the policy intact and with one deliberate fault, each
 * rolled out in this thread on the same clip (the faulted one must fall or track far worse).
 */
export function rolloutIntactAndFaulted(
  engine: SimEngine,
  plan: PolicyPlan,
  profile: RobotProfile,
  clip: MotionClip,
  fault: NonNullable<TrackingControllerOptions['fault']>,
): { good: InThreadRollout; bad: InThreadRollout } {
  const run = (options: TrackingControllerOptions) =>
    rolloutInThread(engine, plan.binding, createTrackingPolicyController(plan.binding, profile, options), clip);
  return { good: run({ loaded: plan.loaded }), bad: run({ loaded: plan.loaded, fault }) };
}

/** The embedded simulator (one worker) and an in-thread engine on the same model, both ready. */
export async function openSimAndEngine(modelFile: string): Promise<{ sim: EmbeddedSimulator; engine: SimEngine }> {
  const sim = new EmbeddedSimulator({ modelFile, workers: 1 });
  await sim.ready();
  return { sim, engine: await SimEngine.load(modelFile) };
}

/** Closes what openSimAndEngine opened (either is missing when opening failed). */
export async function closeSimAndEngine(
  sim: EmbeddedSimulator | undefined,
  engine: SimEngine | undefined,
): Promise<void> {
  await sim?.close();
  engine?.dispose();
}
