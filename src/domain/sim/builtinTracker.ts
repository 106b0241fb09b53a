// The builtin reference tracker (`joint-pd-to-reference/1`): at control step k it commands the
// reference joint angles of frame k + 1 (the pose the robot should reach by the end of the
// control interval; clamped to the last frame) as position targets of the model's position
// servos, with the binding's PD gains or, when it has none, the model's own. Stateless and
// deterministic. Reference tracker, not a policy: it knows the reference, not balance.
// The root assist of the binding is applied by the simulator (it is a wrench on the pelvis, not
// a joint command); see rootAssist.ts.

import type { BuiltinBinding, JointGains } from '../wbc/wbcBinding';
import type { ControlCommand, ControlObservation, Controller } from '../wbc/controller';

/** Reference frames the target looks ahead of the current control step. */
export const BUILTIN_TARGET_LEAD_FRAMES = 1;

/** Expands per-joint or scalar gains to J values, checking they are finite and ≥ 0. */
export function expandGains(g: JointGains['kp'], jointCount: number, what: string): Float64Array {
  const out = new Float64Array(jointCount);
  if (typeof g === 'number') out.fill(g);
  else {
    if (g.length !== jointCount)
      throw new RangeError(`${what} has ${g.length} values; the model has ${jointCount} joints`);
    out.set(g);
  }
  for (let j = 0; j < jointCount; j++)
    if (!(Number.isFinite(out[j]) && out[j] >= 0))
      throw new RangeError(`${what}[${j}] must be a finite number ≥ 0, got ${out[j]}`);
  return out;
}

export class BuiltinTracker implements Controller {
  /** The builtin tracker runs on the model's own physics. */
  readonly physics = null;
  readonly needs = [];
  private readonly kp: Float64Array | null;
  private readonly kd: Float64Array | null;

  constructor(
    readonly binding: BuiltinBinding,
    readonly jointCount: number,
  ) {
    this.kp = binding.gains ? expandGains(binding.gains.kp, jointCount, 'gains.kp') : null;
    this.kd = binding.gains ? expandGains(binding.gains.kd, jointCount, 'gains.kd') : null;
  }

  reset(): void {}

  step(obs: ControlObservation, out: ControlCommand): void {
    const J = this.jointCount;
    const ref = obs.reference;
    const k = Math.min(obs.referenceFrame + BUILTIN_TARGET_LEAD_FRAMES, ref.frameCount - 1);
    const src = ref.jointPosRad;
    const dst = out.jointTargetRad;
    const o = k * J;
    for (let j = 0; j < J; j++) dst[j] = src[o + j];
    out.kp = this.kp;
    out.kd = this.kd;
  }
}
