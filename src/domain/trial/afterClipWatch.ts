import { FALLEN_TILT_LIMIT_RAD, tiltRadFromQuatWxyz, wholeDegrees as deg } from '../robotLink/robotUpright';

// After a real trial's clip: is the robot still up? The robot side ends the run at the clip's last
// frame, and what keeps the robot up afterwards is whatever it runs then (a declared standing
// controller, a gantry, or a held pose, which does not balance a humanoid). The console watches the
// robot's lowstate for up to AFTER_CLIP_WINDOW_S after the end, until it is safe: fallen (the IMU
// tilt past FALLEN_TILT_LIMIT_RAD, the same limit as the console's fallen banner), or upright and
// still for AFTER_CLIP_STILL_S, or upright when the window closes. A fall in the window makes the
// trial a hard_failure (trialSession.ts); the clip's mb-metrics/1 readings are not touched by it.
//
// Samples come in as data: seconds after the clip's end (the lowstate's own stamps), the IMU
// attitude in w x y z order (g1-bridge/1 `imu.quat_wxyz`), joint velocities and the IMU's angular
// velocity. Pure: no clock, no I/O.

/** The longest the console watches the robot after a clip, s. */
export const AFTER_CLIP_WINDOW_S = 3;
/** Upright and still this long ends the watch early: the robot stands, s. */
export const AFTER_CLIP_STILL_S = 1;
/** Still: every joint slower than this, rad/s … */
export const AFTER_CLIP_STILL_JOINT_RAD_S = 0.5;
/** … and the body turning slower than this (IMU angular velocity), rad/s. */
export const AFTER_CLIP_STILL_GYRO_RAD_S = 0.2;

export type AfterClipVerdict =
  /** Upright through the watch (`still`: it ended early, the robot standing still). */
  | { kind: 'upright'; watchedS: number; maxTiltRad: number; still: boolean; frames: number }
  /** Tilted past the fallen limit `atS` after the clip's end. */
  | { kind: 'fell'; atS: number; tiltRad: number; watchedS: number; frames: number }
  /** Not known: the watch ended without enough lowstate to tell (`reason` says why). */
  | { kind: 'unknown'; reason: string; watchedS: number; maxTiltRad: number | null; frames: number };

export interface AfterClipSample {
  /** Seconds after the clip's end. */
  afterS: number;
  imuQuatWxyz: ArrayLike<number>;
  jointVelRadS: ArrayLike<number>;
  gyroRadS: ArrayLike<number>;
}

/** The watch of one trial's robot after its clip: samples in, a verdict out once it is known. */
export class AfterClipWatch {
  private frames = 0;
  private lastS = 0;
  private maxTilt: number | null = null;
  private stillSinceS: number | null = null;
  private verdict: AfterClipVerdict | null = null;

  /** One sample; returns the verdict when this sample decides it (then the watch is over). */
  push(s: AfterClipSample): AfterClipVerdict | null {
    if (this.verdict) return this.verdict;
    const tilt = tiltRadFromQuatWxyz(s.imuQuatWxyz);
    if (!Number.isFinite(tilt) || !(s.afterS >= this.lastS)) return null; // not a usable sample
    this.frames++;
    this.lastS = s.afterS;
    this.maxTilt = Math.max(this.maxTilt ?? 0, tilt);
    if (tilt > FALLEN_TILT_LIMIT_RAD)
      return (this.verdict = { kind: 'fell', atS: s.afterS, tiltRad: tilt, watchedS: s.afterS, frames: this.frames });
    if (isStill(s)) {
      this.stillSinceS ??= s.afterS;
      if (s.afterS - this.stillSinceS >= AFTER_CLIP_STILL_S) return (this.verdict = this.upright(s.afterS, true));
    } else this.stillSinceS = null;
    if (s.afterS >= AFTER_CLIP_WINDOW_S) return (this.verdict = this.upright(s.afterS, false));
    return null;
  }

  /** The watch ends without a deciding sample (the window passed on the clock, the link went quiet): the verdict from what came. */
  close(reason: string): AfterClipVerdict {
    if (this.verdict) return this.verdict;
    this.verdict =
      this.frames > 0 && this.lastS >= AFTER_CLIP_WINDOW_S
        ? this.upright(this.lastS, false)
        : {
            kind: 'unknown',
            reason: `${reason}: ${this.frames} lowstate sample(s) over ${this.lastS.toFixed(2)} s after the clip`,
            watchedS: this.lastS,
            maxTiltRad: this.maxTilt,
            frames: this.frames,
          };
    return this.verdict;
  }

  private upright(watchedS: number, still: boolean): AfterClipVerdict {
    return { kind: 'upright', watchedS, maxTiltRad: this.maxTilt ?? 0, still, frames: this.frames };
  }
}

function isStill(s: AfterClipSample): boolean {
  const g = s.gyroRadS;
  if (Math.hypot(g[0], g[1], g[2]) >= AFTER_CLIP_STILL_GYRO_RAD_S) return false;
  for (let j = 0; j < s.jointVelRadS.length; j++)
    if (!(Math.abs(s.jointVelRadS[j]) < AFTER_CLIP_STILL_JOINT_RAD_S)) return false;
  return true;
}

/** One line for the episode's reason and the trial list. */
export function describeAfterClip(v: AfterClipVerdict): string {
  switch (v.kind) {
    case 'fell':
      return `fell ${v.atS.toFixed(2)} s after the clip ended: tilt ${deg(v.tiltRad)} (limit ${deg(FALLEN_TILT_LIMIT_RAD)})`;
    case 'upright':
      return v.still
        ? `standing still ${v.watchedS.toFixed(1)} s after the clip (tilt at most ${deg(v.maxTiltRad)})`
        : `upright ${v.watchedS.toFixed(1)} s after the clip (tilt at most ${deg(v.maxTiltRad)})`;
    case 'unknown':
      return `after the clip: not known (${v.reason})`;
  }
}
