// The kinds of core-v1 clip row (coreV1Table.ts) and the recipe each kind of row makes. A row
// states numbers; the arithmetic here is the one the frozen core-v1 snapshot was generated with,
// operation for operation (docs/WORKLOAD.md: changing it changes clip ids and the hash).

import type { Side } from './bodyModel';
import type { LegCommand, Recipe } from './clipBuilder';
import { arcPath, planJog, planWalk, straightPath, turnPath, type WalkSpec } from './gait';
import { bump, envelope, oscillation, ramp, restTrack } from './interpolation';
import {
  addScaled,
  CORE_T0 as C0,
  FootTrack,
  readyCore,
  standingRecipe,
  type FootMove,
  type Kit,
  type LegPose,
} from './recipeKit';
import type { Vec3 } from './rotation';
import { arms, diff, feetCore, J, pelvisMove, seq, walkArms, type PoseRow, type UpperJoint } from './coreV1Kit';
import type { CapabilityGroup } from '../motion/motionClip';

/** oscillation(t, t0, t1, periodS, rampS, phase) as [t0, t1, periodS, rampS, phase?]. */
export type OscRow = readonly [number, number, number, number, number?];

/** q[joint] += gain · signal for each joint in `gains`: the signal is the oscillation `osc`, or without one the row's amount. */
export interface Wave {
  osc?: OscRow;
  gains: Partial<Record<UpperJoint, number>>;
}

/**
 * A pose sequence, min-jerk between keys: the times (s) each named pose is reached ('stand': the
 * stand pose).
 */
export type PoseTimes = Readonly<Record<string, readonly number[]>>;

interface RowMeta {
  name: string;
  description: string;
}

/** Legs at stand; the upper body follows a pose sequence plus waves, on clip time. */
export interface KeyframesRow extends RowMeta {
  kind: 'keyframes';
  group: CapabilityGroup;
  durationS: number;
  poses: Record<string, PoseRow>;
  at: PoseTimes;
  waves?: readonly Wave[];
}

/**
 * Feet flat at their ready places; the pelvis moves back, down and pitches forward with an amount
 * a(tc) ∈ [0, 1] (`pelvis`: dx, dz, pitch at a = 1). The upper body: the pose sequence `at` (or
 * the stand pose), plus the pose `scaled` times a, plus waves on core time.
 */
export interface CrouchRow extends RowMeta {
  kind: 'crouch';
  group: CapabilityGroup;
  knee: number;
  coreS: number;
  /**
   * Rest-to-rest keys (a = keyValues[i] at tc = keyTimes[i]), or bumps over windows, or `count`
   * bumps of `lenS` every `everyS` from `firstS`.
   */
  amount:
    | { keyTimes: readonly number[]; keyValues: readonly number[] }
    | { bumps: readonly (readonly [number, number])[] }
    | { firstS: number; everyS: number; lenS: number; count: number };
  pelvis: readonly [number, number, number];
  poses?: Record<string, PoseRow>;
  at?: PoseTimes;
  scaled?: PoseRow;
  /** Add the scaled pose only inside the core (the legs' IK window). */
  scaledInCoreOnly?: boolean;
  waves?: readonly Wave[];
}

/** A path for the gait generator: straight at a heading, a turn on the spot, or an arc of a radius (left positive). */
export type PathRow = { straightRad: number } | { turn: 1 | -1 } | { arcM: number };

/** A walk by the gait generator, arms swinging with the feet. */
export interface WalkRow extends RowMeta {
  kind: 'walk';
  gait: Partial<Omit<WalkSpec, 'path'>> & { path: PathRow; total: number; stepU: number; firstSide: Side };
}

/** A jog with flight phases, `steps` steps at up to `speed` m/s. */
export interface JogRow extends RowMeta {
  kind: 'jog';
  speed: number;
  steps: number;
}

/** Weight on the stance foot, two kicks with `side`'s leg. */
export interface KickRow extends RowMeta {
  kind: 'kick';
  side: Side;
  style: 'front' | 'side';
}

/** Forward lunges, each [front foot, start time]. */
export interface LungeRow extends RowMeta {
  kind: 'lunge';
  group: 'low_posture' | 'dynamic';
  lunges: readonly (readonly [Side, number])[];
  spec: LungeSpec;
}

/** A clip whose motion is its own (its builder holds it). */
export interface CustomRow extends RowMeta {
  kind: 'custom';
  group: CapabilityGroup;
  build: (kit: Kit, meta: { name: string; group: CapabilityGroup; description: string }) => Recipe;
}

export type ClipRow = KeyframesRow | CrouchRow | WalkRow | JogRow | KickRow | LungeRow | CustomRow;

export interface LungeSpec {
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

// ---------------------------------------------------------------------------------------------

function poseTrack(kit: Kit, poses: Record<string, PoseRow> | undefined, at: PoseTimes) {
  const { poseOf, STAND } = arms(kit);
  const keys = Object.entries(at)
    .flatMap(([n, times]) => {
      const q = n === 'stand' ? STAND : poses?.[n] && poseOf(poses[n]);
      if (!q) throw new Error(`core-v1 pose ${n} is not declared`);
      return times.map((t) => [t, q] as const);
    })
    .sort((a, b) => a[0] - b[0]);
  keys.forEach(([t], i) => {
    if (i > 0 && keys[i - 1][0] === t) throw new Error(`core-v1 pose sequence has two keys at ${t} s`);
  });
  return seq(keys);
}

function applyWaves(q: Float64Array, waves: readonly Wave[] | undefined, t: number, amount: number): Float64Array {
  for (const w of waves ?? []) {
    const s = w.osc ? oscillation(t, w.osc[0], w.osc[1], w.osc[2], w.osc[3], w.osc[4]) : amount;
    for (const [joint, gain] of Object.entries(w.gains) as [UpperJoint, number][]) q[J[joint]] += gain * s;
  }
  return q;
}

export function keyframesRecipe(kit: Kit, row: KeyframesRow): Recipe {
  const track = poseTrack(kit, row.poses, row.at);
  return standingRecipe(kit, {
    name: row.name,
    group: row.group,
    description: row.description,
    durationS: row.durationS,
    upper: (t) => applyWaves(track.at(t), row.waves, t, 0),
  });
}

function amountOf(a: CrouchRow['amount']): (tc: number) => number {
  if ('keyTimes' in a) {
    if (a.keyTimes.length !== a.keyValues.length) throw new Error('core-v1 amount keys: one value per time');
    const track = restTrack(a.keyTimes.map((t, i) => [t, a.keyValues[i]]));
    return (tc) => track.at(tc);
  }
  const windows =
    'bumps' in a
      ? a.bumps
      : Array.from({ length: a.count }, (_, i) => [a.firstS + i * a.everyS, a.firstS + i * a.everyS + a.lenS] as const);
  return (tc) => windows.reduce((d, [t0, t1]) => d + bump(tc, t0, t1), 0);
}

export function crouchRecipe(kit: Kit, row: CrouchRow): Recipe {
  const { poseOf, STAND } = arms(kit);
  const a = amountOf(row.amount);
  const track = row.at ? poseTrack(kit, row.poses, row.at) : null;
  const scaled = row.scaled ? diff(poseOf(row.scaled), STAND) : null;
  const [dx, dz, pitch] = row.pelvis;
  return standingRecipe(kit, {
    name: row.name,
    group: row.group,
    description: row.description,
    knee: row.knee,
    coreS: row.coreS,
    upper: (t, core) => {
      const q = track ? track.at(t) : new Float64Array(STAND);
      const tc = t - C0;
      if (scaled && (core || !row.scaledInCoreOnly)) addScaled(q, scaled, a(tc));
      return applyWaves(q, row.waves, tc, a(tc));
    },
    core: (tc, r) => {
      const v = a(tc);
      return pelvisMove(kit, r, [dx * v, 0, dz * v], [0, pitch * v, 0]);
    },
  });
}

const WALK_BASE = { tSwing: 0.5, tDouble: 0.12, tShift: 0.6, tSettle: 0.8, swingHeight: 0.06, sway: 0.4, dz: -0.02 };

function pathOf(p: PathRow) {
  if ('straightRad' in p) return straightPath(p.straightRad);
  if ('turn' in p) return turnPath(p.turn);
  return arcPath(p.arcM);
}

export function walkRecipe(kit: Kit, row: WalkRow): Recipe {
  const knee = 0.8;
  const r = kit.ready(knee);
  const g = planWalk(kit, r, { ...WALK_BASE, ...row.gait, path: pathOf(row.gait.path) });
  const { STAND } = arms(kit);
  return standingRecipe(kit, {
    name: row.name,
    group: 'locomotion',
    description: row.description,
    knee,
    coreS: g.durationS,
    upper: (_t, core) => walkArms(STAND, core, 0.9),
    core: (tc) => g.state(tc),
  });
}

export function jogRecipe(kit: Kit, row: JogRow): Recipe {
  const { poseOf, STAND } = arms(kit);
  const jogArms = poseOf({ waistPitch: 0.05, both: { pitch: -0.1, roll: 0.15, elbow: 0.25 } });
  const { speed, steps } = row;
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
  return standingRecipe(kit, {
    name: row.name,
    group: 'dynamic',
    description: row.description,
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
  });
}

/**
 * Kicks: weight over the stance foot, kick, recover; twice. The chamber and extension foot poses
 * are those of a chosen leg shape at the pelvis pose of that moment (so they are reachable).
 */
export function kickRecipe(kit: Kit, row: KickRow): Recipe {
  const { side, style: kind } = row;
  const { poseOf, STAND } = arms(kit);
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
  const guard = poseOf({ both: { pitch: -0.8, roll: 0.35, elbow: 0.0 } });
  return standingRecipe(kit, {
    name: row.name,
    group: 'dynamic',
    description: row.description,
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
  });
}

/**
 * Forward lunges: the front foot steps `step` forward while the pelvis follows halfway and drops
 * `drop` (back heel rising), then the pelvis moves on to `fwd` of the step and drops `depth` more
 * with the back heel at `backPitch`; hold; reverse.
 */
export function lungeRecipe(kit: Kit, row: LungeRow): Recipe {
  const { lunges, spec: o } = row;
  const { poseOf, STAND } = arms(kit);
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
  const dArms = diff(poseOf({ both: { pitch: -0.4, roll: 0.5, elbow: 1.0 } }), STAND);
  return standingRecipe(kit, {
    name: row.name,
    group: row.group,
    description: row.description,
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
