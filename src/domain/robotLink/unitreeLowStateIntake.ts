import { LowStateSequencer } from './lowStateSequence';
import type { IntakeProblem, LowStateResult, StateIntakeStats } from './stateIntake';
import { Uint32Unwrapper, unitreeLowStateToFrame } from './unitreeLowState';

// What a ROS 2 robot link receives on `/lowstate` (unitree_hg/msg/LowState through
// foxglove_bridge), judged and counted the way StateIntake judges a g1-bridge/1 lowstate (pure:
// decoded messages and times in, frames and problem descriptions out; nothing throws):
//
// - mapped and validated by unitreeLowStateToFrame (src/domain/robotLink/unitreeLowState.ts);
// - `tick` (uint32) unwrapped, then sequenced by the same LowStateSequencer (duplicates and
//   out-of-order samples dropped, gaps counted in units of the smallest tick step seen);
// - timed by the Foxglove message's log time: foxglove_bridge stamps each message with its node's
//   clock when it relays it (ros2_foxglove_bridge.cpp, rosMessageHandler: `this->now()`, ns since
//   the Unix epoch unless use_sim_time), a uint64 that does not fit a double exactly, so it is
//   kept as a bigint and made relative to the connection's first accepted sample. StateFrame.timeS
//   is seconds from that sample, as a g1-bridge/1 link outside an episode times its frames
//   (StateIntake: from the connection's first accepted stamp_ns). The tick is not used as a clock:
//   unitree_ros2 does not document its unit.

export class UnitreeLowStateIntake {
  private readonly sequencer = new LowStateSequencer();
  private readonly ticks = new Uint32Unwrapper();
  private baseNs: bigint | null = null;
  private lastModeMachine: number | null = null;
  private readonly counts = { received: 0, accepted: 0, malformed: 0, oversized: 0, malformedOther: 0 };

  /**
   * One decoded lowstate (`decoded`: the message object, or the decoder's error) and the Foxglove
   * message's log time, ns.
   */
  lowState(decoded: { ok: true; message: unknown } | { ok: false; reason: string }, logTimeNs: bigint): LowStateResult {
    this.counts.received++;
    const rejected = (reason: string): LowStateResult => {
      this.counts.malformed++;
      return {
        kind: 'rejected',
        problem: {
          code: 'malformed_frame',
          message: `lowstate (unitree_hg/msg/LowState) dropped (${this.counts.malformed} malformed so far): ${reason}`,
        },
      };
    };
    if (!decoded.ok) return rejected(`CDR decoding failed: ${decoded.reason}`);
    const s = unitreeLowStateToFrame(decoded.message);
    if (!s.ok) return rejected(`${s.field} ${s.reason}`);
    const base = this.baseNs ?? logTimeNs;
    const stampNs = Number(logTimeNs - base);
    const tick = this.ticks.next(s.tick);
    const v = this.sequencer.judge(tick, stampNs);
    if (v.kind === 'duplicate')
      return {
        kind: 'rejected',
        problem: {
          code: 'duplicate_frame',
          message: `lowstate tick ${s.tick} received twice; dropped (${this.sequencer.stats().duplicate} duplicates so far)`,
        },
      };
    if (v.kind === 'out_of_order')
      return {
        kind: 'rejected',
        problem: {
          code: 'out_of_order_frame',
          message: `lowstate tick ${s.tick} arrived after tick ${v.lastTick}; dropped (${this.sequencer.stats().outOfOrder} out of order so far)`,
        },
      };
    const seq = v.missing > 0 ? this.sequencer.stats() : null;
    const gap: IntakeProblem | null = seq
      ? {
          code: 'tick_gap',
          message: `lowstate ticks ${v.previousTick} → ${tick}: ${v.missing} samples missing (${seq.missingTicks} in ${seq.tickGapEvents} gaps so far)`,
        }
      : null;
    this.baseNs = base;
    this.lastModeMachine = s.modeMachine;
    s.frame.tick = tick;
    s.frame.timeS = stampNs / 1e9;
    this.counts.accepted++;
    return { kind: 'frame', frame: s.frame, stampNs, gap };
  }

  /** `mode_machine` of the last accepted sample (the robot's model code, as Unitree's examples echo it); null before. */
  get modeMachine(): number | null {
    return this.lastModeMachine;
  }

  /** A new connection: sequence, tick unwrapping and time base start afresh (counts are kept). */
  newConnection(): void {
    this.sequencer.newConnection();
    this.ticks.reset();
    this.baseNs = null;
    this.lastModeMachine = null;
  }

  stats(): StateIntakeStats {
    return { ...this.counts, ...this.sequencer.stats() };
  }
}
