import type {
  Backend,
  BackendCapabilities,
  BackendEvent,
  BackendLease,
  BackendListener,
  BackendProblem,
  EpisodeEnd,
  Presence,
  Problem,
  RobotLinkCapabilities,
  RobotLinkStats,
  StopDelivery,
} from '../../src/domain/backend/backend';
import { claimListener } from '../../src/domain/backend/backend';
import { createStateFrame } from '../../src/domain/robot/stateFrame';

// A scriptable Backend for the console's Connections tests: presence set by the test (or after a
// delay), a state stream at a chosen rate through the single listener, problems on demand, and an
// optional link latency like a remote client's (with latencyMs it declares a robot link, whose
// linkStats() the registry reads; its stop and damp are never sent).

export interface FakeBackendOptions {
  id: string;
  name?: string;
  executionDomain?: 'simulation' | 'real_robot';
  declaredRateHz?: number;
  /** Presence when created (default 'connecting'). */
  initialPresence?: Presence;
  /** Become 'present' after this many ms (and start streaming if streamHz is set). */
  presentAfterMs?: number;
  /** Stream state frames at this rate while present (batches every 100 ms). */
  streamHz?: number;
  /** Declare a robot link whose linkStats() has this latency. */
  latencyMs?: number;
  /** With latencyMs: the robot link declares the emulator's control channel. */
  emulatorControl?: boolean;
  /** Become 'lost' with a problem after this many ms (instead of present). */
  lostAfterMs?: number;
}

export class FakeBackend implements Backend {
  readonly id: string;
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  private _presence: Presence;
  private listener: BackendListener | null = null;
  private timers: NodeJS.Timeout[] = [];
  private stream: NodeJS.Timeout | null = null;
  private t = 0;
  private tick = 0;
  closed = false;
  leasedBy: string | null = null;
  /** Every batch the backend delivered and the listener accepted. */
  delivered = 0;
  private readonly latencyMs: number | undefined;
  readonly robotLink?: RobotLinkCapabilities;

  constructor(private readonly options: FakeBackendOptions) {
    this.id = options.id;
    this.name = options.name ?? options.id;
    this._presence = options.initialPresence ?? 'connecting';
    this.latencyMs = options.latencyMs;
    if (options.latencyMs !== undefined)
      this.robotLink = { control: 'watchOnly', emulatorControl: options.emulatorControl ?? false };
    this.capabilities = {
      executionDomain: options.executionDomain ?? 'simulation',
      globalRootPosition: true,
      rootOrientation: true,
      contacts: false,
      jointTorque: true,
      stateRateHz: options.declaredRateHz ?? options.streamHz ?? 50,
      exactReset: true,
      bindingKinds: ['builtin'],
    };
    if (options.presentAfterMs !== undefined) {
      this.timers.push(
        setTimeout(() => {
          this.setPresence('present');
          if (options.streamHz) this.startStream(options.streamHz);
        }, options.presentAfterMs),
      );
    }
    if (options.lostAfterMs !== undefined) {
      this.timers.push(
        setTimeout(() => {
          this.setPresence('lost');
          this.emitProblem({
            severity: 'error',
            code: 'link_lost',
            message: `nothing from ${this.name} for 2000 ms`,
            atMs: Date.now(),
          });
        }, options.lostAfterMs),
      );
    }
  }

  get presence(): Presence {
    return this._presence;
  }

  linkStats(): RobotLinkStats {
    return {
      latencyMs: this.latencyMs ?? null,
      stateRateHz: 0,
      lastStateAgeMs: null,
      missingTicks: 0,
      tickGapEvents: 0,
      oneWayLatencyMs: null,
      dropped: 0,
    };
  }

  async sendStop(reason: string): Promise<StopDelivery> {
    return this.unsent('stop', reason);
  }

  async damp(reason: string): Promise<StopDelivery> {
    return this.unsent('damp', reason);
  }

  private unsent(command: 'stop' | 'damp', reason: string): StopDelivery {
    return { command, reason, attempts: 0, answer: null, message: 'fake', firstSentAtMs: null, settledAtMs: 0 };
  }

  setListener(listener: BackendListener | null): void {
    this.listener = claimListener(this, this.listener, listener);
  }

  private emit(events: BackendEvent[]): void {
    const l = this.listener;
    if (!l) return;
    void l(events).then(() => this.delivered++);
  }

  setPresence(p: Presence): void {
    this._presence = p;
    this.emit([{ type: 'presence', presence: p }]);
  }

  /** Any code, also one the catalogue does not know (the registry must cope with a newer backend's). */
  emitProblem(problem: Problem): void {
    this.emit([{ type: 'problem', problem: problem as BackendProblem }]);
  }

  /** Delivers `n` frames at `hz` (source times advancing), in one batch. */
  emitFrames(n: number, hz: number): void {
    const frames = Array.from({ length: n }, () => {
      const f = createStateFrame();
      f.timeS = this.t;
      f.tick = this.tick++;
      this.t += 1 / hz;
      return f;
    });
    this.emit([{ type: 'frames', runId: 'stream', frames }]);
  }

  startStream(hz: number): void {
    if (this.stream) clearInterval(this.stream);
    const perBatch = Math.max(1, Math.round(hz / 10));
    this.stream = setInterval(() => this.emitFrames(perBatch, hz), 100);
  }

  async acquire(runId: string): Promise<BackendLease> {
    if (this.leasedBy !== null) throw new Error(`already leased by ${this.leasedBy}`);
    this.leasedBy = runId;
    const end: EpisodeEnd = { runId, outcome: 'completed', reason: 'fake', frames: 0, simSeconds: 0, wallSeconds: 0 };
    return {
      runId,
      reset: async () => {},
      run: async () => end,
      stop: async () => {},
      release: async () => {
        this.leasedBy = null;
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    if (this.stream) clearInterval(this.stream);
    this._presence = 'disconnected';
  }
}
