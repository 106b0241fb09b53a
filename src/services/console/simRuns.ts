import { placedClip } from '../../domain/sim/referencePlacement';
import type {
  ApiParams,
  SimBindingInfo,
  SimEndEvent,
  SimRunResult,
  SimRunStarted,
  SimRunState,
} from '../../api/contract';
import type { BackendEvent, BackendLease, EpisodeEnd } from '../../domain/backend/backend';
import {
  allReadingsUnavailable,
  ClipPairEvaluator,
  MB_METRICS_1,
  type EpisodeMetrics,
  type HardFailure,
} from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { clipHead } from '../../domain/sim/clipWindow';
import { initialStateFromClipFrame } from '../../domain/sim/initialState';
import { simDuringRealTrialRefusal } from '../../domain/sim/simDuringRealTrial';
import { simRunOutcome } from '../../domain/sim/simRunOutcome';
import { bindingTracksClip, type WbcBinding } from '../../domain/wbc/wbcBinding';
import { ApiFailure } from './apiFailure';
import type { ClipCache } from './clipCache';
import type { ConnectionRegistry } from './connectionRegistry';
import type { DisplaySource, EventClient, EventHub, LiveBatch } from './eventHub';
import type { PolicyRegistry } from './policyRegistry';
import { SimRecording } from './simRecording';

// Console simulation runs (sim.run / sim.stop / sim.result): one episode of a loaded clip on one
// connection under a builtin binding. The run leases the connection's backend through the
// registry (acquire, bound to the run id), subscribes to its frames (registry.subscribe, so the
// registry's rate meter and other consumers keep working), resets it to the clip's first frame
// placed on the floor, runs the clip, and records every executed frame. The caller sees the
// frames live through the EventHub and, at the end, the outcome, the batch mb-metrics/1 readings
// of the recording against the reference (the `motionbench metrics` numbers) and the trajectory
// sha256.
//
// Stops are outcomes (aborted_by_operator), never errors: a stop before the backend began ends the
// run with no frames; a stop while it runs ends it with the frames so far. A client that goes
// away stops the runs it started (an unwatched simulation only holds the backend).

/** Ended runs kept for sim.result (their recordings), most recent last. */
export const KEEP_ENDED_RUNS = 16;

/** How long stop keeps re-signalling a backend that has not ended yet, ms between tries. */
const STOP_RETRY_MS = [10, 20, 30, 50, 100, 150, 250, 500, 1000, 2000, 4000, 8000];

/** Worker batch size while paced: 2 frames = 25 batches a second at real time. */
const PACED_FRAMES_PER_BATCH = 2;

let serial = 0;

interface StopRequest {
  reason: string;
  atMs: number;
}

type EndCore = Omit<SimEndEvent, 'seq' | 'droppedFrames'>;

class ConsoleSimRun implements DisplaySource {
  state: SimRunState = 'starting';
  readonly rec: SimRecording;
  end: EndCore | null = null;
  stop: StopRequest | null = null;
  lease: BackendLease | null = null;
  refusedFrames = 0;
  private stopLoop = false;
  readonly ended: Promise<void>;
  private resolveEnded!: () => void;

  constructor(
    readonly runId: string,
    readonly started: SimRunStarted,
    readonly clip: MotionClip,
    readonly binding: WbcBinding,
    jointCount: number,
    readonly owner: EventClient | null,
  ) {
    this.rec = new SimRecording(jointCount, Math.min(1 << 16, started.plannedFrames + 8));
    this.ended = new Promise((r) => (this.resolveEnded = r));
  }

  finish(end: EndCore): void {
    this.end = end;
    this.state = 'ended';
    this.resolveEnded();
  }

  /** Signals the stop to the backend until the run ends (a stop can land before the episode exists). */
  kickStop(): void {
    if (this.stopLoop || !this.lease || !this.stop || this.state === 'ended') return;
    this.stopLoop = true;
    const lease = this.lease;
    const reason = this.stop.reason;
    void (async () => {
      for (let i = 0; this.state !== 'ended'; i++) {
        void lease.stop('aborted_by_operator', reason).catch(() => undefined);
        await Promise.race([
          this.ended,
          new Promise((r) => setTimeout(r, STOP_RETRY_MS[Math.min(i, STOP_RETRY_MS.length - 1)])),
        ]);
        if (i > 40) break; // ~5 min: the backend's own timeouts take over
      }
    })();
  }

  recordedFrames(): number {
    return this.rec.count;
  }

  frameTimeS(i: number): number {
    return this.rec.timeS[i];
  }

  framesBatch(from: number, to: number): LiveBatch {
    const r = this.rec;
    const J = r.jointCount;
    const nullable = (v: number): number | null => (Number.isFinite(v) ? v : null);
    const readings = {
      mpjpeLMm: [] as (number | null)[],
      jointRmseRad: [] as (number | null)[],
      firstFailureFrame: [] as (number | null)[],
      failed: null,
      failure: null,
    };
    for (let i = from; i < to; i++) {
      readings.mpjpeLMm.push(nullable(r.liveMpjpeLMm[i]));
      readings.jointRmseRad.push(nullable(r.liveJointRmseRad[i]));
      readings.firstFailureFrame.push(nullable(r.liveFailFrame[i]));
    }
    return {
      type: 'live.frames',
      source: 'sim_run',
      connectionId: this.started.connectionId,
      runId: this.runId,
      jobId: null,
      count: to - from,
      firstFrame: from,
      frame: null,
      timeS: Array.from(r.timeS.subarray(from, to)),
      jointPosRad: Array.from(r.jointPosRad.subarray(J * from, J * to)),
      rootPosM: r.hasRootPosition === false ? null : Array.from(r.rootPosM.subarray(3 * from, 3 * to)),
      rootQuatWxyz: r.hasRootOrientation === false ? null : Array.from(r.rootQuatWxyz.subarray(4 * from, 4 * to)),
      readings,
      ended: false,
    };
  }

  endEvent(): EndCore | null {
    return this.end;
  }

  result(): SimRunResult {
    const r = this.rec;
    const n = r.count;
    return {
      runId: this.runId,
      state: this.state,
      started: this.started,
      end: this.end ? { ...this.end, seq: 0, droppedFrames: 0 } : null,
      trajectory: {
        frames: n,
        timeS: Array.from(r.timeS.subarray(0, n)),
        rootPosM: r.hasRootPosition === false ? null : Array.from(r.rootPosM.subarray(0, 3 * n)),
        rootQuatWxyz: r.hasRootOrientation === false ? null : Array.from(r.rootQuatWxyz.subarray(0, 4 * n)),
        jointPosRad: Array.from(r.jointPosRad.subarray(0, r.jointCount * n)),
      },
    };
  }
}

export interface SimRunManagerOptions {
  registry: ConnectionRegistry;
  clips: ClipCache;
  hub: EventHub;
  /** The console's robot model (the contract's FK model; the embedded simulator runs the same file). */
  profile: () => RobotProfile;
  /** Resolves a console binding spec (builtin…, or an opened policy's id). */
  bindings: Pick<PolicyRegistry, 'resolve'>;
  /** The real-robot work running in these services (a trial job, a calibration capture); null when none. */
  realRobotWork?: () => string | null;
  now?: () => number;
}

/** Readings of a run with fewer than two frames: every reading unavailable, with the reason. */
function unavailableMetrics(frames: number, why: string): EpisodeMetrics {
  return allReadingsUnavailable(MB_METRICS_1.id, frames, `the run recorded ${frames} frame(s): ${why}`);
}

export function bindingInfo(spec: string, b: WbcBinding): SimBindingInfo {
  return {
    spec,
    kind: b.kind,
    id: b.id,
    version: b.version,
    label: b.label,
    assistNPerM: b.kind === 'builtin' && b.rootAssist ? b.rootAssist.kpNPerM : null,
  };
}

export class SimRunManager {
  private readonly runs = new Map<string, ConsoleSimRun>();
  /** connection id → the run starting or running on it. */
  private readonly busy = new Map<string, string>();
  private readonly now: () => number;
  private evaluator: ClipPairEvaluator | null = null;
  private closed = false;

  constructor(private readonly o: SimRunManagerOptions) {
    this.now = o.now ?? Date.now;
  }

  async run(params: ApiParams<'sim.run'>, owner: EventClient | null): Promise<SimRunStarted> {
    if (this.closed) throw new ApiFailure('conflict', 'the console services are shutting down');
    let info: ReturnType<ConnectionRegistry['get']>;
    try {
      info = this.o.registry.get(params.connectionId);
    } catch {
      throw new ApiFailure('not_found', `no connection "${params.connectionId}"`, 'params.connectionId');
    }
    const refusal = simDuringRealTrialRefusal({
      realWork: this.o.realRobotWork?.() ?? null,
      embedded: info.kind === 'embedded_simulator',
      url: info.kind === 'remote_simulator' ? info.url : null,
      override: params.allowDuringRealTrial === true,
    });
    if (refusal) throw new ApiFailure('conflict', refusal, 'params.allowDuringRealTrial');
    const full = this.o.clips.get(params.clipId);
    if (!full) {
      throw new ApiFailure(
        'not_found',
        `clip ${params.clipId} is not loaded in the console services (it may have been evicted): open it again`,
        'params.clipId',
      );
    }
    const holder = this.busy.get(params.connectionId) ?? info.leasedRunId;
    if (holder)
      throw new ApiFailure(
        'conflict',
        `${info.name} is in use by run ${holder}: stop it or wait for its end`,
        'params.connectionId',
      );
    const binding = await this.o.bindings.resolve(params.binding, 'params.binding');
    if (!bindingTracksClip(binding, full.id))
      throw new ApiFailure(
        'bad_params',
        `${binding.id} tracks only the motion baked into it (${binding.kind === 'onnx' && binding.family ? binding.bakedClipId : ''}); open that clip (it came with the policy) to run it`,
        'params.binding',
      );
    const clip = params.maxSeconds !== undefined ? clipHead(full, params.maxSeconds) : full;
    const profile = this.o.profile();
    const runId = `sim-${this.now().toString(36)}-${++serial}`;
    const durationS = (clip.frameCount - 1) / clip.fps;
    const started: SimRunStarted = {
      runId,
      connectionId: params.connectionId,
      clipId: full.id,
      binding: bindingInfo(params.binding, binding),
      seed: params.seed ?? 0,
      paceRealTime: params.paceRealTime === undefined ? 1 : params.paceRealTime,
      durationS,
      plannedFrames: Math.floor(durationS * MB_METRICS_1.rateHz + 1e-9) + 1,
    };
    // Checked again: resolveBindingSpec awaited, and another run may have taken the connection.
    const again = this.busy.get(params.connectionId);
    if (again)
      throw new ApiFailure(
        'conflict',
        `${info.name} is in use by run ${again}: stop it or wait for its end`,
        'params.connectionId',
      );
    const run = new ConsoleSimRun(runId, started, clip, binding, profile.joints.length, owner);
    this.runs.set(runId, run);
    this.busy.set(params.connectionId, runId);
    if (owner) {
      this.o.hub.watch(owner, run);
      const off = owner.onDetach(() => this.stopRun(run, 'the console that started the run disconnected'));
      void run.ended.then(off);
    }
    void this.execute(run, profile);
    return started;
  }

  private record(run: ConsoleSimRun, events: BackendEvent[]): void {
    for (const e of events) {
      if (e.type !== 'frames' || e.runId !== run.runId) continue;
      const extras =
        'sim' in e
          ? (
              e as {
                sim?: {
                  extras?: {
                    live?: { mpjpeLMm: number | null; jointRmseRad: number | null; firstFailureFrame: number };
                  }[];
                };
              }
            ).sim?.extras
          : undefined;
      for (let i = 0; i < e.frames.length; i++) {
        const live = extras?.[i]?.live ?? null;
        if (!run.rec.append(e.frames[i], live)) run.refusedFrames++;
      }
    }
    if (run.rec.count > 0 && run.state === 'starting') run.state = 'running';
    this.o.hub.wake();
  }

  private async execute(run: ConsoleSimRun, profile: RobotProfile): Promise<void> {
    const { connectionId } = run.started;
    const startMs = this.now();
    let unsubscribe: () => void = () => {};
    let lease: BackendLease | null = null;
    let end: EpisodeEnd | null = null;
    let failedReason: string | null = null;
    try {
      unsubscribe = this.o.registry.subscribe(connectionId, async (events) => this.record(run, events));
      lease = await this.o.registry.acquire(connectionId, run.runId);
      run.lease = lease;
      if (!run.stop) await lease.reset(initialStateFromClipFrame(run.clip));
      if (!run.stop) {
        run.state = 'running';
        const pace = run.started.paceRealTime;
        const options = { paceRealTime: pace, ...(pace !== null ? { framesPerBatch: PACED_FRAMES_PER_BATCH } : {}) };
        const request = { clip: run.clip, binding: run.binding, seed: run.started.seed, options };
        const running = lease.run(request);
        run.kickStop(); // a stop that arrived while reset() ran
        end = await running;
      }
    } catch (err) {
      failedReason = err instanceof Error ? err.message : String(err);
    } finally {
      unsubscribe();
      if (lease) await lease.release().catch(() => undefined);
      if (this.busy.get(connectionId) === run.runId) this.busy.delete(connectionId);
    }

    const frames = run.rec.count;
    const { outcome, reason } = simRunOutcome({
      end,
      stopReason: run.stop?.reason ?? null,
      failedReason,
      frames,
      plannedFrames: run.started.plannedFrames,
      connectionId,
    });
    if (run.refusedFrames > 0) {
      this.o.registry.reportProblem(connectionId, {
        severity: 'warn',
        code: 'frames_refused',
        message: `run ${run.runId}: ${run.refusedFrames} frame(s) refused (time going backwards or a wrong joint count)`,
        atMs: this.now(),
      });
    }

    const simEnd = end as
      | (EpisodeEnd & {
          trajectorySha256?: string;
          plannedFrames?: number;
          failure?: HardFailure | null;
          referenceLiftM?: number | null;
        })
      | null;
    const referenceLiftM = simEnd?.referenceLiftM ?? 0;
    let metrics: EpisodeMetrics;
    try {
      if (frames >= 2) {
        // Without a global root position (no motion capture) the heading is not known either.
        const pos = run.rec.hasRootPosition === true;
        const caps = { hasGlobalRootPosition: pos, hasGlobalRootHeading: pos };
        const exec = run.rec.onTimeline(MB_METRICS_1.rateHz);
        this.evaluator ??= new ClipPairEvaluator(MB_METRICS_1, profile);
        // Against the reference as placed for the run (the simulator's lift; 0 from a robot).
        metrics = this.evaluator.evaluate(placedClip(run.clip, referenceLiftM), exec, caps).metrics;
      } else metrics = unavailableMetrics(frames, reason);
    } catch (err) {
      metrics = unavailableMetrics(
        frames,
        `the readings could not be computed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const failure =
      simEnd?.failure !== undefined ? simEnd.failure : metrics.failure.available ? metrics.failure.value : null;
    run.finish({
      type: 'sim.end',
      runId: run.runId,
      outcome,
      reason,
      frames,
      plannedFrames: simEnd?.plannedFrames ?? run.started.plannedFrames,
      simSeconds: frames > 0 ? run.rec.timeS[frames - 1] : 0,
      wallSeconds: end ? end.wallSeconds : (this.now() - startMs) / 1000,
      trajectorySha256: typeof simEnd?.trajectorySha256 === 'string' ? simEnd.trajectorySha256 : null,
      failure: failure ? { ...failure } : null,
      referenceLiftM,
      metrics: JSON.parse(JSON.stringify(metrics)) as SimEndEvent['metrics'],
      stopRequestedAtMs: run.stop?.atMs ?? null,
    });
    this.o.hub.ended(run);
    this.prune();
  }

  private prune(): void {
    const ended = [...this.runs.values()].filter((r) => r.state === 'ended');
    for (const r of ended.slice(0, Math.max(0, ended.length - KEEP_ENDED_RUNS))) this.runs.delete(r.runId);
  }

  private stopRun(run: ConsoleSimRun, reason: string): boolean {
    if (run.state === 'ended') return false;
    run.stop ??= { reason, atMs: this.now() };
    run.kickStop();
    return true;
  }

  /** Stops one run (not_found for an unknown id) or every run; lists the runs it reached. */
  stop(params: ApiParams<'sim.stop'>): { stopped: string[] } {
    const reason = params.reason ?? 'operator stop';
    if (params.all) {
      const stopped = [...this.runs.values()].filter((r) => this.stopRun(r, reason)).map((r) => r.runId);
      return { stopped };
    }
    const run = this.runs.get(params.runId!);
    if (!run) throw new ApiFailure('not_found', `no run "${params.runId}"`, 'params.runId');
    return { stopped: this.stopRun(run, reason) ? [run.runId] : [] };
  }

  result(runId: string): SimRunResult {
    const run = this.runs.get(runId);
    if (!run)
      throw new ApiFailure(
        'not_found',
        `no run "${runId}" (only the last ${KEEP_ENDED_RUNS} ended runs are kept)`,
        'params.runId',
      );
    return run.result();
  }

  /** Runs not yet ended. */
  active(): string[] {
    return [...this.runs.values()].filter((r) => r.state !== 'ended').map((r) => r.runId);
  }

  /** Stops every run and waits (bounded) for their ends. */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.runs.values()].filter((r) => this.stopRun(r, 'the console services are shutting down'));
    await Promise.race([Promise.all(open.map((r) => r.ended)), new Promise((r) => setTimeout(r, 3000).unref())]);
  }
}
