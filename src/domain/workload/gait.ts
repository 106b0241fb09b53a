// A simple walking-pattern generator for the built-in clips. Not a balance controller: it lays
// footsteps along a path, moves each swing foot on a smooth arc between its places, and moves the
// pelvis on a C² spline through one knot per step, shifted toward the stance foot (sway). The
// legs follow by IK, so the stance foot stays exactly where it was placed.
//
//   footsteps   progress u_k = min(k·stepU, total) along `path`, sides alternating from
//               `firstSide`, each foot placed at the ready offset of the path pose at u_k, and
//               a closing step that brings the trailing foot beside the leading one. `total` = 0
//               with `steps` = n marches in place.
//   timing      swing i runs over [tShift + i·(tSwing + tDouble), … + tSwing]; the core ends
//               tSettle after the last swing.
//   swing foot  horizontal position and heading by minimum jerk over the inner 90% of the swing,
//               height swingHeight·bump (zero velocity and acceleration at lift-off and touch-down),
//               optional toes-down pitch at mid-swing (swingPitch).
//   pelvis      knots at mid-swing: the mean of the stance foot and the swing foot's mid place,
//               moved a fraction `sway` toward the stance foot, plus the ready pelvis offset;
//               heading the mean of stance and target headings; start and end knots at rest.
//
// planJog (below) is the running variant: touchdowns on a fixed beat with stance shorter than the
// beat, so both feet are in the air between a lift-off and the next touchdown.

import { SIDES, type Side } from './bodyModel';
import type { LegCommand } from './clipBuilder';
import { bump, envelope, lerp, minJerk, ramp, smoothTrack, TAU, type KeyTrack } from './interpolation';
import type { CoreState, FootPlace, Kit, Ready } from './recipeKit';
import { rotYaw } from './rotation';

/** Fraction of the swing at each end during which the foot only lifts / lowers (no horizontal motion). */
export const SWING_EDGE = 0.05;

export interface PathPose {
  x: number;
  y: number;
  yaw: number;
}

export interface WalkSpec {
  /** Feet-midpoint pose at progress u ∈ [0, total]; path(0) must be (0, 0, 0). */
  path: (u: number) => PathPose;
  total: number;
  stepU: number;
  /** Number of steps when marching in place (total = 0). */
  steps?: number;
  firstSide: Side;
  tShift: number;
  tSwing: number;
  tDouble: number;
  tSettle: number;
  swingHeight: number;
  sway: number;
  /** Pelvis height change while walking (m, negative = lower), faded in and out over `dzRampS`. */
  dz?: number;
  dzRampS?: number;
  /** Pelvis pitch while walking (rad, forward lean positive), faded like dz. */
  lean?: number;
  /** Swing-foot pitch at mid-swing (rad, toes down positive), as bump over the swing. */
  swingPitch?: number;
}

interface Swing {
  side: Side;
  t0: number;
  t1: number;
  from: FootPlace;
  to: FootPlace;
}

/**
 * Foot `side` at core time `tc` on its swings (in time order). Inside a swing it moves from the
 * swing's start to its end place with the min-jerk progress h (flat over the first and last
 * SWING_EDGE of the swing) and `during` gives its yaw, lift and pitch; in stance ahead of its
 * next swing `before` gives the place; after its last swing it is flat at its last place.
 */
function footOnSwings(
  initial: FootPlace,
  swings: readonly Swing[],
  side: Side,
  tc: number,
  foot: {
    during: (s: Swing, h: number) => Omit<SwingPlace, 'x' | 'y'>;
    before: (p: FootPlace, next: Swing) => SwingPlace;
  },
): SwingPlace {
  let p = initial;
  for (const s of swings) {
    if (s.side !== side) continue;
    if (tc >= s.t1) {
      p = s.to;
      continue;
    }
    if (tc > s.t0) {
      const T = s.t1 - s.t0;
      const h = minJerk((tc - s.t0 - SWING_EDGE * T) / ((1 - 2 * SWING_EDGE) * T));
      return { x: lerp(s.from.x, s.to.x, h), y: lerp(s.from.y, s.to.y, h), ...foot.during(s, h) };
    }
    return foot.before(p, s);
  }
  return { ...p, lift: 0, pitch: 0 };
}

export interface Gait {
  durationS: number;
  state: (tc: number) => CoreState;
  /** Foot places (and lift) at core time tc. */
  feet: (tc: number) => [SwingPlace, SwingPlace];
}

/** A foot place with its height above the floor pose and its pitch (toes down positive). */
export type SwingPlace = FootPlace & { lift: number; pitch: number };

export function planWalk(kit: Kit, ready: Ready, spec: WalkSpec): Gait {
  const progress: number[] = [];
  if (spec.total > 0) {
    const n = Math.ceil(spec.total / spec.stepU - 1e-9);
    for (let k = 1; k <= n; k++) progress.push(Math.min(k * spec.stepU, spec.total));
    progress.push(spec.total); // closing step
  } else {
    for (let k = 0; k < (spec.steps ?? 0); k++) progress.push(0);
  }
  const place: [FootPlace, FootPlace] = [kit.footAt(ready, 0, 0, 0, 0), kit.footAt(ready, 1, 0, 0, 0)];
  const initial: [FootPlace, FootPlace] = [{ ...place[0] }, { ...place[1] }];
  const swings: Swing[] = [];
  progress.forEach((u, i) => {
    const side = (i % 2 === 0 ? spec.firstSide : 1 - spec.firstSide) as Side;
    const c = spec.path(u);
    const to = kit.footAt(ready, side, c.x, c.y, c.yaw);
    const t0 = spec.tShift + i * (spec.tSwing + spec.tDouble);
    swings.push({ side, t0, t1: t0 + spec.tSwing, from: place[side], to });
    place[side] = to;
  });
  const last = swings.length > 0 ? swings[swings.length - 1].t1 : spec.tShift;
  const durationS = last + spec.tSettle;
  const end = spec.path(spec.total);

  // pelvis knots
  const kx: [number, number][] = [];
  const ky: [number, number][] = [];
  const kyaw: [number, number][] = [];
  const push = (t: number, x: number, y: number, yaw: number) => {
    const [ox, oy] = rotYaw(yaw, ready.pelvisOffset[0], ready.pelvisOffset[1]);
    kx.push([t, x + ox]);
    ky.push([t, y + oy]);
    kyaw.push([t, yaw]);
  };
  push(0, 0, 0, 0);
  const stanceAt: [FootPlace, FootPlace] = [initial[0], initial[1]];
  for (const s of swings) {
    const S = stanceAt[(1 - s.side) as Side];
    const mx = 0.5 * (s.from.x + s.to.x);
    const my = 0.5 * (s.from.y + s.to.y);
    const bx = 0.5 * (S.x + mx);
    const by = 0.5 * (S.y + my);
    const yaw = 0.5 * (S.yaw + s.to.yaw);
    // stance-foot direction relative to the feet midpoint, without the ready offset of the foot
    push(0.5 * (s.t0 + s.t1), bx + spec.sway * (S.x - bx), by + spec.sway * (S.y - by), yaw);
    stanceAt[s.side] = s.to;
  }
  push(durationS, end.x, end.y, end.yaw);
  const px: KeyTrack = smoothTrack(kx);
  const py: KeyTrack = smoothTrack(ky);
  const pyaw: KeyTrack = smoothTrack(kyaw);
  const dzRamp = spec.dzRampS ?? 0.8;

  const footAt = (side: Side, tc: number): SwingPlace =>
    footOnSwings(initial[side], swings, side, tc, {
      during: (s, h) => {
        const b = bump(tc, s.t0, s.t1);
        return { yaw: lerp(s.from.yaw, s.to.yaw, h), lift: spec.swingHeight * b, pitch: (spec.swingPitch ?? 0) * b };
      },
      before: (p) => ({ ...p, lift: 0, pitch: 0 }),
    });

  const feet = (tc: number): [SwingPlace, SwingPlace] => [footAt(0, tc), footAt(1, tc)];
  const state = (tc: number): CoreState => {
    const f = feet(tc);
    const legs = SIDES.map(
      (side) =>
        ({
          kind: 'foot',
          target: kit.pivotFoot(f[side].x, f[side].y, f[side].yaw, f[side].pitch, f[side].lift),
        }) as LegCommand,
    ) as [LegCommand, LegCommand];
    const env = envelope(tc, 0, durationS, dzRamp);
    return {
      pelvisPos: [px.at(tc), py.at(tc), ready.pelvisOffset[2] + (spec.dz ?? 0) * env],
      pelvisRpy: [0, (spec.lean ?? 0) * env, pyaw.at(tc)],
      legs,
    };
  };
  return { durationS, state, feet };
}

/** Straight path along heading `dir` (0 = forward, π = backward, π/2 = left). */
export const straightPath =
  (dir: number) =>
  (u: number): PathPose => {
    const [x, y] = rotYaw(dir, u, 0);
    return { x, y, yaw: 0 };
  };

/** Turning in place: progress is the heading (rad), positive = left. */
export const turnPath =
  (sign: 1 | -1) =>
  (u: number): PathPose => ({ x: 0, y: 0, yaw: sign * u });

/** Arc of radius R (m), progress = arc length; positive R turns left. */
export const arcPath =
  (R: number) =>
  (u: number): PathPose => {
    const a = u / R;
    return { x: R * Math.sin(a), y: R * (1 - Math.cos(a)), yaw: a };
  };

/** ∫ ramp(τ, t0, t1) dτ from −∞ to t (the distance covered under a min-jerk speed ramp of unit height). */
export function rampIntegral(t: number, t0: number, t1: number): number {
  const T = t1 - t0;
  if (t <= t0) return 0;
  if (t >= t1) return 0.5 * T + (t - t1);
  const s = (t - t0) / T;
  const s4 = s * s * s * s;
  return T * s4 * (2.5 + s * (-3 + s));
}

export interface JogSpec {
  /** Cruise speed along x (m/s); 0 jogs in place. */
  speed: number;
  /** Time between consecutive touchdowns (s). */
  stepT: number;
  /** Stance time per step at cruise (s); below stepT leaves a flight phase of stepT − stanceT. */
  stanceT: number;
  /** Number of touchdowns (≥ 4); the last two end side by side. */
  steps: number;
  firstSide: Side;
  /** First touchdown (s after the core starts). */
  tStart: number;
  /** Time after the last touchdown (s). */
  tSettle: number;
  swingHeight: number;
  /** Pelvis vertical oscillation amplitude (m): lowest at mid-stance, highest in flight. */
  bob: number;
  /** Pelvis lateral oscillation amplitude (m), toward the stance foot. */
  sway: number;
  /** Mean pelvis height change (m). */
  dz: number;
  /** Forward pelvis pitch at cruise (rad). */
  lean: number;
  /** Heel lift at the end of each stance (toe-off pitch, rad), back to flat at touch-down. */
  toeOff?: number;
  /** Extra toes-down pitch of the swing foot at mid-swing (rad). */
  swingPitch?: number;
  /** Quick first/last part of the swing height (m), over `clearS` at each end of the swing, so both feet clear the floor during flight. */
  clearance?: number;
  clearS?: number;
  /** Steps over which stance time, speed and amplitudes ramp in and out. */
  rampSteps: number;
}

export interface Jog {
  durationS: number;
  state: (tc: number) => CoreState;
  /** Arm-swing phase in [−1, 1] (positive: right arm forward), faded in and out. */
  armPhase: (tc: number) => number;
}

/**
 * A jogging pattern: touchdowns every stepT, alternating feet, each foot in stance for stanceT,
 * so with stanceT < stepT both feet are off the floor between a lift-off and the next
 * touchdown. The first and last steps have a stance longer than stepT (walking-like), ramping
 * over `rampSteps`. The pelvis moves at the min-jerk-ramped speed; each foot lands under the
 * pelvis position at its mid-stance.
 */
export function planJog(kit: Kit, ready: Ready, spec: JogSpec): Jog {
  const n = spec.steps;
  if (n < 4) throw new Error('planJog needs at least 4 steps');
  const T = spec.stepT;
  const L = (k: number) => spec.tStart + k * T;
  // ramp weight per step: 0 at the ends, 1 at cruise
  const w = (k: number) => {
    if (k < 0 || k >= n) return 0;
    const a = Math.min(k, n - 1 - k) / spec.rampSteps;
    return minJerk(a);
  };
  const Ts = (k: number) => lerp(1.2 * T, spec.stanceT, w(k));
  const lastL = L(n - 1);
  const durationS = lastL + spec.tSettle;
  // speed: up over the first steps, down to rest before the second-last touchdown
  const va0 = spec.tStart - 0.5 * T;
  const va1 = L(spec.rampSteps);
  const vd1 = L(n - 2) - 0.5 * T;
  const vd0 = L(n - 1 - spec.rampSteps) - T;
  const pelvisX = (t: number) =>
    spec.speed * (rampIntegral(t, va0, va1) - rampIntegral(t, vd0, vd1)) + ready.pelvisOffset[0];
  const env = (t: number) => ramp(t, va0, va1) * (1 - ramp(t, vd0, vd1));
  const sideOf = (k: number) => (k % 2 === 0 ? spec.firstSide : 1 - spec.firstSide) as Side;
  const swings: Swing[] = [];
  const place: [FootPlace, FootPlace] = [kit.footAt(ready, 0, 0, 0, 0), kit.footAt(ready, 1, 0, 0, 0)];
  const initial: [FootPlace, FootPlace] = [{ ...place[0] }, { ...place[1] }];
  for (let k = 0; k < n; k++) {
    const side = sideOf(k);
    const lift = L(k - 2) + Ts(k - 2);
    const mid = L(k) + 0.5 * Ts(k);
    const x = pelvisX(mid) - ready.pelvisOffset[0] + ready.footOffset[side][0];
    const to: FootPlace = {
      x: k >= n - 2 ? pelvisX(durationS) - ready.pelvisOffset[0] + ready.footOffset[side][0] : x,
      y: ready.footOffset[side][1],
      yaw: 0,
    };
    swings.push({ side, t0: lift, t1: L(k), from: place[side], to });
    place[side] = to;
  }
  const sign = spec.firstSide === 1 ? 1 : -1;
  const phase0 = spec.tStart + 0.5 * spec.stanceT;
  const toeOff = spec.toeOff ?? 0;
  const heelRiseS = 0.4 * spec.stanceT;
  const clearance = spec.clearance ?? 0;
  const clearS = spec.clearS ?? 0.08;
  const footAt = (side: Side, tc: number): SwingPlace =>
    footOnSwings(initial[side], swings, side, tc, {
      during: (s) => ({
        yaw: 0,
        lift: clearance * envelope(tc, s.t0, s.t1, clearS) + (spec.swingHeight - clearance) * bump(tc, s.t0, s.t1),
        pitch: toeOff * (1 - ramp(tc, s.t0, s.t1)) + (spec.swingPitch ?? 0) * bump(tc, s.t0, s.t1),
      }),
      // stance before this swing: the heel rises toward lift-off
      before: (p, s) => ({ ...p, lift: 0, pitch: toeOff * ramp(tc, s.t0 - heelRiseS, s.t0) }),
    });
  const state = (tc: number): CoreState => {
    const e = env(tc);
    const c = Math.cos((TAU * (tc - phase0)) / T);
    const cy = Math.cos((Math.PI * (tc - phase0)) / T);
    const legs = SIDES.map((side) => {
      const f = footAt(side, tc);
      return { kind: 'foot', target: kit.pivotFoot(f.x, f.y, f.yaw, f.pitch, f.lift) } as LegCommand;
    }) as [LegCommand, LegCommand];
    return {
      pelvisPos: [
        pelvisX(tc),
        -sign * spec.sway * e * cy,
        ready.pelvisOffset[2] + spec.dz * envelope(tc, 0, durationS, 0.8) - spec.bob * e * c,
      ],
      pelvisRpy: [0, spec.lean * e, 0],
      legs,
    };
  };
  const armPhase = (tc: number) => sign * env(tc) * Math.cos((Math.PI * (tc - phase0)) / T);
  return { durationS, state, armPhase };
}
