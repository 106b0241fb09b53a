import type { Backend, BackendEvent } from '../../domain/backend/backend';
import type { StateFrame } from '../../domain/robot/stateFrame';
import { MB_METRICS_1, type EpisodeMetrics, type HardFailure } from '../../domain/metrics';
import { LiveTrackingMetrics } from '../../domain/metrics/liveTracking';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { describeFailure } from '../sim/simEngine';
import type { LiveReading } from './trialTypes';

// One real trial's frames as they arrive: picks the frames of this run out of the robot link's
// event batches (the client tags frames with a run id only while that episode runs, with the
// episode's own clock), refuses time going backwards, and feeds the live mb-metrics/1 reducer
// (LiveTrackingMetrics: resampled onto the 50 Hz contract timeline, identical to the batch
// reducer), reporting each new 50 Hz reading.

export interface LiveTrialOptions {
  clip: MotionClip;
  profile: RobotProfile;
  runId: string;
  /** The robot publishes a global root pose (motion capture): failure, SR, progress and MPJPE-l become available. */
  hasGlobalRoot: boolean;
  /** The robot's declared state rate (the live resampler's nominal grid). */
  streamRateHz: number;
  backend: Backend;
  onReading?: (r: LiveReading) => void;
}

export class LiveTrial {
  readonly metrics: LiveTrackingMetrics;
  /** Frames accepted (and handed back for recording). */
  frames = 0;
  lastTimeS = 0;
  /** Frames dropped here for coming before the episode's time 0 (the metrics keep their own refusals). */
  readonly problems: string[] = [];
  private ended = false;
  private endWaiters: (() => void)[] = [];
  /** Frames without a run id that came after this run's end, in order, until taken. */
  private afterEnd: StateFrame[] = [];

  constructor(private readonly o: LiveTrialOptions) {
    this.metrics = new LiveTrackingMetrics({
      contract: MB_METRICS_1,
      profile: o.profile,
      reference: o.clip,
      availability: { hasGlobalRootPosition: o.hasGlobalRoot, hasGlobalRootHeading: o.hasGlobalRoot },
      streamRateHz: o.streamRateHz,
    });
  }

  /**
   * The robot's lowstate that came after this run's end (frames without a run id, after the
   * episode_end in the stream's order), taken once: the after-clip watch's input.
   */
  takeAfterEnd(): StateFrame[] {
    const out = this.afterEnd;
    this.afterEnd = [];
    return out;
  }

  /** This run's frames of a batch, in order; pushes them into the live metrics (frames after its end are kept for takeAfterEnd). */
  accept(events: readonly BackendEvent[]): StateFrame[] {
    const out: StateFrame[] = [];
    for (const e of events) {
      if (e.type === 'episode_end' && e.end.runId === this.o.runId) {
        this.ended = true;
        for (const w of this.endWaiters.splice(0)) w();
      }
      if (e.type === 'frames' && e.runId === '' && this.ended) {
        for (const f of e.frames) this.afterEnd.push(f);
        continue;
      }
      if (e.type !== 'frames' || e.runId !== this.o.runId || this.ended) continue;
      for (const f of e.frames) {
        if (!(f.timeS >= 0)) {
          this.problem(`frame at t = ${f.timeS} s dropped: before the episode's time 0`);
          continue;
        }
        const before = this.metrics.reading.frame;
        // Out-of-order and non-finite frames are refused (and kept as problems) by the metrics.
        const problem = this.metrics.push(f);
        if (problem && !problem.accepted) continue;
        this.frames++;
        this.lastTimeS = f.timeS;
        out.push(f);
        if (this.metrics.reading.frame !== before && this.o.onReading) this.o.onReading(this.reading());
      }
    }
    return out;
  }

  reading(): LiveReading {
    const s = this.metrics.reading;
    const f = this.failure();
    return {
      frame: s.frame,
      timeS: s.timeS,
      mpjpeLMm: s.frameMpjpeLMm,
      jointRmseRad: s.jointPosRmseRad,
      failed: f !== null,
      failure: f ? f.text : null,
    };
  }

  /** The first hard failure so far (null: none, or unavailable without a global root). */
  failure(): { timeS: number; text: string; failure: HardFailure } | null {
    const f = this.metrics.reading.failure;
    return f ? { timeS: f.timeS, text: describeFailure(f), failure: f } : null;
  }

  /** The episode's metrics (ends the stream: no frame is taken after it). */
  result(): EpisodeMetrics {
    if (!this.metrics.reading.finished) this.metrics.finish();
    return this.metrics.result();
  }

  /** Frames the link reports dropped (listener fell behind), if the backend counts them. */
  linkDrops(): number | null {
    const b = this.o.backend as Backend & { stats?: () => { dropped?: number } };
    return typeof b.stats === 'function' ? (b.stats().dropped ?? null) : null;
  }

  /** Resolves when this run's episode_end has come through the stream, or after `ms`. */
  drained(ms: number): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.endWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  private problem(p: string): void {
    if (this.problems.length < 100) this.problems.push(p);
  }
}
