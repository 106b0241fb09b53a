import type { TrialRobot } from './trialTypes';

// The robot's newest measured pose for the trial's pose checks (the reset's, and the start-pose
// capture's when the robot will not hold still): copied from the robot's stream only while watched.

/** How long the reset's pose check waits for a lowstate after the operator's answer, ms. */
export const NEXT_POSE_WAIT_MS = 500;

export class PoseWatch {
  /** The newest measured pose; `have` is false until one arrives after the watch began. */
  readonly latest = { jointPosRad: new Float64Array(29), imuQuatWxyz: new Float64Array(4), have: false };

  constructor(private readonly link: TrialRobot) {}

  /**
   * Copies the robot's newest measured pose into `latest` until the returned unsubscribe: only
   * around a reset prompt and a start-pose capture, after the gate driver's own watcher (the
   * fan-out awaits watchers in order; one ahead of the gate would delay its lowstate).
   */
  watch(onFrame?: () => void): () => void {
    this.latest.have = false;
    return this.link.subscribe(async (events) => {
      for (const ev of events) {
        const f = ev.type === 'frames' ? ev.frames.at(-1) : undefined;
        if (!f) continue;
        this.latest.jointPosRad.set(f.jointPosRad.subarray(0, 29));
        this.latest.imuQuatWxyz.set(f.imu.quatWxyz);
        this.latest.have = true;
        onFrame?.();
      }
    });
  }

  /** Waits for the next lowstate (into `latest`); false when none comes within `timeoutMs`. */
  next(timeoutMs = NEXT_POSE_WAIT_MS): Promise<boolean> {
    return new Promise((resolve) => {
      const unwatch = this.watch(() => done(true));
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        unwatch();
        resolve(ok);
      };
    });
  }
}
