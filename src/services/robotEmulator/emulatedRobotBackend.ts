import { performance } from 'node:perf_hooks';
import type { BackendCapabilities, EpisodeEnd, EpisodeOutcome, RunRequest } from '../../domain/backend/backend';
import type { MotionClip } from '../../domain/motion/motionClip';
import { BuiltinTracker } from '../../domain/sim/builtinTracker';
import type { Controller } from '../../domain/wbc/controller';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import type { OnboardComputer } from './onboardComputer';
import type { CoreEpisodeEnd, RobotEmulatorCore } from './robotEmulatorCore';
import { robotSideCapabilities, RobotSideBackend } from './robotSideBackend';

/** The emulated robot as a Backend (robot mode of the bridge server). */
export class EmulatedRobotBackend extends RobotSideBackend {
  readonly id = 'robot-emulator';
  readonly name = 'MotionBench robot emulator (MuJoCo G1)';
  readonly capabilities: BackendCapabilities;
  episodes = 0;
  private prepared: { runId: string; controller: Controller } | null = null;
  /**
   * The binding the robot has loaded, kept across episodes as a robot PC keeps its policy: a
   * prepare of the same binding (id@version: its checkpoint hash and physics are part of the
   * version) reuses it after a reset instead of reading and loading it again.
   */
  private loaded: { key: string; controller: Controller } | null = null;

  constructor(
    private readonly core: RobotEmulatorCore,
    private readonly nominalNs: (tick: number) => number,
    mocap: boolean,
    /** Logs a change of what the motors do, with its cause. */
    private readonly motors: (what: string, cause: string) => void,
    /** The robot PC: where policies are loaded and run. */
    private readonly onboard: OnboardComputer,
    private readonly log: (line: string) => void,
  ) {
    super('a real robot cannot be put in an exact state (exact_reset false): a human puts it back');
    this.capabilities = robotSideCapabilities({ globalRootPosition: mocap, stateRateHz: Math.round(1 / core.dtS) });
  }

  /**
   * Loads the binding for `runId` (a prepare): a policy is loaded on the onboard computer (a worker
   * thread: this thread's 500 Hz loop and its lowstate stream go on meanwhile, as a G1's motor
   * board does while its PC loads a policy); a binding already loaded for an earlier episode is
   * reused. The builtin tracker has nothing to load and runs here.
   */
  async prepare(runId: string, binding: WbcBinding): Promise<void> {
    const key = bindingKey(binding);
    this.prepared = null;
    if (this.loaded?.key !== key) {
      this.unload();
      let controller: Controller;
      if (binding.kind === 'builtin') controller = new BuiltinTracker(binding, this.core.engine.jointCount);
      else {
        const c = await this.onboard.load(binding, this.core.engine.profile);
        this.log(`emulate-robot: the onboard computer loaded ${binding.id} in ${c.loadMs.toFixed(0)} ms`);
        controller = c;
      }
      // The emulated G1 streams joints, IMU and (its estimator's) root pose, no root velocity.
      const missing = controller.needs.filter((n) => n === 'base_lin_vel');
      if (missing.length > 0) {
        if (controller.dispose) await controller.dispose();
        throw new Error(
          `binding ${binding.id} needs ${missing.join(', ')} (a state estimate of the root velocity), which this robot does not stream; run a variant trained without state estimation (e.g. BeyondMimic's *_wose exports)`,
        );
      }
      this.loaded = { key, controller };
    }
    this.prepared = { runId, controller: this.loaded!.controller };
  }

  /** Frees the loaded binding (its ONNX session on the onboard computer), e.g. when the emulator closes. */
  unload(): void {
    const l = this.loaded;
    this.loaded = null;
    if (l?.controller.dispose) void Promise.resolve(l.controller.dispose()).catch(() => {});
  }

  /** The episode ended in the core (clip end, stop, e-stop): after its last sample, tell the bridge. */
  finishRun(end: CoreEpisodeEnd): void {
    this.endRun({
      runId: end.runId,
      outcome: end.outcome,
      reason: end.reason,
      frames: end.steps + 1,
      simSeconds: end.simSeconds,
    });
  }

  override async close(): Promise<void> {
    this.prepared = null;
  }

  /** Begins the episode synchronously at the next sample (the bridge asks its start right after). */
  protected startRun(runId: string, request: RunRequest): Promise<EpisodeEnd> {
    try {
      if (this.run) throw new Error(`run ${this.run.runId} is running`);
      let controller: Controller;
      if (this.prepared?.runId === runId) controller = this.prepared.controller;
      else if (request.binding.kind === 'builtin')
        controller = new BuiltinTracker(request.binding, this.core.engine.jointCount);
      else throw new Error(`binding ${request.binding.id} was not prepared`);
      const startTick = this.core.beginEpisode({
        runId,
        clip: request.clip as MotionClip,
        binding: request.binding,
        controller,
      });
      this.episodes++;
      this.motors(`tracking ${request.clip.name} with ${request.binding.id}`, `start of run ${runId}`);
      return new Promise<EpisodeEnd>((resolve) => {
        this.run = { runId, startNs: this.nominalNs(startTick), wallStartMs: performance.now(), resolve };
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  protected stopRun(outcome: EpisodeOutcome, reason: string): void {
    const end = this.core.endEpisode(outcome, reason);
    if (end) this.finishRun(end);
  }

  protected releaseRun(runId: string): void {
    if (this.run?.runId === runId) {
      const end = this.core.endEpisode('aborted_by_operator', 'lease released');
      if (end) this.finishRun(end);
    }
    if (this.prepared?.runId === runId) this.prepared = null;
  }

  protected override onRunEnded(end: Omit<EpisodeEnd, 'wallSeconds'>): void {
    this.motors(
      this.core.mode === 'damp' ? 'still damped' : 'standing, holding its pose',
      `run ${end.runId} ended ${end.outcome}: ${end.reason}`,
    );
  }
}
