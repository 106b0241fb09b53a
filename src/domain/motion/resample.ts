// Resampling onto the common timeline of the metric contract (DESIGN §4 "Common timeline"):
//   frame k is at t_k = k / r, k = 0..K−1, K = floor(r·D + 1e-9) + 1, D = (N − 1) / fps;
//   the source frame position f = t_k · fps is interpolated between frames floor(f) and
//   floor(f) + 1 with α = f − floor(f): linearly for positions and joint angles, by shortest-arc
//   slerp for quaternions; when f reaches the last source frame (f ≥ N − 1) that frame is used
//   as is. For two clips the caller takes K from both durations (commonTimelineFrameCount).

import type { MotionClip } from './motionClip';
import { G1_NUM_JOINTS } from '../robot/g1Joints';
import { computeClipId } from './clipCommon';

export interface TimedFrames {
  fps: number;
  frameCount: number;
  rootPosM: Float64Array;
  rootQuatWxyz: Float64Array;
  jointPosRad: Float64Array;
}

export interface ResampledFrames {
  /** The rate of the result, Hz. */
  fps: number;
  frameCount: number;
  rootPosM: Float64Array;
  rootQuatWxyz: Float64Array;
  jointPosRad: Float64Array;
}

/** D = (N − 1) / fps, seconds. */
export function clipDurationS(clip: { fps: number; frameCount: number }): number {
  return (clip.frameCount - 1) / clip.fps;
}

/** K = floor(r · min(D) + 1e-9) + 1 over the given clips (one clip: its own K at rate r). */
export function commonTimelineFrameCount(r: number, ...clips: { fps: number; frameCount: number }[]): number {
  checkRate(r);
  if (clips.length === 0) throw new RangeError('commonTimelineFrameCount needs at least one clip');
  const d = Math.min(...clips.map(clipDurationS));
  return Math.floor(r * d + 1e-9) + 1;
}

function checkRate(r: number): void {
  if (!(Number.isFinite(r) && r > 0))
    throw new RangeError(`resampling rate must be a positive finite number, got ${r}`);
}

/**
 * Source frame index i0 and weight α for timeline frame k: f = t_k · fps with t_k = k / r,
 * i0 = floor(f), α = f − i0; when f ≥ N − 1 the last frame is used as is (i0 = N − 1, α = 0).
 * Evaluated as (k · fps) / r: for integer rates k · fps is exact and the one division lands on
 * whole source frames exactly, whereas (k / r) · fps falls an ulp short for some k (e.g. every
 * 15th frame at fps = r = 50) and would interpolate where the spec says "use the frame as is".
 */
export function sourceFramePosition(
  k: number,
  r: number,
  fps: number,
  frameCount: number,
): { i0: number; alpha: number } {
  const f = sourceFrameOffset(k, r, fps);
  const i0 = Math.floor(f);
  if (i0 >= frameCount - 1) return { i0: frameCount - 1, alpha: 0 };
  return { i0, alpha: f - i0 };
}

/** f = t_k · fps for timeline frame k at rate r, as (k · fps) / r (see sourceFramePosition). */
export function sourceFrameOffset(k: number, r: number, fps: number): number {
  return (k * fps) / r;
}

/**
 * `width` values linearly interpolated between the rows at `a[ao]` and `b[bo]` with weight α:
 * a + (b − a)·α, written to `out[oo]`. The one expression every resampler and the live
 * resampler use, so their numbers agree bit for bit.
 */
export function lerpRowInto(
  out: Float64Array,
  oo: number,
  a: Float64Array,
  ao: number,
  b: Float64Array,
  bo: number,
  width: number,
  alpha: number,
): void {
  for (let c = 0; c < width; c++) out[oo + c] = a[ao + c] + (b[bo + c] - a[ao + c]) * alpha;
}

/** Linear resampling of `width` values per frame (frame-major `data`) to K frames at rate r. */
export function resampleLinear(
  data: Float64Array,
  width: number,
  fps: number,
  frameCount: number,
  r: number,
  K: number,
): Float64Array {
  checkRate(r);
  const out = new Float64Array(K * width);
  for (let k = 0; k < K; k++) {
    const { i0, alpha } = sourceFramePosition(k, r, fps, frameCount);
    const a = i0 * width;
    const o = k * width;
    if (alpha === 0) {
      for (let c = 0; c < width; c++) out[o + c] = data[a + c];
    } else {
      lerpRowInto(out, o, data, a, data, a + width, width, alpha);
    }
  }
  return out;
}

/**
 * Shortest-arc slerp between the wxyz quaternions at `a[ao]` and `b[bo]`, written to `out[oo]`.
 * The angle comes from atan2(|a − b|, |a + b|), which keeps full precision for nearby
 * quaternions (acos of the dot product loses half the digits there), so this is true slerp down
 * to θ = 1e-9 rad, below which the linear weights differ from slerp's by less than 1e-18.
 */
export function slerpWxyzInto(
  out: Float64Array,
  oo: number,
  a: Float64Array,
  ao: number,
  b: Float64Array,
  bo: number,
  t: number,
): void {
  const aw = a[ao];
  const ax = a[ao + 1];
  const ay = a[ao + 2];
  const az = a[ao + 3];
  let bw = b[bo];
  let bx = b[bo + 1];
  let by = b[bo + 2];
  let bz = b[bo + 3];
  const dot = aw * bw + ax * bx + ay * by + az * bz;
  if (dot < 0) {
    bw = -bw;
    bx = -bx;
    by = -by;
    bz = -bz;
  }
  let s0: number;
  let s1: number;
  const dw = aw - bw;
  const dx = ax - bx;
  const dy = ay - by;
  const dz = az - bz;
  const pw = aw + bw;
  const px = ax + bx;
  const py = ay + by;
  const pz = az + bz;
  const theta =
    2 * Math.atan2(Math.sqrt(dw * dw + dx * dx + dy * dy + dz * dz), Math.sqrt(pw * pw + px * px + py * py + pz * pz));
  if (theta < 1e-9) {
    s0 = 1 - t;
    s1 = t;
  } else {
    const sin = Math.sin(theta);
    s0 = Math.sin((1 - t) * theta) / sin;
    s1 = Math.sin(t * theta) / sin;
  }
  let w = s0 * aw + s1 * bw;
  let x = s0 * ax + s1 * bx;
  let y = s0 * ay + s1 * by;
  let z = s0 * az + s1 * bz;
  const n = Math.sqrt(w * w + x * x + y * y + z * z);
  w /= n;
  x /= n;
  y /= n;
  z /= n;
  out[oo] = w;
  out[oo + 1] = x;
  out[oo + 2] = y;
  out[oo + 3] = z;
}

/** Slerp resampling of N wxyz quaternions (flat) to K frames at rate r. */
export function resampleQuaternions(
  quatWxyz: Float64Array,
  fps: number,
  frameCount: number,
  r: number,
  K: number,
): Float64Array {
  checkRate(r);
  const out = new Float64Array(K * 4);
  for (let k = 0; k < K; k++) {
    const { i0, alpha } = sourceFramePosition(k, r, fps, frameCount);
    if (alpha === 0) out.set(quatWxyz.subarray(i0 * 4, i0 * 4 + 4), k * 4);
    else slerpWxyzInto(out, k * 4, quatWxyz, i0 * 4, quatWxyz, i0 * 4 + 4, alpha);
  }
  return out;
}

/**
 * Resamples root pose and joint angles to K frames at rate r (the lower-level form used for a
 * common timeline of two clips: pass K = commonTimelineFrameCount(r, ref, exec)). Frames whose
 * source position lies beyond the last source frame repeat that frame.
 */
export function resampleFrames(src: TimedFrames, r: number, K: number): ResampledFrames {
  checkRate(r);
  if (!(Number.isInteger(K) && K >= 1)) throw new RangeError(`frame count K must be a positive integer, got ${K}`);
  const { fps, frameCount: N } = src;
  return {
    fps: r,
    frameCount: K,
    rootPosM: resampleLinear(src.rootPosM, 3, fps, N, r, K),
    rootQuatWxyz: resampleQuaternions(src.rootQuatWxyz, fps, N, r, K),
    jointPosRad: resampleLinear(src.jointPosRad, G1_NUM_JOINTS, fps, N, r, K),
  };
}

/**
 * The clip resampled to rate r over its own duration (K = floor(r·D + 1e-9) + 1), as a new
 * MotionClip with fps = r and a new content id. Stored joint velocities and body positions are
 * resampled linearly. Provenance (file, format, hash, fps source) and warnings are those of the
 * source clip; warning frame numbers refer to source frames.
 */
export function resampleClip(clip: MotionClip, r: number): MotionClip {
  const K = commonTimelineFrameCount(r, clip);
  const f = resampleFrames(clip, r, K);
  const out: MotionClip = {
    id: computeClipId(r, K, f.rootPosM, f.rootQuatWxyz, f.jointPosRad),
    name: clip.name,
    fps: r,
    frameCount: K,
    rootPosM: f.rootPosM,
    rootQuatWxyz: f.rootQuatWxyz,
    jointPosRad: f.jointPosRad,
    provenance: { ...clip.provenance },
    warnings: [...clip.warnings],
  };
  if (clip.jointVelRadS)
    out.jointVelRadS = resampleLinear(clip.jointVelRadS, G1_NUM_JOINTS, clip.fps, clip.frameCount, r, K);
  if (clip.bodyPosW) {
    const w = clip.bodyPosW.bodyCount * 3;
    out.bodyPosW = {
      bodyCount: clip.bodyPosW.bodyCount,
      data: resampleLinear(clip.bodyPosW.data, w, clip.fps, clip.frameCount, r, K),
    };
  }
  if (clip.capabilityGroup) out.capabilityGroup = clip.capabilityGroup;
  return out;
}

/**
 * Joint velocities (rad/s, N×29) by central differences (q[k+1] − q[k−1])·fps/2 at interior
 * frames and one-sided differences at the ends: (q[1] − q[0])·fps and (q[N−1] − q[N−2])·fps.
 */
export function deriveJointVelocities(clip: {
  fps: number;
  frameCount: number;
  jointPosRad: Float64Array;
}): Float64Array {
  const J = G1_NUM_JOINTS;
  const N = clip.frameCount;
  const q = clip.jointPosRad;
  const fps = clip.fps;
  const v = new Float64Array(N * J);
  if (N < 2) return v;
  for (let j = 0; j < J; j++) {
    v[j] = (q[J + j] - q[j]) * fps;
    v[(N - 1) * J + j] = (q[(N - 1) * J + j] - q[(N - 2) * J + j]) * fps;
  }
  const half = fps / 2;
  for (let k = 1; k < N - 1; k++) {
    const o = k * J;
    for (let j = 0; j < J; j++) v[o + j] = (q[o + J + j] - q[o - J + j]) * half;
  }
  return v;
}
