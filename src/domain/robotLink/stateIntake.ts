import type { StateFrame } from '../robot/stateFrame';
import type { BackendProblemCode } from '../backend/problemCodes';
import type { RootStateMsg, WbcStatusMsg } from '../bridge/g1BridgeContract';
import { frameFromLowState } from '../bridge/g1BridgeEncode';
import { decodeLowState, decodeRootState, decodeWbcStatus } from '../bridge/g1BridgeValidate';
import { LowStateSequencer, type LowStateSequenceStats } from './lowStateSequence';

// What a g1-bridge/1 link receives on its state topics, decoded, judged and counted (pure: bytes
// and times in, frames and problem descriptions out). Every rejected message is counted and
// described (the caller reports it, rate-limited); none throws.
//
// - /g1/lowstate: validated (g1BridgeValidate), then sequenced (LowStateSequencer: duplicates and
//   out-of-order samples dropped, gaps counted) and turned into a StateFrame. The frame's time is
//   seconds from the episode's start while an episode runs, else from the connection's first
//   accepted sample. It carries the latest root_state when their stamps are within the skew.
// - /g1/root_state: validated and kept for pairing.
// - /g1/wbc_status: validated and handed back.

export interface IntakeProblem {
  code: BackendProblemCode;
  message: string;
}

export type LowStateResult =
  | {
      kind: 'frame';
      frame: StateFrame;
      stampNs: number;
      /** A gap before this sample (samples missing), described; null when none. */
      gap: IntakeProblem | null;
    }
  | { kind: 'rejected'; problem: IntakeProblem };

export interface StateIntakeStats extends LowStateSequenceStats {
  /** lowstate messages received / accepted as frames. */
  received: number;
  accepted: number;
  malformed: number;
  /** lowstates larger than G1_BRIDGE_LIMITS.lowStateBytes (also counted as malformed). */
  oversized: number;
  /** Messages of other topics that failed validation (root_state, wbc_status). */
  malformedOther: number;
}

export class StateIntake {
  private readonly sequencer = new LowStateSequencer();
  private baseStampNs: number | null = null;
  private latestRoot: RootStateMsg | null = null;
  private readonly counts = { received: 0, accepted: 0, malformed: 0, oversized: 0, malformedOther: 0 };
  private readonly rootSkewNs: number;

  /** @param rootStateMaxSkewMs a root_state is paired with a lowstate whose stamp is within this, ms */
  constructor(rootStateMaxSkewMs: number) {
    this.rootSkewNs = rootStateMaxSkewMs * 1e6;
  }

  /**
   * One lowstate message. `episodeStartNs`: the running episode's start on the publisher's clock
   * (its frames are timed from it), or null outside an episode.
   */
  lowState(data: ArrayBufferView, episodeStartNs: number | null): LowStateResult {
    this.counts.received++;
    const d = decodeLowState(data);
    if (!d.ok) {
      this.counts.malformed++;
      if (d.code === 'oversized') this.counts.oversized++;
      return {
        kind: 'rejected',
        problem: {
          code: d.code === 'oversized' ? 'oversized_frame' : 'malformed_frame',
          message: `lowstate dropped (${this.counts.malformed} malformed so far): ${d.reason}`,
        },
      };
    }
    const low = d.value;
    const v = this.sequencer.judge(low.tick, low.stamp_ns);
    const seq = v.kind === 'accepted' && v.missing === 0 ? null : this.sequencer.stats(); // only to describe
    if (v.kind === 'duplicate')
      return {
        kind: 'rejected',
        problem: {
          code: 'duplicate_frame',
          message: `lowstate tick ${low.tick} received twice; dropped (${seq!.duplicate} duplicates so far)`,
        },
      };
    if (v.kind === 'out_of_order')
      return {
        kind: 'rejected',
        problem: {
          code: 'out_of_order_frame',
          message: `lowstate tick ${low.tick} (stamp ${low.stamp_ns}) arrived after tick ${v.lastTick}; dropped (${seq!.outOfOrder} out of order so far)`,
        },
      };
    const gap: IntakeProblem | null =
      v.missing > 0
        ? {
            code: 'tick_gap',
            message: `lowstate ticks ${v.previousTick} → ${low.tick}: ${v.missing} samples missing (${seq!.missingTicks} in ${seq!.tickGapEvents} gaps so far)`,
          }
        : null;
    this.baseStampNs ??= low.stamp_ns;
    const root =
      this.latestRoot && Math.abs(this.latestRoot.stamp_ns - low.stamp_ns) <= this.rootSkewNs ? this.latestRoot : null;
    const t0 = episodeStartNs ?? this.baseStampNs;
    const frame = frameFromLowState(low, root, (low.stamp_ns - t0) / 1e9);
    this.counts.accepted++;
    return { kind: 'frame', frame, stampNs: low.stamp_ns, gap };
  }

  /** One root_state message: kept for pairing; a problem description when malformed. */
  rootState(data: ArrayBufferView): IntakeProblem | null {
    const r = decodeRootState(data);
    if (!r.ok) {
      this.counts.malformedOther++;
      return {
        code: 'malformed_root_state',
        message: `root_state dropped (${this.counts.malformedOther} malformed non-lowstate messages): ${r.reason}`,
      };
    }
    this.latestRoot = r.value;
    return null;
  }

  /** One wbc_status message: the status, or a problem description when malformed. */
  wbcStatus(data: ArrayBufferView): { ok: true; status: WbcStatusMsg } | { ok: false; problem: IntakeProblem } {
    const s = decodeWbcStatus(data);
    if (!s.ok) {
      this.counts.malformedOther++;
      return {
        ok: false,
        problem: {
          code: 'malformed_wbc_status',
          message: `wbc_status dropped (${this.counts.malformedOther} malformed non-lowstate messages): ${s.reason}`,
        },
      };
    }
    return { ok: true, status: s.value };
  }

  /** The stamp of the last accepted lowstate on this connection, ns; null before the first. */
  get lastStampNs(): number | null {
    return this.sequencer.lastAcceptedStampNs;
  }

  /** A new connection: sequence, time base and root pairing start afresh (counts are kept). */
  newConnection(): void {
    this.sequencer.newConnection();
    this.baseStampNs = null;
    this.latestRoot = null;
  }

  stats(): StateIntakeStats {
    return { ...this.counts, ...this.sequencer.stats() };
  }
}
