// Shared by every motion codec: input limits, fps rules, quaternion clean-up, joint-limit
// warnings and the content id. Codecs parse and locate errors in their own format, then hand the
// flat arrays to `finalizeClip`, so every format ends in the same canonical MotionClip.

import type { ForwardKinematics } from '../robot/forwardKinematics';
import { Sha256 } from '../hash/sha256';
import { InputError, type InputLocation, type Warning } from '../problems';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import type { ClipFormat, FpsSource, JointLimitWarning, MotionClip } from './motionClip';

/** Largest motion file accepted, bytes (256 MiB). */
export const MAX_INPUT_BYTES = 256 * 1024 * 1024;
/** Largest clip accepted, frames (2 M frames = 18.5 h at 30 fps). */
export const MAX_FRAMES = 2_000_000;
/** Highest frame rate accepted, Hz. */
export const MAX_FPS = 1000;
/** Lowest frame rate accepted, Hz (a clip sampled more slowly than this is not a motion capture). */
export const MIN_FPS = 1;
/** Largest root position coordinate accepted, m (|x|, |y|, |z| each; a lab is far smaller). */
export const MAX_ROOT_POS_M = 1000;
/** Largest joint angle accepted, rad (|q| ≤ 4π: two turns either way; G1 hinges move < 2π). */
export const MAX_JOINT_ANGLE_RAD = 4 * Math.PI;
/** A stored quaternion whose norm differs from 1 by more than this is an error. */
export const QUAT_NORM_TOLERANCE = 1e-3;
/** Joint angles beyond a limit by more than this (rad) are reported. */
export const JOINT_LIMIT_TOLERANCE_RAD = 1e-6;
/** At most this many joint-limit excursions are listed; the rest are counted. */
export const MAX_JOINT_LIMIT_WARNINGS = 100;

export type JointLimitsRad = ReadonlyArray<readonly [number, number] | null>;

export interface FpsHint {
  fps: number;
  /** How the fps was inferred, for the operator (e.g. "sidecar file walk.json"). */
  source: string;
}

export interface DecodeOptions {
  /** The file as the user named it; used in every error and in provenance. */
  file: string;
  /** The user's fps (--fps). For CSV it is the rate; for NPZ/JSON it must equal the file's. */
  fps?: number;
  /** An inferred fps for formats that do not state one (CSV); used only without `fps`. */
  fpsHint?: FpsHint;
  /** Limits per canonical joint, radians; excursions become 'joint_limit' warnings. */
  jointLimitsRad?: JointLimitsRad;
  /**
   * The model's kinematics, to decide an NPZ's joint order from its body_pos_w when it has no
   * joint_names (src/domain/motion/npzJointOrder.ts). Without it the order is not checked and the
   * clip carries a 'joint_order_unverified' warning.
   */
  kinematics?: ForwardKinematics;
}

/** A joint-limit warning with the extent of the excursion run. */
export interface JointLimitExcursion extends JointLimitWarning {
  /** 'lower' or 'upper' limit crossed. */
  side: 'lower' | 'upper';
  limit: number;
  /** Number of consecutive frames outside the limit. */
  runFrames: number;
  /** Furthest value reached during the run. */
  peakValue: number;
}

export function checkInputSize(bytes: Uint8Array, file: string): void {
  if (bytes.length > MAX_INPUT_BYTES) {
    throw new InputError(
      { file },
      `file is ${(bytes.length / 1048576).toFixed(1)} MiB, larger than the ${MAX_INPUT_BYTES / 1048576} MiB limit for motion files`,
    );
  }
  if (bytes.length === 0) throw new InputError({ file }, 'file is empty');
}

export function checkFrameCount(n: number, loc: InputLocation): void {
  if (n > MAX_FRAMES) throw new InputError(loc, `clip has ${n} frames, more than the limit of ${MAX_FRAMES}`);
  if (n < 2) throw new InputError(loc, `clip has ${n} frame${n === 1 ? '' : 's'}; at least 2 are needed`);
}

/** Throws unless fps is a finite number in [MIN_FPS, MAX_FPS]. `what` names its origin in the message. */
export function checkFps(fps: unknown, loc: InputLocation, what: string): number {
  if (typeof fps !== 'number' || Number.isNaN(fps)) {
    throw new InputError(loc, `${what} is not a number (${String(fps)})`);
  }
  if (!Number.isFinite(fps) || fps <= 0 || fps > MAX_FPS) {
    throw new InputError(
      loc,
      `${what} ${fps} is invalid: it must be > 0 and ≤ ${MAX_FPS} (frame rates in [${MIN_FPS}, ${MAX_FPS}] Hz are accepted)`,
    );
  }
  if (fps < MIN_FPS) {
    throw new InputError(
      loc,
      `${what} ${fps} is invalid: it is below ${MIN_FPS} Hz (frame rates in [${MIN_FPS}, ${MAX_FPS}] Hz are accepted)`,
    );
  }
  return fps;
}

/**
 * Why a stored value is physically absurd, or null: root (or, in NPZ, body) position coordinates
 * beyond ±MAX_ROOT_POS_M, joint angles beyond ±MAX_JOINT_ANGLE_RAD. Non-finite values are each codec's
 * own error (checked first, with its wording).
 */
export function boundProblem(kind: 'root_pos' | 'joint_pos', v: number): string | null {
  if (kind === 'root_pos') {
    return Math.abs(v) > MAX_ROOT_POS_M
      ? `position ${formatNumber(v)} m is beyond ±${MAX_ROOT_POS_M} m (MAX_ROOT_POS_M): not a motion in a lab`
      : null;
  }
  return Math.abs(v) > MAX_JOINT_ANGLE_RAD
    ? `joint angle ${formatNumber(v)} rad is beyond ±4π rad (MAX_JOINT_ANGLE_RAD): not a joint angle`
    : null;
}

/**
 * Refuses UTF-16 text (a byte-order mark FF FE or FE FF, or NUL bytes, which UTF-8 text never
 * has): decoded as UTF-8 it would be garbage with a misleading error. Located at the first NUL.
 */
export function checkNotUtf16(bytes: Uint8Array, file: string): void {
  const bom =
    bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
  if (bom) {
    throw new InputError(
      { file, line: 1, column: 1 },
      `the file is UTF-16 encoded (byte-order mark ${bytes[0] === 0xff ? 'FF FE' : 'FE FF'}); save as UTF-8`,
    );
  }
  const nul = bytes.indexOf(0);
  if (nul < 0) return;
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < nul; k++) {
    if (bytes[k] === 0x0a) {
      line++;
      lineStart = k + 1;
    }
  }
  throw new InputError(
    { file, line, column: nul - lineStart + 1 },
    'the file contains NUL bytes: it looks UTF-16 encoded (or binary); save as UTF-8',
  );
}

/** Most names a message lists (of keys or members found in a file); the rest are counted. */
export const MAX_LISTED_NAMES = 20;

/** `a, b, c` of at most MAX_LISTED_NAMES names, each cut to 60 characters, then "and N more". */
export function listNames(names: readonly string[]): string {
  const shown = names.slice(0, MAX_LISTED_NAMES).map((n) => (n.length > 60 ? `${n.slice(0, 57)}...` : n));
  const more = names.length - shown.length;
  return shown.join(', ') + (more > 0 ? `, and ${more} more` : '');
}

/** Index just past the last character that is not a space, tab, CR or LF. */
export function textContentEnd(text: string): number {
  let end = text.length;
  for (;;) {
    const c = text.charCodeAt(end - 1);
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) end--;
    else return end;
  }
}

/** Lines in text[0, end): newlines before `end`, plus one (0 for an empty range); counting stops at `atMost`. */
export function lineCount(text: string, end: number, atMost: number): number {
  if (end === 0) return 0;
  let lines = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < end && lines < atMost; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}

function fpsEqual(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

/**
 * fps for formats that state it (NPZ, JSON). The file's value is used; a user fps must agree
 * with it (an error otherwise: resampling is an explicit step, never a side effect of --fps).
 * When the file has none, the user's fps is used, else it is an error.
 */
export function resolveStatedFps(
  fileFps: number | undefined,
  options: DecodeOptions,
  fpsLoc: InputLocation,
): { fps: number; fpsSource: FpsSource } {
  const user =
    options.fps === undefined ? undefined : checkFps(options.fps, { file: options.file, key: 'fps' }, '--fps');
  if (fileFps === undefined) {
    if (user === undefined) throw new InputError(fpsLoc, 'fps is missing from the file; pass --fps N');
    return { fps: user, fpsSource: 'user' };
  }
  checkFps(fileFps, fpsLoc, 'fps');
  if (user !== undefined && !fpsEqual(user, fileFps)) {
    throw new InputError(
      fpsLoc,
      `the file states fps ${fileFps} but --fps ${user} was given; drop --fps or fix the file`,
    );
  }
  return { fps: fileFps, fpsSource: 'file' };
}

/** Clip name from a path: the base name without its extension. */
export function clipNameFromFile(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? file;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** Lower-case extension without the dot ('' if none). */
export function fileExtension(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? file;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/**
 * Throws an InputError at `loc` for the first non-finite value of `data` (and, with `bound`, the
 * first physically absurd one, boundProblem), described by `describe(flat index)`.
 */
export function checkFiniteValues(
  data: ArrayLike<number>,
  loc: InputLocation,
  describe: (flat: number) => string,
  bound?: 'root_pos' | 'joint_pos',
): void {
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (v - v !== 0) throw new InputError(loc, `${describe(i)} is ${v} (NaN and Inf are not allowed)`);
    const absurd = bound ? boundProblem(bound, v) : null;
    if (absurd) throw new InputError(loc, `${describe(i)}: ${absurd}`);
  }
}

/**
 * The root pose of a clip stored as per-body arrays whose body 0 is the root: positions (N, B, 3)
 * in metres and rotations (N, B, 4) in **x, y, z, w** order (HoloMotion NPZ, ProtoMotions), as
 * rootPosM (N × 3) and rootQuatWxyz (N × 4, w first). The root's values must be finite and its
 * quaternion unit; errors name `posKey` / `rotKey` and the [frame, 0, component] index.
 */
export function rootPoseFromBodyArraysXyzw(
  pos: Float64Array,
  rotXyzw: Float64Array,
  frameCount: number,
  bodyCount: number,
  loc: { file: string; posKey: string; rotKey: string },
): { rootPosM: Float64Array; rootQuatWxyz: Float64Array } {
  const rootPosM = new Float64Array(frameCount * 3);
  const rootQuatWxyz = new Float64Array(frameCount * 4);
  const posLoc = { file: loc.file, key: loc.posKey };
  const rotLoc = { file: loc.file, key: loc.rotKey };
  for (let k = 0; k < frameCount; k++) {
    const p = pos.subarray(k * bodyCount * 3, k * bodyCount * 3 + 3);
    checkFiniteValues(p, posLoc, (c) => `${loc.posKey}[${k}, 0, ${c}]`, 'root_pos');
    rootPosM.set(p, k * 3);
    const xyzw = rotXyzw.subarray(k * bodyCount * 4, k * bodyCount * 4 + 4);
    checkFiniteValues(xyzw, rotLoc, (c) => `${loc.rotKey}[${k}, 0, ${c}]`);
    const problem = quatNormProblem(xyzw, 0);
    if (problem) throw new InputError(rotLoc, `frame ${k}, body 0 (root): ${problem}`);
    rootQuatWxyz[k * 4] = xyzw[3];
    rootQuatWxyz[k * 4 + 1] = xyzw[0];
    rootQuatWxyz[k * 4 + 2] = xyzw[1];
    rootQuatWxyz[k * 4 + 3] = xyzw[2];
  }
  return { rootPosM, rootQuatWxyz };
}

/** Norm of the quaternion at `off`, or the error text if it is not within tolerance of 1. */
export function quatNormProblem(q: ArrayLike<number>, off: number): string | null {
  const n = Math.hypot(q[off], q[off + 1], q[off + 2], q[off + 3]);
  if (Math.abs(n - 1) > QUAT_NORM_TOLERANCE) {
    return `quaternion norm is ${formatNumber(n)}, not 1 (tolerance ${QUAT_NORM_TOLERANCE})`;
  }
  return null;
}

export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 1e-3 || v === 0 ? String(Number(v.toPrecision(7))) : v.toExponential(3);
}

/**
 * Normalises N quaternions (wxyz, flat) in place and makes their sign continuous: q and −q are
 * the same rotation, so frame k is negated when dot(q_k, q_{k−1}) < 0. Frame 0 keeps its sign.
 * Idempotent: a quaternion whose squared norm is already 1 within 1e-15 is left bit-for-bit as
 * it is, so decoding an encoded clip reproduces the same numbers (and the same id).
 */
export function normaliseQuaternionsInPlace(q: Float64Array, n: number): void {
  for (let k = 0; k < n; k++) {
    const o = k * 4;
    let w = q[o];
    let x = q[o + 1];
    let y = q[o + 2];
    let z = q[o + 3];
    const n2 = w * w + x * x + y * y + z * z;
    if (Math.abs(n2 - 1) > 1e-15) {
      const s = 1 / Math.sqrt(n2);
      w *= s;
      x *= s;
      y *= s;
      z *= s;
    }
    if (k > 0 && w * q[o - 4] + x * q[o - 3] + y * q[o - 2] + z * q[o - 1] < 0) {
      w = -w;
      x = -x;
      y = -y;
      z = -z;
    }
    q[o] = w;
    q[o + 1] = x;
    q[o + 2] = y;
    q[o + 3] = z;
  }
}

/**
 * Joint-limit excursions, frame-major: one warning per run of consecutive frames where a joint is
 * beyond a limit by more than JOINT_LIMIT_TOLERANCE_RAD, at the run's first frame and value.
 * At most MAX_JOINT_LIMIT_WARNINGS are listed; a final 'joint_limit_more' warning counts the rest.
 */
export function jointLimitWarnings(jointPosRad: Float64Array, frameCount: number, limits: JointLimitsRad): Warning[] {
  if (limits.length !== G1_NUM_JOINTS) {
    throw new Error(`jointLimitsRad has ${limits.length} entries, expected ${G1_NUM_JOINTS}`);
  }
  const J = G1_NUM_JOINTS;
  const lo = new Float64Array(J);
  const hi = new Float64Array(J);
  for (let j = 0; j < J; j++) {
    const l = limits[j];
    lo[j] = l ? l[0] - JOINT_LIMIT_TOLERANCE_RAD : -Infinity;
    hi[j] = l ? l[1] + JOINT_LIMIT_TOLERANCE_RAD : Infinity;
  }
  const open: (JointLimitExcursion | null)[] = new Array<JointLimitExcursion | null>(J).fill(null);
  const inRun = new Uint8Array(J); // 0 none, 1 below, 2 above
  const out: Warning[] = [];
  let total = 0;
  const close = (j: number) => {
    const w = open[j];
    if (w) {
      w.message = `${w.joint} is ${formatNumber(w.value)} rad at frame ${w.frame}, ${w.side === 'lower' ? 'below its lower' : 'above its upper'} limit ${formatNumber(w.limit)} rad (for ${w.runFrames} frame${w.runFrames === 1 ? '' : 's'}, furthest ${formatNumber(w.peakValue)} rad)`;
    }
    open[j] = null;
    inRun[j] = 0;
  };
  for (let k = 0; k < frameCount; k++) {
    const o = k * J;
    for (let j = 0; j < J; j++) {
      const v = jointPosRad[o + j];
      const state = v < lo[j] ? 1 : v > hi[j] ? 2 : 0;
      if (state === inRun[j]) {
        const w = open[j];
        if (state !== 0 && w) {
          w.runFrames++;
          if (state === 1 ? v < w.peakValue : v > w.peakValue) w.peakValue = v;
        }
        continue;
      }
      if (inRun[j] !== 0) close(j);
      if (state === 0) continue;
      inRun[j] = state;
      total++;
      if (total <= MAX_JOINT_LIMIT_WARNINGS) {
        const lim = limits[j] as readonly [number, number];
        const w: JointLimitExcursion = {
          code: 'joint_limit',
          message: '',
          joint: G1_JOINT_NAMES[j],
          frame: k,
          value: v,
          side: state === 1 ? 'lower' : 'upper',
          limit: state === 1 ? lim[0] : lim[1],
          runFrames: 1,
          peakValue: v,
        };
        open[j] = w;
        out.push(w);
      }
    }
  }
  for (let j = 0; j < J; j++) if (inRun[j] !== 0) close(j);
  if (total > MAX_JOINT_LIMIT_WARNINGS) {
    out.push({
      code: 'joint_limit_more',
      message: `${total - MAX_JOINT_LIMIT_WARNINGS} more joint-limit excursions not listed (${total} in all)`,
    });
  }
  return out;
}

/**
 * Clip id: `clip-` + the first 16 hex digits of SHA-256 over fps, frameCount, rootPosM,
 * rootQuatWxyz and jointPosRad, each as little-endian float64 in that order (−0 written as +0).
 * The same motion at the same fps gets the same id whatever file format it came from.
 */
export function computeClipId(
  fps: number,
  frameCount: number,
  rootPosM: Float64Array,
  rootQuatWxyz: Float64Array,
  jointPosRad: Float64Array,
): string {
  const h = new Sha256();
  const chunk = new Float64Array(8192);
  const bytes = new Uint8Array(chunk.buffer);
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  let fill = 0;
  const flush = () => {
    if (fill === 0) return;
    const b = bytes.subarray(0, fill * 8);
    if (!littleEndian) {
      for (let i = 0; i < b.length; i += 8) b.subarray(i, i + 8).reverse();
    }
    h.update(b);
    fill = 0;
  };
  const push = (v: number) => {
    chunk[fill++] = v + 0; // −0 → +0
    if (fill === chunk.length) flush();
  };
  push(fps);
  push(frameCount);
  for (const arr of [rootPosM, rootQuatWxyz, jointPosRad]) {
    for (let i = 0; i < arr.length; i++) push(arr[i]);
  }
  flush();
  return 'clip-' + h.digestHex().slice(0, 16);
}

export type ClipParts = Pick<
  MotionClip,
  'name' | 'fps' | 'frameCount' | 'rootPosM' | 'jointPosRad' | 'jointVelRadS' | 'bodyPosW' | 'capabilityGroup'
> & {
  format: ClipFormat;
  fpsSource: FpsSource;
  /** wxyz, validated (norms within tolerance); normalised and sign-fixed here. */
  rootQuatWxyz: Float64Array;
  warnings?: Warning[];
};

/** Builds the MotionClip: quaternion clean-up, joint-limit warnings, ids and provenance. */
export function finalizeClip(
  parts: ClipParts,
  fileBytes: Uint8Array,
  options: DecodeOptions,
  fileSha256?: string,
): MotionClip {
  const { frameCount } = parts;
  normaliseQuaternionsInPlace(parts.rootQuatWxyz, frameCount);
  const warnings: Warning[] = [...(parts.warnings ?? [])];
  if (options.jointLimitsRad)
    warnings.push(...jointLimitWarnings(parts.jointPosRad, frameCount, options.jointLimitsRad));
  const clip: MotionClip = {
    id: computeClipId(parts.fps, frameCount, parts.rootPosM, parts.rootQuatWxyz, parts.jointPosRad),
    name: parts.name,
    fps: parts.fps,
    frameCount,
    rootPosM: parts.rootPosM,
    rootQuatWxyz: parts.rootQuatWxyz,
    jointPosRad: parts.jointPosRad,
    provenance: {
      file: options.file,
      format: parts.format,
      fileSha256: fileSha256 ?? new Sha256().update(fileBytes).digestHex(),
      fpsSource: parts.fpsSource,
    },
    warnings,
  };
  if (parts.jointVelRadS) clip.jointVelRadS = parts.jointVelRadS;
  if (parts.bodyPosW) clip.bodyPosW = parts.bodyPosW;
  if (parts.capabilityGroup) clip.capabilityGroup = parts.capabilityGroup;
  return clip;
}
