import type {
  Backend,
  BackendCapabilities,
  BackendEvent,
  BackendLease,
  BackendListener,
  EpisodeEnd,
  EpisodeOutcome,
  InitialState,
  Presence,
  RunRequest,
} from '../../src/domain/backend/backend';
import { claimListener } from '../../src/domain/backend/backend';
import { createStateFrame, type StateFrame } from '../../src/domain/robot/stateFrame';
import { resampleClip } from '../../src/domain/motion/resample';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';

// A small deterministic Backend for bridge tests: "executes" a clip by replaying its reference
// resampled to 50 Hz, with a known offset on the joints (q = ref + 0.01·j) and torques
// (τ_j = 0.1·j), in batches that wait for the listener (backpressure). Runs as fast as the
// listener lets it; stop ends the episode at the next batch with the given outcome.

export interface FakeBackendOptions {
  globalRoot?: boolean;
  batch?: number;
  rateHz?: number;
  exactReset?: boolean;
}

export class FakeBackend implements Backend {
  readonly id = 'fake-sim';
  readonly name = 'fake simulator';
  readonly capabilities: BackendCapabilities;
  presence: Presence = 'present';
  listener: BackendListener | null = null;
  leased: string | null = null;
  readonly calls: string[] = [];
  resets: InitialState[] = [];
  closed = false;
  private readonly batch: number;

  constructor(private readonly opts: FakeBackendOptions = {}) {
    this.batch = opts.batch ?? 10;
    this.capabilities = {
      executionDomain: 'simulation',
      globalRootPosition: opts.globalRoot ?? true,
      rootOrientation: true,
      contacts: false,
      jointTorque: true,
      stateRateHz: opts.rateHz ?? 50,
      exactReset: opts.exactReset ?? true,
      bindingKinds: ['builtin', 'remote'],
    };
  }

  setListener(listener: BackendListener | null): void {
    this.listener = claimListener(this, this.listener, listener);
  }

  private async emit(events: BackendEvent[]): Promise<void> {
    if (this.listener) await this.listener(events);
  }

  async acquire(runId: string): Promise<BackendLease> {
    if (this.leased) throw new Error(`already leased by ${this.leased}`);
    this.leased = runId;
    this.calls.push(`acquire ${runId}`);
    let stopRequest: { outcome: EpisodeOutcome; reason: string } | null = null;
    let released = false;
    const rate = this.capabilities.stateRateHz;
    return {
      runId,
      reset: async (initial) => {
        this.calls.push(`reset ${runId}`);
        this.resets.push(initial);
      },
      run: async (request: RunRequest): Promise<EpisodeEnd> => {
        if (released) throw new Error('lease released');
        this.calls.push(`run ${runId} ${request.clip.id}`);
        stopRequest = null;
        const t0 = performance.now();
        const ref: MotionClip = resampleClip(request.clip, rate);
        const K = ref.frameCount;
        let k = 0;
        let last = 0;
        while (k < K) {
          if (stopRequest) break;
          const frames: StateFrame[] = [];
          for (let n = 0; n < this.batch && k < K; n++, k++)
            frames.push(fakeFrame(ref, k, rate, this.capabilities.globalRootPosition));
          last = frames[frames.length - 1].timeS;
          await this.emit([{ type: 'frames', runId, frames }]);
          await new Promise((r) => setImmediate(r));
        }
        const stopped = stopRequest as { outcome: EpisodeOutcome; reason: string } | null;
        const end: EpisodeEnd = {
          runId,
          outcome: stopped ? stopped.outcome : 'completed',
          reason: stopped ? stopped.reason : 'clip completed',
          frames: k,
          simSeconds: last,
          wallSeconds: (performance.now() - t0) / 1000,
        };
        await this.emit([{ type: 'episode_end', end }]);
        this.calls.push(`end ${runId} ${end.outcome}`);
        return end;
      },
      stop: async (outcome, reason) => {
        this.calls.push(`stop ${runId} ${outcome}`);
        stopRequest = { outcome, reason };
      },
      release: async () => {
        if (released) return;
        released = true;
        this.calls.push(`release ${runId}`);
        if (this.leased === runId) this.leased = null;
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Frame k of the fake execution of a 50 Hz-resampled reference. */
export function fakeFrame(ref: MotionClip, k: number, rate: number, withRoot: boolean): StateFrame {
  const f = createStateFrame(withRoot);
  f.timeS = k / rate;
  f.tick = k;
  const J = G1_NUM_JOINTS;
  for (let j = 0; j < J; j++) {
    f.jointPosRad[j] = ref.jointPosRad[k * J + j] + 0.01 * j;
    f.jointVelRadS[j] = k > 0 ? (ref.jointPosRad[k * J + j] - ref.jointPosRad[(k - 1) * J + j]) * rate : 0;
    f.jointTauNm[j] = 0.1 * j;
  }
  if (f.rootPosM) f.rootPosM.set(ref.rootPosM.subarray(k * 3, k * 3 + 3));
  f.rootQuatWxyz!.set(ref.rootQuatWxyz.subarray(k * 4, k * 4 + 4));
  f.imu.quatWxyz.set(ref.rootQuatWxyz.subarray(k * 4, k * 4 + 4));
  f.imu.accelMS2[2] = 9.81;
  f.referenceFrame = k;
  return f;
}
