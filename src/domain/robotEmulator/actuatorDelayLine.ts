// Actuator latency of the robot emulator: a ring buffer at the physics rate. Each physics step
// the command of that step goes in (targets, kp, kd per joint) and the command issued `delay`
// steps earlier comes out, so a target reaches the servos delay·dt later. delay 0 passes the
// command through unchanged. Nothing here allocates after construction.

export interface ActuatorCommand {
  targetRad: Float64Array;
  kp: Float64Array;
  kd: Float64Array;
}

export class ActuatorDelayLine {
  private readonly slots: ActuatorCommand[];
  private head = 0;

  constructor(
    readonly jointCount: number,
    readonly delaySteps: number,
  ) {
    if (!(Number.isInteger(delaySteps) && delaySteps >= 0))
      throw new RangeError(`delay must be a whole number of steps ≥ 0, got ${delaySteps}`);
    this.slots = Array.from({ length: delaySteps + 1 }, () => ({
      targetRad: new Float64Array(jointCount),
      kp: new Float64Array(jointCount),
      kd: new Float64Array(jointCount),
    }));
  }

  /** Fills every slot with this command: what the servos hold until a newer one comes out. */
  prime(cmd: ActuatorCommand): void {
    for (const s of this.slots) copyCommand(cmd, s);
    this.head = 0;
  }

  /**
   * Enters this step's command and returns the one that reaches the servos now (issued
   * delaySteps steps ago). The returned object is a slot of the buffer: read it before the next push.
   */
  push(cmd: ActuatorCommand): ActuatorCommand {
    const n = this.slots.length;
    copyCommand(cmd, this.slots[this.head]);
    const out = this.slots[(this.head + 1) % n];
    this.head = (this.head + 1) % n;
    return out;
  }
}

function copyCommand(from: ActuatorCommand, to: ActuatorCommand): void {
  to.targetRad.set(from.targetRad);
  to.kp.set(from.kp);
  to.kd.set(from.kd);
}
