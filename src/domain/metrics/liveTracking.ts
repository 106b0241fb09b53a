// Live metrics from a robot (or any) state stream (docs/METRICS.md, "Live metrics from a robot
// stream"). Frames arrive at the source's rate (500 Hz from a G1, timeS = seconds since the
// episode start); each is placed on the source's nominal sample grid and the contract timeline
// t_k = k/r is filled as soon as the frames bracketing t_k are in, with the very interpolation
// arithmetic of the batch resampler (src/domain/motion/resample.ts). Each timeline frame then
// goes through forward kinematics and the streaming reducer, and updates one LiveReading that the
// console reads without allocating.
//
// Live equals batch: after the last frame (and finish()), result() is bit-identical to the batch
// evaluation (ClipPairEvaluator) of the received frames taken as a MotionClip at the stream's rate
// — provided no frame was missing. Why it is exact: the source position of timeline frame k is
// f = (k·fps)/r in both; a frame's grid index is its arrival order (plus any missing slots), so
// the bracket of f is floor(f), floor(f)+1 and the weight (f − i0)/1 is the batch's f − i0; the
// row interpolation (lerpRowInto) and the slerp (slerpWxyzInto) are the batch's functions; FK is
// the same ForwardKinematics.compute on the same numbers; and the streaming reducer equals the
// batch reducer number for number (episodeAccumulator.ts).
//
// Grid index. The first accepted frame is index 0 (time 0 of the executed clip, as in batch).
// Every later frame's index is the previous one plus max(1, round(Δt·fps)), Δt the difference of
// their timeS: jitter of less than half a period does not move a frame, and a step of more than
// one index means frames were lost in between. A timeline frame inside such a wider bracket is
// interpolated over it, weight (f − i_a)/(i_b − i_a). A bracket longer than maxGapS (default
// 100 ms) is reported as a problem and marks the reading degraded (sticky for the episode):
// readings from then on rest on interpolation over a span the robot was not observed in.

import type { StateFrame } from '../robot/stateFrame';
import {
  commonTimelineFrameCount,
  lerpRowInto,
  resampleFrames,
  slerpWxyzInto,
  sourceFrameOffset,
  type TimedFrames,
} from '../motion/resample';
import { ForwardKinematics } from '../robot/forwardKinematics';
import type { RobotProfile } from '../robot/robotProfile';
import { bodyPositions } from './clipPairMetrics';
import { EpisodeAccumulator } from './episodeAccumulator';
import type { MetricContract } from './metricContract';
import { metricLayoutFor, type MetricFrames, type MetricLayout } from './metricLayout';
import type { EpisodeMetrics, HardFailure, ProgressStop, SourceCapabilities } from './readings';
import { StreamingEpisodeReducer } from './streamingReducer';

/** What LiveTrackingMetrics reads of a frame (a StateFrame fits). */
export type LiveStateFrame = Pick<StateFrame, 'timeS' | 'rootPosM' | 'rootQuatWxyz' | 'jointPosRad'>;

export interface LiveTrackingOptions {
  contract: MetricContract;
  profile: RobotProfile;
  /** The reference clip at its own rate (resampled here to the contract rate). */
  reference: TimedFrames;
  /**
   * What the executed stream provides: with motion capture both true; without, both false (the
   * root position is unknown and the IMU yaw is no world heading).
   */
  availability: SourceCapabilities;
  /** The stream's nominal rate, Hz (e.g. the backend's declared stateRateHz: 500 for a G1). */
  streamRateHz: number;
  /** A bracket between two received frames longer than this is a gap: problem + degraded (default 0.1 s). */
  maxGapS?: number;
  /**
   * Called after every timeline frame (50 Hz) with the live reading — one push may complete
   * several (a slow stream, a gap). The object is reused: copy what you keep.
   */
  onReading?: (reading: Readonly<LiveReading>) => void;
}

export type LiveProblemCode = 'out_of_order' | 'non_finite' | 'missing_root' | 'bad_frame' | 'finished' | 'gap';

export interface LiveProblem {
  code: LiveProblemCode;
  /** false: the frame was refused and nothing changed; true: accepted, with a warning (gap). */
  accepted: boolean;
  /** timeS of the frame concerned. */
  timeS: number;
  message: string;
}

/**
 * The live reading, updated in place at every contract-timeline frame (50 Hz). A value that the
 * stream cannot give is null with the reason in the matching `…Unavailable` field — never 0.
 */
export interface LiveReading {
  /** Newest timeline frame k (−1 before the first). */
  frame: number;
  /** k / r, seconds. */
  timeS: number;
  /** Timeline frames of the reference, K_R = floor(r·D_R + 1e-9) + 1. */
  plannedFrames: number;
  /** k / (K_R − 1): how far through the clip. */
  progress: number;
  /** MPJPE-l of frame k, mm; null without the executed root's global heading. */
  frameMpjpeLMm: number | null;
  mpjpeUnavailable: string | null;
  /** RMS joint-angle error of frame k, rad. */
  frameJointRmseRad: number | null;
  /** Joint-position RMSE over frames 0..k, rad (the number result() gives for K = k + 1). */
  jointPosRmseRad: number | null;
  /**
   * The first frame where a hard-failure condition held, set the moment it is crossed. As in the
   * contract, a failure on the episode's last timeline frame does not count: result() drops it
   * then (the flag stays, it was seen).
   */
  failure: HardFailure | null;
  /** The first frame of a hard failure or global drift (progress-soft's k*), as soon as seen. */
  progressStop: ProgressStop | null;
  /** Why failure and progress cannot be detected (no global root), null when they can. */
  failureUnavailable: string | null;
  /** Frames accepted, frames refused, grid slots no frame arrived for. */
  sourceFrames: number;
  refusedFrames: number;
  missingSourceFrames: number;
  /** A gap longer than maxGapS was interpolated over (sticky for the episode). */
  degraded: boolean;
  degradedReason: string | null;
  /** finish() was called: the stream is over. */
  finished: boolean;
}

const MAX_PROBLEMS_KEPT = 100;

export class LiveTrackingMetrics {
  readonly contract: MetricContract;
  readonly layout: MetricLayout;
  readonly availability: SourceCapabilities;
  readonly streamRateHz: number;
  readonly maxGapS: number;
  /** Problems so far (the first MAX_PROBLEMS_KEPT; all are counted in the reading). */
  readonly problems: LiveProblem[] = [];

  private readonly fk: ForwardKinematics;
  private readonly reducer: StreamingEpisodeReducer;
  private readonly flags: EpisodeAccumulator;
  private readonly ref: MetricFrames;
  private readonly refFrames: number;
  private readonly exec: MetricFrames;
  private readonly execPos = new Float64Array(3);
  private readonly fkQuat: Float64Array;
  // previous and current accepted frame (copies: frames may come from a pool)
  private prevPos = new Float64Array(3);
  private prevQuat = new Float64Array(4);
  private prevQ: Float64Array;
  private curPos = new Float64Array(3);
  private curQuat = new Float64Array(4);
  private curQ: Float64Array;
  private prevIndex = -1;
  private prevTimeS = 0;
  private nextSlot = 0;
  private posSqSum = 0;
  private failSlot = -1;
  private stopSlot = -1;
  private readonly live: LiveReading;
  private readonly onReading: ((reading: Readonly<LiveReading>) => void) | undefined;

  constructor(options: LiveTrackingOptions) {
    const { contract, profile, reference, availability, streamRateHz } = options;
    if (!(Number.isFinite(streamRateHz) && streamRateHz > 0))
      throw new RangeError(`live metrics: streamRateHz must be a positive finite number, got ${streamRateHz}`);
    const maxGapS = options.maxGapS ?? 0.1;
    if (!(maxGapS > 0)) throw new RangeError(`live metrics: maxGapS must be positive, got ${maxGapS}`);
    this.contract = contract;
    this.availability = {
      hasGlobalRootPosition: availability.hasGlobalRootPosition,
      hasGlobalRootHeading: availability.hasGlobalRootHeading,
    };
    this.streamRateHz = streamRateHz;
    this.maxGapS = maxGapS;
    this.onReading = options.onReading;
    this.layout = metricLayoutFor(contract, profile);
    const J = this.layout.jointCount;
    const B = this.layout.bodyCount;
    if (reference.jointPosRad.length !== reference.frameCount * J) {
      throw new RangeError(
        `live metrics: the reference has ${reference.jointPosRad.length / reference.frameCount} joints per frame; the model has ${J}`,
      );
    }
    this.fk = new ForwardKinematics(profile);
    const r = contract.rateHz;
    const KR = commonTimelineFrameCount(r, reference);
    const R = resampleFrames(reference, r, KR);
    this.ref = { rootQuatWxyz: R.rootQuatWxyz, jointPosRad: R.jointPosRad, bodyPosM: bodyPositions(this.fk, R, KR) };
    this.refFrames = KR;
    this.exec = {
      rootQuatWxyz: new Float64Array(4),
      jointPosRad: new Float64Array(J),
      bodyPosM: new Float64Array(3 * B),
    };
    this.fkQuat = new Float64Array(4 * B);
    this.prevQ = new Float64Array(J);
    this.curQ = new Float64Array(J);
    this.reducer = new StreamingEpisodeReducer(contract, this.layout, this.availability, { expectedFrames: KR });
    this.flags = new EpisodeAccumulator(contract, this.layout, this.availability);
    const canDetect = this.flags.canDetectFailure;
    this.live = {
      frame: -1,
      timeS: 0,
      plannedFrames: KR,
      progress: 0,
      frameMpjpeLMm: null,
      mpjpeUnavailable: this.availability.hasGlobalRootHeading
        ? 'no frame yet'
        : 'MPJPE-l needs the executed root’s global heading, which this stream does not provide (no motion capture)',
      frameJointRmseRad: null,
      jointPosRmseRad: null,
      failure: null,
      progressStop: null,
      failureUnavailable: canDetect
        ? null
        : 'hard-failure and drift detection need the executed root’s global position and heading, which this stream does not provide (no motion capture)',
      sourceFrames: 0,
      refusedFrames: 0,
      missingSourceFrames: 0,
      degraded: false,
      degradedReason: null,
      finished: false,
    };
  }

  /** The live reading (one object, updated in place; copy it to keep a snapshot). */
  get reading(): Readonly<LiveReading> {
    return this.live;
  }

  /** Timeline frames reduced so far. */
  get frameCount(): number {
    return this.reducer.frameCount;
  }

  /**
   * Adds the next frame of the stream. Returns null when it was taken without remark, or the
   * problem: refused (out of order, non-finite, missing root, after finish — nothing changed) or
   * accepted with a warning (a gap).
   */
  push(frame: LiveStateFrame): LiveProblem | null {
    const J = this.layout.jointCount;
    const t = frame.timeS;
    if (this.live.finished) return this.refuse('finished', t, 'frame after finish(): the stream was declared over');
    if (!(frame.jointPosRad && frame.jointPosRad.length === J))
      return this.refuse('bad_frame', t, `jointPosRad must have ${J} values, found ${frame.jointPosRad?.length}`);
    if (!Number.isFinite(t)) return this.refuse('non_finite', t, `timeS is ${t}`);
    if (this.prevIndex >= 0 && !(t > this.prevTimeS)) {
      return this.refuse(
        'out_of_order',
        t,
        `frame at ${t} s does not come after the previous one at ${this.prevTimeS} s`,
      );
    }
    const caps = this.availability;
    if (caps.hasGlobalRootPosition && !frame.rootPosM)
      return this.refuse('missing_root', t, 'no root position in a stream declared to have one (motion capture)');
    if (caps.hasGlobalRootHeading && !frame.rootQuatWxyz)
      return this.refuse('missing_root', t, 'no root orientation in a stream declared to have a global heading');
    const q = frame.jointPosRad;
    for (let j = 0; j < J; j++)
      if (!Number.isFinite(q[j])) return this.refuse('non_finite', t, `jointPosRad[${j}] is ${q[j]}`);
    const pos = caps.hasGlobalRootPosition ? frame.rootPosM : null;
    if (pos)
      for (let c = 0; c < 3; c++)
        if (!Number.isFinite(pos[c])) return this.refuse('non_finite', t, `rootPosM[${c}] is ${pos[c]}`);
    const quat = frame.rootQuatWxyz;
    if (quat) {
      for (let c = 0; c < 4; c++)
        if (!Number.isFinite(quat[c])) return this.refuse('non_finite', t, `rootQuatWxyz[${c}] is ${quat[c]}`);
      if (quat[0] === 0 && quat[1] === 0 && quat[2] === 0 && quat[3] === 0)
        return this.refuse('non_finite', t, 'rootQuatWxyz is zero');
    }

    // Place the frame on the grid.
    let problem: LiveProblem | null = null;
    let index = 0;
    if (this.prevIndex >= 0) {
      const dt = t - this.prevTimeS;
      const steps = Math.max(1, Math.round(dt * this.streamRateHz));
      index = this.prevIndex + steps;
      this.live.missingSourceFrames += steps - 1;
      if (dt > this.maxGapS) {
        problem = this.warn(
          'gap',
          t,
          `no frame for ${(dt * 1000).toFixed(1)} ms (${this.prevTimeS.toFixed(3)} → ${t.toFixed(3)} s), more than ${this.maxGapS * 1000} ms: timeline frames in it are interpolated over the gap`,
        );
      }
    } else if (t > this.maxGapS) {
      problem = this.warn(
        'gap',
        t,
        `the first frame is at ${t.toFixed(3)} s, more than ${this.maxGapS * 1000} ms after the episode start: the executed timeline starts at it`,
      );
    }
    // Keep a copy (the previous one becomes prev).
    const swapPos = this.prevPos;
    const swapQuat = this.prevQuat;
    const swapQ = this.prevQ;
    this.prevPos = this.curPos;
    this.prevQuat = this.curQuat;
    this.prevQ = this.curQ;
    this.curPos = swapPos;
    this.curQuat = swapQuat;
    this.curQ = swapQ;
    if (pos) this.curPos.set(pos);
    else this.curPos.fill(0); // unknown root position: never read by an available reading
    if (quat) this.curQuat.set(quat);
    else this.curQuat.set(IDENTITY);
    this.curQ.set(q);
    const prevIndex = this.prevIndex;
    this.prevIndex = index;
    this.prevTimeS = t;
    this.live.sourceFrames++;

    // Fill every timeline frame whose source position is now bracketed.
    const r = this.contract.rateHz;
    const fps = this.streamRateHz;
    while (this.nextSlot < this.refFrames) {
      const f = sourceFrameOffset(this.nextSlot, r, fps);
      if (f > index) break;
      if (f === index || prevIndex < 0) this.slotAsIs();
      else this.slotBetween((f - prevIndex) / (index - prevIndex));
    }
    return problem;
  }

  /**
   * Declares the stream over: timeline frames up to the executed clip's own end
   * (K_E = floor(r·(N − 1)/fps + 1e-9) + 1, N = grid index of the last frame + 1) that are not in
   * yet take the last frame as is, as the batch resampler does. Later pushes are refused.
   */
  finish(): void {
    if (this.live.finished) return;
    this.live.finished = true;
    if (this.prevIndex < 0) return;
    const KE = commonTimelineFrameCount(this.contract.rateHz, {
      fps: this.streamRateHz,
      frameCount: this.prevIndex + 1,
    });
    const K = Math.min(this.refFrames, KE);
    while (this.nextSlot < K) this.slotAsIs();
  }

  /** The episode's readings over the timeline frames so far (all of them after finish()). */
  result(): EpisodeMetrics {
    return this.reducer.result();
  }

  // -------------------------------------------------------------------------------------------

  private slotAsIs(): void {
    this.exec.rootQuatWxyz.set(this.curQuat);
    this.exec.jointPosRad.set(this.curQ);
    this.execPos.set(this.curPos);
    this.reduceSlot();
  }

  private slotBetween(alpha: number): void {
    const J = this.layout.jointCount;
    lerpRowInto(this.execPos, 0, this.prevPos, 0, this.curPos, 0, 3, alpha);
    slerpWxyzInto(this.exec.rootQuatWxyz, 0, this.prevQuat, 0, this.curQuat, 0, alpha);
    lerpRowInto(this.exec.jointPosRad, 0, this.prevQ, 0, this.curQ, 0, J, alpha);
    this.reduceSlot();
  }

  private reduceSlot(): void {
    const k = this.nextSlot++;
    const J = this.layout.jointCount;
    const exec = this.exec;
    const ref = this.ref;
    this.fk.compute(this.execPos, exec.rootQuatWxyz, exec.jointPosRad, exec.bodyPosM, this.fkQuat, 0, 0, 0);
    this.reducer.push(ref, exec, k, 0);

    // Joint RMSE so far: the same sum, in the same order, as the accumulator's.
    const eq = exec.jointPosRad;
    const rq = ref.jointPosRad;
    const ro = k * J;
    let s = 0;
    for (let j = 0; j < J; j++) {
      const d = eq[j] - rq[ro + j];
      s += d * d;
    }
    this.posSqSum += s;

    const live = this.live;
    live.frame = k;
    live.timeS = k / this.contract.rateHz;
    live.progress = this.refFrames > 1 ? k / (this.refFrames - 1) : 1;
    live.frameMpjpeLMm = this.reducer.frameMpjpeLMm;
    if (live.frameMpjpeLMm !== null) live.mpjpeUnavailable = null;
    live.frameJointRmseRad = this.reducer.frameJointRmseRad;
    live.jointPosRmseRad = Math.sqrt(this.posSqSum / ((k + 1) * J));

    // Failure and drift flags, the moment they are crossed. `flags` runs the accumulator's own
    // test at position 0 so that its first-frame records can be named by finalize() (K = 2).
    const flags = this.flags;
    if (flags.canDetectFailure && flags.checksPending) {
      flags.checkFrame(0, ref, k, exec, 0);
      const newFail = flags.failFrame >= 0 && this.failSlot < 0;
      const newStop = flags.stopFrame >= 0 && this.stopSlot < 0;
      if (newFail || newStop) {
        if (newFail) this.failSlot = k;
        if (newStop) this.stopSlot = k;
        flags.frames = 2;
        const m = flags.finalize();
        if (newFail && m.failure.available && m.failure.value)
          live.failure = { ...m.failure.value, frame: k, timeS: k / this.contract.rateHz };
        if (newStop && m.progressStop.available && m.progressStop.value)
          live.progressStop = { frame: k, cause: m.progressStop.value.cause };
      }
    }
    this.onReading?.(live);
  }

  private refuse(code: LiveProblemCode, timeS: number, message: string): LiveProblem {
    this.live.refusedFrames++;
    return this.keep({ code, accepted: false, timeS, message: `frame refused: ${message}` });
  }

  private warn(code: LiveProblemCode, timeS: number, message: string): LiveProblem {
    this.live.degraded = true;
    this.live.degradedReason ??= message;
    return this.keep({ code, accepted: true, timeS, message });
  }

  private keep(p: LiveProblem): LiveProblem {
    if (this.problems.length < MAX_PROBLEMS_KEPT) this.problems.push(p);
    return p;
  }
}

const IDENTITY = new Float64Array([1, 0, 0, 0]);
