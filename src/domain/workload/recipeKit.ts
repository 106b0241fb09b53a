// Shared vocabulary of the built-in clip recipes: named joint poses with left/right mirroring,
// foot targets on the floor, the "ready" pose (knees slightly bent, feet flat) and the standing
// template (stand → ready → IK motion → ready → stand).

import type { CapabilityGroup } from '../motion/motionClip';
import { G1_NUM_JOINTS } from '../robot/g1Joints';
import { BodyModel, jointIndex, LEG_JOINT0, type FootTarget, type Side } from './bodyModel';
import { FrameResolver, type FrameSpec, type LegCommand, type Recipe } from './clipBuilder';
import { bump, KeyTrack, ramp, type KeyInterpolation } from './interpolation';
import { quatFromRpy, rotYaw, type Vec3 } from './rotation';

// ---------------------------------------------------------------------------------------------
// Joint poses

/** Arm angles described for the left arm; the right arm mirrors roll, yaw, wrist roll and wrist yaw. */
export interface ArmPose {
  /** Shoulder pitch: negative raises the arm forward. */
  pitch?: number;
  /** Shoulder roll, outward positive (abduction) on both sides. */
  roll?: number;
  /** Shoulder yaw (rotation about the upper arm), left-arm sign. */
  yaw?: number;
  /** Elbow: 0 = forearm at 90°, ~1.57 = straight; smaller bends more. */
  elbow?: number;
  wristRoll?: number;
  wristPitch?: number;
  wristYaw?: number;
}

export interface UpperPose {
  waistYaw?: number;
  waistRoll?: number;
  waistPitch?: number;
  left?: ArmPose;
  right?: ArmPose;
}

const ARM_NAMES = [
  'shoulder_pitch',
  'shoulder_roll',
  'shoulder_yaw',
  'elbow',
  'wrist_roll',
  'wrist_pitch',
  'wrist_yaw',
] as const;
const ARM_KEYS: (keyof ArmPose)[] = ['pitch', 'roll', 'yaw', 'elbow', 'wristRoll', 'wristPitch', 'wristYaw'];
const ARM_MIRROR = [1, -1, -1, 1, -1, 1, -1];
const ARM0: readonly [number, number] = [
  jointIndex('left_shoulder_pitch_joint'),
  jointIndex('right_shoulder_pitch_joint'),
];
const WAIST_YAW = jointIndex('waist_yaw_joint');
const WAIST_ROLL = jointIndex('waist_roll_joint');
const WAIST_PITCH = jointIndex('waist_pitch_joint');
if (ARM_NAMES.length !== 7) throw new Error('arm joint table');

/** Leg angles described for the left leg; the right leg mirrors hip roll, hip yaw and ankle roll. */
export interface LegPose {
  hipPitch?: number;
  hipRoll?: number;
  hipYaw?: number;
  knee?: number;
  anklePitch?: number;
  ankleRoll?: number;
}
const LEG_KEYS: (keyof LegPose)[] = ['hipPitch', 'hipRoll', 'hipYaw', 'knee', 'anklePitch', 'ankleRoll'];
const LEG_MIRROR = [1, -1, -1, 1, 1, -1];

/** Six leg angles of `side` in canonical order from a (left-described) LegPose. */
export function legAngles(side: Side, p: LegPose): number[] {
  return LEG_KEYS.map((k, i) => (p[k] ?? 0) * (side === 1 ? LEG_MIRROR[i] : 1));
}

// ---------------------------------------------------------------------------------------------
// Foot targets

export interface Ready {
  /** Knee bend of the ready pose (0 = the stand pose). */
  knee: number;
  /** 12 leg angles (left 6, right 6) of the ready pose. */
  legs: Float64Array;
  /** Pelvis position at the ready pose (feet midpoint at the origin, heading 0). */
  pelvis: Vec3;
  /** Foot origin (x, y) relative to the feet midpoint, per side, heading 0. */
  footOffset: [[number, number], [number, number]];
  /** Pelvis (x, y, z) relative to the feet midpoint on the floor, heading 0. */
  pelvisOffset: Vec3;
}

export interface FootPlace {
  x: number;
  y: number;
  yaw: number;
}

export class Kit {
  readonly stand: Float64Array;
  readonly resolver: FrameResolver;
  private readonly readyCache = new Map<number, Ready>();

  constructor(readonly model: BodyModel) {
    this.stand = Float64Array.from(model.profile.defaultPose.jointPosRad);
    this.resolver = new FrameResolver(model);
  }

  /** 29 angles: the stand pose with the upper body replaced as described (legs at stand). */
  upper(p: UpperPose = {}): Float64Array {
    const q = new Float64Array(this.stand);
    if (p.waistYaw !== undefined) q[WAIST_YAW] = p.waistYaw;
    if (p.waistRoll !== undefined) q[WAIST_ROLL] = p.waistRoll;
    if (p.waistPitch !== undefined) q[WAIST_PITCH] = p.waistPitch;
    for (const side of [0, 1] as Side[]) {
      const a = side === 0 ? p.left : p.right;
      if (!a) continue;
      ARM_KEYS.forEach((k, i) => {
        const v = a[k];
        if (v !== undefined) q[ARM0[side] + i] = v * (side === 1 ? ARM_MIRROR[i] : 1);
      });
    }
    return q;
  }

  /** Stand-pose arm (left description) — the base for arm poses. */
  standArm(): Required<ArmPose> {
    const o = ARM0[0];
    const s = this.stand;
    return {
      pitch: s[o],
      roll: s[o + 1],
      yaw: s[o + 2],
      elbow: s[o + 3],
      wristRoll: s[o + 4],
      wristPitch: s[o + 5],
      wristYaw: s[o + 6],
    };
  }

  /** The ready pose: hip pitch −knee/2, knee, ankle pitch −knee/2 (feet flat), feet midpoint at the origin. */
  ready(knee: number): Ready {
    const hit = this.readyCache.get(knee);
    if (hit) return hit;
    const legs = new Float64Array(12);
    for (const side of [0, 1] as Side[])
      legs.set(legAngles(side, { hipPitch: -knee / 2, knee, anklePitch: -knee / 2 }), 6 * side);
    const joints = new Float64Array(this.stand);
    joints.set(legs.subarray(0, 6), LEG_JOINT0[0]);
    joints.set(legs.subarray(6, 12), LEG_JOINT0[1]);
    const pose = new FrameResolver(this.model).resolve(
      { kind: 'joint', joints, rootRpy: [0, 0, 0], anchorXY: [0, 0] },
      'ready pose',
    );
    const m = this.model;
    m.forward(pose.rootPos, pose.rootQuat, pose.joints);
    const off = (side: Side): [number, number] => [m.pos[3 * m.footBody[side]], m.pos[3 * m.footBody[side] + 1]];
    const r: Ready = {
      knee,
      legs,
      pelvis: pose.rootPos,
      footOffset: [off(0), off(1)],
      pelvisOffset: [pose.rootPos[0], pose.rootPos[1], pose.rootPos[2]],
    };
    this.readyCache.set(knee, r);
    return r;
  }

  /** Foot flat on the floor with its origin over (x, y), heading yaw. */
  flatFoot(x: number, y: number, yaw: number, lift = 0): FootTarget {
    return { pos: [x, y, this.model.soleHeight + lift], quat: quatFromRpy(0, 0, yaw) };
  }

  /**
   * Foot rotated by `pitch` (positive: heel up) about its toe line, the toe line staying where it
   * is when the foot is flat at (x, y, yaw); negative pitch (toes up) rotates about the heel line.
   * A roll (about the foot's long axis, through its origin) is for feet in the air only.
   */
  pivotFoot(x: number, y: number, yaw: number, pitch: number, lift = 0, roll = 0): FootTarget {
    const m = this.model;
    const [lx, lz] = pitch >= 0 ? m.toeLine : m.heelLine;
    // pivot line position in the world when flat
    const [px, py] = rotYaw(yaw, lx, 0);
    const pz = m.soleHeight + lz + lift;
    // foot origin = pivot − R(yaw)·Ry(pitch)·(lx, 0, lz)
    const c = Math.cos(pitch);
    const s = Math.sin(pitch);
    const rx = c * lx + s * lz;
    const rz = -s * lx + c * lz;
    const [wx, wy] = rotYaw(yaw, rx, 0);
    return { pos: [x + px - wx, y + py - wy, pz - rz], quat: quatFromRpy(roll, pitch, yaw) };
  }

  /**
   * World pose of the foot of `side` when the pelvis is at (pelvisPos, pelvisRpy) and the leg has
   * the given (left-described) angles — for foot targets that should match a known leg shape.
   */
  footPoseOfLeg(pelvisPos: Vec3, pelvisRpy: Vec3, side: Side, leg: LegPose): { pos: Vec3; rpy: Vec3 } {
    const joints = new Float64Array(this.stand);
    joints.set(legAngles(side, leg), LEG_JOINT0[side]);
    const m = this.model;
    m.forward(pelvisPos, quatFromRpy(pelvisRpy[0], pelvisRpy[1], pelvisRpy[2]), joints);
    const b = m.footBody[side];
    const [w, x, y, z] = [m.quat[4 * b], m.quat[4 * b + 1], m.quat[4 * b + 2], m.quat[4 * b + 3]];
    const roll = Math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y));
    const sp = 2 * (w * y - z * x);
    const pitch = Math.atan2(sp, Math.sqrt(Math.max(0, 1 - sp * sp)));
    const yaw = Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
    return { pos: [m.pos[3 * b], m.pos[3 * b + 1], m.pos[3 * b + 2]], rpy: [roll, pitch, yaw] };
  }

  /** FootMove fields (x, y, lift, yaw, pitch, roll) that put the foot origin at `pos` with orientation `rpy`. */
  placeFor(pos: Vec3, rpy: Vec3): Pick<FootMove, 'x' | 'y' | 'lift' | 'yaw' | 'pitch' | 'roll'> {
    const [roll, pitch, yaw] = rpy;
    // pivotFoot with lift 0 at (0, 0): its origin offset, then shift
    const t = this.pivotFoot(0, 0, yaw, pitch, 0, roll);
    return { x: pos[0] - t.pos[0], y: pos[1] - t.pos[1], lift: pos[2] - t.pos[2], yaw, pitch, roll };
  }

  /** World foot place of `side` for a feet midpoint (cx, cy) and heading, at the ready offsets. */
  footAt(r: Ready, side: Side, cx: number, cy: number, yaw: number): FootPlace {
    const [dx, dy] = rotYaw(yaw, r.footOffset[side][0], r.footOffset[side][1]);
    return { x: cx + dx, y: cy + dy, yaw };
  }

  /** Pelvis position for a feet midpoint and heading at the ready relation, plus a height change. */
  pelvisAt(r: Ready, cx: number, cy: number, yaw: number, dz = 0): Vec3 {
    const [dx, dy] = rotYaw(yaw, r.pelvisOffset[0], r.pelvisOffset[1]);
    return [cx + dx, cy + dy, r.pelvisOffset[2] + dz];
  }
}

// ---------------------------------------------------------------------------------------------
// Vector keyframes

/** Keyframes of full 29-angle vectors; each joint interpolated by its own KeyTrack. */
export class PoseTrack {
  private readonly tracks: KeyTrack[];
  constructor(keys: ReadonlyArray<readonly [number, Float64Array]>, mode: KeyInterpolation = 'minjerk') {
    this.tracks = [];
    for (let j = 0; j < G1_NUM_JOINTS; j++)
      this.tracks.push(
        new KeyTrack(
          keys.map(([t, q]) => [t, q[j]] as const),
          mode,
        ),
      );
  }
  at(t: number): Float64Array {
    const q = new Float64Array(G1_NUM_JOINTS);
    for (let j = 0; j < G1_NUM_JOINTS; j++) q[j] = this.tracks[j].at(t);
    return q;
  }
}

/** Adds `w · (b − a)` to `out` joint by joint (blend helper for additive motions). */
export function addScaled(out: Float64Array, delta: ArrayLike<number>, w: number): Float64Array {
  for (let j = 0; j < out.length; j++) out[j] += w * delta[j];
  return out;
}

// ---------------------------------------------------------------------------------------------
// The standing template

/** Still stand at the start and end of a standing clip (s). */
export const HOLD_S = 0.5;
/** Stand ↔ ready transition (s). */
export const TRANS_S = 1.0;
/** Clip time at which the IK core of a standing clip starts (default hold + transition). */
export const CORE_T0 = HOLD_S + TRANS_S;

export interface CoreState {
  pelvisPos: Vec3;
  pelvisRpy: Vec3;
  legs: [LegCommand, LegCommand];
}

export interface StandingSpec {
  name: string;
  group: CapabilityGroup;
  description: string;
  /** Seconds of the IK part (the whole clip adds hold + transitions on both sides). */
  coreS?: number;
  /** Whole-clip duration when there is no IK part. */
  durationS?: number;
  flight?: boolean;
  /** Still stand at the start and end (s). */
  hold?: number;
  /** Stand ↔ ready transitions (s). */
  trans?: number;
  /** Knee bend of the ready pose; IK runs between the transitions. */
  knee?: number;
  /** Waist and arm angles at clip time t (leg entries are ignored); gets the core state inside the IK window. */
  upper: (t: number, core: CoreState | null) => Float64Array;
  /** The IK motion at core time tc ∈ [0, coreS]: must equal the ready state at both ends. */
  core?: (tc: number, ready: Ready) => CoreState;
}

/** The ready state as a CoreState (feet flat at the ready offsets around (cx, cy), heading yaw). */
export function readyCore(kit: Kit, r: Ready, cx = 0, cy = 0, yaw = 0): CoreState {
  const feet = ([0, 1] as Side[]).map((s) => {
    const f = kit.footAt(r, s, cx, cy, yaw);
    return { kind: 'foot', target: kit.flatFoot(f.x, f.y, f.yaw) } as LegCommand;
  }) as [LegCommand, LegCommand];
  return { pelvisPos: kit.pelvisAt(r, cx, cy, yaw), pelvisRpy: [0, 0, yaw], legs: feet };
}

/**
 * A clip that starts and ends in the stand pose: hold, stand → ready (joint space, feet still),
 * the IK core, ready → stand at the core's final place, hold. Without a core the legs stay at the
 * stand pose and only `upper` moves.
 */
export function standingRecipe(kit: Kit, spec: StandingSpec): Recipe {
  const hold = spec.hold ?? HOLD_S;
  const trans = spec.trans ?? TRANS_S;
  const meta = { name: spec.name, group: spec.group, description: spec.description, flight: spec.flight ?? false };
  const stand = kit.stand;
  if (!spec.core) {
    const durationS = spec.durationS;
    if (durationS === undefined) throw new Error(`${spec.name}: durationS is required without a core`);
    return {
      ...meta,
      durationS,
      sample: (t) => {
        const joints = spec.upper(t, null);
        for (const side of [0, 1] as Side[])
          for (let k = 0; k < 6; k++) joints[LEG_JOINT0[side] + k] = stand[LEG_JOINT0[side] + k];
        return { kind: 'joint', joints, rootRpy: [0, 0, 0], anchorXY: [0, 0] };
      },
    };
  }
  const core = spec.core;
  const knee = spec.knee ?? 0.5;
  const coreS = spec.coreS;
  if (coreS === undefined) throw new Error(`${spec.name}: coreS is required with a core`);
  const ready = kit.ready(knee);
  const c0 = hold + trans;
  const c1 = c0 + coreS;
  const durationS = c1 + trans + hold;
  // final place: feet midpoint and heading at the end of the core
  const end = core(coreS, ready);
  const feetEnd = end.legs.map((l) => l.target.pos);
  const endAnchor: [number, number] = [0.5 * (feetEnd[0][0] + feetEnd[1][0]), 0.5 * (feetEnd[0][1] + feetEnd[1][1])];
  const endYaw = end.pelvisRpy[2];
  const legsAt = (w: number, joints: Float64Array) => {
    for (const side of [0, 1] as Side[]) {
      for (let k = 0; k < 6; k++) {
        const j = LEG_JOINT0[side] + k;
        joints[j] = stand[j] + w * (ready.legs[6 * side + k] - stand[j]);
      }
    }
  };
  return {
    ...meta,
    durationS,
    sample: (t): FrameSpec => {
      if (t > c0 && t < c1) {
        const cs = core(t - c0, ready);
        const joints = spec.upper(t, cs);
        return { kind: 'ik', joints, pelvisPos: cs.pelvisPos, pelvisRpy: cs.pelvisRpy, legs: cs.legs };
      }
      const joints = spec.upper(t, null);
      if (t <= c0) {
        legsAt(ramp(t, hold, c0), joints);
        return { kind: 'joint', joints, rootRpy: [0, 0, 0], anchorXY: [0, 0] };
      }
      legsAt(1 - ramp(t, c1, c1 + trans), joints);
      return { kind: 'joint', joints, rootRpy: [0, 0, endYaw], anchorXY: endAnchor };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Foot motions as keyed moves

/** One move of a foot: over [t0, t1] it goes (minimum jerk) to the given place; unset fields keep their value. */
export interface FootMove {
  t0: number;
  t1: number;
  x?: number;
  y?: number;
  yaw?: number;
  /** Foot pitch: positive = heel up about the toe line, negative = toes up about the heel line. */
  pitch?: number;
  /** Foot roll about its origin (feet in the air only). */
  roll?: number;
  /** Height of the flat (or pivoted) foot above its floor pose, held after the move (m). */
  lift?: number;
  /** Extra swing height during the move: height·bump over [t0, t1] (m). */
  height?: number;
}

interface FootState {
  x: number;
  y: number;
  yaw: number;
  pitch: number;
  roll: number;
  lift: number;
}

/** A foot's pose over time from its ready place and a list of non-overlapping moves. */
export class FootTrack {
  private readonly states: FootState[];
  constructor(
    private readonly kit: Kit,
    start: FootPlace,
    private readonly moves: readonly FootMove[],
  ) {
    const s0: FootState = { x: start.x, y: start.y, yaw: start.yaw, pitch: 0, roll: 0, lift: 0 };
    this.states = [s0];
    let prev = s0;
    let tPrev = -Infinity;
    for (const m of moves) {
      if (!(m.t0 >= tPrev && m.t1 > m.t0))
        throw new Error(`foot moves must be ordered and non-overlapping (move at ${m.t0}–${m.t1})`);
      tPrev = m.t1;
      const next: FootState = {
        x: m.x ?? prev.x,
        y: m.y ?? prev.y,
        yaw: m.yaw ?? prev.yaw,
        pitch: m.pitch ?? prev.pitch,
        roll: m.roll ?? prev.roll,
        lift: m.lift ?? prev.lift,
      };
      this.states.push(next);
      prev = next;
    }
  }

  place(t: number): FootState & { height: number } {
    let i = 0;
    for (; i < this.moves.length; i++) {
      const m = this.moves[i];
      if (t < m.t1) {
        const a = this.states[i];
        const b = this.states[i + 1];
        if (t <= m.t0) return { ...a, height: 0 };
        const s = ramp(t, m.t0, m.t1);
        return {
          x: a.x + (b.x - a.x) * s,
          y: a.y + (b.y - a.y) * s,
          yaw: a.yaw + (b.yaw - a.yaw) * s,
          pitch: a.pitch + (b.pitch - a.pitch) * s,
          roll: a.roll + (b.roll - a.roll) * s,
          lift: a.lift + (b.lift - a.lift) * s,
          height: (m.height ?? 0) * bump(t, m.t0, m.t1),
        };
      }
    }
    return { ...this.states[this.moves.length], height: 0 };
  }

  at(t: number): LegCommand {
    const p = this.place(t);
    return { kind: 'foot', target: this.kit.pivotFoot(p.x, p.y, p.yaw, p.pitch, p.lift + p.height, p.roll) };
  }
}
