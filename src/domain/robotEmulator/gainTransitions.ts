// The motor drivers' view of the gains they receive: a LowCmd_ with kp 0 on every motor is damping
// (no position stiffness: the runner's damping, Unitree's `Passive`), any kp > 0 is a stiff
// command (holding, ramping, tracking).

/**
 * When the motors were last told to hold or track, and when they were first told to damp after it.
 * Times are wall-clock ms since the epoch at the LowCmd_'s receipt, so that a fault injected by
 * another process on the same machine can be timed against them.
 */
export interface G1DdsGainTransitions {
  /** Stiff LowCmd_ → damping LowCmd_ transitions seen. */
  dampAfterStiff: number;
  /** Receipt of the newest stiff LowCmd_; null before the first. */
  lastStiffAtEpochMs: number | null;
  /** Receipt of the first damping LowCmd_ after the newest run of stiff ones; null before the first. */
  lastDampAfterStiffAtEpochMs: number | null;
}

/** Follows the stiff → damping transitions of the LowCmd_ stream. */
export class GainTransitionMeter {
  private readonly gains: G1DdsGainTransitions = {
    dampAfterStiff: 0,
    lastStiffAtEpochMs: null,
    lastDampAfterStiffAtEpochMs: null,
  };
  private stiff = false;

  /** One LowCmd_'s kp, received at `atEpochMs`. */
  observe(kp: ArrayLike<number>, atEpochMs: number): void {
    let anyKp = false;
    for (let j = 0; j < kp.length; j++) if (kp[j] !== 0) anyKp = true;
    if (anyKp) {
      this.stiff = true;
      this.gains.lastStiffAtEpochMs = atEpochMs;
    } else if (this.stiff) {
      this.stiff = false;
      this.gains.dampAfterStiff++;
      this.gains.lastDampAfterStiffAtEpochMs = atEpochMs;
    }
  }

  /** A copy of the figures so far. */
  transitions(): G1DdsGainTransitions {
    return { ...this.gains };
  }
}
