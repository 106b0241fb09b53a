import { performance } from 'node:perf_hooks';
import { vi } from 'vitest';
import type {
  BackendCapabilities,
  BackendEvent,
  BackendLease,
  BackendListener,
  EpisodeEnd,
  EpisodeOutcome,
  Presence,
  RobotBackend,
  RobotLinkCapabilities,
  RobotLinkStats,
  RunRequest,
  StopDelivery,
} from '../../src/domain/backend/backend';
import { realRobotCapabilities } from './robotCapabilities';
import { claimListener } from '../../src/domain/backend/backend';
import { createStateFrame, type StateFrame } from '../../src/domain/robot/stateFrame';
import { wireStopOutcome, type StopOutcome, type WbcStatusMsg } from '../../src/domain/bridge/g1BridgeContract';
import type { DeviceState, InterlockSnapshot, InterlockState } from '../../src/domain/interlock';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import type { GateEvent } from '../../src/domain/safety/safetyTypes';
import type { ArmResult, DisarmResult, InterlockLink } from '../../src/services/interlock/serialInterlock';
import type { InterlockFeed } from '../../src/services/trial/interlockFeed';

// Test doubles for unit tests of the matched trial runner (src/services/trial/matchedTrialRunner.ts):
// a robot and an interlock box whose every answer the test scripts, and a clock the test can step.
//
//   SteppedClock     — performance.now() (the safety gate driver's clock) plus an offset the test
//                      advances: "70 ms pass without a lowstate" without waiting 70 ms, so a gate
//                      condition fails at an exact age, independent of how loaded the machine is;
//                      or frozen, so that a stall cannot age anything.
//   ScriptedRobot    — a real_robot Backend (and the unleased stop/damp path of a g1-bridge/1
//                      client) standing still at a given pose. It streams that pose faster than
//                      real time (a stillness window fills in ~0.2 s), answers each prepare as the
//                      test says, calls RunRequest.beforeStart and mayTransmit like BridgeClientBackend
//                      (any stop or damp latches the run: no start after it), and records every command it
//                      receives, so "no start was sent" is a fact the test can check.
//   ScriptedInterlock — an InterlockFeed whose box says ARMED/SAFE as the test decides, answers ARM
//                      as scripted, and heartbeats its status to the gate every 20 ms.

/** performance.now() shifted by an offset the test advances, or frozen (installs a spy; restore() removes it). */
export class SteppedClock {
  private offsetMs = 0;
  private frozenAtMs: number | null = null;
  private readonly realNow = performance.now.bind(performance);
  private readonly spy = vi.spyOn(performance, 'now').mockImplementation(() => this.now());

  now(): number {
    return this.frozenAtMs ?? this.realNow() + this.offsetMs;
  }

  /** Time jumps forward by `ms` at once: no timer runs in between. */
  advance(ms: number): void {
    if (this.frozenAtMs !== null) this.frozenAtMs += ms;
    else this.offsetMs += ms;
  }

  /** Time stands still (a stall of the machine cannot age anything) until thaw(). */
  freeze(): void {
    this.frozenAtMs ??= this.now();
  }

  /** Time runs again from where it stood (monotonic: the frozen interval is skipped). */
  thaw(): void {
    if (this.frozenAtMs === null) return;
    this.offsetMs = this.frozenAtMs - this.realNow();
    this.frozenAtMs = null;
  }

  restore(): void {
    this.spy.mockRestore();
  }
}

/**
 * What the robot receives from the console: prepare and start (lease.run), stop (lease.stop, or the
 * unleased path), damp. Releasing a lease is recorded apart (`released`): a g1-bridge/1 client
 * sends a plain stop then, to let the robot drop a prepared clip, which is not a trip's stop.
 */
export interface RobotCommand {
  command: 'prepare' | 'start' | 'stop' | 'damp';
  runId: string | null;
  reason?: string;
  outcome?: string;
}

/** The robot's answer to one prepare. */
export type PrepareAnswer =
  /** Acknowledged: the clip is prepared; the start check (beforeStart) follows. */
  | { type: 'ack' }
  /** Refused by the robot (its command ack says no): run() rejects, nothing ran. */
  | { type: 'refuse'; reason: string }
  /** Acknowledged, then the robot ended the episode before it started (a controller fault). */
  | { type: 'fail'; reason: string };

export interface RobotScript {
  /** Answers each prepare, in order (default: ack). `attempt` counts prepares from 0. */
  prepare?: (runId: string, attempt: number) => PrepareAnswer;
  /** Runs between the prepare ack and the start check, synchronously (nothing else can run). */
  afterPrepareAck?: (runId: string) => void;
  /** Called after beforeStart resolved and right before mayTransmit (what happens while the recording opens). */
  beforeTransmit?: (runId: string) => void;
  /** Runs in acquire(), after the robot has sent a fresh state and before the lease is returned. */
  onAcquire?: (runId: string) => void;
  /** Runs when the lease is released. */
  onRelease?: (runId: string) => void;
  /** Seconds of episode the robot streams once started (default 0.4 s; as fast as the listener takes it), then it ends `completed`. */
  episodeSeconds?: number;
}

const RATE_HZ = 500;
/** Idle stream: every 10 ms of wall clock, 25 frames (50 ms of robot time). */
const STREAM_EVERY_MS = 10;
const FRAMES_PER_BATCH = 25;

export class ScriptedRobot implements RobotBackend {
  readonly id = 'scripted-g1';
  readonly name = 'scripted G1';
  readonly capabilities: BackendCapabilities = realRobotCapabilities(['builtin', 'onnx', 'remote'], RATE_HZ);
  presence: Presence = 'present';
  readonly commands: RobotCommand[] = [];
  /** Run ids in the order they were leased, and those whose lease was released. */
  readonly acquired: string[] = [];
  readonly released: string[] = [];
  script: RobotScript = {};
  private listener: BackendListener | null = null;
  private readonly pose: StateFrame;
  private streamTimeS = 0;
  private tick = 0;
  private readonly timer: NodeJS.Timeout;
  private lease: string | null = null;
  private prepares = 0;
  private active: { runId: string; stopRequested: { outcome: EpisodeOutcome; reason: string } | null } | null = null;
  private episodeStreaming = false;

  /** A robot standing still at the clip's first frame (joints; IMU attitude = the clip's root attitude). */
  constructor(clip: MotionClip) {
    const J = clip.jointPosRad.length / clip.frameCount;
    this.pose = createStateFrame(false);
    this.pose.jointPosRad.set(clip.jointPosRad.subarray(0, J));
    this.pose.imu.quatWxyz.set(clip.rootQuatWxyz.subarray(0, 4));
    this.pose.rootQuatWxyz!.set(clip.rootQuatWxyz.subarray(0, 4));
    this.pose.imu.accelMS2.set([0, 0, 9.81]);
    this.timer = setInterval(() => {
      if (!this.episodeStreaming) this.sendState(FRAMES_PER_BATCH);
    }, STREAM_EVERY_MS);
  }

  setListener(listener: BackendListener | null): void {
    this.listener = claimListener(this, this.listener, listener);
  }

  /** Delivers a batch at once (the watchers' synchronous parts — the gate's lowstate — run now). */
  private deliver(events: BackendEvent[]): Promise<void> {
    return this.listener ? this.listener(events) : Promise.resolve();
  }

  private frame(timeS: number): StateFrame {
    const f = createStateFrame(false);
    f.timeS = timeS;
    f.tick = this.tick++;
    f.jointPosRad.set(this.pose.jointPosRad);
    f.rootQuatWxyz!.set(this.pose.rootQuatWxyz!);
    f.imu.quatWxyz.set(this.pose.imu.quatWxyz);
    f.imu.accelMS2.set(this.pose.imu.accelMS2);
    return f;
  }

  /** The idle state stream: `n` frames of the still robot (robot clock continues). */
  sendState(n = 1): void {
    const frames: StateFrame[] = [];
    for (let i = 0; i < n; i++) {
      frames.push(this.frame(this.streamTimeS));
      this.streamTimeS += 1 / RATE_HZ;
    }
    void this.deliver([{ type: 'frames', runId: '', frames }]);
  }

  /** The link's presence changes (e.g. 'lost'): reported to the watchers at once. */
  setPresence(p: Presence): void {
    this.presence = p;
    void this.deliver([{ type: 'presence', presence: p }]);
  }

  async acquire(runId: string): Promise<BackendLease> {
    if (this.lease !== null) throw new Error(`already leased by ${this.lease}`);
    this.lease = runId;
    this.acquired.push(runId);
    this.sendState(1);
    this.script.onAcquire?.(runId);
    let released = false;
    const end = (outcome: EpisodeEnd['outcome'], reason: string, frames = 0, simSeconds = 0): EpisodeEnd => {
      const e: EpisodeEnd = { runId, outcome, reason, frames, simSeconds, wallSeconds: 0 };
      void this.deliver([{ type: 'episode_end', end: e }]);
      this.active = null;
      return e;
    };
    return {
      runId,
      reset: async () => {
        throw new Error('a real robot has no reset');
      },
      run: async (request: RunRequest): Promise<EpisodeEnd> => {
        if (released) throw new Error(`lease ${runId} was released`);
        this.commands.push({ command: 'prepare', runId });
        const answer = this.script.prepare?.(runId, this.prepares) ?? { type: 'ack' };
        this.prepares++;
        if (answer.type === 'refuse') throw new Error(`prepare refused by ${this.name}: ${answer.reason}`);
        const run = { runId, stopRequested: null as { outcome: EpisodeOutcome; reason: string } | null };
        this.active = run;
        if (answer.type === 'fail') return end('infrastructure_error', answer.reason);
        this.script.afterPrepareAck?.(runId);
        let permission: true | string = true;
        if (request.beforeStart) permission = await request.beforeStart();
        if (permission !== true)
          run.stopRequested ??= { outcome: 'aborted_by_operator', reason: `start refused: ${permission}` };
        this.script.beforeTransmit?.(runId);
        // As BridgeClientBackend: the last synchronous check right before the start is written.
        if (!run.stopRequested && request.mayTransmit) {
          const last = request.mayTransmit('start');
          if (last !== true) run.stopRequested = { outcome: 'aborted_by_operator', reason: `start not sent: ${last}` };
        }
        if (run.stopRequested)
          return end(run.stopRequested.outcome, `${run.stopRequested.reason} (stopped before the episode started)`);
        this.commands.push({ command: 'start', runId });
        return this.streamEpisode(runId, end);
      },
      stop: async (outcome: StopOutcome, reason: string) => {
        this.commands.push({ command: 'stop', runId, reason, outcome });
        if (this.active?.runId === runId) this.active.stopRequested ??= { outcome, reason };
      },
      release: async () => {
        if (released) return;
        released = true;
        this.released.push(runId);
        this.lease = null;
        this.script.onRelease?.(runId);
      },
    };
  }

  /** The started episode: frames tagged with the run id, robot clock from 0, each batch awaited. */
  private async streamEpisode(
    runId: string,
    end: (o: EpisodeEnd['outcome'], reason: string, frames: number, simSeconds: number) => EpisodeEnd,
  ): Promise<EpisodeEnd> {
    this.episodeStreaming = true;
    try {
      const total = Math.round((this.script.episodeSeconds ?? 0.4) * RATE_HZ);
      let sent = 0;
      while (sent < total) {
        const stop = this.active?.stopRequested;
        if (stop) return end(stop.outcome, stop.reason, sent, sent / RATE_HZ);
        const frames: StateFrame[] = [];
        for (let i = 0; i < FRAMES_PER_BATCH && sent < total; i++, sent++) frames.push(this.frame(sent / RATE_HZ));
        await this.deliver([{ type: 'frames', runId, frames }]);
      }
      return end('completed', 'the clip ran to its end', sent, sent / RATE_HZ);
    } finally {
      this.episodeStreaming = false;
    }
  }

  /** A robot link that runs clips: its stop and damp below are the unleased path. */
  readonly robotLink: RobotLinkCapabilities = { control: 'runClips', emulatorControl: false };
  readonly wbcStatus: WbcStatusMsg | null = null;

  linkStats(): RobotLinkStats {
    return {
      latencyMs: null,
      stateRateHz: RATE_HZ,
      lastStateAgeMs: null,
      missingTicks: 0,
      tickGapEvents: 0,
      oneWayLatencyMs: null,
      dropped: 0,
    };
  }

  sendStop(reason: string, outcome?: EpisodeOutcome): Promise<StopDelivery> {
    return this.sendSafety('stop', reason, outcome);
  }

  damp(reason: string): Promise<StopDelivery> {
    return this.sendSafety('damp', reason);
  }

  /** The unleased stop/damp path (a safety trip reaches the robot whoever holds the lease). */
  private async sendSafety(command: 'stop' | 'damp', reason: string, outcome?: EpisodeOutcome): Promise<StopDelivery> {
    // What arrives on the wire: g1-bridge/1 stops carry only its own outcomes (a link_lost stop is plain).
    const wire = wireStopOutcome(outcome);
    this.commands.push({ command, runId: this.active?.runId ?? null, reason, ...(wire ? { outcome: wire } : {}) });
    // As BridgeClientBackend: any stop or damp latches the active run (no start after it).
    if (this.active) this.active.stopRequested ??= { outcome: outcome ?? 'aborted_by_operator', reason };
    const at = performance.now();
    return { command, reason, attempts: 1, answer: 'ok', message: command, firstSentAtMs: at, settledAtMs: at };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.presence = 'disconnected';
  }
}

/** Only the fields the trial runner and the gate read; the rest of a snapshot is not modelled. */
type ScriptedSnapshot = Pick<InterlockSnapshot, 'atMs' | 'state' | 'deviceState' | 'portOpen' | 'armedAndFresh'>;

export class ScriptedInterlock implements InterlockFeed {
  /** What the console's link believes (armed only after an accepted ARM). */
  state: InterlockState = 'safe';
  /** What the box reports in its statuses. */
  deviceState: DeviceState = 'SAFE';
  /** ARM, DISARM in the order the console sent them. */
  readonly calls: ('arm' | 'disarm')[] = [];
  /** The box's answer to ARM (default: it arms). */
  armAnswer: () => ArmResult = () => ({ ok: true, latencyMs: 1 });
  private lastStatusAtMs = -Infinity;
  private readonly watchers = new Set<(e: GateEvent) => void>();
  private readonly timer: NodeJS.Timeout;
  readonly link: InterlockLink;

  constructor(private readonly clock: SteppedClock) {
    const link = {
      path: '/dev/scripted-interlock',
      isArmedAndFresh: () =>
        this.state === 'armed' && this.deviceState === 'ARMED' && clock.now() - this.lastStatusAtMs <= 50,
      snapshot: (): ScriptedSnapshot => ({
        atMs: clock.now(),
        state: this.state,
        deviceState: this.deviceState,
        portOpen: true,
        armedAndFresh: link.isArmedAndFresh(),
      }),
      arm: async (): Promise<ArmResult> => {
        this.calls.push('arm');
        const a = this.armAnswer();
        if (a.ok) {
          this.state = 'armed';
          this.status('ARMED');
        }
        return a;
      },
      disarm: async (): Promise<DisarmResult> => {
        this.calls.push('disarm');
        this.state = 'safe';
        this.status('SAFE');
        return { ok: true };
      },
      close: async () => {},
      closed: new Promise<void>(() => {}),
    };
    Object.defineProperty(link, 'state', { get: () => this.state, enumerable: true });
    this.link = link as unknown as InterlockLink;
    this.timer = setInterval(() => this.status(), 20);
  }

  /** The box reports a status now (default: the state it is in). */
  status(s: DeviceState = this.deviceState): void {
    this.deviceState = s;
    const atMs = this.clock.now();
    this.lastStatusAtMs = atMs;
    this.emit({ type: 'interlock_status', atMs, status: s });
  }

  subscribe(listener: (e: GateEvent) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  private emit(e: GateEvent): void {
    for (const w of [...this.watchers]) w(e);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
  }
}
