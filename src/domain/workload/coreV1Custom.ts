// The core-v1 clips whose motion is their own (a custom row in coreV1Table.ts names its builder
// here): each builder takes the row's name, group and description and holds the motion. The
// arithmetic is part of the frozen core-v1 snapshot (docs/WORKLOAD.md).

import type { Side } from './bodyModel';
import type { LegCommand, Recipe } from './clipBuilder';
import { planWalk, straightPath } from './gait';
import { bump, envelope, oscillation, ramp, restTrack, smoothTrack } from './interpolation';
import { addScaled, CORE_T0 as C0, FootTrack, readyCore, standingRecipe, type FootMove, type Kit } from './recipeKit';
import { arms, boxingPoses, diff, feetCore, flow, J, pelvisMove, seq, walkArms } from './coreV1Kit';
import type { CapabilityGroup } from '../motion/motionClip';

export interface ClipMeta {
  name: string;
  group: CapabilityGroup;
  description: string;
}

export function boxingJabs(kit: Kit, meta: ClipMeta): Recipe {
  const { STAND } = arms(kit);
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
  return standingRecipe(kit, { ...meta, durationS: t + 2.2, upper: (tt) => track.at(tt) });
}

/**
 * Bending right (waist roll > 0) sweeps the left arm over the head, and the other way round;
 * each arm follows the square of the bend its way (continuous velocity at the crossing).
 */
export function sideBend(kit: Kit, meta: ClipMeta): Recipe {
  const { arm, pose, STAND } = arms(kit);
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
  return standingRecipe(kit, { ...meta, durationS: 10.0, upper: (t) => track(t) });
}

export function weightShift(kit: Kit, meta: ClipMeta): Recipe {
  const { STAND } = arms(kit);
  const coreS = 8.0;
  return standingRecipe(kit, {
    ...meta,
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
  });
}

export function heelRaise(kit: Kit, meta: ClipMeta): Recipe {
  const { arm, pose, STAND } = arms(kit);
  const coreS = 8.0;
  const rise = (tc: number) => {
    let d = 0;
    for (let i = 0; i < 4; i++) d += bump(tc, 0.3 + i * 1.85, 0.3 + i * 1.85 + 1.8);
    return d;
  };
  const up = pose({ left: arm({ pitch: -0.5, roll: 0.35 }), right: arm({ pitch: -0.5, roll: 0.35 }) });
  return standingRecipe(kit, {
    ...meta,
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
  });
}

export function hipCircles(kit: Kit, meta: ClipMeta): Recipe {
  const { STAND } = arms(kit);
  const coreS = 8.6;
  return standingRecipe(kit, {
    ...meta,
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
  });
}

/** Weight over the left foot, tap the right foot forward and back twice; then the other side. */
export function toeTaps(kit: Kit, meta: ClipMeta): Recipe {
  const { STAND } = arms(kit);
  const coreS = 10.0;
  const knee = 0.7;
  const ready = kit.ready(knee);
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
  return standingRecipe(kit, {
    ...meta,
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
  });
}

/** Marching on the spot: the arms swing with the lifted knee. */
export function marchInPlace(kit: Kit, meta: ClipMeta): Recipe {
  const { arm, pose, STAND } = arms(kit);
  const knee = 0.8;
  const r = kit.ready(knee);
  const g = planWalk(kit, r, {
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
  });
  const rec = standingRecipe(kit, {
    ...meta,
    knee,
    coreS: g.durationS,
    upper: (_t, core) => walkArms(STAND, core, 0),
    core: (tc) => g.state(tc),
  });
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
}

/**
 * Two-footed jumps starting at `starts` (core time): crouch, push off, `liftM` of flight moving
 * `hopM` forward, land, stand; arms swing back and up.
 */
function jumps(
  kit: Kit,
  meta: ClipMeta,
  o: {
    starts: number[];
    coreS: number;
    liftM: number;
    /** Pelvis heights (relative) of the crouch, take-off, apex and landing crouch. */
    z: { crouch: number; push: number; apexBelow: number; land: number };
    armsSwingPitch: number;
    pelvisLean: { x: number; pitch: number };
    hopM?: number;
  },
): Recipe {
  const { arm, pose } = arms(kit);
  const { STAND } = arms(kit);
  const knee = 0.6;
  const H = o.liftM;
  const z = smoothTrack(
    o.starts.flatMap((t0) => [
      [t0, 0],
      [t0 + 0.45, o.z.crouch],
      [t0 + 0.75, o.z.push],
      [t0 + 0.9, H - o.z.apexBelow],
      [t0 + 1.05, o.z.push],
      [t0 + 1.35, o.z.land],
      [t0 + 1.9, 0],
    ]) as [number, number][],
  );
  const D = o.hopM;
  const fx = (tc: number) =>
    D === undefined ? 0 : o.starts.reduce((a, t0) => a + D * ramp(tc, t0 + 0.76, t0 + 1.04), 0);
  const px =
    D === undefined
      ? null
      : smoothTrack(
          o.starts.flatMap((t0, i) => [
            [t0, i * D],
            [t0 + 0.45, i * D - 0.03],
            [t0 + 0.9, i * D + 0.5 * D],
            [t0 + 1.35, (i + 1) * D + 0.03],
            [t0 + 1.9, (i + 1) * D],
          ]) as [number, number][],
        );
  const lift = (tc: number) => o.starts.reduce((a, t0) => a + H * bump(tc, t0 + 0.76, t0 + 1.04), 0);
  const armsSwing = pose({
    left: arm({ pitch: o.armsSwingPitch, roll: 0.25, elbow: 1.3 }),
    right: arm({ pitch: o.armsSwingPitch, roll: 0.25, elbow: 1.3 }),
  });
  const armsBack = pose({
    left: arm({ pitch: 0.6, roll: 0.2, elbow: 1.3 }),
    right: arm({ pitch: 0.6, roll: 0.2, elbow: 1.3 }),
  });
  const armKeys: [number, Float64Array][] = [[C0, STAND]];
  for (const t0 of o.starts)
    armKeys.push([C0 + t0 + 0.45, armsBack], [C0 + t0 + 0.9, armsSwing], [C0 + t0 + 1.9, STAND]);
  const armTrack = flow(armKeys);
  return standingRecipe(kit, {
    ...meta,
    knee,
    coreS: o.coreS,
    flight: true,
    upper: (t) => armTrack.at(t),
    core: (tc, r) => {
      const c = readyCore(kit, r);
      const h = lift(tc);
      const x = fx(tc);
      const legs = ([0, 1] as Side[]).map((s) => {
        const f = kit.footAt(r, s, 0, 0, 0);
        return { kind: 'foot', target: kit.flatFoot(px ? f.x + x : f.x, f.y, 0, h) } as LegCommand;
      }) as [LegCommand, LegCommand];
      const d = Math.min(0, z.at(tc));
      return feetCore(
        [
          px ? c.pelvisPos[0] + px.at(tc) + o.pelvisLean.x * d : c.pelvisPos[0] + o.pelvisLean.x * d,
          c.pelvisPos[1],
          c.pelvisPos[2] + z.at(tc),
        ],
        [0, o.pelvisLean.pitch * d, 0],
        legs[0],
        legs[1],
      );
    },
  });
}

export const smallJumps = (kit: Kit, meta: ClipMeta): Recipe =>
  jumps(kit, meta, {
    starts: [0.4, 2.5, 4.6],
    coreS: 7.0,
    liftM: 0.05,
    z: { crouch: -0.12, push: -0.005, apexBelow: 0.01, land: -0.13 },
    armsSwingPitch: -1.6,
    pelvisLean: { x: 0.25, pitch: -1.2 },
  });

export const jumpForward = (kit: Kit, meta: ClipMeta): Recipe =>
  jumps(kit, meta, {
    starts: [0.4, 2.6],
    coreS: 4.9,
    liftM: 0.045,
    z: { crouch: -0.13, push: -0.01, apexBelow: 0.015, land: -0.14 },
    armsSwingPitch: -1.4,
    pelvisLean: { x: 0.2, pitch: -1.3 },
    hopM: 0.2,
  });

/** Fast punches with waist rotation and a knee bounce. */
export function fastPunches(kit: Kit, meta: ClipMeta): Recipe {
  const { STAND } = arms(kit);
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
  return standingRecipe(kit, {
    ...meta,
    knee,
    coreS,
    upper: (tt) => track.at(tt),
    core: (tc, r) =>
      pelvisMove(kit, r, [
        0,
        0,
        -0.02 * envelope(tc, 0, coreS, 0.8) - 0.015 * oscillation(tc, 0.3, coreS - 0.3, 0.56, 0.6),
      ]),
  });
}

export function fastArmSwings(kit: Kit, meta: ClipMeta): Recipe {
  const { arm, pose, STAND } = arms(kit);
  const knee = 0.5;
  const coreS = 6.0;
  const bent = pose({
    left: arm({ pitch: -0.2, roll: 0.2, elbow: 0.4 }),
    right: arm({ pitch: -0.2, roll: 0.2, elbow: 0.4 }),
  });
  return standingRecipe(kit, {
    ...meta,
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
  });
}

/** Duck walk: walking forward with the pelvis low. */
export function duckWalk(kit: Kit, meta: ClipMeta): Recipe {
  const { arm, pose, STAND } = arms(kit);
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
  return standingRecipe(kit, {
    ...meta,
    knee,
    coreS: g.durationS,
    upper: (t, core) => {
      const q = walkArms(STAND, core, 0.6);
      addScaled(q, diff(low, STAND), envelope(t, C0, C0 + g.durationS, 1.2));
      return q;
    },
    core: (tc) => g.state(tc),
  });
}

/**
 * Sumo squat: weight over one foot, step the other out with the toes turned out; both sides;
 * squat deep twice; step back in.
 */
export function sumoSquat(kit: Kit, meta: ClipMeta): Recipe {
  const { arm, pose, STAND } = arms(kit);
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
  return standingRecipe(kit, {
    ...meta,
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
  });
}
