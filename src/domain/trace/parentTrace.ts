// Parent trace identity (DESIGN §3 Trace): one matched pair — a WBC binding (at a version and
// checkpoint) × a clip × a calibration — under one model, controller adapter, body set and metric
// contract. The simulated and the physical episodes of the pair hang under it as sibling
// branches, so a cross-domain reduction is a join on this id, never a reconciliation.
//
// parent_trace_id = "pt-" + the first 32 hex digits of sha256 over the UTF-8 text
//
//     mb-parent-trace/1\n
//     binding=<id>@<version>\n
//     checkpoint=<checkpoint hash, or "-" when the binding has none>\n
//     clip=<clip id>\n
//     reference=<sha256 of the clip content: see clipContentSha256>\n
//     model=<sha256 of the robot model file>\n
//     adapter=<controller adapter version>\n
//     body_set=<body names, comma-separated, in model order>\n
//     contract=<metric contract id>\n
//     calibration=<calibration id, or "-" for qualification (no calibration)>\n
//
// What is deliberately not part of it: the backend (simulator worker, robot link), the seed,
// the run id and the campaign — those vary between the episodes *under* one parent. Identical
// inputs always give the same id, so storing a parent trace is an idempotent upsert.

import type { MotionClip } from '../motion/motionClip';
import { Sha256, sha256HexOfString } from '../hash/sha256';
import type { RobotProfile } from '../robot/robotProfile';

export const PARENT_TRACE_SCHEME = 'mb-parent-trace/1';

/**
 * The version of the controller adapter of this code base: how robot state becomes a policy's
 * observation and its action becomes joint targets (src/domain/wbc/observationBuilder.ts, the
 * canonical joint order of src/domain/robot/g1Joints.ts). The same on both branches of a pair.
 * Bump it whenever that mapping changes behaviour.
 */
export const DEFAULT_ADAPTER_VERSION = 'mb-adapter/1';

export interface ParentTraceIdentity {
  bindingId: string;
  bindingVersion: string;
  /** The binding's checkpoint hash (ONNX bytes, remote policy), null for the builtin tracker. */
  checkpointHash: string | null;
  /** Content id of the clip (`clip-…`). */
  clipId: string;
  /** Full sha256 of the clip content (clipContentSha256), 64 hex. */
  referenceSha256: string;
  /** sha256 of the robot model file, 64 hex. */
  modelSha256: string;
  adapterVersion: string;
  /** Bodies the contract measures (MPJPE-l: every body of the model), in model order. */
  bodySet: readonly string[];
  contractId: string;
  /** The calibration the pair was initialised from; null for qualification. */
  calibrationId: string | null;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Problems with an identity (empty when it is well formed). */
export function parentTraceProblems(i: ParentTraceIdentity): string[] {
  const out: string[] = [];
  const text = (k: string, v: unknown, nullable = false) => {
    if (v === null && nullable) return;
    if (typeof v !== 'string' || v.length === 0) out.push(`${k} must be a non-empty string`);
    else if (/[\n\r\t]/.test(v)) out.push(`${k} must not contain a tab or newline`);
  };
  text('bindingId', i.bindingId);
  text('bindingVersion', i.bindingVersion);
  text('checkpointHash', i.checkpointHash, true);
  text('clipId', i.clipId);
  text('adapterVersion', i.adapterVersion);
  text('contractId', i.contractId);
  text('calibrationId', i.calibrationId, true);
  if (typeof i.bindingId === 'string' && i.bindingId.includes('@')) out.push('bindingId must not contain "@"');
  if (!SHA256_HEX.test(i.referenceSha256)) out.push('referenceSha256 must be 64 lowercase hex digits');
  if (!SHA256_HEX.test(i.modelSha256)) out.push('modelSha256 must be 64 lowercase hex digits');
  if (!Array.isArray(i.bodySet) || i.bodySet.length === 0) out.push('bodySet must list at least one body');
  else if (i.bodySet.some((b) => typeof b !== 'string' || b === '' || /[,\n\r\t]/.test(b)))
    out.push('bodySet names must be non-empty and contain no comma, tab or newline');
  return out;
}

/** The text the id hashes (see the file header). Throws a RangeError on a malformed identity. */
export function parentTraceText(i: ParentTraceIdentity): string {
  const problems = parentTraceProblems(i);
  if (problems.length > 0) throw new RangeError(`parent trace identity: ${problems.join('; ')}`);
  return (
    `${PARENT_TRACE_SCHEME}\n` +
    `binding=${i.bindingId}@${i.bindingVersion}\n` +
    `checkpoint=${i.checkpointHash ?? '-'}\n` +
    `clip=${i.clipId}\n` +
    `reference=${i.referenceSha256}\n` +
    `model=${i.modelSha256}\n` +
    `adapter=${i.adapterVersion}\n` +
    `body_set=${i.bodySet.join(',')}\n` +
    `contract=${i.contractId}\n` +
    `calibration=${i.calibrationId ?? '-'}\n`
  );
}

export function parentTraceId(i: ParentTraceIdentity): string {
  return 'pt-' + sha256HexOfString(parentTraceText(i)).slice(0, 32);
}

/**
 * Full sha256 (64 hex) of a clip's content, over the same bytes as its id (computeClipId in
 * src/domain/motion/clipCommon.ts: fps, frameCount, root positions, root quaternions, joint
 * angles as little-endian float64, −0 as +0), so `clip.id` is `clip-` + its first 16 digits.
 */
export function clipContentSha256(
  clip: Pick<MotionClip, 'fps' | 'frameCount' | 'rootPosM' | 'rootQuatWxyz' | 'jointPosRad'>,
): string {
  const h = new Sha256();
  const buf = new Float64Array(4096);
  const bytes = new Uint8Array(buf.buffer);
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  let fill = 0;
  const flush = () => {
    if (fill === 0) return;
    const b = bytes.subarray(0, fill * 8);
    if (!littleEndian) for (let i = 0; i < b.length; i += 8) b.subarray(i, i + 8).reverse();
    h.update(b);
    fill = 0;
  };
  const push = (v: number) => {
    buf[fill++] = v + 0;
    if (fill === buf.length) flush();
  };
  push(clip.fps);
  push(clip.frameCount);
  for (const a of [clip.rootPosM, clip.rootQuatWxyz, clip.jointPosRad]) for (let i = 0; i < a.length; i++) push(a[i]);
  flush();
  return h.digestHex();
}

/** The body set of mb-metrics/1 on a model: every tracked body (pelvis included), in model order. */
export function bodySetOf(profile: Pick<RobotProfile, 'bodies' | 'trackedBodyIndices'>): string[] {
  return profile.trackedBodyIndices.map((i) => profile.bodies[i].name);
}
