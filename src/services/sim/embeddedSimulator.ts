// The embedded simulator backend (DESIGN §3, §9): a pool of worker threads, each with its own
// MuJoCo instance and one copy of the model, behind the Backend interface. A lease binds one
// worker to one episode's run_id. Frames reach the single listener in batches; the listener's
// promise must settle before the next batch of any worker is delivered, and a worker pauses when
// it has `maxBatchesInFlight` batches undelivered, so nothing queues without bound.
//
// Failures are outcomes, not exceptions: a worker that crashes mid-episode ends the episode
// `infrastructure_error` with the frames delivered so far, reports a problem, and is replaced by
// a fresh worker (same model). Usage errors (bad initial state, a binding kind the simulator
// cannot run, acquiring a busy simulator) reject.

import { createHash, type Hash } from 'node:crypto';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import {
  claimListener,
  type Backend,
  type BackendCapabilities,
  type BackendEvent,
  type BackendLease,
  type BackendListener,
  type BackendProblem,
  type EpisodeEnd,
  type EpisodeOutcome,
  type InitialState,
  type Presence,
  type Problem,
  type RunRequest,
} from '../../domain/backend/backend';
import type { BackendProblemCode } from '../../domain/backend/problemCodes';
import type { StateFrame } from '../../domain/robot/stateFrame';
import type { HardFailure } from '../../domain/metrics';
import { checkInitialState, initialStateFromClipFrame } from '../../domain/sim/initialState';
import { TrajectoryHasher } from '../../domain/sim/trajectoryHash';
import { DEFAULT_MODEL_FILE } from '../robot/loadRobotProfile';
import {
  CTL_ACKED,
  CTL_SIZE,
  CTL_STOP,
  STOP_CODES,
  STOP_NONE,
  frameLayout,
  type FrameBatch,
  type FrameLayout,
  type FromWorker,
  type ResolvedInitialState,
  type SimRunOptions,
  type StopOutcome,
  type ToWorker,
  type WorkerEpisodeEnd,
  type WorkerModelInfo,
} from './simProtocol';
import { defaultSimWorkers } from './simWorkerCount';

export interface EmbeddedSimulatorOptions {
  /** MJCF scene with a floor (default: our G1, assets/g1/g1.xml). */
  modelFile?: string;
  /** Worker threads (default: $MOTIONBENCH_SIM_WORKERS, else what the cores and memory allow: simWorkerCount.ts). */
  workers?: number;
  id?: string;
  name?: string;
  /** Defaults for every run (a run's own options override them). */
  runDefaults?: SimRunOptions;
}

/** Simulator-only data that accompanies each recorded frame. */
export interface SimFrameExtras {
  /** Free-joint qvel[0..3], world frame, m/s. */
  rootLinVelMps: Float64Array;
  /** Free-joint qvel[3..6], pelvis frame, rad/s. */
  rootAngVelRadS: Float64Array;
  /** The command issued at this frame's control step (the last frame repeats the last command). */
  command: { jointTargetRad: Float64Array; kp: Float64Array; kd: Float64Array };
  /** Root-assist wrench [Fx, Fy, Fz, τx, τy, τz] (world, N and N·m) at this step; null without assist. */
  assistWrench: Float64Array | null;
  /** Live readings after this frame (streaming mb-metrics/1 on the 50 Hz timeline). */
  live: { mpjpeLMm: number | null; jointRmseRad: number | null; firstFailureFrame: number };
}

/** The `frames` event of this backend: a BackendEvent with the simulator's extras beside the frames. */
export interface SimFramesEvent {
  type: 'frames';
  runId: string;
  frames: StateFrame[];
  sim: { extras: SimFrameExtras[] };
}

export const isSimFramesEvent = (e: BackendEvent): e is BackendEvent & SimFramesEvent =>
  e.type === 'frames' && 'sim' in e;

/** EpisodeEnd with what the simulator knows beyond the Backend contract. */
export interface SimEpisodeEnd extends EpisodeEnd {
  /** sha256 of the recorded trajectory (layout: src/domain/sim/trajectoryHash.ts). */
  trajectorySha256: string;
  /** Frames the clip has on the 50 Hz timeline (frames < plannedFrames: stopped early). */
  plannedFrames: number;
  /** The first hard failure found by the streaming detector (frames 0..K−2), or null. */
  failure: HardFailure | null;
  /**
   * The lift of the reference as placed for the run (m, src/domain/sim/referencePlacement.ts):
   * failures and metrics compare with the reference raised by it; null when the episode did not run.
   */
  referenceLiftM: number | null;
  initialState: ResolvedInitialState | null;
  seed: number;
  workerIndex: number;
}

export interface SimRunRequest extends RunRequest {
  options?: SimRunOptions;
}

export interface EmbeddedSimLease extends BackendLease {
  run(request: SimRunRequest): Promise<SimEpisodeEnd>;
  /** The state the last reset() put the robot in (after the floor solve); null before. */
  readonly resolvedInitialState: ResolvedInitialState | null;
  readonly workerIndex: number;
}

interface Pending<T> {
  resolve(v: T): void;
  reject(e: Error): void;
}

/**
 * trajectory_sha256 over packed frames (their first `hashEnd` values are the hash layout of
 * src/domain/sim/trajectoryHash.ts, −0 already +0): node's native SHA-256 over the bytes as they
 * are on a little-endian machine, the domain's TrajectoryHasher elsewhere. Same digest.
 */
class PackedTrajectoryHash {
  private readonly native: Hash | null = os.endianness() === 'LE' ? createHash('sha256') : null;
  private readonly portable: TrajectoryHasher | null = this.native ? null : new TrajectoryHasher(29);
  addPacked(data: Float64Array, offset: number, hashEnd: number): void {
    if (this.native) this.native.update(new Uint8Array(data.buffer, data.byteOffset + offset * 8, hashEnd * 8));
    else this.portable!.addPacked(data, offset);
  }
  digestHex(): string {
    return this.native ? this.native.digest('hex') : this.portable!.digestHex();
  }
}

interface Episode {
  id: number;
  runId: string;
  seed: number;
  hasher: PackedTrajectoryHash;
  frames: number;
  startMs: number;
  stopOutcome: StopOutcome | null;
  stopReason: string;
  initialState: ResolvedInitialState | null;
  done: Pending<SimEpisodeEnd>;
  finished: boolean;
}

const BOOTSTRAP = new URL('./simWorkerBootstrap.mjs', import.meta.url);
const WORKER_ENTRY = new URL('./simWorker.ts', import.meta.url);

let workerSerial = 0;

/** One worker thread and its model. */
class SimSlot {
  worker: Worker | null = null;
  presence: Presence = 'connecting';
  info: WorkerModelInfo | null = null;
  lastError: string | null = null;
  leasedBy: string | null = null;
  episode: Episode | null = null;
  layout: FrameLayout | null = null;
  private readonly control = new SharedArrayBuffer(CTL_SIZE * 4);
  readonly ctl = new Int32Array(this.control);
  private readyWaiters: Pending<void>[] = [];
  private requests = new Map<number, Pending<unknown>>();
  private nextId = 1;
  restarts = 0;
  /** Batches received from the worker and not yet delivered to the listener. */
  pendingBatches = 0;
  private closing = false;

  constructor(
    readonly index: number,
    private readonly sim: EmbeddedSimulator,
  ) {}

  start(): void {
    this.presence = 'connecting';
    this.sim.presenceChanged();
    const worker = new Worker(BOOTSTRAP, {
      workerData: { entry: WORKER_ENTRY.href },
      name: `motionbench-sim-${this.index}-${workerSerial++}`,
    });
    this.worker = worker;
    worker.on('message', (msg: FromWorker) => this.onMessage(worker, msg));
    worker.on('error', (err) => {
      if (this.worker === worker) this.lastError = err?.message ?? String(err);
    });
    worker.on('exit', (code) => this.onExit(worker, code));
    this.post({ type: 'init', modelFile: this.sim.modelFile, control: this.control });
  }

  post(msg: ToWorker): void {
    this.worker?.postMessage(msg);
  }

  whenReady(): Promise<void> {
    if (this.presence === 'present') return Promise.resolve();
    if (this.presence === 'lost' || this.presence === 'disconnected') {
      return Promise.reject(new Error(this.lastError ?? `simulator worker ${this.index} is not available`));
    }
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  request<T>(make: (id: number) => ToWorker): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.requests.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.post(make(id));
    });
  }

  private settle(id: number, fn: (p: Pending<unknown>) => void): void {
    const p = this.requests.get(id);
    if (p) {
      this.requests.delete(id);
      fn(p);
    }
  }

  private onMessage(worker: Worker, msg: FromWorker): void {
    if (worker !== this.worker) return;
    switch (msg.type) {
      case 'ready':
        this.info = msg.info;
        this.layout = frameLayout(msg.info.jointCount);
        this.presence = 'present';
        this.lastError = null;
        for (const w of this.readyWaiters.splice(0)) w.resolve();
        this.sim.presenceChanged();
        return;
      case 'init_failed':
        this.lastError = msg.message;
        this.presence = 'lost';
        for (const w of this.readyWaiters.splice(0)) w.reject(new Error(msg.message));
        this.sim.problem('error', 'sim_model_failed', msg.message);
        this.sim.presenceChanged();
        void worker.terminate();
        return;
      case 'reset_done':
        this.settle(msg.id, (p) => p.resolve(msg.state));
        return;
      case 'reset_failed':
      case 'run_failed':
        this.settle(msg.id, (p) => p.reject(new Error(msg.message)));
        return;
      case 'batch':
        this.onBatch(msg.id, msg.seq, msg.batch);
        return;
      case 'end':
        this.onEnd(msg.id, msg.end, msg.tainted);
        return;
    }
  }

  private onBatch(id: number, seq: number, batch: FrameBatch): void {
    const ep = this.episode;
    if (!ep || ep.id !== id || !this.layout) return;
    const layout = this.layout;
    const { frames, extras } = unpackBatch(batch, layout);
    for (let i = 0; i < batch.count; i++) ep.hasher.addPacked(batch.data, i * layout.width, layout.hashEnd);
    ep.frames += batch.count;
    const event: SimFramesEvent = { type: 'frames', runId: ep.runId, frames, sim: { extras } };
    this.pendingBatches++;
    this.sim.stats.maxPendingBatches = Math.max(this.sim.stats.maxPendingBatches, this.pendingBatches);
    this.sim.stats.batches++;
    this.sim.deliver([event as BackendEvent]).then(() => {
      this.pendingBatches--;
      if (this.episode === ep) {
        Atomics.store(this.ctl, CTL_ACKED, seq + 1);
        Atomics.notify(this.ctl, CTL_ACKED);
      }
    });
  }

  private onEnd(id: number, end: WorkerEpisodeEnd, tainted: boolean): void {
    const ep = this.episode;
    if (!ep || ep.id !== id) return;
    this.finish(ep, end);
    this.settle(id, (p) => p.resolve(undefined));
    if (!tainted) this.restarts = 0;
    if (tainted) {
      this.sim.problem(
        'error',
        'sim_worker_fault',
        `simulator worker ${this.index} hit a fault and is being replaced: ${end.reason}`,
      );
      this.replace();
    }
  }

  /** Ends the episode after every batch delivered so far, then delivers episode_end. */
  finish(ep: Episode, end: Omit<WorkerEpisodeEnd, 'frames'> & { frames?: number }): void {
    if (ep.finished) return;
    ep.finished = true;
    // Queued behind the frame deliveries, so the listener sees all frames before the end.
    void this.sim.deliver([]).then(() => {
      const outcome: EpisodeOutcome = ep.stopOutcome && end.outcome === ep.stopOutcome ? ep.stopOutcome : end.outcome;
      const reason = ep.stopOutcome && end.outcome === ep.stopOutcome ? ep.stopReason : end.reason;
      const frames = ep.frames;
      const simSeconds = frames > 0 ? (frames - 1) / 50 : 0;
      const result: SimEpisodeEnd = {
        runId: ep.runId,
        outcome,
        reason,
        frames,
        simSeconds,
        wallSeconds: (performance.now() - ep.startMs) / 1000,
        trajectorySha256: ep.hasher.digestHex(),
        plannedFrames: end.plannedFrames,
        failure: end.failure,
        referenceLiftM: end.referenceLiftM,
        initialState: ep.initialState,
        seed: ep.seed,
        workerIndex: this.index,
      };
      if (this.episode === ep) this.episode = null;
      return this.sim.deliver([{ type: 'episode_end', end: result }]).then(() => ep.done.resolve(result));
    });
  }

  private onExit(worker: Worker, code: number): void {
    if (worker !== this.worker) return;
    this.worker = null;
    const reason = this.lastError ?? `exited with code ${code}`;
    for (const [, p] of this.requests) p.reject(new Error(`simulator worker ${this.index} stopped: ${reason}`));
    this.requests.clear();
    if (this.closing) {
      this.presence = 'disconnected';
      if (this.episode) {
        this.finish(this.episode, {
          outcome: 'aborted_by_operator',
          reason: 'the simulator was closed',
          plannedFrames: 0,
          simSeconds: 0,
          failure: null,
          referenceLiftM: null,
        });
      }
      this.sim.presenceChanged();
      return;
    }
    if (this.presence === 'lost') return; // model failed to load: stays lost
    const ep = this.episode;
    this.sim.problem(
      'error',
      'sim_worker_crashed',
      `simulator worker ${this.index} crashed (${reason})${ep ? ` during episode ${ep.runId}` : ''}; starting a new one`,
    );
    if (ep) {
      this.finish(ep, {
        outcome: 'infrastructure_error',
        reason: `simulator worker crashed: ${reason}`,
        plannedFrames: 0,
        simSeconds: 0,
        failure: null,
        referenceLiftM: null,
      });
    }
    this.lastError = null;
    this.restart();
  }

  private restart(): void {
    this.restarts++;
    // 20 crashes in a row without a clean episode in between: the model or machine is broken.
    if (this.restarts > 20) {
      this.presence = 'lost';
      this.lastError = `simulator worker ${this.index} crashed too often; not restarted`;
      this.sim.problem('error', 'sim_worker_lost', this.lastError);
      for (const w of this.readyWaiters.splice(0)) w.reject(new Error(this.lastError));
      this.sim.presenceChanged();
      return;
    }
    this.start();
  }

  /** Terminates a worker whose WASM state is suspect and starts a fresh one. */
  private replace(): void {
    const w = this.worker;
    this.worker = null;
    if (w) {
      w.removeAllListeners('exit');
      void w.terminate();
    }
    this.restart();
  }

  async close(): Promise<void> {
    this.closing = true;
    const w = this.worker;
    if (!w) {
      this.presence = 'disconnected';
      return;
    }
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage({ type: 'shutdown' } satisfies ToWorker);
    const timer = setTimeout(() => void w.terminate(), 2000);
    await exited;
    clearTimeout(timer);
    this.presence = 'disconnected';
  }
}

/**
 * Unpacks a batch into StateFrames and extras. Zero-copy: their arrays are views into the batch
 * buffer, which the worker transferred and never touches again, so the receiver owns them.
 */
export function unpackBatch(batch: FrameBatch, L: FrameLayout): { frames: StateFrame[]; extras: SimFrameExtras[] } {
  const J = L.jointCount;
  const d = batch.data;
  const frames: StateFrame[] = [];
  const extras: SimFrameExtras[] = [];
  let contactsByFrame: Map<number, { body: string; other: string; forceN: number }[]> | null = null;
  for (const c of batch.contacts) {
    contactsByFrame ??= new Map();
    let list = contactsByFrame.get(c.frame);
    if (!list) contactsByFrame.set(c.frame, (list = []));
    list.push({ body: c.body, other: c.other, forceN: c.forceN });
  }
  const v = (o: number, n: number) => d.subarray(o, o + n);
  for (let i = 0; i < batch.count; i++) {
    const o = i * L.width;
    frames.push({
      timeS: d[o + L.time],
      tick: d[o + L.tick],
      referenceFrame: d[o + L.refFrame],
      rootPosM: v(o + L.rootPos, 3),
      rootQuatWxyz: v(o + L.rootQuat, 4),
      jointPosRad: v(o + L.q, J),
      jointVelRadS: v(o + L.dq, J),
      jointTauNm: v(o + L.tau, J),
      imu: { quatWxyz: v(o + L.imuQuat, 4), gyroRadS: v(o + L.gyro, 3), accelMS2: v(o + L.accel, 3) },
      contacts: contactsByFrame?.get(batch.firstFrame + i) ?? [],
    });
    const mp = d[o + L.liveMpjpe];
    const jr = d[o + L.liveJointRmse];
    extras.push({
      rootLinVelMps: v(o + L.rootLinVel, 3),
      rootAngVelRadS: v(o + L.rootAngVel, 3),
      command: { jointTargetRad: v(o + L.target, J), kp: v(o + L.kp, J), kd: v(o + L.kd, J) },
      assistWrench: Number.isNaN(d[o + L.wrench]) ? null : v(o + L.wrench, 6),
      live: {
        mpjpeLMm: Number.isFinite(mp) ? mp : null,
        jointRmseRad: Number.isFinite(jr) ? jr : null,
        firstFailureFrame: d[o + L.liveFailFrame],
      },
    });
  }
  return { frames, extras };
}

export class EmbeddedSimulator implements Backend {
  readonly id: string;
  readonly name: string;
  readonly modelFile: string;
  readonly capabilities: BackendCapabilities = {
    executionDomain: 'simulation',
    globalRootPosition: true,
    rootOrientation: true,
    contacts: true,
    jointTorque: true,
    stateRateHz: 50,
    exactReset: true,
    bindingKinds: ['builtin', 'onnx'],
  };
  private readonly slots: SimSlot[];
  private listener: BackendListener | null = null;
  private delivery: Promise<void> = Promise.resolve();
  private lastPresence: Presence = 'connecting';
  private closed = false;
  private readonly waiters: { runId: string; resolve: (l: EmbeddedSimLease) => void; reject: (e: Error) => void }[] =
    [];
  /** Callers of whenWorkerFree() waiting for a worker to be released. */
  private freeWaiters: (() => void)[] = [];
  readonly runDefaults: SimRunOptions;
  /** Problems reported so far (most recent last, bounded). */
  readonly problems: Problem[] = [];
  /** Delivery counters: batches delivered, and the most batches any worker had undelivered at once (≤ maxBatchesInFlight). */
  readonly stats = { batches: 0, maxPendingBatches: 0 };

  constructor(options: EmbeddedSimulatorOptions = {}) {
    this.modelFile = options.modelFile ?? DEFAULT_MODEL_FILE;
    const n = options.workers ?? defaultSimWorkers();
    if (!(Number.isInteger(n) && n >= 1 && n <= 256))
      throw new RangeError(`workers must be an integer in 1..256, got ${n}`);
    this.id = options.id ?? 'embedded-sim';
    this.name = options.name ?? `Embedded MuJoCo (${n} worker${n === 1 ? '' : 's'})`;
    this.runDefaults = { ...(options.runDefaults ?? {}) };
    this.slots = Array.from({ length: n }, (_, i) => new SimSlot(i, this));
    for (const s of this.slots) s.start();
  }

  get workerCount(): number {
    return this.slots.length;
  }

  get presence(): Presence {
    return this.lastPresence;
  }

  /** Resolves when every worker has loaded the model; rejects with the model's error if one cannot. */
  async ready(): Promise<WorkerModelInfo> {
    await Promise.all(this.slots.map((s) => s.whenReady()));
    return this.slots[0].info!;
  }

  get modelInfo(): WorkerModelInfo | null {
    return this.slots.find((s) => s.info)?.info ?? null;
  }

  setListener(listener: BackendListener | null): void {
    this.listener = claimListener(this, this.listener, listener);
  }

  /** Serialises deliveries to the listener (one batch in flight, in arrival order). */
  deliver(events: BackendEvent[]): Promise<void> {
    const run = async () => {
      const l = this.listener;
      if (!l || events.length === 0) return;
      try {
        await l(events);
      } catch (err) {
        this.recordProblem({
          severity: 'warn',
          code: 'listener_failed',
          message: `the backend listener threw: ${(err as Error)?.message ?? String(err)}`,
          atMs: Date.now(),
        });
      }
    };
    this.delivery = this.delivery.then(run, run);
    return this.delivery;
  }

  private recordProblem(p: Problem): void {
    this.problems.push(p);
    if (this.problems.length > 100) this.problems.shift();
  }

  problem(severity: Problem['severity'], code: BackendProblemCode, message: string): void {
    const p: BackendProblem = { severity, code, message, atMs: Date.now() };
    this.recordProblem(p);
    void this.deliver([{ type: 'problem', problem: p }]);
  }

  presenceChanged(): void {
    const ps = this.slots.map((s) => s.presence);
    const p: Presence = this.closed
      ? 'disconnected'
      : ps.includes('present')
        ? 'present'
        : ps.includes('connecting')
          ? 'connecting'
          : 'lost';
    if (p !== this.lastPresence) {
      this.lastPresence = p;
      void this.deliver([{ type: 'presence', presence: p }]);
    }
    this.serveWaiters();
  }

  private freeSlot(): SimSlot | undefined {
    return (
      this.slots.find((s) => s.leasedBy === null && s.presence === 'present') ??
      this.slots.find((s) => s.leasedBy === null && s.presence === 'connecting')
    );
  }

  /** Exclusive use of one worker for the episode `runId`. Rejects when every worker is leased. */
  async acquire(runId: string): Promise<EmbeddedSimLease> {
    if (this.closed) throw new Error('the embedded simulator is closed');
    if (typeof runId !== 'string' || runId === '') throw new Error('acquire needs a run_id');
    if (this.slots.some((s) => s.leasedBy === runId))
      throw new Error(`run ${runId} already holds a lease on this simulator`);
    const slot = this.freeSlot();
    if (!slot) {
      const usable = this.slots.filter((s) => s.presence !== 'lost');
      if (usable.length === 0)
        throw new Error(`no simulator worker is available: ${this.slots[0].lastError ?? 'all workers lost'}`);
      throw new Error(`all ${this.slots.length} simulator workers are leased`);
    }
    slot.leasedBy = runId;
    try {
      await slot.whenReady();
    } catch (err) {
      slot.leasedBy = null;
      throw err;
    }
    return new SimLease(this, slot, runId);
  }

  /** Like acquire, but waits for a worker to become free instead of rejecting. */
  acquireWhenFree(runId: string): Promise<EmbeddedSimLease> {
    if (this.freeSlot()) return this.acquire(runId);
    if (this.slots.every((s) => s.presence === 'lost')) return this.acquire(runId);
    return new Promise((resolve, reject) => this.waiters.push({ runId, resolve, reject }));
  }

  serveWaiters(): void {
    while (this.waiters.length > 0 && this.freeSlot()) {
      const w = this.waiters.shift()!;
      this.acquire(w.runId).then(w.resolve, w.reject);
    }
    let free = this.slots.filter((s) => s.leasedBy === null && s.presence !== 'lost').length;
    while (free-- > 0 && this.freeWaiters.length > 0) this.freeWaiters.shift()!();
  }

  /**
   * Resolves when a worker is free, without leasing it (at once when one is, when the simulator is
   * closed, or when every worker is lost). A scheduler prepares its next episode when this resolves
   * and leases with acquireWhenFree, so a worker never waits for that preparation; one free worker
   * wakes one waiter.
   */
  whenWorkerFree(): Promise<void> {
    if (this.closed || this.freeSlot() || this.slots.every((s) => s.presence === 'lost')) return Promise.resolve();
    return new Promise((resolve) => this.freeWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error('the embedded simulator was closed'));
    for (const w of this.freeWaiters.splice(0)) w();
    for (const s of this.slots) if (s.episode) Atomics.store(s.ctl, CTL_STOP, STOP_CODES.aborted_by_operator);
    await Promise.all(this.slots.map((s) => s.close()));
    this.presenceChanged();
    // Let pending deliveries finish, but never hang on a listener that does not settle.
    await Promise.race([this.delivery, new Promise((r) => setTimeout(r, 1000).unref())]);
  }
}

class SimLease implements EmbeddedSimLease {
  private initial: InitialState | null = null;
  resolvedInitialState: ResolvedInitialState | null = null;
  private released = false;
  private running: Promise<SimEpisodeEnd> | null = null;

  constructor(
    private readonly sim: EmbeddedSimulator,
    private readonly slot: SimSlot,
    readonly runId: string,
  ) {}

  get workerIndex(): number {
    return this.slot.index;
  }

  private check(): void {
    if (this.released) throw new Error(`the lease of run ${this.runId} was released`);
  }

  async reset(initial: InitialState): Promise<void> {
    this.check();
    if (this.running) throw new Error('reset() while an episode is running; stop it first');
    checkInitialState(initial);
    await this.slot.whenReady();
    // The worker applies it now (fresh MjData, floor solve) to report the resolved state, and
    // again, from scratch, at the start of every run.
    this.resolvedInitialState = await this.slot.request<ResolvedInitialState>((id) => ({
      type: 'reset',
      id,
      initial,
      seed: 0,
      noiseRad: 0,
    }));
    this.initial = initial;
  }

  run(request: SimRunRequest): Promise<SimEpisodeEnd> {
    if (this.released) return Promise.reject(new Error(`the lease of run ${this.runId} was released`));
    if (this.running) return Promise.reject(new Error(`run ${this.runId} already has an episode running`));
    const p = this.start(request).finally(() => {
      this.running = null;
    });
    this.running = p;
    return p;
  }

  private async start(request: SimRunRequest): Promise<SimEpisodeEnd> {
    const { clip, binding, seed } = request;
    if (!(Number.isSafeInteger(seed) && seed >= 0))
      throw new RangeError(`seed must be an integer in [0, 2^53 − 1], got ${seed}`);
    if (!this.sim.capabilities.bindingKinds.includes(binding.kind)) {
      throw new Error(
        `the embedded simulator cannot run "${binding.kind}" bindings (${binding.id}@${binding.version})`,
      );
    }
    if (!(clip.frameCount >= 2) || clip.jointPosRad.length !== clip.frameCount * 29)
      throw new RangeError(`clip ${clip.name} needs at least 2 frames of 29 joints`);
    const initial = this.initial ?? initialStateFromClipFrame(clip);
    const options: SimRunOptions = { ...this.sim.runDefaults, ...(request.options ?? {}) };
    const slot = this.slot;
    let done!: Pending<SimEpisodeEnd>;
    const endPromise = new Promise<SimEpisodeEnd>((resolve, reject) => (done = { resolve, reject }));
    const episode: Episode = {
      id: -1,
      runId: this.runId,
      seed,
      hasher: new PackedTrajectoryHash(),
      frames: 0,
      startMs: performance.now(),
      stopOutcome: null,
      stopReason: '',
      initialState: null,
      done,
      finished: false,
    };
    try {
      await slot.whenReady();
    } catch (err) {
      // The worker could not (re)start: an infrastructure outcome, not a usage error.
      return this.immediateEnd(episode, `simulator worker unavailable: ${(err as Error).message}`);
    }
    Atomics.store(slot.ctl, CTL_STOP, STOP_NONE);
    Atomics.store(slot.ctl, CTL_ACKED, 0);
    slot.episode = episode;
    // A crash from here on ends the episode through the slot (infrastructure_error).
    const afterCrash = (err: Error): Promise<SimEpisodeEnd> => {
      if (episode.finished) return endPromise;
      if (slot.episode === episode) slot.episode = null;
      episode.finished = true;
      throw err;
    };
    try {
      // The initial state exactly as the worker sets it (floor solve, seeded noise), for the record.
      episode.initialState = await slot.request<ResolvedInitialState>((id) => ({
        type: 'reset',
        id,
        initial,
        seed,
        noiseRad: options.initialJointNoiseRad ?? 0,
      }));
    } catch (err) {
      return afterCrash(err as Error);
    }
    this.resolvedInitialState = episode.initialState;
    if (episode.stopOutcome) {
      // Stopped before it began: an empty episode with the stop's outcome.
      slot.episode = null;
      episode.finished = true;
      return this.immediateEnd(episode, episode.stopReason, episode.stopOutcome);
    }
    const wire = {
      id: clip.id,
      name: clip.name,
      fps: clip.fps,
      frameCount: clip.frameCount,
      rootPosM: clip.rootPosM,
      rootQuatWxyz: clip.rootQuatWxyz,
      jointPosRad: clip.jointPosRad,
      ...(clip.jointVelRadS ? { jointVelRadS: clip.jointVelRadS } : {}),
    };
    // Settles when the worker ends the episode; rejects on run_failed (refused before anything
    // ran: a usage error) or when the worker dies (then the slot has ended the episode).
    const runMsg = slot.request<void>((id) => {
      episode.id = id;
      return { type: 'run', id, episode: id, runId: this.runId, clip: wire, binding, seed, initial, options };
    });
    return runMsg.then(() => endPromise, afterCrash);
  }

  private immediateEnd(
    ep: Episode,
    reason: string,
    outcome: EpisodeOutcome = 'infrastructure_error',
  ): Promise<SimEpisodeEnd> {
    const result: SimEpisodeEnd = {
      runId: this.runId,
      outcome,
      reason,
      frames: 0,
      simSeconds: 0,
      wallSeconds: (performance.now() - ep.startMs) / 1000,
      trajectorySha256: ep.hasher.digestHex(),
      plannedFrames: 0,
      failure: null,
      referenceLiftM: null,
      initialState: null,
      seed: ep.seed,
      workerIndex: this.slot.index,
    };
    return this.sim.deliver([{ type: 'episode_end', end: result }]).then(() => result);
  }

  async stop(outcome: StopOutcome, reason: string): Promise<void> {
    const ep = this.slot.episode;
    const running = this.running;
    if (!ep || !running) return;
    if (!ep.stopOutcome) {
      ep.stopOutcome = outcome;
      ep.stopReason = reason;
    }
    Atomics.store(this.slot.ctl, CTL_STOP, STOP_CODES[outcome]);
    Atomics.notify(this.slot.ctl, CTL_STOP);
    Atomics.notify(this.slot.ctl, CTL_ACKED);
    await running.catch(() => undefined);
  }

  async release(): Promise<void> {
    if (this.released) return;
    if (this.running) await this.stop('aborted_by_operator', 'lease released while running');
    this.released = true;
    this.slot.leasedBy = null;
    this.sim.serveWaiters();
  }
}
