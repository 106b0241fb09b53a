import { QUAT_IDENTITY, quatConj, quatMul, quatRotate } from '../math/quat';
import { computeClipId } from '../motion/clipCommon';
import type { MotionClip } from '../motion/motionClip';
import type { ForwardKinematics } from '../robot/forwardKinematics';
import type { RobotProfile } from '../robot/robotProfile';
import type { QuatWxyz } from '../units';
import { policyToCanonical } from '../robot/jointOrder';
import type { OnnxModelInfo } from './onnxModelInfo';
import type { TrackingPolicySpec } from './trackingPolicy';
import { angularVelocity, gradient, type TrackingReference } from './trackingReference';

// The reference motion a policy file carries, as a MotionClip the console can
// show, record and score, and as the TrackingReference the policy observes — both from the
// exporter's own per-frame values:
//   beyondmimic   joint_pos/joint_vel (policy order) and body_*_w over `body_names`
//                 (wxyz; root = pelvis, body 0; anchor = anchor_body_name)
//   holosoma-wbt  joint_pos/joint_vel (dof_names order) and the torso pose only: ref_pos_xyz,
//                 ref_quat_xyzw (xyzw → wxyz here); the pelvis is recovered from the torso through
//                 the waist joints by the model's kinematics
// The clip id is computed like every other clip's (fps and numeric content), so the same motion
// gets the same id wherever it came from.

export interface BakedMotionResult {
  clip: MotionClip;
  reference: TrackingReference;
  /**
   * FK of the clip on the model against the poses the file carries: max and mean body-position
   * residual (m) over all frames and carried bodies that the model has (null if none compare).
   */
  fkResidualM: { max: number; mean: number; bodies: number; worstBody: string; worstFrame: number } | null;
}

export class BakedMotionError extends Error {
  override readonly name = 'BakedMotionError';
}

function constant(info: OnnxModelInfo, name: string): Float32Array {
  const c = info.timeIndexed[name];
  if (!c) throw new BakedMotionError(`${info.file}: no baked "${name}"`);
  return c.data;
}

/** `sourceSha256`: the policy's content hash, recorded as the clip's file hash. */
export function bakedMotion(
  info: OnnxModelInfo,
  spec: TrackingPolicySpec,
  profile: RobotProfile,
  fk: ForwardKinematics,
  name: string,
  sourceSha256: string,
): BakedMotionResult {
  const baked = spec.baked;
  if (!baked) throw new BakedMotionError(`${info.file}: the ${spec.family} policy carries no reference motion`);
  const F = baked.frames;
  const J = spec.jointOrder.canonicalOf.length;
  const jp = constant(info, 'joint_pos');
  const jv = constant(info, 'joint_vel');
  const jointPosRad = new Float64Array(F * J);
  const jointVelRadS = new Float64Array(F * J);
  for (let f = 0; f < F; f++) {
    policyToCanonical(spec.jointOrder, jp, jointPosRad, f * J, f * J);
    policyToCanonical(spec.jointOrder, jv, jointVelRadS, f * J, f * J);
  }
  const rootPosM = new Float64Array(3 * F);
  const rootQuatWxyz = new Float64Array(4 * F);
  const anchorPosM = new Float64Array(3 * F);
  const anchorQuatWxyz = new Float64Array(4 * F);
  const anchorLinVelMps = new Float64Array(3 * F);
  const anchorAngVelRadS = new Float64Array(3 * F);
  const bodyIndex = (n: string) => profile.bodies.findIndex((b) => b.name === n);
  const anchorModel = bodyIndex(spec.anchorBody);
  if (anchorModel < 0)
    throw new BakedMotionError(`${info.file}: the model has no body "${spec.anchorBody}" (the policy's anchor)`);
  const B = profile.bodies.length;
  const pos = new Float64Array(3 * B);
  const quat = new Float64Array(4 * B);

  if (spec.family === 'beyondmimic') {
    const nb = baked.bodyNames.length;
    const bp = constant(info, 'body_pos_w');
    const bq = constant(info, 'body_quat_w');
    const bl = constant(info, 'body_lin_vel_w');
    const ba = constant(info, 'body_ang_vel_w');
    const a = baked.bodyNames.indexOf(spec.anchorBody);
    for (let f = 0; f < F; f++) {
      for (let c = 0; c < 3; c++) {
        rootPosM[3 * f + c] = bp[f * nb * 3 + c];
        anchorPosM[3 * f + c] = bp[(f * nb + a) * 3 + c];
        anchorLinVelMps[3 * f + c] = bl[(f * nb + a) * 3 + c];
        anchorAngVelRadS[3 * f + c] = ba[(f * nb + a) * 3 + c];
      }
      for (let c = 0; c < 4; c++) {
        rootQuatWxyz[4 * f + c] = bq[f * nb * 4 + c];
        anchorQuatWxyz[4 * f + c] = bq[(f * nb + a) * 4 + c];
      }
    }
  } else if (spec.family === 'holosoma-wbt') {
    const rp = constant(info, 'ref_pos_xyz');
    const rq = constant(info, 'ref_quat_xyzw');
    const zero = [0, 0, 0];
    for (let f = 0; f < F; f++) {
      const torso: QuatWxyz = [rq[4 * f + 3], rq[4 * f], rq[4 * f + 1], rq[4 * f + 2]]; // xyzw → wxyz
      anchorQuatWxyz.set(torso, 4 * f);
      anchorPosM.set([rp[3 * f], rp[3 * f + 1], rp[3 * f + 2]], 3 * f);
      // torso in the pelvis frame for this frame's joints; pelvis = torso ⊗ (torso in pelvis)⁻¹
      fk.compute(zero, QUAT_IDENTITY, jointPosRad.subarray(f * J, f * J + J), pos, quat);
      const inPelvis: QuatWxyz = [
        quat[4 * anchorModel],
        quat[4 * anchorModel + 1],
        quat[4 * anchorModel + 2],
        quat[4 * anchorModel + 3],
      ];
      const pelvis = quatMul(torso, quatConj(inPelvis));
      rootQuatWxyz.set(pelvis, 4 * f);
      const r = quatRotate(pelvis, [pos[3 * anchorModel], pos[3 * anchorModel + 1], pos[3 * anchorModel + 2]]);
      rootPosM.set([rp[3 * f] - r[0], rp[3 * f + 1] - r[1], rp[3 * f + 2] - r[2]], 3 * f);
    }
    gradient(anchorPosM, F, 3, 1 / baked.fps, anchorLinVelMps);
    angularVelocity(anchorQuatWxyz, F, 1 / baked.fps, anchorAngVelRadS);
  } else throw new BakedMotionError(`${info.file}: no baked-motion reader for family ${spec.family}`);

  for (let f = 0; f < F; f++) {
    const o = 4 * f;
    const n = Math.hypot(rootQuatWxyz[o], rootQuatWxyz[o + 1], rootQuatWxyz[o + 2], rootQuatWxyz[o + 3]);
    const s = rootQuatWxyz[o] < 0 ? -1 / n : 1 / n;
    for (let c = 0; c < 4; c++) rootQuatWxyz[o + c] *= s;
  }

  // FK of the clip on this model against the carried body positions.
  let fkResidualM: BakedMotionResult['fkResidualM'] = null;
  const carried =
    spec.family === 'beyondmimic'
      ? baked.bodyNames.map((bn, i) => ({ i, m: bodyIndex(bn), name: bn })).filter((b) => b.m >= 0)
      : [{ i: 0, m: anchorModel, name: spec.anchorBody }];
  if (carried.length > 0) {
    const bp = spec.family === 'beyondmimic' ? constant(info, 'body_pos_w') : constant(info, 'ref_pos_xyz');
    const nb = spec.family === 'beyondmimic' ? baked.bodyNames.length : 1;
    let max = 0,
      sum = 0,
      count = 0,
      worstBody = '',
      worstFrame = 0;
    for (let f = 0; f < F; f++) {
      fk.compute(rootPosM, rootQuatWxyz, jointPosRad, pos, quat, 3 * f, 4 * f, J * f);
      for (const b of carried) {
        const d = Math.hypot(
          pos[3 * b.m] - bp[(f * nb + b.i) * 3],
          pos[3 * b.m + 1] - bp[(f * nb + b.i) * 3 + 1],
          pos[3 * b.m + 2] - bp[(f * nb + b.i) * 3 + 2],
        );
        sum += d;
        count++;
        if (d > max) {
          max = d;
          worstBody = b.name;
          worstFrame = f;
        }
      }
    }
    fkResidualM = { max, mean: sum / count, bodies: carried.length, worstBody, worstFrame };
  }

  const fps = baked.fps;
  const clip: MotionClip = {
    id: computeClipId(fps, F, rootPosM, rootQuatWxyz, jointPosRad),
    name,
    fps,
    frameCount: F,
    rootPosM,
    rootQuatWxyz,
    jointPosRad,
    jointVelRadS,
    provenance: { file: info.file, format: 'policy-baked', fileSha256: sourceSha256, fpsSource: 'file' },
    warnings: [],
  };
  const reference: TrackingReference = {
    frames: F,
    rateHz: fps,
    jointPosRad,
    jointVelRadS,
    rootPosM,
    rootQuatWxyz,
    anchorPosM,
    anchorQuatWxyz,
    anchorLinVelMps,
    anchorAngVelRadS,
  };
  return { clip, reference, fkResidualM };
}
