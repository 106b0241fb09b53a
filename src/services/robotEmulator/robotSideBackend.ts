import { performance } from 'node:perf_hooks';
import type {
  Backend,
  BackendCapabilities,
  BackendLease,
  BackendListener,
  EpisodeEnd,
  EpisodeOutcome,
  RunRequest,
} from '../../domain/backend/backend';
import { BackendEventQueue } from '../../domain/backend/backendEventQueue';
import type { StateFrame } from '../../domain/robot/stateFrame';

// What the robot side of g1-bridge/1 serves as its Backend (the bridge server in robot mode), for
// the emulated robot and the G1 runner alike: one lease at a time, no exact reset (a human puts a
// real robot back), the samples and episode ends on their way to the bridge in one bounded queue,
// and the active run whose end resolves the lease's run().

const MAX_QUEUED_FRAMES = 1000;

export interface RobotSideRun {
  runId: string;
  /** Stamp (ns since the stamp origin) of the episode's first sample. */
  startNs: number;
  wallStartMs: number;
  resolve: (end: EpisodeEnd) => void;
}

/** A robot's capabilities on the bridge; what differs between robots is given. */
export function robotSideCapabilities(o: { globalRootPosition: boolean; stateRateHz: number }): BackendCapabilities {
  return {
    executionDomain: 'real_robot',
    globalRootPosition: o.globalRootPosition,
    rootOrientation: true,
    contacts: false,
    jointTorque: true,
    stateRateHz: o.stateRateHz,
    exactReset: false,
    bindingKinds: ['builtin', 'onnx'],
  };
}

export abstract class RobotSideBackend implements Backend {
  abstract readonly id: string;
  abstract readonly name: string;
  abstract readonly capabilities: BackendCapabilities;
  readonly presence = 'present' as const;
  run: RobotSideRun | null = null;
  /**
   * Samples and episode ends on their way to the bridge (the backend event queue every link
   * shares): bounded while the bridge is busy, the oldest samples dropped and counted.
   */
  private readonly queue = new BackendEventQueue({ maxQueuedFrames: MAX_QUEUED_FRAMES, owner: this });
  private leased: string | null = null;

  /** @param resetRefusal What a lease's reset throws. */
  protected constructor(private readonly resetRefusal: string) {}

  /** Samples not delivered because the bridge fell behind. */
  get dropped(): number {
    return this.queue.dropped;
  }

  /** Samples handed to the bridge. */
  get published(): number {
    return this.queue.deliveredFrames;
  }

  setListener(listener: BackendListener | null): void {
    this.queue.setListener(listener);
  }

  /** One sample for the bridge; queued (bounded, oldest dropped) while it is busy. */
  deliver(frame: StateFrame): void {
    this.queue.push({ type: 'frames', runId: this.run?.runId ?? '', frames: [frame] });
  }

  async acquire(runId: string): Promise<BackendLease> {
    if (this.leased) throw new Error(`${this.name} is leased by run ${this.leased}`);
    this.leased = runId;
    let released = false;
    return {
      runId,
      reset: async () => {
        throw new Error(this.resetRefusal);
      },
      run: (request: RunRequest) => this.startRun(runId, request),
      stop: async (outcome, reason) => {
        if (this.run?.runId === runId) this.stopRun(outcome, reason);
      },
      release: async () => {
        if (released) return;
        released = true;
        this.releaseRun(runId);
        if (this.leased === runId) this.leased = null;
      },
    };
  }

  episodeStartNs(runId: string): number | null {
    return this.run?.runId === runId ? this.run.startNs : null;
  }

  async close(): Promise<void> {}

  /** Begins the episode of `runId`; resolves with its end (endRun). */
  protected abstract startRun(runId: string, request: RunRequest): Promise<EpisodeEnd>;
  /** The lease's stop, for the run that is active. */
  protected abstract stopRun(outcome: EpisodeOutcome, reason: string): void;
  /** The lease of `runId` is released: end what of it still runs or is being prepared. */
  protected abstract releaseRun(runId: string): void;
  /** Called when the active run has ended, before its end goes to the bridge. */
  protected onRunEnded(_end: Omit<EpisodeEnd, 'wallSeconds'>): void {}

  /** The active run `end.runId` ended: after its last sample, tell the bridge and resolve its run(). */
  protected endRun(end: Omit<EpisodeEnd, 'wallSeconds'>): void {
    const run = this.run;
    if (!run || run.runId !== end.runId) return;
    this.run = null;
    this.onRunEnded(end);
    const e: EpisodeEnd = {
      runId: end.runId,
      outcome: end.outcome,
      reason: end.reason,
      frames: end.frames,
      simSeconds: end.simSeconds,
      wallSeconds: (performance.now() - run.wallStartMs) / 1000,
    };
    this.queue.push({ type: 'episode_end', end: e });
    run.resolve(e);
  }
}
