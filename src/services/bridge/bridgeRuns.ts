import type { Backend, BackendLease, EpisodeEnd, EpisodeOutcome } from '../../domain/backend/backend';
import type { CommandAck, WbcState, WbcStatusMsg } from '../../domain/bridge/g1BridgeContract';
import {
  nextBridgeSessionState,
  type BridgeSessionEvent,
  type EpisodeStopCause,
  type RobotMotorFacts,
} from '../../domain/bridge/g1BridgeServerState';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { StreamedEpisode } from './bridgeStream';
import type { RobotBridgeHooks } from './robotBridgeHooks';

// The g1-bridge/1 server's runs: the backend lease, the prepared clip, the running episode, the
// last one's result, and the state they put the session in (the reducer of
// src/domain/bridge/g1BridgeServerState.ts), which every wbc_status reports.
//
// An episode ends when the backend's run() resolves (or rejects: infrastructure_error), after the
// listener has published the frames the backend produced; a stop only asks the lease to stop and
// marks why, the end follows from the run.

export interface PreparedRun {
  clip: MotionClip;
  binding: WbcBinding;
  seed: number;
}

export interface RunningEpisode extends StreamedEpisode {
  runId: string;
  /** Robot mode: the run began by lease.run(), its promise. */
  robotRun?: Promise<EpisodeEnd>;
  listenerEnded: boolean;
  done: Promise<void>;
}

export interface BridgeRunsOptions {
  backend: Backend;
  robot: RobotBridgeHooks | null;
  /** Prefix of the run ids the server makes up: unique per session. */
  sessionTag: string;
  /** Time 0 of a simulator episode starting now, given the state period. */
  episodeStartNs: (periodNs: number) => number;
  /** The stamp of a status sent now. */
  statusStampNs: () => number;
  /** Publishes the status (with `ack` if given). */
  publishStatus: (ack?: CommandAck) => void;
  log: (line: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class BridgeRuns {
  private current: WbcState = 'idle';
  private reason = '';
  private held: BackendLease | null = null;
  private preparedRun: PreparedRun | null = null;
  private running: RunningEpisode | null = null;
  private lastEpisode: {
    runId: string;
    clipId: string;
    frame: number;
    startNs: number;
    outcome: EpisodeOutcome;
    reason: string;
  } | null = null;
  private runCounter = 0;
  private listenerBusy = 0;
  /** The robot's facts the state rules read (a simulator: none). */
  readonly robotFacts: RobotMotorFacts;

  constructor(private readonly o: BridgeRunsOptions) {
    this.robotFacts = {
      isDamping: () => this.o.robot?.isDamping() ?? false,
      isStanding: () => this.o.robot?.isStanding?.() ?? false,
    };
  }

  get state(): WbcState {
    return this.current;
  }

  get lease(): BackendLease | null {
    return this.held;
  }

  get prepared(): PreparedRun | null {
    return this.preparedRun;
  }

  get episode(): RunningEpisode | null {
    return this.running;
  }

  /** Changes the state; `publish` false when an ack (which carries the state) follows at once. */
  apply(event: BridgeSessionEvent, reason: string, publish = true): void {
    this.current = nextBridgeSessionState(this.current, event);
    this.reason = reason;
    if (publish) this.o.publishStatus();
  }

  /** The lease for `runId` (any held one when null): the held one if it matches, else a new one. */
  async ensureLease(runId: string | null): Promise<BackendLease> {
    if (this.held && (runId === null || runId === this.held.runId)) return this.held;
    if (this.held) {
      const old = this.held;
      this.held = null;
      await old.release();
    }
    const id = runId ?? `serve-${this.o.sessionTag}-${++this.runCounter}`;
    this.held = await this.o.backend.acquire(id);
    return this.held;
  }

  /** Lets go of the held lease (its release failing is nobody's concern); null when none is held. */
  releaseLease(): Promise<void> | null {
    if (!this.held) return null;
    const lease = this.held;
    this.held = null;
    return lease.release().catch(() => {});
  }

  /** A prepare succeeded: the clip is ready to start; the last episode is history. */
  setPrepared(prepared: PreparedRun): void {
    this.preparedRun = prepared;
    this.lastEpisode = null;
  }

  dropPrepared(): void {
    this.preparedRun = null;
  }

  /** A reset succeeded: the last episode is history. */
  forgetLastEpisode(): void {
    this.lastEpisode = null;
  }

  /** The backend's listener is handling events (an episode ends only once it is done). */
  listenerEnter(): void {
    this.listenerBusy++;
  }

  listenerLeave(): void {
    this.listenerBusy--;
  }

  /** The backend said the run ended: its last frames are in the listener's hands. */
  listenerEnded(runId: string): void {
    if (this.running && this.running.runId === runId) this.running.listenerEnded = true;
  }

  /** Starts the prepared episode on `lease`; the tracking status goes out with `ack` before the backend can produce a frame. */
  startEpisode(lease: BackendLease, prepared: PreparedRun, ack: CommandAck): void {
    const robot = this.o.robot;
    const periodNs = Math.round(1e9 / Math.max(1, this.o.backend.capabilities.stateRateHz));
    // Robot mode: the robot begins the episode in run() (at its next sample) and says when its time 0 is.
    const robotRun = robot
      ? lease.run({ clip: prepared.clip, binding: prepared.binding, seed: prepared.seed })
      : undefined;
    const robotStart = robot ? robot.episodeStartNs(lease.runId) : null;
    const startNs = robotStart ?? this.o.episodeStartNs(periodNs);
    let resolveDone!: () => void;
    const ep: RunningEpisode = {
      runId: lease.runId,
      clip: prepared.clip,
      startNs,
      wallStartMs: performance.now(),
      frames: 0,
      lastTimeS: 0,
      refFrame: 0,
      stopCause: null,
      droppedAfterStop: 0,
      robotRun,
      listenerEnded: false,
      done: new Promise<void>((r) => (resolveDone = r)),
    };
    this.running = ep;
    this.apply({ type: 'started' }, `tracking ${prepared.clip.name}`, false);
    this.o.publishStatus(ack);
    const wallT0 = performance.now();
    (robotRun ?? lease.run({ clip: prepared.clip, binding: prepared.binding, seed: prepared.seed }))
      .then(
        (end) => end,
        (err): EpisodeEnd => ({
          runId: ep.runId,
          outcome: 'infrastructure_error',
          reason: `backend run failed: ${(err as Error)?.message ?? String(err)}`,
          frames: ep.frames,
          simSeconds: ep.lastTimeS,
          wallSeconds: (performance.now() - wallT0) / 1000,
        }),
      )
      .then(async (end) => {
        // Frames are published by the listener, possibly after run() resolved: let it finish.
        for (let i = 0; i < 200 && !ep.listenerEnded && this.listenerBusy > 0; i++) await sleep(5);
        await new Promise((r) => setImmediate(r));
        while (this.listenerBusy > 0) await sleep(5);
        await this.finishEpisode(ep, lease, end);
      })
      .catch((err) => this.o.log(`serve: finishing run ${ep.runId} failed: ${(err as Error)?.message ?? String(err)}`))
      .finally(() => resolveDone());
  }

  /** Asks the lease to stop the running episode, noting the first cause; its end follows from the run. */
  async stopEpisode(
    cause: EpisodeStopCause,
    outcome: 'aborted_by_operator' | 'estop' | 'intervention',
    reason: string,
  ): Promise<{ ok: true } | { ok: false; error: string }> {
    const ep = this.running;
    const lease = this.held;
    if (!ep || !lease) return { ok: true };
    ep.stopCause ??= cause;
    try {
      await lease.stop(outcome, reason);
      return { ok: true };
    } catch (err) {
      return { ok: false, error: (err as Error)?.message ?? String(err) };
    }
  }

  /** The server is closing: stops the running episode (waiting up to 5 s for its end) and releases the lease. */
  async shutdown(): Promise<void> {
    const ep = this.running;
    if (ep && this.held) {
      ep.stopCause = 'shutdown';
      await this.held.stop('aborted_by_operator', 'bridge server shutting down').catch(() => {});
      await Promise.race([ep.done, sleep(5000)]);
    }
    if (this.held) await this.held.release().catch(() => {});
    this.held = null;
  }

  private async finishEpisode(ep: RunningEpisode, lease: BackendLease, end: EpisodeEnd): Promise<void> {
    if (this.running !== ep) return;
    this.running = null;
    if (this.held === lease) this.held = null;
    await lease
      .release()
      .catch((err) => this.o.log(`serve: release of ${ep.runId} failed: ${(err as Error)?.message ?? String(err)}`));
    this.preparedRun = null;
    let reason = end.reason;
    if (ep.droppedAfterStop > 0)
      reason += ` (${ep.droppedAfterStop} frames computed after the stop were not published)`;
    this.lastEpisode = {
      runId: ep.runId,
      clipId: ep.clip.id,
      frame: ep.refFrame,
      startNs: ep.startNs,
      outcome: end.outcome,
      reason,
    };
    const event: BridgeSessionEvent = {
      type: 'episode_ended',
      cause: ep.stopCause,
      outcome: end.outcome,
      robot: this.robotFacts,
    };
    this.o.log(`serve: run ${ep.runId} ended: ${end.outcome} after ${ep.frames} frames (${reason})`);
    this.apply(event, reason);
  }

  /** The wbc_status now (with `ack` when answering a command). */
  statusMessage(ack?: CommandAck): WbcStatusMsg {
    const ep = this.running;
    const last = this.lastEpisode;
    const clipId = ep?.clip.id ?? this.preparedRun?.clip.id ?? last?.clipId ?? null;
    const msg: WbcStatusMsg = {
      state: this.current,
      clip_id: clipId,
      frame: ep ? ep.refFrame : last ? last.frame : null,
      stamp_ns: this.o.statusStampNs(),
      run_id: ep?.runId ?? this.held?.runId ?? last?.runId ?? null,
      episode_start_ns: ep?.startNs ?? last?.startNs ?? null,
      outcome: ep ? null : (last?.outcome ?? null),
      reason: this.reason,
    };
    if (ack) msg.ack = ack;
    const runner = this.o.robot?.runnerStatus?.();
    if (runner) msg.runner = runner;
    return msg;
  }
}
