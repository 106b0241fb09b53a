import type { StateFrame } from '../../domain/robot/stateFrame';
import { AFTER_CLIP_WINDOW_S, AfterClipWatch, type AfterClipVerdict } from '../../domain/trial/afterClipWatch';
import type { EpisodeRecorder } from '../trace/episodeRecorder';

// After a real trial's clip: the robot's lowstate recorded on the episode (/executed/after_clip)
// and fed to the pure AfterClipWatch until it says standing or upright at the window's end, or,
// after a fall, on to the window's end (the episode shows where the robot came to lie).
//
// Its input is the trial's own frame listener's: the frames without a run id that follow the
// run's episode_end in the stream (LiveTrial.takeAfterEnd), kept from the moment the run ends, so
// none is lost while the session learns how the run ended. The link times those frames from its
// first sample, not from the episode's start: they are put on the episode's clock by the first of
// them, taken to come one state period after the run's last frame (a sample lost exactly there
// shifts the after-clip times by one period, 2 ms at 500 Hz).

/** The console's clock closes a watch whose lowstate stalls this long past the window, ms. */
const WATCH_GRACE_MS = 1000;
/** Frames kept before the watch starts (the run's end is being settled meanwhile): the window at 1 kHz. */
const MAX_PENDING_FRAMES = AFTER_CLIP_WINDOW_S * 1000;

export interface AfterClipStart {
  rec: EpisodeRecorder;
  /** The run's last frame, s on the episode's clock. */
  clipEndS: number;
  /** The link's declared state rate (one period between the run's last frame and the next). */
  stateRateHz: number;
  /** True once the safety gate has tripped: the watch ends (the trip decides the outcome). */
  tripped: () => boolean;
}

export interface AfterClipResult {
  verdict: AfterClipVerdict;
  /** A write of the recording failed (the session reports it as it does a frame write). */
  recordError: unknown;
}

export class AfterClipRecording {
  private readonly watch = new AfterClipWatch();
  private pending: StateFrame[] = [];
  private started: (AfterClipStart & { periodS: number; resolve: (r: AfterClipResult) => void }) | null = null;
  private firstTimeS: number | null = null;
  private verdict: AfterClipVerdict | null = null;
  private recordError: unknown = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private done = false;

  /** Lowstate after the run's end, in the stream's order. */
  push(frames: readonly StateFrame[]): void {
    if (this.done) return;
    for (const f of frames) if (this.pending.length < MAX_PENDING_FRAMES) this.pending.push(f);
  }

  /** Starts the watch over what came since the run's end and what comes next; resolves with its verdict. */
  start(o: AfterClipStart): Promise<AfterClipResult> {
    return new Promise((resolve) => {
      this.started = { ...o, periodS: 1 / o.stateRateHz, resolve };
      this.timer = setTimeout(
        () => this.finish(this.verdict ?? this.watch.close('the lowstate stopped before the watch could decide')),
        AFTER_CLIP_WINDOW_S * 1000 + WATCH_GRACE_MS,
      );
      void this.drain();
    });
  }

  /** Not watched (the run did not complete): what was kept is dropped. */
  cancel(): void {
    this.done = true;
    this.pending = [];
  }

  /** Judges and records the frames kept since the last call (nothing before start). */
  async drain(): Promise<void> {
    const s = this.started;
    if (!s || this.done || this.pending.length === 0) return;
    if (s.tripped()) return this.finish(this.verdict ?? this.watch.close('the safety gate tripped'));
    const frames = this.pending;
    this.pending = [];
    const batch: StateFrame[] = [];
    let over = false;
    for (const f of frames) {
      this.firstTimeS ??= f.timeS;
      const afterS = f.timeS - this.firstTimeS + s.periodS;
      if (this.verdict?.kind === 'fell' && afterS > AFTER_CLIP_WINDOW_S) {
        over = true;
        break;
      }
      batch.push({ ...f, timeS: s.clipEndS + afterS, referenceFrame: null });
      this.verdict ??= this.watch.push({
        afterS,
        imuQuatWxyz: f.imu.quatWxyz,
        jointVelRadS: f.jointVelRadS,
        gyroRadS: f.imu.gyroRadS,
      });
      if (this.verdict && this.verdict.kind !== 'fell') {
        over = true;
        break;
      }
    }
    if (batch.length > 0 && this.recordError === null)
      try {
        await s.rec.afterClipFrames(batch);
      } catch (err) {
        this.recordError = err;
      }
    if (over) this.finish(this.verdict!);
  }

  private finish(verdict: AfterClipVerdict): void {
    if (this.done || !this.started) return;
    this.done = true;
    this.pending = [];
    if (this.timer) clearTimeout(this.timer);
    this.started.resolve({ verdict, recordError: this.recordError });
  }
}
