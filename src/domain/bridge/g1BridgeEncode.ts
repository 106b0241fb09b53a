import type { InitialState } from '../episode/initialState';
import { createStateFrame, type StateFrame } from '../robot/stateFrame';
import { MOTIONBENCH_CLIP_FORMAT } from '../motion/motionbenchJson';
import type { MotionClip } from '../motion/motionClip';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import type { WbcBinding } from '../wbc/wbcBinding';
import {
  G1_BRIDGE_MAX_CONTACTS,
  type LowStateMsg,
  type RootStateMsg,
  type RootStateSource,
  type WireBinding,
  type WireClip,
  type WireCommand,
  type WireInitialState,
} from './g1BridgeContract';

// Domain objects → `g1-bridge/1` wire shapes, and lowstate (+ root_state) → StateFrame.
// JSON.stringify writes the shortest text that reads back to the same float64, so a clip sent
// in a prepare decodes to the same numbers and the same content id on the far side.

const arr = (a: ArrayLike<number>): number[] => Array.from(a);

function rows(a: Float64Array, n: number, w: number): number[][] {
  const out = new Array<number[]>(n);
  for (let k = 0; k < n; k++) out[k] = arr(a.subarray(k * w, k * w + w));
  return out;
}

export function clipToWire(clip: MotionClip, options: { includeJointVelocities?: boolean } = {}): WireClip {
  const n = clip.frameCount;
  const frames: WireClip['frames'] = {
    root_pos_m: rows(clip.rootPosM, n, 3),
    root_quat_wxyz: rows(clip.rootQuatWxyz, n, 4),
    joint_pos_rad: rows(clip.jointPosRad, n, G1_NUM_JOINTS),
  };
  if (options.includeJointVelocities && clip.jointVelRadS)
    frames.joint_vel_rad_s = rows(clip.jointVelRadS, n, G1_NUM_JOINTS);
  return {
    format: MOTIONBENCH_CLIP_FORMAT,
    name: clip.name,
    fps: clip.fps,
    capability_group: clip.capabilityGroup ?? null,
    joint_order: [...G1_JOINT_NAMES],
    frames,
  };
}

/** The binding record as JSON (a deep copy; readonly arrays become plain arrays). */
export function bindingToWire(b: WbcBinding): WireBinding {
  return JSON.parse(JSON.stringify(b)) as WireBinding;
}

export function initialStateToWire(s: InitialState): WireInitialState {
  const w: WireInitialState = {
    root_pos_m: arr(s.rootPosM),
    root_quat_wxyz: arr(s.rootQuatWxyz),
    joint_pos_rad: arr(s.jointPosRad),
    place_on_floor: s.placeOnFloor,
  };
  if (s.jointVelRadS) w.joint_vel_rad_s = arr(s.jointVelRadS);
  return w;
}

export function prepareCommand(args: {
  clip: MotionClip;
  binding: WbcBinding;
  seed: number;
  runId?: string;
  seq?: number;
}): WireCommand {
  return {
    command: 'prepare',
    ...(args.seq !== undefined ? { seq: args.seq } : {}),
    args: {
      clip: clipToWire(args.clip, { includeJointVelocities: true }),
      clip_id: args.clip.id,
      binding: bindingToWire(args.binding),
      seed: args.seed,
      ...(args.runId !== undefined ? { run_id: args.runId } : {}),
    },
  };
}

export function resetCommand(initial: InitialState, options: { runId?: string; seq?: number } = {}): WireCommand {
  return {
    command: 'reset',
    ...(options.seq !== undefined ? { seq: options.seq } : {}),
    args: {
      initial_state: initialStateToWire(initial),
      ...(options.runId !== undefined ? { run_id: options.runId } : {}),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// State

export function lowStateFromFrame(f: StateFrame, tick: number, stampNs: number): LowStateMsg {
  const msg: LowStateMsg = {
    tick,
    stamp_ns: stampNs,
    q: arr(f.jointPosRad),
    dq: arr(f.jointVelRadS),
    tau_est: arr(f.jointTauNm),
    imu: { quat_wxyz: arr(f.imu.quatWxyz), gyro: arr(f.imu.gyroRadS), accel: arr(f.imu.accelMS2) },
  };
  if (f.referenceFrame !== null) msg.ref_frame = f.referenceFrame;
  if (f.contacts)
    msg.contacts = f.contacts
      .slice(0, G1_BRIDGE_MAX_CONTACTS)
      .map((c) => ({ body: c.body, other: c.other, force_n: c.forceN }));
  return msg;
}

/** root_state for a frame that has a global root position; null otherwise. */
export function rootStateFromFrame(f: StateFrame, stampNs: number, source: RootStateSource): RootStateMsg | null {
  if (!f.rootPosM) return null;
  return { stamp_ns: stampNs, pos: arr(f.rootPosM), quat_wxyz: arr(f.rootQuatWxyz ?? f.imu.quatWxyz), source };
}

/**
 * A StateFrame from a validated lowstate and, when the source has one, the root_state sampled
 * with it. Without a root_state the root position is unknown (null) and the root orientation is
 * the IMU's attitude (DESIGN §3: a robot without motion capture still has the IMU's).
 */
export function frameFromLowState(
  low: LowStateMsg,
  root: RootStateMsg | null,
  timeS: number,
  out: StateFrame = createStateFrame(false),
): StateFrame {
  out.timeS = timeS;
  out.tick = low.tick;
  out.jointPosRad.set(low.q);
  out.jointVelRadS.set(low.dq);
  out.jointTauNm.set(low.tau_est);
  out.imu.quatWxyz.set(low.imu.quat_wxyz);
  out.imu.gyroRadS.set(low.imu.gyro);
  out.imu.accelMS2.set(low.imu.accel);
  if (root) {
    out.rootPosM = out.rootPosM ?? new Float64Array(3);
    out.rootPosM.set(root.pos);
    out.rootQuatWxyz = out.rootQuatWxyz ?? new Float64Array(4);
    out.rootQuatWxyz.set(root.quat_wxyz);
  } else {
    out.rootPosM = null;
    out.rootQuatWxyz = out.rootQuatWxyz ?? new Float64Array(4);
    out.rootQuatWxyz.set(low.imu.quat_wxyz);
  }
  out.contacts = low.contacts ? low.contacts.map((c) => ({ body: c.body, other: c.other, forceN: c.force_n })) : null;
  out.referenceFrame = low.ref_frame ?? null;
  return out;
}
