import { performance } from 'node:perf_hooks';
import type { BackendCapabilities, EpisodeEnd, EpisodeOutcome, RunRequest } from '../../domain/backend/backend';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import { robotSideCapabilities, RobotSideBackend } from '../robotEmulator/robotSideBackend';
import type { FromRunnerWorker, ToRunnerWorker } from './g1RunnerProtocol';

/**
 * The G1 runner as a Backend (robot mode of the bridge server): prepare, start and stop are asked
 * of the real-time thread, which answers each by id; its frames and episode ends come back here.
 */
export class RunnerBackend extends RobotSideBackend {
  readonly id = 'g1-runner';
  readonly name = 'MotionBench G1 runner (Unitree G1 over DDS)';
  readonly capabilities: BackendCapabilities = robotSideCapabilities({ globalRootPosition: false, stateRateHz: 500 });
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (m: string) => void; reject: (e: Error) => void }>();
  /** The run whose prepare (the ramp) is under way, if any. */
  private preparing: string | null = null;

  constructor(
    private readonly toWorker: (m: ToRunnerWorker) => void,
    private readonly nowNs: () => number,
  ) {
    super('a real robot cannot be put in an exact state (exact_reset false)');
  }

  /** The real-time thread's answer to request `id`. */
  reply(id: number, ok: boolean, message: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (ok) p.resolve(message);
    else p.reject(new Error(message));
  }

  prepare(runId: string, clip: MotionClip, binding: WbcBinding): Promise<void> {
    this.preparing = runId;
    return this.ask((id) => ({ type: 'prepare', id, runId, clip, binding }))
      .then(() => undefined)
      .finally(() => {
        if (this.preparing === runId) this.preparing = null;
      });
  }

  finishRun(m: Extract<FromRunnerWorker, { type: 'episode_end' }>): void {
    this.endRun({ runId: m.runId, outcome: m.outcome, reason: m.reason, frames: m.frames, simSeconds: m.simSeconds });
  }

  protected startRun(runId: string, _request: RunRequest): Promise<EpisodeEnd> {
    if (this.run) return Promise.reject(new Error(`run ${this.run.runId} is running`));
    const startNs = this.nowNs();
    return new Promise<EpisodeEnd>((resolve, reject) => {
      this.run = { runId, startNs, wallStartMs: performance.now(), resolve };
      this.ask((id) => ({ type: 'start', id, runId, startNs })).catch((err: Error) => {
        if (this.run?.runId === runId) this.run = null;
        reject(err);
      });
    });
  }

  protected stopRun(_outcome: EpisodeOutcome, reason: string): void {
    this.toWorker({ type: 'stop', reason });
  }

  /** A running episode, or a ramp under way, ends: the robot holds where it is. */
  protected releaseRun(runId: string): void {
    if (this.run?.runId === runId || this.preparing === runId)
      this.toWorker({ type: 'stop', reason: 'lease released' });
  }

  private ask(build: (id: number) => ToRunnerWorker): Promise<string> {
    const id = ++this.seq;
    return new Promise<string>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.toWorker(build(id));
    });
  }
}
