import { InputError } from '../problems';
import type { ForwardKinematics } from '../robot/forwardKinematics';
import { G1_JOINT_NAMES } from '../robot/g1Joints';
import { G1_ISAACLAB_JOINT_NAMES } from '../robot/jointOrder';

// The joint order of an mjlab/BeyondMimic motion NPZ. The format has no
// mandatory joint-name key: mjlab writes joints in MJCF (canonical) order, whole_body_tracking
// in Isaac Lab order (EricCamper04.npz), and neither says so. The order is decided, never
// assumed:
//   1. a `joint_names` member readable as strings → those names;
//   2. else forward kinematics of the file's root pose and joint angles, read in each candidate
//      order, against the file's own body_pos_w: the right order reproduces the stored bodies to
//      float precision, the wrong one is centimetres off. Body order in the file is not assumed
//      either (Isaac Lab stores bodies breadth-first): every FK body is matched to the nearest
//      stored body, after removing each side's centroid, and the median over bodies and frames
//      is compared (wbc-mjlab's clips store body 0 a few centimetres off the rest);
//   3. else refuse.

export type NpzJointOrder = 'canonical' | 'isaaclab';

export interface NpzJointOrderDecision {
  order: NpzJointOrder;
  by: 'joint_names' | 'fk_residual';
  /** Median nearest-body residual per candidate order, metres (fk_residual only). */
  residualM?: Record<NpzJointOrder, number>;
}

/** Decision thresholds: the right order's median residual is within 10 mm, the wrong one's 3× and 20 mm worse. */
export const ORDER_RESIDUAL_ACCEPT_M = 0.01;
export const ORDER_RESIDUAL_MARGIN_M = 0.02;

const ORDERS: Record<NpzJointOrder, readonly string[]> = {
  canonical: G1_JOINT_NAMES,
  isaaclab: G1_ISAACLAB_JOINT_NAMES,
};

/** Index in canonical order of each column of a file whose joints are in `order`. */
export function columnsToCanonical(order: NpzJointOrder): Int32Array {
  const names = ORDERS[order];
  return Int32Array.from(names, (n) => G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number]));
}

/** Reorders frames × 29 values from `order` to canonical, in place. */
export function reorderToCanonical(values: Float64Array, frames: number, order: NpzJointOrder): void {
  if (order === 'canonical') return;
  const map = columnsToCanonical(order);
  const J = map.length;
  const row = new Float64Array(J);
  for (let f = 0; f < frames; f++) {
    for (let i = 0; i < J; i++) row[map[i]] = values[f * J + i];
    values.set(row, f * J);
  }
}

/** The order named by a joint_names list, or an InputError naming what does not fit. */
export function orderFromJointNames(names: readonly string[], file: string): NpzJointOrderDecision {
  for (const [order, list] of Object.entries(ORDERS) as [NpzJointOrder, readonly string[]][]) {
    if (names.length === list.length && names.every((n, i) => n === list[i])) return { order, by: 'joint_names' };
  }
  throw new InputError(
    { file, key: 'joint_names' },
    `the joint names are neither the model's order nor Isaac Lab's: ${names.join(', ')}`,
  );
}

/**
 * Decides the order from the FK residual against body_pos_w (frames × B × 3). Samples up to 64
 * frames spread over the clip. Throws InputError when the evidence does not decide.
 */
export function orderFromFkResidual(
  file: string,
  frames: number,
  rootPosM: ArrayLike<number>,
  rootQuatWxyz: ArrayLike<number>,
  jointPos: Float64Array,
  bodyPosW: Float64Array,
  bodies: number,
  fk: ForwardKinematics,
): NpzJointOrderDecision {
  const J = fk.jointCount;
  const FB = fk.bodyCount;
  const pos = new Float64Array(3 * FB);
  const quat = new Float64Array(4 * FB);
  const joints = new Float64Array(J);
  const step = Math.max(1, Math.floor(frames / 64));
  const residualM = {} as Record<NpzJointOrder, number>;
  for (const order of Object.keys(ORDERS) as NpzJointOrder[]) {
    const map = columnsToCanonical(order);
    const residuals: number[] = [];
    for (let f = 0; f < frames; f += step) {
      for (let i = 0; i < J; i++) joints[map[i]] = jointPos[f * J + i];
      fk.compute(
        [rootPosM[3 * f], rootPosM[3 * f + 1], rootPosM[3 * f + 2]],
        [rootQuatWxyz[4 * f], rootQuatWxyz[4 * f + 1], rootQuatWxyz[4 * f + 2], rootQuatWxyz[4 * f + 3]],
        joints,
        pos,
        quat,
      );
      const cf = centroid(pos, 0, FB);
      const cs = centroid(bodyPosW, f * bodies * 3, bodies);
      for (let b = 0; b < FB; b++) {
        let best = Infinity;
        for (let k = 0; k < bodies; k++) {
          const o = (f * bodies + k) * 3;
          const d = Math.hypot(
            pos[3 * b] - cf[0] - (bodyPosW[o] - cs[0]),
            pos[3 * b + 1] - cf[1] - (bodyPosW[o + 1] - cs[1]),
            pos[3 * b + 2] - cf[2] - (bodyPosW[o + 2] - cs[2]),
          );
          if (d < best) best = d;
        }
        residuals.push(best);
      }
    }
    residuals.sort((a, b) => a - b);
    residualM[order] = residuals[Math.floor(residuals.length / 2)];
  }
  const [best, other] =
    residualM.canonical <= residualM.isaaclab
      ? (['canonical', 'isaaclab'] as const)
      : (['isaaclab', 'canonical'] as const);
  const mm = (v: number) => `${(v * 1000).toFixed(1)} mm`;
  if (!(
    residualM[best] < ORDER_RESIDUAL_ACCEPT_M &&
    residualM[other] > 3 * residualM[best] &&
    residualM[other] - residualM[best] > ORDER_RESIDUAL_MARGIN_M
  ))
    throw new InputError(
      { file, key: 'joint_pos' },
      `the joint order cannot be decided: the file has no joint_names, and forward kinematics against its body_pos_w fits neither order well enough (median body residual: model order ${mm(residualM.canonical)}, Isaac Lab order ${mm(residualM.isaaclab)}); refused rather than misread`,
    );
  return { order: best, by: 'fk_residual', residualM };
}

function centroid(p: ArrayLike<number>, offset: number, n: number): [number, number, number] {
  let x = 0,
    y = 0,
    z = 0;
  for (let b = 0; b < n; b++) {
    x += p[offset + 3 * b];
    y += p[offset + 3 * b + 1];
    z += p[offset + 3 * b + 2];
  }
  return [x / n, y / n, z / n];
}
