import type { WireClip } from '../bridge/g1BridgeContract';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';

// A short reference clip that starts where the emulated robot stands (its standing start pose)
// and raises both arms forward and back: the root stays put, the shoulders' pitch follows
// −A·sin²(π·t/T). A real robot episode starts from the robot's actual pose, so a clip whose
// first frame is that pose is what a test or a demo can track without a calibration step.

export interface StandingClipOptions {
  rootPosM: readonly [number, number, number];
  jointPosRad: readonly number[];
  seconds?: number;
  fps?: number;
  /** Peak shoulder-pitch change, rad (default 0.6). */
  amplitudeRad?: number;
  name?: string;
}

const LEFT_SHOULDER_PITCH = G1_JOINT_NAMES.indexOf('left_shoulder_pitch_joint');
const RIGHT_SHOULDER_PITCH = G1_JOINT_NAMES.indexOf('right_shoulder_pitch_joint');

export function standingArmRaiseClip(o: StandingClipOptions): WireClip {
  const seconds = o.seconds ?? 3;
  const fps = o.fps ?? 50;
  const A = o.amplitudeRad ?? 0.6;
  if (o.jointPosRad.length !== G1_NUM_JOINTS)
    throw new RangeError(`the standing pose needs ${G1_NUM_JOINTS} joint angles, got ${o.jointPosRad.length}`);
  const n = Math.round(seconds * fps) + 1;
  const rootPos: number[][] = [];
  const rootQuat: number[][] = [];
  const joints: number[][] = [];
  for (let k = 0; k < n; k++) {
    const s = Math.sin((Math.PI * k) / (n - 1));
    const q = [...o.jointPosRad];
    q[LEFT_SHOULDER_PITCH] -= A * s * s;
    q[RIGHT_SHOULDER_PITCH] -= A * s * s;
    rootPos.push([...o.rootPosM]);
    rootQuat.push([1, 0, 0, 0]);
    joints.push(q);
  }
  return {
    format: 'motionbench-clip/1',
    name: o.name ?? `standing arm raise ${seconds} s`,
    fps,
    capability_group: 'upper_body',
    joint_order: [...G1_JOINT_NAMES],
    frames: { root_pos_m: rootPos, root_quat_wxyz: rootQuat, joint_pos_rad: joints },
  };
}
