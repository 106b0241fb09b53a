// The first seconds of a clip (benchmarks and tests run a fixed stretch of long clips).

import { computeClipId } from '../motion/clipCommon';
import type { MotionClip } from '../motion/motionClip';

/** The clip's frames 0..floor(seconds·fps) (all of it when shorter), as a new clip with its own id. */
export function clipHead(clip: MotionClip, seconds: number): MotionClip {
  if (!(seconds > 0)) throw new RangeError(`clip window must be > 0 s, got ${seconds}`);
  const n = Math.min(clip.frameCount, Math.floor(seconds * clip.fps + 1e-9) + 1);
  if (n === clip.frameCount) return clip;
  const J = clip.jointPosRad.length / clip.frameCount;
  const out: MotionClip = {
    ...clip,
    frameCount: n,
    rootPosM: clip.rootPosM.slice(0, 3 * n),
    rootQuatWxyz: clip.rootQuatWxyz.slice(0, 4 * n),
    jointPosRad: clip.jointPosRad.slice(0, J * n),
    id: '',
    name: `${clip.name}[0-${(n - 1) / clip.fps}s]`,
    warnings: [],
  };
  if (clip.jointVelRadS) out.jointVelRadS = clip.jointVelRadS.slice(0, J * n);
  if (clip.bodyPosW)
    out.bodyPosW = {
      bodyCount: clip.bodyPosW.bodyCount,
      data: clip.bodyPosW.data.slice(0, clip.bodyPosW.bodyCount * 3 * n),
    };
  out.id = computeClipId(clip.fps, n, out.rootPosM, out.rootQuatWxyz, out.jointPosRad);
  return out;
}
