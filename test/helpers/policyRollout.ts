import type { MotionClip } from '../../src/domain/motion/motionClip';
import { initialStateFromClipFrame } from '../../src/domain/sim/initialState';
import type { Controller } from '../../src/domain/wbc/controller';
import type { WbcBinding } from '../../src/domain/wbc/wbcBinding';
import type { SimEngine } from '../../src/services/sim/simEngine';
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
