import type { JointLimits, RunnerEvent } from '../../src/domain/g1Runner/g1RunnerSafety';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';

// What the runner reducer's tests feed it: the robot's joint limits (±2 rad, 50 N·m everywhere)
// and a LowState_ as the reducer sees one (the remote's key bits in bytes 2–3, mode machine 5).

export const J = G1_NUM_JOINTS;
export const limits: JointLimits = {
  lowerRad: new Float64Array(J).fill(-2),
  upperRad: new Float64Array(J).fill(2),
  effortNm: new Float64Array(J).fill(50),
};
export const zeros = new Float64Array(J);

/** A lowstate at `nowMs`: joints `q` (else zero) at rest, attitude `quat` wxyz (else upright), remote `keys`. */
export function lowstate(
  nowMs: number,
  o: { q?: ArrayLike<number>; quat?: number[]; keys?: number } = {},
): RunnerEvent {
  const remote = new Uint8Array(40);
  remote[2] = (o.keys ?? 0) & 0xff;
  remote[3] = (o.keys ?? 0) >> 8;
  return {
    type: 'lowstate',
    nowMs,
    q: o.q ?? zeros,
    dq: zeros,
    quatWxyz: o.quat ?? [1, 0, 0, 0],
    wirelessRemote: remote,
    modeMachine: 5,
  };
}
