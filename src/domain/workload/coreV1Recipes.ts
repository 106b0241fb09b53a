// The clips of the built-in workload core-v1: our own G1 motions, written as recipes (keyframes,
// smooth oscillations, a gait generator and leg IK) — no third-party motion data. Every clip
// starts and ends at rest in the stand pose of the model (its `stand` keyframe) at the origin,
// heading 0. Names are `<group prefix>_<motion>`; the group prefix is ub (upper_body), ip
// (in_place), loco (locomotion), dyn (dynamic) or lp (low_posture).
//
// Changing anything here changes clip ids and the snapshot hash: core-v1 is frozen
// (assets/workloads/core-v1.json). Make a new snapshot version instead (docs/WORKLOAD.md).

import { jointIndex, type Side } from './bodyModel';
import type { LegCommand, Recipe } from './clipBuilder';
import { arcPath, planJog, planWalk, straightPath, turnPath, type Gait } from './gait';
import { bump, envelope, oscillation, ramp, restTrack, smoothTrack } from './interpolation';
import {
  addScaled,
  CORE_T0 as C0,
  FootTrack,
  PoseTrack,
  readyCore,
  standingRecipe,
  type ArmPose,
  type CoreState,
  type FootMove,
  type Kit,
  type LegPose,
  type Ready,
  type UpperPose,
} from './recipeKit';
import { rotYaw, type Vec3 } from './rotation';

const J = {
  waistYaw: jointIndex('waist_yaw_joint'),
  waistRoll: jointIndex('waist_roll_joint'),
  waistPitch: jointIndex('waist_pitch_joint'),
  lSp: jointIndex('left_shoulder_pitch_joint'),
  lSr: jointIndex('left_shoulder_roll_joint'),
  lSy: jointIndex('left_shoulder_yaw_joint'),
  lEl: jointIndex('left_elbow_joint'),
  rSp: jointIndex('right_shoulder_pitch_joint'),
  rSr: jointIndex('right_shoulder_roll_joint'),
  rSy: jointIndex('right_shoulder_yaw_joint'),
  rEl: jointIndex('right_elbow_joint'),
};

/** All core-v1 recipes, in catalogue order. */
export function coreV1Recipes(kit: Kit): Recipe[] {
  return [...upperBody(kit), ...inPlace(kit), ...locomotion(kit), ...dynamic(kit), ...lowPosture(kit)];
}

// ---------------------------------------------------------------------------------------------
// helpers

function arms(kit: Kit) {
  const S = kit.standArm();
  const arm = (o: ArmPose): ArmPose => ({ ...S, ...o });
  const pose = (p: UpperPose) => kit.upper(p);
  return { S, arm, pose, STAND: kit.upper() };
}

/**
 * The boxing guard and a jab with either arm (the other stays on guard), the waist turned by
 * `waistYawRad` in each and the jabbing elbow bent to `jabElbowRad`.
 */
function boxingPoses(kit: Kit, waistYawRad: { guard: number; jabL: number; jabR: number }, jabElbowRad: number) {
  const { arm, pose } = arms(kit);
  const guardL = arm({ pitch: -0.95, roll: 0.2, yaw: 0.1, elbow: -0.25 });
  const guardR = arm({ pitch: -0.9, roll: 0.2, yaw: 0.1, elbow: -0.2 });
  const jab = arm({ pitch: -1.45, roll: -0.02, yaw: 0, elbow: jabElbowRad });
  return {
    guard: pose({ waistYaw: waistYawRad.guard, left: guardL, right: guardR }),
    jabL: pose({ waistYaw: waistYawRad.jabL, left: jab, right: guardR }),
    jabR: pose({ waistYaw: waistYawRad.jabR, left: guardL, right: jab }),
  };
}

/** A pose sequence: keys [t, pose] with min-jerk moves between them (rest at each key). */
const seq = (keys: ReadonlyArray<readonly [number, Float64Array]>) => new PoseTrack(keys, 'minjerk');
/** A pose sequence passing smoothly through the keys. */
const flow = (keys: ReadonlyArray<readonly [number, Float64Array]>) => new PoseTrack(keys, 'smooth');

/** Core state with both feet flat at their ready places and the pelvis moved by (dx, dy, dz) and tilted by rpy. */
function pelvisMove(kit: Kit, r: Ready, d: Vec3, rpy: Vec3 = [0, 0, 0]): CoreState {
  const c = readyCore(kit, r);
  return { ...c, pelvisPos: [c.pelvisPos[0] + d[0], c.pelvisPos[1] + d[1], c.pelvisPos[2] + d[2]], pelvisRpy: rpy };
}

/** Walking arm swing: each arm swings opposite to its leg, from the feet's fore-aft offset. */
function walkArms(base: Float64Array, core: CoreState | null, gain: number): Float64Array {
  const q = new Float64Array(base);
  if (!core) return q;
  const l = core.legs[0];
  const r = core.legs[1];
  const yaw = core.pelvisRpy[2];
  const [d] = rotYaw(-yaw, r.target.pos[0] - l.target.pos[0], r.target.pos[1] - l.target.pos[1]);
  q[J.lSp] -= gain * d;
  q[J.rSp] += gain * d;
  return q;
}

function feetCore(pelvisPos: Vec3, pelvisRpy: Vec3, left: LegCommand, right: LegCommand): CoreState {
  return { pelvisPos, pelvisRpy, legs: [left, right] };
}

// ---------------------------------------------------------------------------------------------
// upper_body: legs stay in the stand pose; waist and arms move.

function upperBody(kit: Kit): Recipe[] {
  const { arm, pose, STAND } = arms(kit);
  const out: Recipe[] = [];

  {
    const wave = pose({ waistRoll: -0.06, right: arm({ pitch: -0.25, roll: 1.25, yaw: 1.45, elbow: 0.15 }) });
    const track = seq([
      [0.5, STAND],
      [2.0, wave],
      [6.5, wave],
      [8.0, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'ub_wave_right',
        group: 'upper_body',
        description: 'raise the right arm to the side, forearm up, and wave the hand from the elbow',
        durationS: 8.5,
        upper: (t) => {
          const q = track.at(t);
          q[J.rEl] += 0.35 * oscillation(t, 2.0, 6.5, 0.9, 0.5);
          q[J.rSy] -= 0.15 * oscillation(t, 2.0, 6.5, 0.9, 0.5, 0.6);
          return q;
        },
      }),
    );
  }
  {
    const up = pose({
      left: arm({ pitch: -2.55, roll: 0.45, elbow: 1.35 }),
      right: arm({ pitch: -2.55, roll: 0.45, elbow: 1.35 }),
    });
    const track = seq([
      [0.5, STAND],
      [2.2, up],
      [7.3, up],
      [9.0, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'ub_wave_both_overhead',
        group: 'upper_body',
        description: 'both arms overhead, swaying side to side with a slight waist roll',
        durationS: 9.5,
        upper: (t) => {
          const q = track.at(t);
          const s = oscillation(t, 2.2, 7.3, 1.7, 0.6);
          q[J.lSr] += 0.3 * s;
          q[J.rSr] += 0.3 * s;
          q[J.waistRoll] -= 0.12 * s;
          return q;
        },
      }),
    );
  }
  {
    const reachR = pose({ waistYaw: 0.3, waistPitch: 0.12, right: arm({ pitch: -1.45, roll: -0.05, elbow: 1.5 }) });
    const reachL = pose({ waistYaw: -0.3, waistPitch: 0.12, left: arm({ pitch: -1.45, roll: -0.05, elbow: 1.5 }) });
    const reachB = pose({
      waistPitch: 0.2,
      left: arm({ pitch: -1.35, roll: 0.05, elbow: 1.5 }),
      right: arm({ pitch: -1.35, roll: 0.05, elbow: 1.5 }),
    });
    const track = seq([
      [0.5, STAND],
      [1.8, reachR],
      [2.4, reachR],
      [3.6, STAND],
      [4.9, reachL],
      [5.5, reachL],
      [6.7, STAND],
      [8.0, reachB],
      [8.8, reachB],
      [10.1, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'ub_reach_forward',
        group: 'upper_body',
        description: 'reach forward with the right hand, the left hand, then both, turning the waist into each reach',
        durationS: 10.6,
        upper: (t) => track.at(t),
      }),
    );
  }
  {
    const upR = pose({ waistRoll: 0.12, waistYaw: 0.1, right: arm({ pitch: -2.1, roll: 1.0, elbow: 1.45 }) });
    const upL = pose({ waistRoll: -0.12, waistYaw: -0.1, left: arm({ pitch: -2.1, roll: 1.0, elbow: 1.45 }) });
    const track = seq([
      [0.5, STAND],
      [2.0, upR],
      [2.8, upR],
      [4.3, STAND],
      [5.8, upL],
      [6.6, upL],
      [8.1, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'ub_reach_up_side',
        group: 'upper_body',
        description: 'reach diagonally up and out with the right arm, then the left, leaning into the reach',
        durationS: 8.6,
        upper: (t) => track.at(t),
      }),
    );
  }
  {
    const side = pose({
      left: arm({ pitch: 0, roll: 1.35, yaw: 0, elbow: 1.5 }),
      right: arm({ pitch: 0, roll: 1.35, yaw: 0, elbow: 1.5 }),
    });
    const track = seq([
      [0.5, STAND],
      [1.8, side],
      [8.2, side],
      [9.5, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'ub_arm_circles',
        group: 'upper_body',
        description: 'arms out to the sides, four forward circles then three backward',
        durationS: 10.0,
        upper: (t) => {
          const q = track.at(t);
          // forward circles on [1.8, 5.0], backward on [5.0, 8.2]
          const fp = oscillation(t, 1.8, 5.0, 0.8, 0.4);
          const fr = oscillation(t, 1.8, 5.0, 0.8, 0.4, Math.PI / 2);
          const bp = oscillation(t, 5.0, 8.2, 1.0, 0.4);
          const br = oscillation(t, 5.0, 8.2, 1.0, 0.4, -Math.PI / 2);
          const p = 0.3 * (fp + bp);
          const r = 0.22 * (fr + br);
          q[J.lSp] += p;
          q[J.rSp] += p;
          q[J.lSr] += r;
          q[J.rSr] -= r;
          return q;
        },
      }),
    );
  }
  {
    const up = pose({
      waistPitch: -0.05,
      left: arm({ pitch: -2.8, roll: 0.2, elbow: 1.45 }),
      right: arm({ pitch: -2.8, roll: 0.2, elbow: 1.45 }),
    });
    const front = pose({
      left: arm({ pitch: -1.5, roll: 0.1, elbow: 1.5 }),
      right: arm({ pitch: -1.5, roll: 0.1, elbow: 1.5 }),
    });
    const track = seq([
      [0.5, STAND],
      [1.9, up],
      [2.6, up],
      [3.6, front],
      [4.6, up],
      [5.3, up],
      [6.3, front],
      [7.3, up],
      [8.0, up],
      [9.5, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'ub_hands_up',
        group: 'upper_body',
        description: 'both hands up overhead, down to shoulder height in front, three times',
        durationS: 10.0,
        upper: (t) => track.at(t),
      }),
    );
  }
  {
    const { guard, jabL, jabR } = boxingPoses(kit, { guard: 0.1, jabL: -0.2, jabR: 0.35 }, 1.25);
    const keys: [number, Float64Array][] = [
      [0.5, STAND],
      [1.7, guard],
    ];
    let t = 1.7;
    for (const jab of [jabL, jabR, jabL, jabL, jabR, jabL, jabR]) {
      t += 0.55;
      keys.push([t, jab]);
      t += 0.6;
      keys.push([t, guard]);
    }
    keys.push([t + 0.4, guard], [t + 1.7, STAND]);
    const track = seq(keys);
    out.push(
      standingRecipe(kit, {
        name: 'ub_boxing_jabs',
        group: 'upper_body',
        description: 'guard up, then a sequence of left and right jabs at moderate speed',
        durationS: t + 2.2,
        upper: (tt) => track.at(tt),
      }),
    );
  }
  {
    const bent = pose({
      left: arm({ pitch: 0.1, roll: 0.15, elbow: 0.75 }),
      right: arm({ pitch: 0.1, roll: 0.15, elbow: 0.75 }),
    });
    const track = seq([
      [0.5, STAND],
      [1.5, bent],
      [7.5, bent],
      [8.5, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'ub_arm_swing',
        group: 'upper_body',
        description: 'walking-style alternating arm swing in place, elbows bent, with a little waist yaw',
        durationS: 9.0,
        upper: (t) => {
          const q = track.at(t);
          const s = oscillation(t, 1.5, 7.5, 1.2, 0.8);
          q[J.lSp] += 0.5 * s;
          q[J.rSp] -= 0.5 * s;
          q[J.waistYaw] += 0.08 * s;
          return q;
        },
      }),
    );
  }
  {
    const front = pose({
      left: arm({ pitch: -1.5, roll: 0.05, elbow: 1.45 }),
      right: arm({ pitch: -1.5, roll: 0.05, elbow: 1.45 }),
    });
    const open = pose({
      waistPitch: -0.08,
      left: arm({ pitch: -1.35, roll: 1.25, yaw: 0.2, elbow: 1.45 }),
      right: arm({ pitch: -1.35, roll: 1.25, yaw: 0.2, elbow: 1.45 }),
    });
    const track = seq([
      [0.5, STAND],
      [1.8, front],
      [3.0, open],
      [4.2, front],
      [5.4, open],
      [6.6, front],
      [7.8, open],
      [9.0, front],
      [10.3, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'ub_chest_fly',
        group: 'upper_body',
        description: 'arms straight in front, opened wide to the sides and closed again, three times',
        durationS: 10.8,
        upper: (t) => track.at(t),
      }),
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// in_place: feet stay where they are (or return there); the body moves over them.

function inPlace(kit: Kit): Recipe[] {
  const { arm, pose, STAND } = arms(kit);
  const out: Recipe[] = [];

  {
    const ready = pose({
      left: arm({ pitch: -0.3, roll: 0.4, elbow: 0.5 }),
      right: arm({ pitch: -0.3, roll: 0.4, elbow: 0.5 }),
    });
    const track = seq([
      [0.5, STAND],
      [1.5, ready],
      [8.0, ready],
      [9.0, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'ip_torso_twist',
        group: 'in_place',
        description: 'twist the torso left and right at the waist, arms bent and following',
        durationS: 9.5,
        upper: (t) => {
          const q = track.at(t);
          const s = oscillation(t, 1.5, 8.0, 2.2, 0.9);
          q[J.waistYaw] += 0.75 * s;
          q[J.lSy] += 0.25 * s;
          q[J.rSy] += 0.25 * s;
          q[J.lSr] -= 0.15 * s;
          q[J.rSr] -= 0.15 * s;
          return q;
        },
      }),
    );
  }
  {
    // bending right (waist roll > 0) sweeps the left arm over the head, and the other way round;
    // each arm follows the square of the bend its way (continuous velocity at the crossing)
    const leftUp = diff(pose({ left: arm({ pitch: -0.6, roll: 2.05, elbow: 1.35 }) }), STAND);
    const rightUp = diff(pose({ right: arm({ pitch: -0.6, roll: 2.05, elbow: 1.35 }) }), STAND);
    const track = (t: number) => {
      const s = oscillation(t, 1.0, 9.0, 3.2, 1.0);
      const q = new Float64Array(STAND);
      q[J.waistRoll] = 0.42 * s;
      addScaled(q, leftUp, s > 0 ? s * s : 0);
      addScaled(q, rightUp, s < 0 ? s * s : 0);
      return q;
    };
    out.push(
      standingRecipe(kit, {
        name: 'ip_side_bend',
        group: 'in_place',
        description: 'bend sideways at the waist to the right and left, the opposite arm sweeping over the head',
        durationS: 10.0,
        upper: (t) => track(t),
      }),
    );
  }
  {
    const coreS = 8.0;
    out.push(
      standingRecipe(kit, {
        name: 'ip_weight_shift',
        group: 'in_place',
        description: 'shift the weight from foot to foot, pelvis swaying sideways over each foot, knees soft',
        knee: 0.5,
        coreS,
        upper: (t, core) => {
          const q = new Float64Array(STAND);
          if (core) q[J.waistRoll] = -0.8 * (core.pelvisRpy[0] ?? 0);
          return q;
        },
        core: (tc, r) => {
          const s = oscillation(tc, 0, coreS, 2.6, 1.0);
          return pelvisMove(kit, r, [0, 0.075 * s, -0.01 * envelope(tc, 0, coreS, 1.0)], [0.04 * s, 0, 0]);
        },
      }),
    );
  }
  {
    const coreS = 8.0;
    const depth = (tc: number) => {
      let d = 0;
      for (let i = 0; i < 3; i++) d += bump(tc, 0.3 + i * 2.5, 0.3 + i * 2.5 + 2.4);
      return d;
    };
    const armsFwd = pose({
      left: arm({ pitch: -1.3, roll: 0.1, elbow: 1.4 }),
      right: arm({ pitch: -1.3, roll: 0.1, elbow: 1.4 }),
    });
    out.push(
      standingRecipe(kit, {
        name: 'ip_shallow_squat',
        group: 'in_place',
        description: 'three shallow squats, hips back, arms rising forward as counterbalance',
        knee: 0.5,
        coreS,
        upper: (t, core) => {
          const q = new Float64Array(STAND);
          if (core) addScaled(q, diff(armsFwd, STAND), depth(t - C0));
          return q;
        },
        core: (tc, r) => {
          const d = depth(tc);
          return pelvisMove(kit, r, [-0.04 * d, 0, -0.15 * d], [0, 0.22 * d, 0]);
        },
      }),
    );
  }
  {
    const coreS = 8.0;
    const rise = (tc: number) => {
      let d = 0;
      for (let i = 0; i < 4; i++) d += bump(tc, 0.3 + i * 1.85, 0.3 + i * 1.85 + 1.8);
      return d;
    };
    const up = pose({ left: arm({ pitch: -0.5, roll: 0.35 }), right: arm({ pitch: -0.5, roll: 0.35 }) });
    out.push(
      standingRecipe(kit, {
        name: 'ip_heel_raise',
        group: 'in_place',
        description: 'rise onto the toes and lower again, four times, arms lifting slightly for balance',
        knee: 0.3,
        coreS,
        upper: (t, core) => {
          const q = new Float64Array(STAND);
          if (core) addScaled(q, diff(up, STAND), rise(t - C0));
          return q;
        },
        core: (tc, r) => {
          const a = 0.32 * rise(tc);
          const legs = ([0, 1] as Side[]).map((s) => {
            const f = kit.footAt(r, s, 0, 0, 0);
            return { kind: 'foot', target: kit.pivotFoot(f.x, f.y, 0, a, 0) } as LegCommand;
          }) as [LegCommand, LegCommand];
          const t0 = legs[0].target.pos;
          const f0 = kit.footAt(r, 0, 0, 0, 0);
          const base = readyCore(kit, r);
          const dx = t0[0] - f0.x + 0.25 * (t0[2] - kit.model.soleHeight);
          const dz = t0[2] - kit.model.soleHeight;
          return {
            pelvisPos: [base.pelvisPos[0] + dx, base.pelvisPos[1], base.pelvisPos[2] + dz],
            pelvisRpy: [0, 0, 0],
            legs,
          };
        },
      }),
    );
  }
  {
    const coreS = 8.6;
    out.push(
      standingRecipe(kit, {
        name: 'ip_hip_circles',
        group: 'in_place',
        description: 'circle the hips over the feet, three circles to the left, knees soft',
        knee: 0.5,
        coreS,
        upper: (t) => {
          const q = new Float64Array(STAND);
          q[J.lSr] += 0.25 * envelope(t, 1.0, C0 + coreS + 0.5, 1.0);
          q[J.rSr] -= 0.25 * envelope(t, 1.0, C0 + coreS + 0.5, 1.0);
          return q;
        },
        core: (tc, r) => {
          const sx = oscillation(tc, 0.3, coreS - 0.3, 2.6, 1.0);
          const sy = oscillation(tc, 0.3, coreS - 0.3, 2.6, 1.0, Math.PI / 2);
          return pelvisMove(
            kit,
            r,
            [0.04 * sx, 0.05 * sy, -0.01 * envelope(tc, 0, coreS, 1.0)],
            [-0.06 * sy, 0.06 * sx, 0],
          );
        },
      }),
    );
  }
  {
    const coreS = 8.0;
    const bow = (tc: number) => bump(tc, 0.3, 3.8) + bump(tc, 4.2, 7.7);
    out.push(
      standingRecipe(kit, {
        name: 'ip_forward_bow',
        group: 'in_place',
        description: 'bow forward from the hips and waist with the hips moving back, twice',
        knee: 0.4,
        coreS,
        upper: (t) => {
          const q = new Float64Array(STAND);
          const b = bow(t - C0);
          q[J.waistPitch] += 0.45 * b;
          q[J.lSp] -= 0.35 * b;
          q[J.rSp] -= 0.35 * b;
          return q;
        },
        core: (tc, r) => {
          const b = bow(tc);
          return pelvisMove(kit, r, [-0.07 * b, 0, -0.03 * b], [0, 0.4 * b, 0]);
        },
      }),
    );
  }
  {
    const coreS = 10.0;
    const knee = 0.7;
    const ready = kit.ready(knee);
    // weight over the left foot, tap the right foot forward and back twice; then the other side
    const taps: Record<Side, number[]> = { 0: [5.6, 7.4], 1: [1.0, 2.8] };
    const track = (side: Side) => {
      const f = kit.footAt(ready, side, 0, 0, 0);
      const s = side === 0 ? 1 : -1;
      const moves: FootMove[] = taps[side].flatMap((t0) => [
        { t0, t1: t0 + 0.7, x: f.x + 0.15, y: f.y + s * 0.02, height: 0.04 },
        { t0: t0 + 0.9, t1: t0 + 1.6, x: f.x, y: f.y, height: 0.04 },
      ]);
      return new FootTrack(kit, f, moves);
    };
    const L = track(0);
    const R = track(1);
    // +1: pelvis over the left foot, −1: over the right foot
    const shift = (tc: number) => ramp(tc, 0.1, 0.9) - 2 * ramp(tc, 4.6, 5.4) + ramp(tc, 9.1, 9.9);
    out.push(
      standingRecipe(kit, {
        name: 'ip_toe_taps',
        group: 'in_place',
        description: 'weight on one foot, tap the other foot forward on the floor and back, twice per side',
        knee,
        coreS,
        upper: (_t, core) => walkArms(new Float64Array(STAND), core, 1.0),
        core: (tc, r) => {
          const k = shift(tc);
          const c = readyCore(kit, r);
          return feetCore(
            [c.pelvisPos[0], c.pelvisPos[1] + 0.075 * k, c.pelvisPos[2] - 0.03 * envelope(tc, 0, coreS, 0.8)],
            [0.03 * k, 0, 0],
            L.at(tc),
            R.at(tc),
          );
        },
      }),
    );
  }
  return out;
}

/** a − b, joint by joint. */
function diff(a: Float64Array, b: Float64Array): Float64Array {
  const d = new Float64Array(a.length);
  for (let j = 0; j < a.length; j++) d[j] = a[j] - b[j];
  return d;
}

// ---------------------------------------------------------------------------------------------
// locomotion: the gait generator

interface WalkClip {
  name: string;
  description: string;
  gait: (r: Ready) => Gait;
  knee?: number;
  armGain?: number;
}

function walkRecipe(kit: Kit, w: WalkClip): Recipe {
  const knee = w.knee ?? 0.8;
  const r = kit.ready(knee);
  const g = w.gait(r);
  const { STAND } = arms(kit);
  return standingRecipe(kit, {
    name: w.name,
    group: 'locomotion',
    description: w.description,
    knee,
    coreS: g.durationS,
    upper: (_t, core) => walkArms(STAND, core, w.armGain ?? 0.9),
    core: (tc) => g.state(tc),
  });
}

function locomotion(kit: Kit): Recipe[] {
  const base = { tShift: 0.6, tSettle: 0.8, swingHeight: 0.06, sway: 0.4, dz: -0.02 };
  const walk = (
    name: string,
    description: string,
    o: Partial<Parameters<typeof planWalk>[2]> & {
      path: (u: number) => { x: number; y: number; yaw: number };
      total: number;
      stepU: number;
      firstSide: Side;
    },
  ) =>
    walkRecipe(kit, {
      name,
      description,
      gait: (r) => planWalk(kit, r, { tSwing: 0.5, tDouble: 0.12, ...base, ...o }),
    });
  const { STAND, pose, arm } = arms(kit);
  return [
    walk('loco_walk_forward_slow', 'walk forward slowly (0.15 m steps, about 0.24 m/s) and stop', {
      path: straightPath(0),
      total: 1.5,
      stepU: 0.15,
      firstSide: 1,
      tSwing: 0.5,
      tDouble: 0.14,
    }),
    walk('loco_walk_forward', 'walk forward (0.2 m steps, about 0.32 m/s) and stop', {
      path: straightPath(0),
      total: 2.0,
      stepU: 0.2,
      firstSide: 1,
    }),
    walk('loco_walk_forward_fast', 'walk forward briskly (0.21 m steps, about 0.39 m/s) and stop', {
      path: straightPath(0),
      total: 2.1,
      stepU: 0.21,
      firstSide: 0,
      tSwing: 0.48,
      tDouble: 0.06,
    }),
    walk('loco_walk_backward', 'walk backward (0.12 m steps) and stop', {
      path: straightPath(Math.PI),
      total: 1.08,
      stepU: 0.12,
      firstSide: 1,
      tSwing: 0.55,
      tDouble: 0.15,
      sway: 0.45,
    }),
    walk('loco_sidestep_left', 'side-step to the left (0.08 m per step) and stop', {
      path: straightPath(Math.PI / 2),
      total: 0.64,
      stepU: 0.08,
      firstSide: 0,
      tSwing: 0.5,
      tDouble: 0.15,
      sway: 0.35,
    }),
    walk('loco_sidestep_right', 'side-step to the right (0.08 m per step) and stop', {
      path: straightPath(-Math.PI / 2),
      total: 0.64,
      stepU: 0.08,
      firstSide: 1,
      tSwing: 0.5,
      tDouble: 0.15,
      sway: 0.35,
    }),
    walk('loco_turn_left_in_place', 'turn 90° to the left on the spot in small steps', {
      path: turnPath(1),
      total: Math.PI / 2,
      stepU: Math.PI / 12,
      firstSide: 0,
      tSwing: 0.5,
      tDouble: 0.15,
    }),
    walk('loco_turn_right_in_place', 'turn 135° to the right on the spot in small steps', {
      path: turnPath(-1),
      total: (3 * Math.PI) / 4,
      stepU: Math.PI / 12,
      firstSide: 1,
      tSwing: 0.45,
      tDouble: 0.12,
    }),
    walk('loco_walk_arc_left', 'walk forward on a left-turning arc of 1.2 m radius and stop', {
      path: arcPath(1.2),
      total: 1.8,
      stepU: 0.18,
      firstSide: 1,
    }),
    walk('loco_walk_arc_right', 'walk forward on a right-turning arc of 0.9 m radius and stop', {
      path: arcPath(-0.9),
      total: 1.4,
      stepU: 0.16,
      firstSide: 0,
    }),
    walkRecipe(kit, {
      name: 'loco_march_in_place',
      description: 'march on the spot, knees lifted high, arms swinging',
      gait: (r) =>
        planWalk(kit, r, {
          path: straightPath(0),
          total: 0,
          stepU: 0,
          steps: 12,
          firstSide: 1,
          tShift: 0.6,
          tSwing: 0.6,
          tDouble: 0.15,
          tSettle: 0.8,
          swingHeight: 0.11,
          swingPitch: 0.3,
          sway: 0.45,
          dz: -0.02,
        }),
      armGain: 0,
    }),
  ].map((rec) => {
    if (rec.name !== 'loco_march_in_place') return rec;
    // marching arms: swing with the lifted knee
    const bent = pose({
      left: arm({ pitch: 0, roll: 0.15, elbow: 0.7 }),
      right: arm({ pitch: 0, roll: 0.15, elbow: 0.7 }),
    });
    const sample = rec.sample;
    const dur = rec.durationS;
    return {
      ...rec,
      sample: (t: number) => {
        const f = sample(t);
        const w = envelope(t, 0.5, dur - 0.5, 1.0);
        const q = new Float64Array(f.joints);
        addScaled(q, diff(bent, STAND), w);
        if (f.kind === 'ik') {
          const lz = f.legs[0].target.pos[2];
          const rz = f.legs[1].target.pos[2];
          q[J.lSp] += 3.0 * (lz - rz);
          q[J.rSp] -= 3.0 * (lz - rz);
        }
        return { ...f, joints: q };
      },
    };
  });
}

// ---------------------------------------------------------------------------------------------
// dynamic: fast motions; jogging and jumps have flight phases

function dynamic(kit: Kit): Recipe[] {
  const { arm, pose, STAND } = arms(kit);
  const out: Recipe[] = [];
  const jogArms = pose({
    waistPitch: 0.05,
    left: arm({ pitch: -0.1, roll: 0.15, elbow: 0.25 }),
    right: arm({ pitch: -0.1, roll: 0.15, elbow: 0.25 }),
  });

  const jog = (name: string, description: string, speed: number, steps: number) => {
    const knee = 0.8;
    const r = kit.ready(knee);
    const g = planJog(kit, r, {
      speed,
      stepT: 0.4,
      stanceT: 0.28,
      steps,
      firstSide: 1,
      tStart: 0.6,
      tSettle: 0.9,
      swingHeight: 0.09,
      clearance: 0.02,
      clearS: 0.1,
      bob: 0.015,
      sway: 0.02,
      dz: -0.02,
      lean: speed > 0 ? 0.08 : 0.02,
      rampSteps: 4,
      toeOff: 0.3,
      swingPitch: 0.4,
    });
    out.push(
      standingRecipe(kit, {
        name,
        group: 'dynamic',
        description,
        knee,
        coreS: g.durationS,
        flight: true,
        upper: (t, core) => {
          const q = new Float64Array(STAND);
          const w = envelope(t, 0.5, C0 + g.durationS + 1.0, 1.2);
          addScaled(q, diff(jogArms, STAND), w);
          if (core) {
            const p = g.armPhase(t - C0);
            q[J.lSp] += 0.45 * p;
            q[J.rSp] -= 0.45 * p;
          }
          return q;
        },
        core: (tc) => g.state(tc),
      }),
    );
  };
  jog('dyn_jog_in_place', 'jog on the spot with short flight phases (2.5 steps/s)', 0, 20);
  jog('dyn_jog_forward', 'jog forward at up to 0.7 m/s with flight phases, then stop', 0.7, 20);

  {
    // three vertical jumps
    const knee = 0.6;
    const jumps = [0.4, 2.5, 4.6];
    const coreS = 7.0;
    const H = 0.05;
    const z = smoothTrack(
      jumps.flatMap((t0) => [
        [t0, 0],
        [t0 + 0.45, -0.12],
        [t0 + 0.75, -0.005],
        [t0 + 0.9, H - 0.01],
        [t0 + 1.05, -0.005],
        [t0 + 1.35, -0.13],
        [t0 + 1.9, 0],
      ]) as [number, number][],
    );
    const lift = (tc: number) => jumps.reduce((a, t0) => a + H * bump(tc, t0 + 0.76, t0 + 1.04), 0);
    const armsSwing = pose({
      left: arm({ pitch: -1.6, roll: 0.25, elbow: 1.3 }),
      right: arm({ pitch: -1.6, roll: 0.25, elbow: 1.3 }),
    });
    const armsBack = pose({
      left: arm({ pitch: 0.6, roll: 0.2, elbow: 1.3 }),
      right: arm({ pitch: 0.6, roll: 0.2, elbow: 1.3 }),
    });
    const armKeys: [number, Float64Array][] = [[C0, STAND]];
    for (const t0 of jumps)
      armKeys.push([C0 + t0 + 0.45, armsBack], [C0 + t0 + 0.9, armsSwing], [C0 + t0 + 1.9, STAND]);
    const armTrack = flow(armKeys);
    out.push(
      standingRecipe(kit, {
        name: 'dyn_small_jumps',
        group: 'dynamic',
        description: 'three small vertical jumps (feet about 5 cm off the floor), arms swinging up',
        knee,
        coreS,
        flight: true,
        upper: (t) => armTrack.at(t),
        core: (tc, r) => {
          const c = readyCore(kit, r);
          const h = lift(tc);
          const legs = ([0, 1] as Side[]).map((s) => {
            const f = kit.footAt(r, s, 0, 0, 0);
            return { kind: 'foot', target: kit.flatFoot(f.x, f.y, 0, h) } as LegCommand;
          }) as [LegCommand, LegCommand];
          const d = Math.min(0, z.at(tc));
          return feetCore(
            [c.pelvisPos[0] + 0.25 * d, c.pelvisPos[1], c.pelvisPos[2] + z.at(tc)],
            [0, -1.2 * d, 0],
            legs[0],
            legs[1],
          );
        },
      }),
    );
  }
  {
    // two forward hops of 0.2 m
    const knee = 0.6;
    const hops = [0.4, 2.6];
    const D = 0.2;
    const H = 0.045;
    const coreS = 4.9;
    const z = smoothTrack(
      hops.flatMap((t0) => [
        [t0, 0],
        [t0 + 0.45, -0.13],
        [t0 + 0.75, -0.01],
        [t0 + 0.9, H - 0.015],
        [t0 + 1.05, -0.01],
        [t0 + 1.35, -0.14],
        [t0 + 1.9, 0],
      ]) as [number, number][],
    );
    const fx = (tc: number) => hops.reduce((a, t0) => a + D * ramp(tc, t0 + 0.76, t0 + 1.04), 0);
    const px = smoothTrack(
      hops.flatMap((t0, i) => [
        [t0, i * D],
        [t0 + 0.45, i * D - 0.03],
        [t0 + 0.9, i * D + 0.5 * D],
        [t0 + 1.35, (i + 1) * D + 0.03],
        [t0 + 1.9, (i + 1) * D],
      ]) as [number, number][],
    );
    const lift = (tc: number) => hops.reduce((a, t0) => a + H * bump(tc, t0 + 0.76, t0 + 1.04), 0);
    const armsSwing = pose({
      left: arm({ pitch: -1.4, roll: 0.25, elbow: 1.3 }),
      right: arm({ pitch: -1.4, roll: 0.25, elbow: 1.3 }),
    });
    const armsBack = pose({
      left: arm({ pitch: 0.6, roll: 0.2, elbow: 1.3 }),
      right: arm({ pitch: 0.6, roll: 0.2, elbow: 1.3 }),
    });
    const armKeys: [number, Float64Array][] = [[C0, STAND]];
    for (const t0 of hops) armKeys.push([C0 + t0 + 0.45, armsBack], [C0 + t0 + 0.9, armsSwing], [C0 + t0 + 1.9, STAND]);
    const armTrack = flow(armKeys);
    out.push(
      standingRecipe(kit, {
        name: 'dyn_jump_forward',
        group: 'dynamic',
        description: 'two two-footed hops forward of 0.2 m each',
        knee,
        coreS,
        flight: true,
        upper: (t) => armTrack.at(t),
        core: (tc, r) => {
          const c = readyCore(kit, r);
          const h = lift(tc);
          const x = fx(tc);
          const legs = ([0, 1] as Side[]).map((s) => {
            const f = kit.footAt(r, s, 0, 0, 0);
            return { kind: 'foot', target: kit.flatFoot(f.x + x, f.y, 0, h) } as LegCommand;
          }) as [LegCommand, LegCommand];
          const d = Math.min(0, z.at(tc));
          return feetCore(
            [c.pelvisPos[0] + px.at(tc) + 0.2 * d, c.pelvisPos[1], c.pelvisPos[2] + z.at(tc)],
            [0, -1.3 * d, 0],
            legs[0],
            legs[1],
          );
        },
      }),
    );
  }
  // kicks: weight over the stance foot, kick, recover; twice. The chamber and extension foot
  // poses are those of a chosen leg shape at the pelvis pose of that moment (so they are reachable).
  const kick = (name: string, description: string, side: Side, kind: 'front' | 'side') => {
    const knee = 0.6;
    const r = kit.ready(knee);
    const stance = (1 - side) as Side;
    const s = side === 0 ? 1 : -1;
    const f = kit.footAt(r, side, 0, 0, 0);
    const sf = kit.footAt(r, stance, 0, 0, 0);
    const kicks = [1.0, 3.4];
    const coreS = 6.0;
    const shift = (tc: number) => ramp(tc, 0.1, 0.9) - ramp(tc, coreS - 0.9, coreS - 0.1);
    const lean = (tc: number) => kicks.reduce((a, t0) => a + bump(tc, t0, t0 + 1.35), 0);
    const pelvis = (tc: number): { pos: Vec3; rpy: Vec3 } => {
      const c = readyCore(kit, r);
      const k = shift(tc);
      const l = lean(tc);
      const y = (sf.y - c.pelvisPos[1]) * 0.65 * k;
      const rpy: Vec3 = kind === 'front' ? [s * 0.03 * k, -0.12 * l, 0] : [-s * (0.04 * k + 0.12 * l), 0, 0];
      return {
        pos: [c.pelvisPos[0] - (kind === 'front' ? 0.02 * l : 0), c.pelvisPos[1] + y, c.pelvisPos[2] - 0.02 * k],
        rpy,
      };
    };
    const shape =
      kind === 'front'
        ? {
            chamber: { hipPitch: -1.3, knee: 1.75, anklePitch: -0.1 },
            extend: { hipPitch: -1.25, knee: 0.4, anklePitch: -0.35 },
          }
        : {
            chamber: { hipPitch: -0.9, hipRoll: 0.45, knee: 1.5, anklePitch: -0.2 },
            extend: { hipPitch: -0.3, hipRoll: 1.1, knee: 0.3, anklePitch: 0 },
          };
    const moves: FootMove[] = [];
    for (const t0 of kicks) {
      const at = (tc: number, leg: LegPose) => {
        const p = pelvis(tc);
        const fp = kit.footPoseOfLeg(p.pos, p.rpy, side, leg);
        return kit.placeFor(fp.pos, fp.rpy);
      };
      moves.push(
        { t0, t1: t0 + 0.35, ...at(t0 + 0.35, shape.chamber) },
        { t0: t0 + 0.35, t1: t0 + 0.65, ...at(t0 + 0.65, shape.extend) },
        { t0: t0 + 0.65, t1: t0 + 0.95, ...at(t0 + 0.95, shape.chamber) },
        { t0: t0 + 0.95, t1: t0 + 1.35, x: f.x, y: f.y, lift: 0, yaw: 0, pitch: 0, roll: 0 },
      );
    }
    const kickTrack = new FootTrack(kit, f, moves);
    const guard = pose({
      left: arm({ pitch: -0.8, roll: 0.35, elbow: 0.0 }),
      right: arm({ pitch: -0.8, roll: 0.35, elbow: 0.0 }),
    });
    out.push(
      standingRecipe(kit, {
        name,
        group: 'dynamic',
        description,
        knee,
        coreS,
        upper: (t) => {
          const q = new Float64Array(STAND);
          addScaled(q, diff(guard, STAND), envelope(t, 0.5, C0 + coreS + 1.0, 1.0));
          if (kind === 'side') q[J.waistRoll] += -s * 0.15 * lean(t - C0);
          return q;
        },
        core: (tc) => {
          const c = readyCore(kit, r);
          const p = pelvis(tc);
          const legs: [LegCommand, LegCommand] = [c.legs[0], c.legs[1]];
          legs[side] = kickTrack.at(tc);
          return feetCore(p.pos, p.rpy, legs[0], legs[1]);
        },
      }),
    );
  };
  kick('dyn_front_kick_right', 'weight on the left foot, two front kicks with the right leg', 1, 'front');
  kick('dyn_front_kick_left', 'weight on the right foot, two front kicks with the left leg', 0, 'front');
  kick('dyn_side_kick_right', 'weight on the left foot, two side kicks with the right leg', 1, 'side');

  {
    // fast punches with waist rotation and a knee bounce
    const knee = 0.6;
    const coreS = 6.5;
    const { guard, jabL, jabR } = boxingPoses(kit, { guard: 0.15, jabL: -0.35, jabR: 0.5 }, 1.35);
    const keys: [number, Float64Array][] = [
      [0.5, STAND],
      [1.6, guard],
    ];
    let t = 1.8;
    for (const jab of [jabL, jabR, jabL, jabR, jabR, jabL, jabR, jabL, jabR, jabL]) {
      t += 0.26;
      keys.push([t, jab]);
      t += 0.3;
      keys.push([t, guard]);
    }
    keys.push([C0 + coreS + 0.1, guard], [C0 + coreS + 1.0, STAND]);
    const track = seq(keys);
    out.push(
      standingRecipe(kit, {
        name: 'dyn_fast_punches',
        group: 'dynamic',
        description: 'fast alternating punches with waist rotation, bouncing on soft knees',
        knee,
        coreS,
        upper: (tt) => track.at(tt),
        core: (tc, r) =>
          pelvisMove(kit, r, [
            0,
            0,
            -0.02 * envelope(tc, 0, coreS, 0.8) - 0.015 * oscillation(tc, 0.3, coreS - 0.3, 0.56, 0.6),
          ]),
      }),
    );
  }
  {
    const knee = 0.5;
    const coreS = 6.0;
    const bent = pose({
      left: arm({ pitch: -0.2, roll: 0.2, elbow: 0.4 }),
      right: arm({ pitch: -0.2, roll: 0.2, elbow: 0.4 }),
    });
    out.push(
      standingRecipe(kit, {
        name: 'dyn_fast_arm_swings',
        group: 'dynamic',
        description: 'fast alternating arm pumping (2 Hz) with a knee bounce, as in sprinting on the spot',
        knee,
        coreS,
        upper: (t) => {
          const q = new Float64Array(STAND);
          addScaled(q, diff(bent, STAND), envelope(t, 0.5, C0 + coreS + 1.0, 1.0));
          const s = oscillation(t, 1.7, C0 + coreS - 0.2, 0.5, 0.8);
          q[J.lSp] += 0.75 * s;
          q[J.rSp] -= 0.75 * s;
          q[J.waistYaw] += 0.12 * s;
          return q;
        },
        core: (tc, r) =>
          pelvisMove(kit, r, [
            0,
            0,
            -0.02 * envelope(tc, 0, coreS, 0.8) - 0.02 * oscillation(tc, 0.2, coreS - 0.2, 0.25, 0.8, Math.PI / 2),
          ]),
      }),
    );
  }
  out.push(
    lungeRecipe(
      kit,
      'dyn_speed_lunges',
      'quick alternating forward lunges: step out, drop, push back',
      'dynamic',
      [
        [1, 0.4],
        [0, 2.6],
        [1, 4.8],
      ],
      {
        step: 0.6,
        drop: 0.16,
        depth: 0.06,
        fwd: 0.55,
        backPitch: 0.9,
        stepPitch: 0.6,
        hold: 0.1,
        lean: 0.08,
        stepS: 0.55,
        downS: 0.35,
        gapS: 0.05,
      },
    ),
  );
  return out;
}

// ---------------------------------------------------------------------------------------------
// low_posture: deep knee bends, lunges and crouches

function lowPosture(kit: Kit): Recipe[] {
  const { arm, pose, STAND } = arms(kit);
  const out: Recipe[] = [];
  const armsFwd = pose({
    left: arm({ pitch: -1.4, roll: 0.1, elbow: 1.4 }),
    right: arm({ pitch: -1.4, roll: 0.1, elbow: 1.4 }),
  });

  {
    const coreS = 9.0;
    const squats = restTrack([
      [0.2, 0],
      [2.0, 1],
      [3.2, 1],
      [4.8, 0],
      [5.2, 0],
      [7.0, 1],
      [7.6, 1],
      [8.8, 0],
    ]);
    const d = (tc: number) => squats.at(tc);
    out.push(
      standingRecipe(kit, {
        name: 'lp_deep_squat',
        group: 'low_posture',
        description: 'two deep squats (pelvis down about 0.3 m), torso leaning forward, arms forward',
        knee: 0.5,
        coreS,
        upper: (t) => {
          const q = new Float64Array(STAND);
          const a = d(t - C0);
          addScaled(q, diff(armsFwd, STAND), a);
          q[J.waistPitch] += 0.15 * a;
          return q;
        },
        core: (tc, r) => {
          const a = d(tc);
          return pelvisMove(kit, r, [-0.1 * a, 0, -0.3 * a], [0, 0.55 * a, 0]);
        },
      }),
    );
  }
  {
    const coreS = 9.0;
    const d = restTrack([
      [0.2, 0],
      [1.8, 1],
      [7.2, 1],
      [8.8, 0],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'lp_crouch_look_around',
        group: 'low_posture',
        description: 'crouch low and hold, turning the torso to look left and right',
        knee: 0.5,
        coreS,
        upper: (t) => {
          const q = new Float64Array(STAND);
          const a = d.at(t - C0);
          addScaled(
            q,
            diff(
              pose({
                waistPitch: 0.2,
                left: arm({ pitch: -0.9, roll: 0.25, elbow: 0.6 }),
                right: arm({ pitch: -0.9, roll: 0.25, elbow: 0.6 }),
              }),
              STAND,
            ),
            a,
          );
          q[J.waistYaw] += 0.6 * oscillation(t - C0, 1.8, 7.2, 2.7, 0.9);
          return q;
        },
        core: (tc, r) => {
          const a = d.at(tc);
          return pelvisMove(kit, r, [-0.08 * a, 0, -0.26 * a], [0, 0.45 * a, 0]);
        },
      }),
    );
  }
  const lunge = (name: string, description: string, front: Side, o: LungeSpec) =>
    lungeRecipe(kit, name, description, 'low_posture', [[front, 0.4]], o);
  out.push(
    lunge('lp_lunge_hold_left', 'step into a lunge with the left foot forward, hold low, step back', 0, {
      step: 0.65,
      drop: 0.15,
      depth: 0.1,
      fwd: 0.56,
      backPitch: 1.0,
      stepPitch: 0.6,
      hold: 2.5,
      lean: 0.1,
      stepS: 1.0,
      downS: 1.4,
      gapS: 0.1,
    }),
  );
  out.push(
    lunge('lp_lunge_hold_right', 'step into a lunge with the right foot forward, hold low, step back', 1, {
      step: 0.65,
      drop: 0.15,
      depth: 0.1,
      fwd: 0.56,
      backPitch: 1.0,
      stepPitch: 0.6,
      hold: 2.5,
      lean: 0.1,
      stepS: 1.0,
      downS: 1.4,
      gapS: 0.1,
    }),
  );
  out.push(
    lunge(
      'lp_kneel_like',
      'deep split lunge, back knee a few centimetres above the floor on the toes of the back foot, hold',
      1,
      {
        step: 0.7,
        drop: 0.15,
        depth: 0.12,
        fwd: 0.58,
        backPitch: 1.4,
        stepPitch: 0.6,
        hold: 3.0,
        lean: 0.1,
        stepS: 1.0,
        downS: 1.6,
        gapS: 0.1,
      },
    ),
  );

  {
    // crawl-like low reaching: deep crouch, torso forward, hands reaching down in front, alternating
    const coreS = 10.0;
    const d = restTrack([
      [0.2, 0],
      [2.0, 1],
      [8.2, 1],
      [9.8, 0],
    ]);
    const reachL = pose({
      waistPitch: 0.45,
      waistYaw: -0.2,
      left: arm({ pitch: -1.0, roll: 0.15, elbow: 1.45 }),
      right: arm({ pitch: -0.5, roll: 0.3, elbow: 0.9 }),
    });
    const reachR = pose({
      waistPitch: 0.45,
      waistYaw: 0.2,
      left: arm({ pitch: -0.5, roll: 0.3, elbow: 0.9 }),
      right: arm({ pitch: -1.0, roll: 0.15, elbow: 1.45 }),
    });
    const low = pose({
      waistPitch: 0.4,
      left: arm({ pitch: -0.7, roll: 0.25, elbow: 1.2 }),
      right: arm({ pitch: -0.7, roll: 0.25, elbow: 1.2 }),
    });
    const armTrack = seq([
      [1.7, STAND],
      [3.5, low],
      [4.4, reachL],
      [5.3, low],
      [6.2, reachR],
      [7.1, low],
      [8.0, reachL],
      [8.9, low],
      [9.8, reachR],
      [10.7, low],
      [11.0, low],
      [12.5, STAND],
    ]);
    out.push(
      standingRecipe(kit, {
        name: 'lp_crawl_reach',
        group: 'low_posture',
        description: 'crouch with the torso forward and reach down in front with alternating hands, as if crawling',
        knee: 0.5,
        coreS,
        upper: (t) => armTrack.at(t),
        core: (tc, r) => {
          const a = d.at(tc);
          return pelvisMove(kit, r, [-0.1 * a, 0, -0.3 * a], [0, 0.6 * a, 0]);
        },
      }),
    );
  }
  {
    // duck walk: walking forward with the pelvis low
    const knee = 0.8;
    const r = kit.ready(knee);
    const g = planWalk(kit, r, {
      path: straightPath(0),
      total: 0.8,
      stepU: 0.08,
      firstSide: 1,
      tShift: 0.7,
      tSwing: 0.55,
      tDouble: 0.2,
      tSettle: 0.9,
      swingHeight: 0.05,
      swingPitch: 0.2,
      sway: 0.35,
      dz: -0.1,
      dzRampS: 1.2,
      lean: 0.35,
    });
    const low = pose({
      waistPitch: 0.15,
      left: arm({ pitch: -0.7, roll: 0.3, elbow: 0.8 }),
      right: arm({ pitch: -0.7, roll: 0.3, elbow: 0.8 }),
    });
    out.push(
      standingRecipe(kit, {
        name: 'lp_duck_walk',
        group: 'low_posture',
        description:
          'walk forward in a low crouch (pelvis 0.1 m lower than in the other walks, 0.15 m below standing), short steps',
        knee,
        coreS: g.durationS,
        upper: (t, core) => {
          const q = walkArms(STAND, core, 0.6);
          addScaled(q, diff(low, STAND), envelope(t, C0, C0 + g.durationS, 1.2));
          return q;
        },
        core: (tc) => g.state(tc),
      }),
    );
  }
  {
    // sumo squat: weight over one foot, step the other out with the toes turned out; both
    // sides; squat deep twice; step back in
    const knee = 0.5;
    const r = kit.ready(knee);
    const fl = kit.footAt(r, 0, 0, 0, 0);
    const fr = kit.footAt(r, 1, 0, 0, 0);
    const L = new FootTrack(kit, fl, [
      { t0: 0.8, t1: 1.5, y: fl.y + 0.06, yaw: 0.45, height: 0.05 },
      { t0: 10.0, t1: 10.7, y: fl.y, yaw: 0, height: 0.05 },
    ]);
    const R = new FootTrack(kit, fr, [
      { t0: 2.2, t1: 2.9, y: fr.y - 0.06, yaw: -0.45, height: 0.05 },
      { t0: 8.6, t1: 9.3, y: fr.y, yaw: 0, height: 0.05 },
    ]);
    const coreS = 11.5;
    // +1: pelvis over the right foot, −1: over the left
    const sway = restTrack([
      [0.1, 0],
      [0.75, 1],
      [1.55, 1],
      [2.15, -1],
      [2.95, -1],
      [3.5, 0],
      [8.0, 0],
      [8.55, -1],
      [9.35, -1],
      [9.95, 1],
      [10.75, 1],
      [11.4, 0],
    ]);
    const depth = restTrack([
      [3.5, 0],
      [4.6, 1],
      [5.0, 1],
      [5.8, 0.25],
      [6.0, 0.25],
      [6.8, 1],
      [7.1, 1],
      [8.0, 0],
    ]);
    const armsSumo = diff(
      pose({ left: arm({ pitch: -1.0, roll: 0.3, elbow: 0.2 }), right: arm({ pitch: -1.0, roll: 0.3, elbow: 0.2 }) }),
      STAND,
    );
    out.push(
      standingRecipe(kit, {
        name: 'lp_sumo_squat',
        group: 'low_posture',
        description: 'step out to a wide stance with the toes turned out and squat deep twice',
        knee,
        coreS,
        upper: (t) => addScaled(new Float64Array(STAND), armsSumo, depth.at(t - C0)),
        core: (tc) => {
          const c = readyCore(kit, r);
          const a = depth.at(tc);
          return feetCore(
            [
              c.pelvisPos[0] - 0.06 * a,
              c.pelvisPos[1] - 0.065 * sway.at(tc),
              c.pelvisPos[2] - 0.2 * a - 0.02 * envelope(tc, 0, coreS, 0.6),
            ],
            [0, 0.35 * a, 0],
            L.at(tc),
            R.at(tc),
          );
        },
      }),
    );
  }
  {
    // pick up: squat and reach both hands to the floor in front, stand, twice
    const coreS = 9.0;
    const d = restTrack([
      [0.2, 0],
      [2.0, 1],
      [2.8, 1],
      [4.4, 0],
      [4.6, 0],
      [6.4, 1],
      [7.2, 1],
      [8.8, 0],
    ]);
    const reach = pose({
      waistPitch: 0.42,
      left: arm({ pitch: -0.55, roll: 0.05, elbow: 1.5 }),
      right: arm({ pitch: -0.55, roll: 0.05, elbow: 1.5 }),
    });
    out.push(
      standingRecipe(kit, {
        name: 'lp_pick_up',
        group: 'low_posture',
        description: 'squat and reach both hands down to the floor in front, stand up, twice',
        knee: 0.5,
        coreS,
        upper: (t) => {
          const q = new Float64Array(STAND);
          addScaled(q, diff(reach, STAND), d.at(t - C0));
          return q;
        },
        core: (tc, r) => {
          const a = d.at(tc);
          return pelvisMove(kit, r, [-0.09 * a, 0, -0.28 * a], [0, 0.6 * a, 0]);
        },
      }),
    );
  }
  return out;
}

interface LungeSpec {
  /** Distance the front foot steps forward (m). */
  step: number;
  /** Pelvis drop while stepping (m). */
  drop: number;
  /** Further pelvis drop in the low phase (m). */
  depth: number;
  /** Pelvis position between the feet in the low phase, as a fraction of the step from the back foot. */
  fwd: number;
  /** Back-foot heel lift in the low phase (rad). */
  backPitch: number;
  /** Back-foot heel lift once the front foot has stepped (rad). */
  stepPitch: number;
  hold: number;
  lean: number;
  stepS: number;
  downS: number;
  gapS: number;
}

/**
 * Forward lunges: the front foot steps `step` forward while the pelvis follows halfway and drops
 * `drop` (back heel rising), then the pelvis moves on to `fwd` of the step and drops `depth` more
 * with the back heel at `backPitch`; hold; reverse.
 */
function lungeRecipe(
  kit: Kit,
  name: string,
  description: string,
  group: 'low_posture' | 'dynamic',
  lunges: [Side, number][],
  o: LungeSpec,
): Recipe {
  const { arm, pose, STAND } = arms(kit);
  const knee = 0.6;
  const r = kit.ready(knee);
  const one = o.stepS + o.gapS + o.downS + o.hold + o.downS + o.gapS + o.stepS;
  const coreS = lunges[lunges.length - 1][1] + one + 0.4;
  const phases = lunges.map(([side, t0]) => {
    const tDown0 = t0 + o.stepS + o.gapS;
    const tUp0 = tDown0 + o.downS + o.hold;
    const tBack = tUp0 + o.downS + o.gapS;
    return { side, t0, tDown0, tUp0, tBack };
  });
  const track = (side: Side) => {
    const f = kit.footAt(r, side, 0, 0, 0);
    const moves: FootMove[] = [];
    for (const p of phases) {
      if (p.side === side) {
        moves.push(
          { t0: p.t0, t1: p.t0 + o.stepS, x: f.x + o.step, height: 0.05 },
          { t0: p.tBack, t1: p.tBack + o.stepS, x: f.x, height: 0.05 },
        );
      } else {
        moves.push(
          { t0: p.t0 + 0.1 * o.stepS, t1: p.t0 + 0.9 * o.stepS, pitch: o.stepPitch },
          { t0: p.tDown0, t1: p.tDown0 + o.downS, pitch: o.backPitch },
          { t0: p.tUp0, t1: p.tUp0 + o.downS, pitch: o.stepPitch },
          { t0: p.tBack + 0.1 * o.stepS, t1: p.tBack + 0.9 * o.stepS, pitch: 0 },
        );
      }
    }
    return new FootTrack(kit, f, moves);
  };
  const L = track(0);
  const R = track(1);
  const split = (tc: number) =>
    phases.reduce((a, p) => a + ramp(tc, p.t0, p.t0 + o.stepS) - ramp(tc, p.tBack, p.tBack + o.stepS), 0);
  const low = (tc: number) =>
    phases.reduce((a, p) => a + ramp(tc, p.tDown0, p.tDown0 + o.downS) - ramp(tc, p.tUp0, p.tUp0 + o.downS), 0);
  const armsBal = pose({
    left: arm({ pitch: -0.4, roll: 0.5, elbow: 1.0 }),
    right: arm({ pitch: -0.4, roll: 0.5, elbow: 1.0 }),
  });
  const dArms = diff(armsBal, STAND);
  return standingRecipe(kit, {
    name,
    group,
    description,
    knee,
    coreS,
    upper: (t) => {
      const q = new Float64Array(STAND);
      addScaled(q, dArms, 0.5 * split(t - C0) + 0.5 * low(t - C0));
      return q;
    },
    core: (tc) => {
      const c = readyCore(kit, r);
      const sp = split(tc);
      const a = low(tc);
      return feetCore(
        [
          c.pelvisPos[0] + o.step * (0.5 * sp + (o.fwd - 0.5) * a),
          c.pelvisPos[1],
          c.pelvisPos[2] - o.drop * sp - o.depth * a,
        ],
        [0, o.lean * (0.5 * sp + 0.5 * a), 0],
        L.at(tc),
        R.at(tc),
      );
    },
  });
}
