import type { ConnectionInfo, ConnectionKind } from '../../api/contract';
import { MAX_PROBLEMS_SENT } from '../../api/contract';
import { checkBackendUrl } from '../../api/connectionUrl';
import {
  robotBackendOf,
  type Backend,
  type BackendEvent,
  type BackendLease,
  type BackendListener,
  type BackendProblem,
  type Problem,
} from '../../domain/backend/backend';
import { problemKindOf } from '../../domain/backend/problemCodes';
import type { StateFrame } from '../../domain/robot/stateFrame';
import {
  ddsDomainIdProblem,
  ddsInterfaceNameProblem,
  g1DdsConnectionName,
  afterClipProblem,
  type G1DdsSpec,
  type G1RunnerEstopSocket,
} from '../../domain/g1Runner/g1DdsConnection';
import { G1_NUM_JOINTS } from '../../domain/robot/g1Joints';
import { RecentGaps } from '../../domain/timing/recentGaps';
import { backendHub, releaseBackendHub, type StreamDelivery } from '../stream/backendHub';
import { ApiFailure } from './apiFailure';

// The endpoints the console knows (DESIGN §8, Connections panel): the embedded simulator, always
// listed first, any remote simulator added by ws:// URL, and the physical robot (a g1-bridge/1
// server on the robot PC, or the robot emulator) added by ws:// URL as kind `robot`. Each entry holds at most one Backend
// (src/domain/backend/backend.ts), created on first use by a factory injected at start-up, so
// this file depends on no simulator or bridge implementation (see backendFactories.ts).
//
// Each backend's single listener is owned by its BackendHub (src/services/stream/backendHub.ts),
// which the registry attaches when the backend is made and releases when it goes. The registry is
// the hub's first 'every' subscriber: it measures the state-frame rate and the age of the last
// frame and keeps the current problems. Its own subscribers (an episode runner, a recorder, the
// display) outlive reconnects: each is subscribed to the hub of whichever backend the entry holds,
// and a failing one is listed as a `subscriber_error` problem on the entry.
//
// Only current problems are listed (src/domain/backend/problemCodes.ts): a condition (link stale,
// lost, watch-only, no implementation…) from its report until the backend withdraws it
// (`problem_cleared`) or the backend goes away; an incident (a malformed frame, frames dropped)
// for INCIDENT_CURRENT_MS after it arrived. A backend's link latency is read through its declared
// robot link (RobotBackend.linkStats), never by probing for methods.

/** An entry's newest frame, as the live robot and the top bar show it. */
export interface LatestState {
  /** Registry clock when its batch arrived, ms. */
  atMs: number;
  tick: number;
  /** 29, rad, canonical order. */
  jointPosRad: Float64Array;
  /** World frame, m; null without a global root (no motion capture). */
  rootPosM: Float64Array | null;
  /** wxyz: the measured root (motion capture) or, without one, the IMU attitude; null when unknown. */
  rootQuatWxyz: Float64Array | null;
  /** The IMU attitude, wxyz (g1-bridge/1 `imu.quat_wxyz`). */
  imuQuatWxyz: Float64Array;
  /** Bumped on every copy. */
  revision: number;
}

function newLatest(): LatestState {
  return {
    atMs: 0,
    tick: 0,
    jointPosRad: new Float64Array(G1_NUM_JOINTS),
    rootPosM: null,
    rootQuatWxyz: null,
    imuQuatWxyz: Float64Array.of(1, 0, 0, 0),
    revision: 0,
  };
}

function copyLatest(dst: LatestState, f: StateFrame, atMs: number): void {
  dst.atMs = atMs;
  dst.tick = f.tick;
  dst.jointPosRad.set(f.jointPosRad.subarray(0, G1_NUM_JOINTS));
  if (f.rootPosM) (dst.rootPosM ??= new Float64Array(3)).set(f.rootPosM);
  else dst.rootPosM = null;
  if (f.rootQuatWxyz) (dst.rootQuatWxyz ??= new Float64Array(4)).set(f.rootQuatWxyz);
  else dst.rootQuatWxyz = null;
  dst.imuQuatWxyz.set(f.imu.quatWxyz);
  dst.revision++;
}

export const EMBEDDED_SIM_ID = 'embedded-sim';
export const EMBEDDED_SIM_NAME = 'Embedded simulator (MuJoCo)';

export interface EmbeddedSimulatorContext {
  /** The robot model (MJCF) the console uses. */
  modelFile: string;
}

export interface RemoteSimulatorContext {
  /** The registry's id of the entry, e.g. `remote-1`. */
  id: string;
  /** Normalised ws:// or wss:// URL. */
  url: string;
}

/** Backend implementations, injected where the services start (host, Electron main). */
export interface BackendFactories {
  /** The embedded MuJoCo simulator (src/services/sim). */
  embeddedSimulator?: (ctx: EmbeddedSimulatorContext) => Backend | Promise<Backend>;
  /** A remote simulator speaking g1-bridge/1 over foxglove.websocket.v1 (src/services/bridge). */
  remoteSimulator?: (ctx: RemoteSimulatorContext) => Backend | Promise<Backend>;
  /** The physical robot over g1-bridge/1, with the robot link limits (stale 50 ms, lost 100 ms). */
  robot?: (ctx: RemoteSimulatorContext) => Backend | Promise<Backend>;
  /**
   * "G1 over DDS": starts a runner for the interface and domain and connects to it as the robot;
   * closing the backend stops the runner (g1DdsRunnerBackend.ts).
   */
  g1Dds?: (ctx: G1DdsContext) => Promise<G1DdsBackend>;
}

export interface G1DdsContext extends G1DdsSpec, G1RunnerEstopSocket {
  /** The registry's id of the entry, e.g. `robot-2`. */
  id: string;
}

/** A robot backend on a runner the services started, with that runner's ws:// URL. */
export interface G1DdsBackend {
  backend: Backend;
  runnerUrl: string;
}

/** Kinds added by URL. */
export type RemoteKind = Exclude<ConnectionKind, 'embedded_simulator'>;

export interface ConnectionRegistryOptions {
  factories: BackendFactories;
  modelFile: string;
  /** Wall clock, ms since the epoch (tests pass their own). */
  now?: () => number;
  /**
   * The Unix socket the console's interlock keeper writes its e-stops to (interlockSessions.ts):
   * every runner the services start listens on it (`g1-runner --interlock-trips`). One socket
   * serves one runner at a time, so while one "G1 over DDS" runner runs, starting another is
   * refused (two would take the socket from each other). Null or absent: the runners listen for
   * no interlock, and the robot damps on an interlock e-stop only through the console's process.
   */
  runnerEstopSocket?: string | null;
}

/** Window of the measured frame rate, ms. */
export const RATE_WINDOW_MS = 2000;
/** An incident is listed this long after it arrived, ms (one of a recurring kind is re-reported every ~1 s). */
export const INCIDENT_CURRENT_MS = 10_000;
/** Incidents kept per entry (the newest). */
const MAX_INCIDENTS_KEPT = 32;
/** Frames kept for the rate: the whole window up to 2 kHz; beyond, the rate is over the newest 4096. */
const RATE_CAPACITY = 4096;
/**
 * A step of the frames' own clock is trusted when it is positive and at most this much longer
 * than the step of their arrival times, s. Batching delays arrivals (frames of one batch arrive
 * together, a step of 0 after a source step of up to one period), so the slack must exceed the
 * longest source period shown (20 ms at 50 Hz) and the longest batch gap; a restart of the
 * source clock is a jump of seconds (below).
 */
const SOURCE_STEP_SLACK_S = 0.25;

/** Arrival time and source time of the most recent frames, for a rate over a sliding window. */
class RateMeter {
  private readonly arrivalMs = new Float64Array(RATE_CAPACITY);
  private readonly sourceS = new Float64Array(RATE_CAPACITY);
  private head = 0; // next write
  private count = 0;
  lastArrivalMs: number | null = null;

  record(arrivalMs: number, sourceS: number): void {
    this.arrivalMs[this.head] = arrivalMs;
    this.sourceS[this.head] = sourceS;
    this.head = (this.head + 1) % RATE_CAPACITY;
    if (this.count < RATE_CAPACITY) this.count++;
    this.lastArrivalMs = arrivalMs;
  }

  reset(): void {
    this.head = 0;
    this.count = 0;
    this.lastArrivalMs = null;
  }

  /**
   * Frames per second over the frames that arrived within the window: (n − 1) frame intervals
   * over their summed duration. Each interval is taken from the frames' own timestamps (exact
   * under batching, where a listener gets many frames at one arrival time) unless that step is
   * not a plausible one of a running clock — zero or negative, or longer than the arrival step
   * plus SOURCE_STEP_SLACK_S — and then from the arrival times. That is what happens when the
   * source clock restarts: a robot link's frames are timed from the episode start during an
   * episode and from the connection's first frame outside one, so at an episode's start the
   * stamps jump back and at its end they jump forward by the time since the connection. Taken
   * end to end (first to last stamp in the window), such a jump read a 500 Hz robot as 100 Hz
   * for 2 s after every episode. Null when fewer than two frames arrived in the window.
   */
  rateHz(nowMs: number): number | null {
    let n = 0;
    let spanS = 0;
    let laterIdx = -1;
    for (let k = 0; k < this.count; k++) {
      const i = (this.head - 1 - k + RATE_CAPACITY) % RATE_CAPACITY;
      if (this.arrivalMs[i] < nowMs - RATE_WINDOW_MS) break;
      if (laterIdx >= 0) {
        const sourceStepS = this.sourceS[laterIdx] - this.sourceS[i];
        const arrivalStepS = Math.max(0, this.arrivalMs[laterIdx] - this.arrivalMs[i]) / 1000;
        spanS += sourceStepS > 0 && sourceStepS <= arrivalStepS + SOURCE_STEP_SLACK_S ? sourceStepS : arrivalStepS;
      }
      n++;
      laterIdx = i;
    }
    if (n < 2) return null;
    return spanS > 0 ? (n - 1) / spanS : null;
  }
}

/** A problem as the registry keeps it: a copy, when it arrived and in which order. */
interface Kept {
  problem: Problem;
  receivedAtMs: number;
  order: number;
}

interface Entry {
  id: string;
  kind: ConnectionKind;
  name: string;
  url: string | null;
  /** "G1 over DDS" entries: what the runner drives, and its URL while it runs. */
  dds: (G1DdsSpec & { runnerUrl: string | null }) | null;
  backend: Backend | null;
  creating: Promise<Backend> | null;
  /** Bumped on disconnect/remove, so a backend that finishes being created afterwards is closed. */
  generation: number;
  /** Conditions that hold now, by code (each with its arrival order). */
  conditions: Map<string, Kept>;
  /** Recent incidents, newest first, with when they arrived (registry clock). */
  incidents: Kept[];
  rate: RateMeter;
  /** Gaps between deliveries of frames (timing health), registry clock. */
  gaps: RecentGaps;
  /** The newest frame's measured state, copied in place; null before the first frame. */
  latest: LatestState | null;
  subscribers: Set<EntrySubscriber>;
  leasedRunId: string | null;
}

/** A consumer of an entry's stream: kept across reconnects, subscribed to the current backend's hub. */
interface EntrySubscriber {
  listener: BackendListener;
  delivery: StreamDelivery;
  /** Its subscription on the current backend's hub; null while the entry has no backend. */
  detach: (() => void) | null;
}

/** Why an entry has no backend in this build (no factory registered for its kind). */
function unavailableProblem(kind: ConnectionKind): Problem {
  return kind === 'embedded_simulator'
    ? {
        severity: 'error',
        code: 'backend_unavailable',
        message:
          'the embedded simulator is not part of this build (no factory registered in src/services/console/backendFactories.ts)',
        atMs: 0,
      }
    : {
        severity: 'error',
        code: 'backend_unavailable',
        message: `no ${kind === 'robot' ? 'robot' : 'remote simulator'} client in this build (no factory registered in src/services/console/backendFactories.ts)`,
        atMs: 0,
      };
}

export class ConnectionRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly factories: BackendFactories;
  private readonly modelFile: string;
  private readonly now: () => number;
  private readonly runnerEstopSocket: string | null;
  private nextRemote = 1;
  private nextRobot = 1;
  private closed = false;
  /** Arrival order of problems (for newest-first listing). */
  private problemOrder = 0;

  constructor(options: ConnectionRegistryOptions) {
    this.factories = options.factories;
    this.modelFile = options.modelFile;
    this.now = options.now ?? Date.now;
    this.runnerEstopSocket = options.runnerEstopSocket ?? null;
    this.entries.set(EMBEDDED_SIM_ID, this.newEntry(EMBEDDED_SIM_ID, 'embedded_simulator', EMBEDDED_SIM_NAME, null));
  }

  private newEntry(id: string, kind: ConnectionKind, name: string, url: string | null): Entry {
    return {
      id,
      kind,
      name,
      url,
      dds: null,
      backend: null,
      creating: null,
      generation: 0,
      conditions: new Map(),
      incidents: [],
      rate: new RateMeter(),
      gaps: new RecentGaps(),
      latest: null,
      subscribers: new Set(),
      leasedRunId: null,
    };
  }

  private entry(id: string): Entry {
    const e = this.entries.get(id);
    if (!e) throw new ApiFailure('not_found', `no connection "${id}"`, 'params.id');
    return e;
  }

  private factoryOf(kind: ConnectionKind): ((ctx: never) => Backend | Promise<Backend>) | undefined {
    return kind === 'embedded_simulator'
      ? this.factories.embeddedSimulator
      : kind === 'robot'
        ? this.factories.robot
        : this.factories.remoteSimulator;
  }

  private available(e: Entry): boolean {
    if (e.dds) return this.factories.g1Dds !== undefined;
    return this.factoryOf(e.kind) !== undefined;
  }

  /** Keeps a problem: a condition until withdrawn, an incident among the recent ones (a code this build does not know is an incident). */
  private addProblem(e: Entry, problem: Problem): void {
    const kept: Kept = { problem: { ...problem }, receivedAtMs: this.now(), order: ++this.problemOrder };
    if (problemKindOf(problem.code) === 'condition') {
      e.conditions.set(problem.code, kept);
      return;
    }
    e.incidents.unshift(kept);
    if (e.incidents.length > MAX_INCIDENTS_KEPT) e.incidents.length = MAX_INCIDENTS_KEPT;
  }

  /** A condition ended: no longer listed. */
  private withdrawProblem(e: Entry, code: string): void {
    e.conditions.delete(code);
  }

  /** The backend is gone: what it reported as holding no longer holds (the registry's own stay). */
  private forgetBackendConditions(e: Entry): void {
    for (const code of [...e.conditions.keys()]) if (code !== 'backend_create_failed') e.conditions.delete(code);
  }

  /** What is current on the entry: the conditions that hold (newest first), then recent incidents (newest first). */
  private currentProblems(e: Entry, now: number): Problem[] {
    const conditions = [...e.conditions.values()].sort((a, b) => b.order - a.order);
    const incidents = e.incidents.filter((k) => now - k.receivedAtMs <= INCIDENT_CURRENT_MS);
    return [...conditions, ...incidents].map((k) => k.problem);
  }

  /** Records a problem on an entry (shown in the Connections panel), e.g. from the episode runner. */
  reportProblem(id: string, problem: BackendProblem): void {
    const e = this.entries.get(id);
    if (e) this.addProblem(e, problem);
  }

  /** The entry's kind, or null when there is no such entry. */
  kindOf(id: string): ConnectionKind | null {
    return this.entries.get(id)?.kind ?? null;
  }

  /** The entry's backend if it exists now (never creates one). */
  existingBackend(id: string): Backend | null {
    return this.entries.get(id)?.backend ?? null;
  }

  /** The newest measured state of the entry's stream (the live robot); null before a frame or after a disconnect. */
  latestState(id: string): Readonly<LatestState> | null {
    return this.entries.get(id)?.latest ?? null;
  }

  /** The largest gap between frame deliveries over the last `windowMs` (incl. the one open now), ms. */
  frameGapMaxMs(id: string, windowMs: number): number | null {
    const e = this.entries.get(id);
    return e && e.backend ? e.gaps.maxGapMs(this.now(), windowMs) : null;
  }

  /** Every entry, the embedded simulator first, then remote ones in the order they were added. */
  list(): ConnectionInfo[] {
    return [...this.entries.values()].map((e) => this.info(e));
  }

  get(id: string): ConnectionInfo {
    return this.info(this.entry(id));
  }

  private info(e: Entry): ConnectionInfo {
    const now = this.now();
    const b = e.backend;
    const current = this.currentProblems(e, now);
    const problems = this.available(e) ? current : [unavailableProblem(e.kind), ...current];
    const robot = b ? robotBackendOf(b) : null;
    let latencyMs: number | null = null;
    if (robot) {
      try {
        const l = robot.linkStats().latencyMs;
        latencyMs = typeof l === 'number' && Number.isFinite(l) ? l : null;
      } catch {
        latencyMs = null;
      }
    }
    const last = e.rate.lastArrivalMs;
    return {
      id: e.id,
      kind: e.kind,
      name: e.name,
      url: e.url,
      ...(e.dds && { dds: { interface: e.dds.interfaceName, domain: e.dds.domainId, runnerUrl: e.dds.runnerUrl } }),
      executionDomain: b?.capabilities.executionDomain ?? (e.kind === 'robot' ? 'real_robot' : 'simulation'),
      presence: b ? b.presence : e.creating ? 'connecting' : 'disconnected',
      active: b !== null,
      available: this.available(e),
      rateHz: e.rate.rateHz(now),
      declaredRateHz: b ? b.capabilities.stateRateHz : null,
      lastFrameAgeMs: last === null ? null : Math.max(0, now - last),
      latencyMs,
      leasedRunId: e.leasedRunId,
      problems: problems.slice(0, MAX_PROBLEMS_SENT).map((p) => ({ ...p })),
      removable: e.kind !== 'embedded_simulator',
    };
  }

  /** Adds a remote simulator (or, with kind 'robot', the robot) by URL and starts connecting to it. Refuses duplicates. */
  async addRemote(urlText: string, kind: RemoteKind = 'remote_simulator'): Promise<ConnectionInfo> {
    if (this.closed) throw new ApiFailure('conflict', 'the console services are shutting down');
    const check = checkBackendUrl(urlText);
    if (!check.ok) throw new ApiFailure('bad_params', `connections.add: params.url: ${check.reason}`, 'params.url');
    for (const e of this.entries.values()) {
      if (e.url === check.url) throw new ApiFailure('conflict', `${check.url} is already listed`, 'params.url');
    }
    const id = kind === 'robot' ? `robot-${this.nextRobot++}` : `remote-${this.nextRemote++}`;
    const e = this.newEntry(
      id,
      kind,
      kind === 'robot' ? `Robot ${new URL(check.url).host}` : new URL(check.url).host,
      check.url,
    );
    return this.enlist(e);
  }

  /**
   * Adds "G1 over DDS" for the interface and domain and starts its runner (one entry per interface
   * and domain). The entry is a robot: trials, calibration and the robot link limits apply as to a
   * runner added by URL.
   */
  async addG1Dds(spec: G1DdsSpec): Promise<ConnectionInfo> {
    if (this.closed) throw new ApiFailure('conflict', 'the console services are shutting down');
    const iface = ddsInterfaceNameProblem(spec.interfaceName);
    if (iface)
      throw new ApiFailure('bad_params', `connections.addG1Dds: params.interface: ${iface}`, 'params.interface');
    const domain = ddsDomainIdProblem(spec.domainId);
    if (domain) throw new ApiFailure('bad_params', `connections.addG1Dds: params.domain: ${domain}`, 'params.domain');
    const after = afterClipProblem(spec.afterClip, spec.standingPolicyPath);
    if (after)
      throw new ApiFailure(
        'bad_params',
        `connections.addG1Dds: params.${spec.afterClip === 'standing_policy' ? 'standingPolicy' : 'afterClip'}: ${after}`,
        spec.afterClip === 'standing_policy' ? 'params.standingPolicy' : 'params.afterClip',
      );
    for (const e of this.entries.values()) {
      if (e.dds && e.dds.interfaceName === spec.interfaceName && e.dds.domainId === spec.domainId) {
        throw new ApiFailure('conflict', `${e.name} is already listed`, 'params.interface');
      }
    }
    const id = `robot-${this.nextRobot++}`;
    const e = this.newEntry(id, 'robot', g1DdsConnectionName(spec), null);
    e.dds = { ...spec, runnerUrl: null };
    return this.enlist(e);
  }

  /**
   * Lists a new entry and, when it can be reached now, creates its backend. A failure to create it
   * is recorded as a problem on the entry, which stays listed so the operator sees why.
   */
  private async enlist(e: Entry): Promise<ConnectionInfo> {
    this.entries.set(e.id, e);
    if (this.available(e)) {
      try {
        await this.ensureBackend(e);
      } catch {
        // Recorded on the entry by ensureBackend.
      }
    }
    return this.info(e);
  }

  /** Creates the entry's backend if there is none (the embedded simulator starts lazily). */
  async connect(id: string): Promise<ConnectionInfo> {
    const e = this.entry(id);
    await this.ensureBackend(e);
    return this.info(e);
  }

  /** The entry's backend, created on first use. */
  async backend(id: string): Promise<Backend> {
    return this.ensureBackend(this.entry(id));
  }

  private ensureBackend(e: Entry): Promise<Backend> {
    if (this.closed) return Promise.reject(new ApiFailure('conflict', 'the console services are shutting down'));
    if (e.backend) return Promise.resolve(e.backend);
    if (e.creating) return e.creating;
    if (!this.available(e)) {
      const p = unavailableProblem(e.kind);
      return Promise.reject(new ApiFailure('unsupported', `${e.name}: ${p.message}`));
    }
    const generation = e.generation;
    const create = async (): Promise<Backend> => {
      const dds = e.dds;
      const backend = dds
        ? await this.createG1Dds(e, dds)
        : e.kind === 'embedded_simulator'
          ? await this.factories.embeddedSimulator!({ modelFile: this.modelFile })
          : e.kind === 'robot'
            ? await this.factories.robot!({ id: e.id, url: e.url! })
            : await this.factories.remoteSimulator!({ id: e.id, url: e.url! });
      if (generation !== e.generation || this.closed || !this.entries.has(e.id)) {
        // Disconnected or removed while it was being created.
        await backend.close().catch(() => {});
        throw new ApiFailure('conflict', `${e.name}: disconnected while connecting`);
      }
      e.rate.reset();
      this.withdrawProblem(e, 'backend_create_failed');
      this.attachHub(e, backend);
      e.backend = backend;
      return backend;
    };
    e.creating = create()
      .catch((err: unknown) => {
        if (err instanceof ApiFailure) throw err;
        const message = err instanceof Error ? err.message : String(err);
        this.addProblem(e, {
          severity: 'error',
          code: 'backend_create_failed',
          message: `could not start: ${message}`,
          atMs: this.now(),
        });
        throw new ApiFailure('internal', `${e.name}: could not start: ${message}`);
      })
      .finally(() => {
        e.creating = null;
      });
    return e.creating;
  }

  private async createG1Dds(e: Entry, dds: NonNullable<Entry['dds']>): Promise<Backend> {
    const socket = this.runnerEstopSocket;
    if (socket) {
      const other = [...this.entries.values()].find((o) => o !== e && o.dds && (o.backend || o.creating));
      if (other)
        throw new ApiFailure(
          'conflict',
          `${e.name}: ${other.name} runs a runner already, and the console's interlock e-stop socket serves one runner at a time: disconnect it first`,
        );
    }
    const made = await this.factories.g1Dds!({
      id: e.id,
      interfaceName: dds.interfaceName,
      domainId: dds.domainId,
      afterClip: dds.afterClip,
      ...(dds.standingPolicyPath !== undefined ? { standingPolicyPath: dds.standingPolicyPath } : {}),
      interlockTripSocket: socket,
    });
    dds.runnerUrl = made.runnerUrl;
    return made.backend;
  }

  /** Takes the backend's stream through its hub: the registry's measurements first, then the entry's subscribers. */
  private attachHub(e: Entry, backend: Backend): void {
    const hub = backendHub(backend);
    hub.subscribe({ name: 'connection registry', delivery: 'every', onEvents: (events) => this.measure(e, events) });
    for (const sub of e.subscribers) this.attachSubscriber(e, sub, backend);
  }

  private attachSubscriber(e: Entry, sub: EntrySubscriber, backend: Backend): void {
    sub.detach = backendHub(backend).subscribe({
      name: `a consumer of ${e.name}'s stream`,
      delivery: sub.delivery,
      onEvents: sub.listener,
      onError: (err) =>
        this.addProblem(e, {
          severity: 'warn',
          code: 'subscriber_error',
          message: `a consumer of ${e.name}'s stream failed: ${err instanceof Error ? err.message : String(err)}`,
          atMs: this.now(),
        }),
    });
  }

  /** The backend is going: its hub lets the listener go; the entry's subscribers wait for the next one. */
  private detachHub(e: Entry, backend: Backend): void {
    for (const sub of e.subscribers) sub.detach = null;
    releaseBackendHub(backend);
  }

  private measure(e: Entry, events: BackendEvent[]): void {
    const now = this.now();
    for (const ev of events) {
      if (ev.type === 'frames') {
        for (const f of ev.frames) e.rate.record(now, f.timeS);
        const f = ev.frames.at(-1);
        if (f) {
          e.gaps.record(now);
          copyLatest((e.latest ??= newLatest()), f, now);
        }
      } else if (ev.type === 'problem') {
        this.addProblem(e, ev.problem);
      } else if (ev.type === 'problem_cleared') {
        this.withdrawProblem(e, ev.code);
      }
    }
  }

  /**
   * Receives the entry's backend's events (now and after reconnects) through its hub: with
   * 'every' (the default) every batch in order, holding the backend back while it works; with
   * 'latest' (a display) the newest frames, coalesced while it is busy.
   */
  subscribe(id: string, listener: BackendListener, delivery: StreamDelivery = 'every'): () => void {
    const e = this.entry(id);
    const sub: EntrySubscriber = { listener, delivery, detach: null };
    e.subscribers.add(sub);
    if (e.backend) this.attachSubscriber(e, sub, e.backend);
    return () => {
      e.subscribers.delete(sub);
      sub.detach?.();
      sub.detach = null;
    };
  }

  /** Leases the entry's backend for one episode; the lease's release clears the entry's run id. */
  async acquire(id: string, runId: string): Promise<BackendLease> {
    const e = this.entry(id);
    if (e.leasedRunId !== null) throw new ApiFailure('conflict', `${e.name} is in use by run ${e.leasedRunId}`);
    const backend = await this.ensureBackend(e);
    const lease = await backend.acquire(runId);
    e.leasedRunId = runId;
    let released = false;
    return {
      runId: lease.runId,
      reset: (initial) => lease.reset(initial),
      run: (request) => lease.run(request),
      stop: (outcome, reason) => lease.stop(outcome, reason),
      release: async () => {
        if (released) return;
        released = true;
        try {
          await lease.release();
        } finally {
          if (e.leasedRunId === runId) e.leasedRunId = null;
        }
      },
    };
  }

  /** Closes the entry's backend; the entry stays listed. Refused while a run holds the lease. */
  async disconnect(id: string): Promise<ConnectionInfo> {
    const e = this.entry(id);
    await this.closeBackend(e);
    return this.info(e);
  }

  /** Disconnects and forgets a remote entry. */
  async remove(id: string): Promise<void> {
    const e = this.entry(id);
    if (e.kind === 'embedded_simulator') throw new ApiFailure('conflict', `${e.name} cannot be removed`, 'params.id');
    await this.closeBackend(e);
    this.entries.delete(id);
  }

  private async closeBackend(e: Entry): Promise<void> {
    if (e.leasedRunId !== null)
      throw new ApiFailure('conflict', `${e.name} is in use by run ${e.leasedRunId}: stop the run first`);
    e.generation++;
    const b = e.backend;
    e.backend = null;
    e.rate.reset();
    e.gaps.reset();
    e.latest = null;
    if (e.dds) e.dds.runnerUrl = null;
    if (!b) return;
    this.detachHub(e, b);
    this.forgetBackendConditions(e);
    try {
      await b.close();
    } catch (err) {
      this.addProblem(e, {
        severity: 'warn',
        code: 'close_failed',
        message: `closing failed: ${err instanceof Error ? err.message : String(err)}`,
        atMs: this.now(),
      });
    }
  }

  /** Closes every backend (services shutting down). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(
      [...this.entries.values()].map(async (e) => {
        e.generation++;
        const b = e.backend;
        e.backend = null;
        if (b) {
          this.detachHub(e, b);
          await b.close().catch(() => {});
        }
      }),
    );
  }
}
