// trajectory_sha256: the fingerprint of a simulated episode, for the replay audit (DESIGN §9).
//
// Byte layout. SHA-256 over the recorded (50 Hz) executed frames in order, each frame as
// W = 1 + 3 + 4 + J + 3 + 3 + J little-endian IEEE-754 float64 values (J = 29 → 72 values,
// 576 bytes per frame), in this order:
//   time_s                      k / 50, the frame's time on the episode clock
//   root_pos_m[3]               free-joint qpos[0..3], world, m
//   root_quat_wxyz[4]           free-joint qpos[3..7]
//   joint_pos_rad[J]            hinge qpos, canonical joint order
//   root_lin_vel_mps[3]         free-joint qvel[0..3], world frame, m/s
//   root_ang_vel_rads[3]        free-joint qvel[3..6], pelvis (local) frame, rad/s
//   joint_vel_rad_s[J]          hinge qvel, canonical joint order
// For the G1 (canonical order = model order) this is exactly (time, qpos, qvel) per frame.
// −0 is written as +0 (so the hash can be recomputed from a JSON copy of the frames, where the
// sign of zero is lost); nothing else is normalised. No header, no frame count, no separators.

import { Sha256 } from '../hash/sha256';

export const TRAJECTORY_HASH_LAYOUT =
  'sha256 over frames; per frame little-endian float64: time_s, root_pos_m[3], root_quat_wxyz[4], joint_pos_rad[J], ' +
  'root_lin_vel_mps[3] (world), root_ang_vel_rads[3] (pelvis frame), joint_vel_rad_s[J]; -0 written as +0';

/** Values per frame in the hashed layout. */
export const trajectoryFrameWidth = (jointCount: number): number => 14 + 2 * jointCount;

export interface TrajectoryFrame {
  timeS: number;
  rootPosM: ArrayLike<number>;
  rootQuatWxyz: ArrayLike<number>;
  jointPosRad: ArrayLike<number>;
  rootLinVelMps: ArrayLike<number>;
  rootAngVelRadS: ArrayLike<number>;
  jointVelRadS: ArrayLike<number>;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Incremental trajectory hash. */
export class TrajectoryHasher {
  private readonly sha = new Sha256();
  private readonly frame: Float64Array;
  private readonly bytes: Uint8Array;
  frames = 0;

  constructor(readonly jointCount: number) {
    this.frame = new Float64Array(trajectoryFrameWidth(jointCount));
    this.bytes = new Uint8Array(this.frame.buffer);
  }

  /** Adds one frame already packed in the hashed layout at `packed[offset..offset+W)`. */
  addPacked(packed: Float64Array, offset: number): void {
    const f = this.frame;
    for (let i = 0; i < f.length; i++) f[i] = packed[offset + i] + 0;
    this.flush();
  }

  add(fr: TrajectoryFrame): void {
    const J = this.jointCount;
    const f = this.frame;
    let o = 0;
    const put = (xs: ArrayLike<number>, n: number, what: string) => {
      if (xs.length !== n) throw new RangeError(`trajectory frame: ${what} has ${xs.length} values, expected ${n}`);
      for (let i = 0; i < n; i++) f[o++] = xs[i] + 0;
    };
    f[o++] = fr.timeS + 0;
    put(fr.rootPosM, 3, 'root position');
    put(fr.rootQuatWxyz, 4, 'root quaternion');
    put(fr.jointPosRad, J, 'joint positions');
    put(fr.rootLinVelMps, 3, 'root linear velocity');
    put(fr.rootAngVelRadS, 3, 'root angular velocity');
    put(fr.jointVelRadS, J, 'joint velocities');
    this.flush();
  }

  private flush(): void {
    if (!LITTLE_ENDIAN) {
      for (let i = 0; i < this.bytes.length; i += 8) this.bytes.subarray(i, i + 8).reverse();
    }
    this.sha.update(this.bytes);
    this.frames++;
  }

  digestHex(): string {
    return this.sha.digestHex();
  }
}
