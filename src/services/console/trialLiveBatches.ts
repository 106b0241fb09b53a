import { PUSH_RATE_HZ } from '../../api/contract';
import type { BackendEvent } from '../../domain/backend/backend';
import type { TrialProgressEvent } from '../trial/trialTypes';
import type { ConnectionRegistry } from './connectionRegistry';
import type { EventHub } from './eventHub';

// A trial job's live stream (`live.frames`, source trial_job): the runner's 50 Hz live readings,
// each paired with the robot's latest measured joint angles, sent in batches at PUSH_RATE_HZ,
// skipped (counted) for a client that is behind.

/** Samples kept for a live batch; older ones are dropped for display (counted). */
const MAX_LIVE_BUFFER = 500;
const JOINTS = 29;

type LiveEvent = Extract<TrialProgressEvent, { type: 'live' }>;

interface LiveSample {
  frame: number;
  timeS: number;
  mpjpeLMm: number | null;
  jointRmseRad: number | null;
  failed: boolean;
  jointPosRad: number[];
  rootPosM: number[] | null;
  rootQuatWxyz: number[] | null;
}

export class TrialLiveBatches {
  /** The robot's latest measured state (copied from the registry's stream). */
  private readonly latest = {
    jointPosRad: new Float64Array(JOINTS),
    rootPosM: null as Float64Array | null,
    rootQuatWxyz: null as Float64Array | null,
    have: false,
  };
  private runId: string | null = null;
  /** The robot's connection, known once watch() follows it. */
  private connectionId: string | null = null;
  private buffer: LiveSample[] = [];
  private failure: string | null = null;
  private readonly skipped = new Map<number, number>();
  private unsubscribe: (() => void) | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly hub: EventHub,
    private readonly jobId: string,
  ) {}

  /** Follows the robot's measured joint angles (for the live robot in the viewport) and starts the batch timer. */
  watch(registry: ConnectionRegistry, connectionId: string): void {
    const latest = this.latest;
    this.connectionId = connectionId;
    this.unsubscribe = registry.subscribe(
      connectionId,
      async (events: BackendEvent[]) => {
        for (let i = events.length - 1; i >= 0; i--) {
          const ev = events[i];
          if (ev.type !== 'frames' || ev.frames.length === 0) continue;
          const f = ev.frames[ev.frames.length - 1];
          latest.jointPosRad.set(f.jointPosRad.subarray(0, JOINTS));
          latest.rootPosM = f.rootPosM ? Float64Array.from(f.rootPosM) : null;
          latest.rootQuatWxyz = f.rootQuatWxyz ? Float64Array.from(f.rootQuatWxyz) : null;
          latest.have = true;
          break;
        }
      },
      'latest',
    );
    this.timer = setInterval(() => this.flush(), 1000 / PUSH_RATE_HZ);
    this.timer.unref?.();
  }

  /** Adds one live reading; `onNewRun` is called first when it starts another run's stream. */
  add(e: LiveEvent, onNewRun: () => void): void {
    if (this.runId !== e.runId) {
      this.runId = e.runId;
      this.buffer.length = 0;
      this.failure = null;
      onNewRun();
    }
    const l = this.latest;
    this.buffer.push({
      frame: e.frame,
      timeS: e.timeS,
      mpjpeLMm: e.mpjpeLMm,
      jointRmseRad: e.jointRmseRad,
      failed: e.failed,
      jointPosRad: l.have ? Array.from(l.jointPosRad) : new Array<number>(JOINTS).fill(0),
      rootPosM: l.rootPosM ? Array.from(l.rootPosM) : null,
      rootQuatWxyz: l.rootQuatWxyz ? Array.from(l.rootQuatWxyz) : null,
    });
    if (e.failed && this.failure === null) this.failure = e.failure ?? 'hard failure';
    if (this.buffer.length > MAX_LIVE_BUFFER) {
      const drop = this.buffer.length - MAX_LIVE_BUFFER;
      this.buffer.splice(0, drop);
      for (const id of this.hub.clientIds()) this.skipped.set(id, (this.skipped.get(id) ?? 0) + drop);
    }
    // A failure is shown the moment it trips: flush now rather than at the next tick.
    if (e.failed && this.buffer.length === 1) this.flush();
  }

  /** Sends the live samples gathered since the last batch to every client that keeps up. */
  flush(): void {
    const buf = this.buffer;
    const { runId, connectionId } = this;
    if (buf.length === 0 || runId === null || connectionId === null) return;
    this.buffer = [];
    const n = buf.length;
    const hasRoot = buf.every((x) => x.rootPosM !== null);
    // Without a global root (no motion capture) the IMU's heading is in the robot's own frame: the
    // console then draws the robot at the reference root pose and says so, so no orientation either.
    const hasQuat = hasRoot && buf.every((x) => x.rootQuatWxyz !== null);
    const base = {
      type: 'live.frames' as const,
      source: 'trial_job' as const,
      connectionId,
      runId,
      jobId: this.jobId,
      count: n,
      firstFrame: null,
      frame: buf.map((x) => x.frame),
      timeS: buf.map((x) => x.timeS),
      jointPosRad: buf.flatMap((x) => x.jointPosRad),
      rootPosM: hasRoot ? buf.flatMap((x) => x.rootPosM!) : null,
      rootQuatWxyz: hasQuat ? buf.flatMap((x) => x.rootQuatWxyz!) : null,
      readings: {
        mpjpeLMm: buf.map((x) => x.mpjpeLMm),
        jointRmseRad: buf.map((x) => x.jointRmseRad),
        firstFailureFrame: null,
        failed: buf.map((x) => x.failed),
        failure: this.failure,
      },
      ended: false,
    };
    const skipped = this.skipped;
    this.hub.broadcastTransient(
      (clientId) => ({ ...base, droppedFrames: skipped.get(clientId) ?? 0 }),
      (clientId) => skipped.set(clientId, (skipped.get(clientId) ?? 0) + n),
    );
  }

  /** Sends what is left, and stops following the robot and the batch timer. */
  stop(): void {
    this.flush();
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
