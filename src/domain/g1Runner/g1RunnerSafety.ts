// The G1 runner's safety-critical sequence as a pure reducer: events (a lowstate, a timer tick,
// a console command, the controller's targets, the console's liveness) → the next state and its
// effects (episode ends, refusals, traces). What goes on the wire every 2 ms is derived from the
// state by `motorCommand` (targets clamped to the model's joint ranges and effort limits).
//
// Modes: damping (kp 0, kd 3: Unitree's Passive) → ramping (prepare: a bounded-speed ramp from the
// measured pose to the clip's start pose under FixStand gains) → holding (ready) → tracking (the
// binding's targets and gains) → after the clip, what the operator declared: `gantry` holding (the
// robot hangs on its gantry) or `standing_policy` standing (a declared standing controller, loaded
// at prepare, runs with its own gains: unitree_rl_lab's FSM switches a timed-out mimic motion to its
// velocity policy) → damping on the operator's damp or any watchdog. Gains and the ramp come
// from Unitree's robot-side state machine (unitree_rl_lab deploy, fsm_config.yaml: Passive kd 3;
// FixStand kp/kd and a 3 s ramp).
//
// Watchdogs (checked on every tick and every lowstate):
// - lowstate older than LOWSTATE_STALE_MS → damp; a running episode ends `link_lost`;
// - console silent beyond CONSOLE_SILENT_HOLD_MS → hold (a running episode ends `link_lost`),
//   silent beyond CONSOLE_SILENT_DAMP_MS → damp; both traced;
// - a non-finite or out-of-range state → damp; a running episode ends `hard_failure`;
// - the wireless remote's stop combination (L2 + B, Unitree's "→ Passive") → damp; episode `estop`;
// - standing: the pelvis tilted beyond STANDING_FALL_TILT_RAD (IMU) is a fall → damp, traced.
// With `standing_policy` declared, whatever would hold the joints of a free-standing robot (an
// operator's stop, the console falling silent) switches to the standing controller instead: a joint
// hold lets a humanoid on the floor topple.

import { G1_NUM_JOINTS } from '../robot/g1Joints';

export const LOWSTATE_STALE_MS = 100;
/** Console silent this long (no command, no WebSocket ping) → hold. The console pings every ~200 ms. */
export const CONSOLE_SILENT_HOLD_MS = 1000;
/** Console silent this long → damp. */
export const CONSOLE_SILENT_DAMP_MS = 3000;
/** LowCmd period: 500 Hz. */
export const LOW_CMD_PERIOD_MS = 2;

/** Unitree Passive (damping): kp 0, kd 3 on every joint. */
export const DAMPING_KD = 3;
/** Unitree FixStand (holding) gains, canonical (= motor) order. */
export const HOLD_KP: readonly number[] = [
  100, 100, 100, 150, 40, 40, 100, 100, 100, 150, 40, 40, 200, 200, 200, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40,
  40, 40,
];
export const HOLD_KD: readonly number[] = [
  2, 2, 2, 4, 2, 2, 2, 2, 2, 4, 2, 2, 5, 5, 5, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10,
];
/** FixStand's ramp lasts 3 s; a longer distance is ramped slower, at most RAMP_MAX_SPEED_RAD_S. */
export const RAMP_MIN_MS = 3000;
export const RAMP_MAX_SPEED_RAD_S = 0.5;
/** Prepare refuses when a joint is farther than this from the start pose. */
export const PREPARE_MAX_DISTANCE_RAD = 1.6;
/** Prepare refuses when the pelvis is tilted more than this from upright (IMU). */
export const PREPARE_MAX_TILT_RAD = 0.35;
/** Prepare refuses when a joint is outside its range by more than this. */
export const PREPARE_RANGE_MARGIN_RAD = 0.05;
/** A measured joint outside its range by more than this is not a state but a fault. */
export const STATE_RANGE_MARGIN_RAD = 0.3;
/** A measured joint velocity beyond this is a fault. */
export const STATE_MAX_SPEED_RAD_S = 40;
/** wireless_remote: the 16-bit key word sits at bytes 2–3 (little-endian); L2 is bit 5, B is bit 9. */
export const REMOTE_KEYS_OFFSET = 2;
export const REMOTE_KEY_L2 = 1 << 5;
export const REMOTE_KEY_B = 1 << 9;

/**
 * Standing: the pelvis tilted more than this from upright (IMU) is a fall: damp. The velocity
 * policy standing keeps it within 0.02 rad in simulation (test/integration/standingPolicySim.test.ts);
 * 0.8 rad (46°) is past where a G1 can recover.
 */
export const STANDING_FALL_TILT_RAD = 0.8;

export type RunnerMode = 'damping' | 'ramping' | 'holding' | 'tracking' | 'standing';
/**
 * What keeps the robot up after a clip, as the operator declared it: `gantry` (it hangs on one:
 * the last pose is held) or `standing_policy` (the declared standing controller takes over).
 */
export type AfterClip = 'gantry' | 'standing_policy' | null;

/** The standing controller as the reducer knows it: its gains (canonical order) and its name. */
export interface StandingControllerInfo {
  id: string;
  kp: ArrayLike<number>;
  kd: ArrayLike<number>;
}

export interface JointLimits {
  /** Per joint [lower, upper], rad (canonical order). */
  lowerRad: Float64Array;
  upperRad: Float64Array;
  /** Per joint |τ| limit, N·m. */
  effortNm: Float64Array;
}

export interface RunnerState {
  mode: RunnerMode;
  afterClip: AfterClip;
  /** Monotonic ms of the last lowstate's DDS receipt; null before the first. */
  lastStateMs: number | null;
  lastConsoleMs: number;
  console: 'present' | 'held' | 'damped';
  /** Last measured q, dq (canonical order). */
  q: Float64Array;
  dq: Float64Array;
  tiltRad: number;
  modeMachine: number;
  ramp: { from: Float64Array; to: Float64Array; startMs: number; durationMs: number } | null;
  /** Position targets of holding (and the ramp's end), tracking's latest targets. */
  target: Float64Array;
  kp: Float64Array;
  kd: Float64Array;
  episode: { runId: string } | null;
  /** A start pose was reached and not left (prepare → ready). */
  ready: boolean;
  remoteStopHeld: boolean;
  /** No lowstate yet, or the last one is older than LOWSTATE_STALE_MS (set by tick, cleared by a lowstate). */
  linkLost: boolean;
  /** The standing controller loaded at the last accepted prepare (afterClip standing_policy), else null. */
  standing: StandingControllerInfo | null;
}

export type RunnerEvent =
  | {
      type: 'lowstate';
      nowMs: number;
      q: ArrayLike<number>;
      dq: ArrayLike<number>;
      quatWxyz: ArrayLike<number>;
      wirelessRemote: Uint8Array;
      modeMachine: number;
    }
  | { type: 'tick'; nowMs: number }
  | { type: 'console'; nowMs: number }
  /** `standing`: the standing controller loaded for after the clip (required with standing_policy). */
  | { type: 'prepare'; nowMs: number; startPose: ArrayLike<number>; standing?: StandingControllerInfo | null }
  | { type: 'start'; nowMs: number; runId: string }
  /** Targets from the tracking binding (`from` absent) or from the standing controller. */
  | {
      type: 'targets';
      q: ArrayLike<number>;
      kp: ArrayLike<number> | null;
      kd: ArrayLike<number> | null;
      from?: 'standing';
    }
  | { type: 'clip_end'; runId: string }
  | { type: 'stop'; reason: string }
  | { type: 'hold'; reason: string }
  | { type: 'damp'; reason: string }
  /** The interlock box's e-stop, heard from the interlock keeper: damp, episode `estop`. */
  | { type: 'estop'; reason: string };

export type RunnerEffect =
  | {
      type: 'episode_end';
      runId: string;
      outcome: 'completed' | 'estop' | 'link_lost' | 'hard_failure' | 'aborted_by_operator';
      reason: string;
    }
  | { type: 'mode'; mode: RunnerMode; cause: string }
  | { type: 'refused'; command: 'prepare' | 'start'; reason: string }
  | { type: 'accepted'; command: 'prepare' | 'start'; message: string };

export function initialRunnerState(afterClip: AfterClip, nowMs: number): RunnerState {
  const J = G1_NUM_JOINTS;
  return {
    mode: 'damping',
    afterClip,
    lastStateMs: null,
    lastConsoleMs: nowMs,
    console: 'present',
    q: new Float64Array(J),
    dq: new Float64Array(J),
    tiltRad: 0,
    modeMachine: 0,
    ramp: null,
    target: new Float64Array(J),
    kp: new Float64Array(J),
    kd: new Float64Array(J).fill(DAMPING_KD),
    episode: null,
    ready: false,
    remoteStopHeld: false,
    linkLost: true,
    standing: null,
  };
}

/** Tilt of the body's z axis from the world's, rad, from a wxyz quaternion. */
export function tiltFromQuat(q: ArrayLike<number>): number {
  const [, x, y] = [q[0], q[1], q[2]];
  const c = 1 - 2 * (x * x + y * y);
  return Math.acos(Math.max(-1, Math.min(1, c)));
}

export function remoteStopPressed(remote: Uint8Array): boolean {
  if (remote.length < REMOTE_KEYS_OFFSET + 2) return false;
  const keys = remote[REMOTE_KEYS_OFFSET] | (remote[REMOTE_KEYS_OFFSET + 1] << 8);
  return (keys & REMOTE_KEY_L2) !== 0 && (keys & REMOTE_KEY_B) !== 0;
}

function toDamping(s: RunnerState, cause: string, fx: RunnerEffect[], outcome: EndOutcome | null): void {
  endEpisode(s, fx, outcome ?? 'aborted_by_operator', cause);
  s.ramp = null;
  s.ready = false;
  s.kp.fill(0);
  s.kd.fill(DAMPING_KD);
  s.target.set(s.q);
  if (s.mode !== 'damping') fx.push({ type: 'mode', mode: 'damping', cause });
  s.mode = 'damping';
}

type EndOutcome = Extract<RunnerEffect, { type: 'episode_end' }>['outcome'];

function endEpisode(s: RunnerState, fx: RunnerEffect[], outcome: EndOutcome, reason: string): void {
  if (!s.episode) return;
  fx.push({ type: 'episode_end', runId: s.episode.runId, outcome, reason });
  s.episode = null;
}

/**
 * To the standing controller: its gains, targets the measured pose until its first step (the
 * worker steps it at once on this effect, from a history filled with the state measured now).
 */
function toStanding(s: RunnerState, cause: string, fx: RunnerEffect[]): void {
  const st = s.standing!;
  s.ramp = null;
  for (let j = 0; j < G1_NUM_JOINTS; j++) {
    s.target[j] = s.q[j];
    s.kp[j] = st.kp[j];
    s.kd[j] = st.kd[j];
  }
  if (s.mode !== 'standing') fx.push({ type: 'mode', mode: 'standing', cause });
  s.mode = 'standing';
}

/** Out of tracking without a clip end: the standing controller when declared, else a hold. */
function toStandingOrHolding(s: RunnerState, cause: string, fx: RunnerEffect[], at: ArrayLike<number>): void {
  if (s.afterClip === 'standing_policy' && s.standing)
    toStanding(s, `${cause}: standing (declared standing_policy)`, fx);
  else toHolding(s, cause, fx, at);
}

function toHolding(s: RunnerState, cause: string, fx: RunnerEffect[], at: ArrayLike<number>): void {
  s.ramp = null;
  for (let j = 0; j < G1_NUM_JOINTS; j++) {
    s.target[j] = at[j];
    s.kp[j] = HOLD_KP[j];
    s.kd[j] = HOLD_KD[j];
  }
  if (s.mode !== 'holding') fx.push({ type: 'mode', mode: 'holding', cause });
  s.mode = 'holding';
}

/** The first problem of a measured state, or null. */
export function stateFault(
  q: ArrayLike<number>,
  dq: ArrayLike<number>,
  quat: ArrayLike<number>,
  limits: JointLimits,
): string | null {
  for (let j = 0; j < G1_NUM_JOINTS; j++) {
    if (!Number.isFinite(q[j]) || !Number.isFinite(dq[j]))
      return `joint ${j}: non-finite state (q ${q[j]}, dq ${dq[j]})`;
    if (q[j] < limits.lowerRad[j] - STATE_RANGE_MARGIN_RAD || q[j] > limits.upperRad[j] + STATE_RANGE_MARGIN_RAD)
      return `joint ${j}: q ${q[j].toFixed(3)} rad is outside its range [${limits.lowerRad[j].toFixed(3)}, ${limits.upperRad[j].toFixed(3)}] by more than ${STATE_RANGE_MARGIN_RAD} rad`;
    if (Math.abs(dq[j]) > STATE_MAX_SPEED_RAD_S)
      return `joint ${j}: |dq| ${Math.abs(dq[j]).toFixed(1)} rad/s exceeds ${STATE_MAX_SPEED_RAD_S}`;
  }
  for (let i = 0; i < 4; i++) if (!Number.isFinite(quat[i])) return `IMU quaternion[${i}] is non-finite`;
  const n = Math.hypot(quat[0], quat[1], quat[2], quat[3]);
  if (!(Math.abs(n - 1) < 0.1)) return `IMU quaternion norm ${n.toFixed(3)} is not 1`;
  return null;
}

/** Applies one event; mutates and returns `s` with the effects it caused. */
export function reduceRunner(s: RunnerState, ev: RunnerEvent, limits: JointLimits): RunnerEffect[] {
  const fx: RunnerEffect[] = [];
  switch (ev.type) {
    case 'lowstate': {
      s.lastStateMs = ev.nowMs;
      s.linkLost = false;
      s.modeMachine = ev.modeMachine;
      const fault = stateFault(ev.q, ev.dq, ev.quatWxyz, limits);
      if (fault) {
        toDamping(s, `state fault: ${fault}`, fx, 'hard_failure');
        return fx;
      }
      for (let j = 0; j < G1_NUM_JOINTS; j++) {
        s.q[j] = ev.q[j];
        s.dq[j] = ev.dq[j];
      }
      s.tiltRad = tiltFromQuat(ev.quatWxyz);
      if (s.mode === 'standing' && s.tiltRad > STANDING_FALL_TILT_RAD)
        toDamping(
          s,
          `fell while standing: the pelvis is tilted ${s.tiltRad.toFixed(2)} rad from upright (limit ${STANDING_FALL_TILT_RAD} rad, IMU)`,
          fx,
          'hard_failure',
        );
      const stop = remoteStopPressed(ev.wirelessRemote);
      if (stop && !s.remoteStopHeld) toDamping(s, 'wireless remote stop (L2 + B)', fx, 'estop');
      else if (stop && s.mode !== 'damping') toDamping(s, 'wireless remote stop (L2 + B)', fx, 'estop');
      s.remoteStopHeld = stop;
      return fx;
    }
    case 'tick': {
      if (s.lastStateMs === null || ev.nowMs - s.lastStateMs > LOWSTATE_STALE_MS) {
        s.linkLost = true;
        if (s.mode !== 'damping' || s.episode) {
          const age =
            s.lastStateMs === null ? 'no lowstate yet' : `lowstate ${(ev.nowMs - s.lastStateMs).toFixed(0)} ms old`;
          toDamping(s, `link lost: ${age} (limit ${LOWSTATE_STALE_MS} ms)`, fx, 'link_lost');
        }
      }
      const silentMs = ev.nowMs - s.lastConsoleMs;
      if (silentMs > CONSOLE_SILENT_DAMP_MS && s.console !== 'damped') {
        s.console = 'damped';
        toDamping(
          s,
          `console silent ${silentMs.toFixed(0)} ms (limit ${CONSOLE_SILENT_DAMP_MS} ms): damping`,
          fx,
          'link_lost',
        );
      } else if (silentMs > CONSOLE_SILENT_HOLD_MS && s.console === 'present') {
        s.console = 'held';
        const cause = `console silent ${silentMs.toFixed(0)} ms (limit ${CONSOLE_SILENT_HOLD_MS} ms): holding`;
        endEpisode(s, fx, 'link_lost', cause);
        // Standing stays standing (the standing controller keeps the robot up); damping follows at
        // CONSOLE_SILENT_DAMP_MS as in every mode.
        if (s.mode === 'tracking') toStandingOrHolding(s, cause, fx, s.q);
        else if (s.mode !== 'damping' && s.mode !== 'standing')
          toHolding(s, cause, fx, s.mode === 'ramping' || s.mode === 'holding' ? s.target : s.q);
        s.ready = false;
      }
      if (s.mode === 'ramping' && s.ramp && ev.nowMs - s.ramp.startMs >= s.ramp.durationMs) {
        const to = s.ramp.to;
        toHolding(s, 'ramp reached the start pose: ready', fx, to);
        s.ready = true;
      }
      return fx;
    }
    case 'console':
      s.lastConsoleMs = ev.nowMs;
      if (s.console !== 'present') s.console = 'present';
      return fx;
    case 'prepare': {
      const refuse = (reason: string): RunnerEffect[] => {
        fx.push({ type: 'refused', command: 'prepare', reason });
        return fx;
      };
      if (s.episode) return refuse(`an episode (${s.episode.runId}) is running`);
      if (s.lastStateMs === null || ev.nowMs - s.lastStateMs > LOWSTATE_STALE_MS)
        return refuse(`no fresh lowstate (limit ${LOWSTATE_STALE_MS} ms)`);
      if (s.remoteStopHeld) return refuse('the wireless remote stop (L2 + B) is held');
      if (s.afterClip === 'standing_policy' && !ev.standing)
        return refuse('--after-clip standing_policy is declared but no standing controller is loaded');
      if (s.tiltRad > PREPARE_MAX_TILT_RAD)
        return refuse(
          `the pelvis is tilted ${s.tiltRad.toFixed(2)} rad from upright (limit ${PREPARE_MAX_TILT_RAD} rad, IMU)`,
        );
      let maxDist = 0;
      for (let j = 0; j < G1_NUM_JOINTS; j++) {
        const p = ev.startPose[j];
        if (!Number.isFinite(p)) return refuse(`start pose joint ${j} is not finite`);
        if (p < limits.lowerRad[j] || p > limits.upperRad[j])
          return refuse(`start pose joint ${j} ${p.toFixed(3)} rad is outside its range`);
        if (
          s.q[j] < limits.lowerRad[j] - PREPARE_RANGE_MARGIN_RAD ||
          s.q[j] > limits.upperRad[j] + PREPARE_RANGE_MARGIN_RAD
        )
          return refuse(`joint ${j} measured ${s.q[j].toFixed(3)} rad is outside its range`);
        const d = Math.abs(p - s.q[j]);
        if (d > PREPARE_MAX_DISTANCE_RAD)
          return refuse(
            `joint ${j} is ${d.toFixed(2)} rad from the start pose (limit ${PREPARE_MAX_DISTANCE_RAD} rad)`,
          );
        maxDist = Math.max(maxDist, d);
      }
      const durationMs = Math.max(RAMP_MIN_MS, (maxDist / RAMP_MAX_SPEED_RAD_S) * 1000);
      const to = new Float64Array(G1_NUM_JOINTS);
      for (let j = 0; j < G1_NUM_JOINTS; j++) to[j] = ev.startPose[j];
      s.ramp = { from: Float64Array.from(s.q), to, startMs: ev.nowMs, durationMs };
      s.standing = s.afterClip === 'standing_policy' ? ev.standing! : null;
      s.ready = false;
      s.console = 'present';
      for (let j = 0; j < G1_NUM_JOINTS; j++) {
        s.kp[j] = HOLD_KP[j];
        s.kd[j] = HOLD_KD[j];
      }
      s.target.set(s.q);
      s.mode = 'ramping';
      fx.push({
        type: 'mode',
        mode: 'ramping',
        cause: `prepare: ramp of ${(durationMs / 1000).toFixed(1)} s, largest joint distance ${maxDist.toFixed(2)} rad`,
      });
      fx.push({
        type: 'accepted',
        command: 'prepare',
        message: `ramping to the start pose in ${(durationMs / 1000).toFixed(1)} s`,
      });
      return fx;
    }
    case 'start': {
      const refuse = (reason: string): RunnerEffect[] => {
        fx.push({ type: 'refused', command: 'start', reason });
        return fx;
      };
      if (s.afterClip === null)
        return refuse(
          'no way of keeping the robot up after the clip is declared (declare --after-clip gantry or standing_policy)',
        );
      if (s.afterClip === 'standing_policy' && !s.standing)
        return refuse('--after-clip standing_policy is declared but no standing controller was loaded at prepare');
      if (s.episode) return refuse(`an episode (${s.episode.runId}) is running`);
      if (s.mode !== 'holding' || !s.ready) return refuse(`the robot is not ready at the start pose (mode ${s.mode})`);
      if (s.lastStateMs === null || ev.nowMs - s.lastStateMs > LOWSTATE_STALE_MS) return refuse('no fresh lowstate');
      s.episode = { runId: ev.runId };
      s.mode = 'tracking';
      s.ready = false;
      fx.push({ type: 'mode', mode: 'tracking', cause: `start of run ${ev.runId}` });
      fx.push({ type: 'accepted', command: 'start', message: `tracking run ${ev.runId}` });
      return fx;
    }
    case 'targets': {
      // Each controller drives only its own mode: a late tracking step never reaches a standing robot.
      if (ev.from === 'standing' ? s.mode !== 'standing' : s.mode !== 'tracking') return fx;
      for (let j = 0; j < G1_NUM_JOINTS; j++) {
        s.target[j] = ev.q[j];
        s.kp[j] = ev.kp ? ev.kp[j] : HOLD_KP[j];
        s.kd[j] = ev.kd ? ev.kd[j] : HOLD_KD[j];
      }
      return fx;
    }
    case 'clip_end': {
      if (s.episode?.runId !== ev.runId) return fx;
      endEpisode(s, fx, 'completed', 'reached the end of the clip');
      // gantry: the operator declared the robot hangs; it holds the clip's last pose under holding gains.
      // standing_policy: the standing controller loaded at prepare takes over with its own gains.
      if (s.mode === 'tracking') {
        if (s.afterClip === 'standing_policy' && s.standing)
          toStanding(s, `after the clip: standing controller ${s.standing.id} at zero command (declared)`, fx);
        else toHolding(s, 'after the clip: holding on the gantry (declared)', fx, s.target);
      }
      s.ready = false;
      return fx;
    }
    case 'stop':
      endEpisode(s, fx, 'aborted_by_operator', ev.reason);
      if (s.mode === 'tracking') toStandingOrHolding(s, `stop: ${ev.reason}`, fx, s.target);
      else if (s.mode === 'ramping') toHolding(s, `stop: ${ev.reason}`, fx, s.q);
      s.ready = false;
      return fx;
    case 'hold':
      endEpisode(s, fx, 'aborted_by_operator', ev.reason);
      // Out of damping only with a live link and the remote's stop released: a hold stiffens the
      // joints at the measured pose, which must be a pose measured now.
      if (s.mode === 'damping' && (s.linkLost || s.remoteStopHeld)) return fx;
      // Also while holding: the joints are held where they are measured now (after an operator
      // placed the robot, not pulled back to an older target).
      toHolding(s, `hold: ${ev.reason}`, fx, s.q);
      s.ready = false;
      return fx;
    case 'damp':
      toDamping(s, `damp: ${ev.reason}`, fx, 'aborted_by_operator');
      return fx;
    case 'estop':
      toDamping(s, `e-stop: ${ev.reason}`, fx, 'estop');
      return fx;
  }
}

export interface MotorCommandOut {
  q: Float32Array;
  dq: Float32Array;
  tau: Float32Array;
  kp: Float32Array;
  kd: Float32Array;
}

/**
 * The command for the wire now (first 29 motor slots; the rest stay zero): damping, the ramp's
 * point, or the target, each target clamped to the joint range and to what the effort limit
 * allows from the measured position (|kp·(q* − q)| ≤ τmax).
 */
export function motorCommand(s: RunnerState, nowMs: number, limits: JointLimits, out: MotorCommandOut): void {
  const r = s.ramp;
  const a = r && s.mode === 'ramping' ? Math.min(1, Math.max(0, (nowMs - r.startMs) / r.durationMs)) : 1;
  for (let j = 0; j < G1_NUM_JOINTS; j++) {
    const kp = Number.isFinite(s.kp[j]) && s.kp[j] > 0 ? s.kp[j] : 0;
    const kd = Number.isFinite(s.kd[j]) && s.kd[j] > 0 ? s.kd[j] : 0;
    out.dq[j] = 0;
    out.tau[j] = 0;
    out.kd[j] = kd;
    if (s.mode === 'damping' || kp === 0) {
      out.kp[j] = 0;
      out.q[j] = Number.isFinite(s.q[j]) ? s.q[j] : 0;
      continue;
    }
    let t = r && s.mode === 'ramping' ? r.from[j] + (r.to[j] - r.from[j]) * a : s.target[j];
    if (!Number.isFinite(t)) t = s.q[j];
    t = Math.min(limits.upperRad[j], Math.max(limits.lowerRad[j], t));
    const span = limits.effortNm[j] / kp;
    t = Math.min(s.q[j] + span, Math.max(s.q[j] - span, t));
    out.q[j] = t;
    out.kp[j] = kp;
  }
}
