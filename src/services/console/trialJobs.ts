import fs from 'node:fs';
import path from 'node:path';
import type {
  AdmittedPairDto,
  ApiParams,
  CalibrationAcceptResult,
  CalibrationCaptureDto,
  RobotLinkStatusDto,
  StillnessDto,
  TrialEpisodeDto,
  TrialJobStatus,
  TrialProgressDetail,
  TrialPromptDto,
  TrialQueueDto,
  TrialStartResult,
} from '../../api/contract';
import { ROBOT_LINK_FRESH_MS, SAFETY_STATUS_HZ, TRIAL_LIVE_PUSH_HZ } from '../../api/contract';
import { clipToDto } from '../../api/clipDto';
import { robotBackendOf, type Backend, type BackendEvent } from '../../domain/backend/backend';
import type { StartResiduals } from '../../domain/calibration/residuals';
import type { EpisodeMetrics } from '../../domain/metrics/readings';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { CalibrationRecord } from '../../domain/trace/records';
import type { LoadedWorkload } from '../../domain/workload/snapshot';
import { OffThreadFiles } from './offThread';
import type { EmbeddedSimulator } from '../sim/embeddedSimulator';
import { openCampaign, otherWriterOf, type CampaignStore } from '../trace';
import type { AdmittedPair } from '../trial/admittedPairs';
import { TrialRefusedError } from '../trial/matchedTrialRunner';
import { trialRobotOf } from '../trial/trialRobot';
import type {
  CalibrationCaptureRequest,
  CalibrationCaptureResult,
  MatchedPairRequest,
  MatchedPairResult,
  TrialRobot,
  StillnessProgress,
  TrialProgressEvent,
} from '../trial/trialTypes';
import { loadWorkload } from '../workload';
import { schedulerFacts } from '../os/schedulerFacts';
import { ApiFailure, FieldError } from './apiFailure';
import type { ClipCache } from './clipCache';
import { EMBEDDED_SIM_ID, type ConnectionRegistry } from './connectionRegistry';
import type { EventHub } from './eventHub';
import type { InterlockSessions } from './interlockSessions';
import { SerializedResult } from './serializedResult';
import { robotLinkFigures } from './robotLive';

// The Calibration panel and the Trial runner from the console (DESIGN §6, §8):
//
//   calibration.capture  captureRobotCalibration (src/services/trial) on a robot connection of the
//                        registry; stillness progress → `calibration.stillness` pushes (≤ 5 Hz);
//                        the record waits here until calibration.accept stores it (putCalibration)
//   trial.start          runMatchedPair as a job with an AbortController: the operator's STOP
//                        (trial.stop) aborts it; the runner's prompts (confirmTrial, confirmReset)
//                        become `trial.prompt` pushes answered by trial.confirm; its progress →
//                        `trial.progress` (with the job's status); its 50 Hz `live` readings, each
//                        paired with the robot's latest measured joint angles, → `trial.live`
//                        batches at TRIAL_LIVE_PUSH_HZ, skipped (counted) for a client that is behind
//   safety.status        SAFETY_STATUS_HZ while an interlock is open or a robot is connected: the
//                        interlock light and each robot link's age (the panel's lights)
//
// The safety decisions are the runner's (its gate); this file never sends motion. One capture and
// one trial job at a time: there is one robot.

/** The trial services this file calls; tests inject their own. Default: src/services/trial. */
export interface TrialServices {
  captureRobotCalibration(req: CalibrationCaptureRequest): Promise<CalibrationCaptureResult>;
  runMatchedPair(req: MatchedPairRequest): Promise<MatchedPairResult>;
  listAdmittedPairs(store: CampaignStore, trials?: number): AdmittedPair[];
}

export interface TrialJobsOptions {
  hub: EventHub;
  registry: ConnectionRegistry;
  interlocks: InterlockSessions;
  clips: ClipCache;
  profile: () => RobotProfile;
  /** The file worker: trial.episode is parsed there (default: a worker of this job table's own). */
  files?: OffThreadFiles;
  services?: TrialServices;
  /** The embedded simulator for the pair's simulation branch (default: the registry's). */
  simulator?: () => Promise<EmbeddedSimulator>;
  now?: () => number;
  log?: (line: string) => void;
  /** Batch work that holds the machine's cores (a sensitivity run): a trial or a capture is refused meanwhile. */
  otherWork?: () => string | null;
}

/** Stillness pushes per second during a capture. */
const STILLNESS_PUSH_HZ = 5;
/** Samples kept for a trial.live batch; older ones are dropped for display (counted). */
const MAX_LIVE_BUFFER = 500;
const DEFAULT_TRIALS = 3;

let serial = 0;
const nextId = (prefix: string, now: number): string => `${prefix}-${now.toString(36)}-${++serial}`;

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

async function defaultServices(): Promise<TrialServices> {
  const m = await import('../trial');
  return {
    captureRobotCalibration: m.captureRobotCalibration,
    runMatchedPair: m.runMatchedPair,
    listAdmittedPairs: m.listAdmittedPairs,
  };
}

/** The TrialRobot of a registry entry: its watchers subscribe through the registry to the backend's hub. */
function registryTrialRobot(
  registry: ConnectionRegistry,
  connectionId: string,
  backend: Backend,
  log: (line: string) => void,
): TrialRobot {
  return trialRobotOf(backend, {
    subscribe: (l) => registry.subscribe(connectionId, l),
    robotUnit: registry.get(connectionId).url ?? connectionId,
    log: (line) => log(`${connectionId}: ${line}`),
  });
}

function stillnessDto(p: StillnessProgress): StillnessDto {
  return {
    still: p.still,
    windowFilledS: p.windowFilledS,
    windowNeededS: p.windowNeededS,
    reasons: p.reasons.map((r) => ({
      code: r.code,
      message: r.message,
      ...(r.joint !== undefined && { joint: r.joint }),
    })),
    stats: p.stats ? numericRecord(p.stats) : null,
  };
}

function numericRecord(o: object): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(o)) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  return out;
}

function residualsDto(r: StartResiduals | null) {
  if (!r) return null;
  return {
    jointRad: [...r.jointRad],
    maxAbsJointRad: r.maxAbsJointRad,
    maxAbsJoint: r.maxAbsJoint,
    rmsJointRad: r.rmsJointRad,
    rollRad: r.rollRad,
    pitchRad: r.pitchRad,
    headingRad: r.headingRad,
    rootPosM: r.rootPosM ? ([r.rootPosM[0], r.rootPosM[1], r.rootPosM[2]] as [number, number, number]) : null,
  };
}

const mpjpeOf = (m: EpisodeMetrics | null): number | null => (m && m.mpjpeLMm.available ? m.mpjpeLMm.value : null);

interface PendingCapture {
  captureId: string;
  campaignDir: string;
  record: CalibrationRecord;
}

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

interface PromptWait {
  prompt: TrialPromptDto;
  resolve: (answer: { ok: boolean; note: string | null }) => void;
}

interface Job {
  status: TrialJobStatus;
  controller: AbortController;
  store: CampaignStore | null;
  prompt: PromptWait | null;
  /** The robot's latest measured state (copied from the registry's stream). */
  latest: {
    jointPosRad: Float64Array;
    rootPosM: Float64Array | null;
    rootQuatWxyz: Float64Array | null;
    have: boolean;
  };
  live: { runId: string | null; buffer: LiveSample[]; failure: string | null; skipped: Map<number, number> };
  unsubscribe: (() => void) | null;
  timer: ReturnType<typeof setInterval> | null;
  done: Promise<void>;
}

export class TrialJobs {
  private readonly jobs = new Map<string, Job>();
  private lastJobId: string | null = null;
  private capture: { captureId: string; connectionId: string; controller: AbortController } | null = null;
  private readonly captures = new Map<string, PendingCapture>();
  private workload: LoadedWorkload | null = null;
  /** The file worker's generation of core-v1 while it runs (warmUp); it never rejects. */
  private workloadFetch: Promise<void> | null = null;
  private services: TrialServices | null;
  private statusTimer: ReturnType<typeof setInterval> | null = null;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private closed = false;
  /** The file worker when none is given (started on first use, closed with this table). */
  private ownFiles: OffThreadFiles | null = null;

  constructor(private readonly o: TrialJobsOptions) {
    this.services = o.services ?? null;
    this.now = o.now ?? Date.now;
    this.log = o.log ?? (() => {});
    this.statusTimer = setInterval(() => this.pushSafetyStatus(), 1000 / SAFETY_STATUS_HZ);
    this.statusTimer.unref?.();
  }

  private async svc(): Promise<TrialServices> {
    return (this.services ??= await defaultServices());
  }

  /** The built-in workload: the one warmUp fetched, else generated here (blocking, 0.5–2 s). */
  private coreV1(): LoadedWorkload {
    return (this.workload ??= loadWorkload('core-v1', { profile: this.o.profile() }));
  }

  /**
   * Has the built-in workload generated before it is needed (called when an interlock box opens:
   * a matched trial follows). In the file worker when there is one, so this loop — STOP, the
   * robot link, the safety gate — is not blocked for the 0.5–2 s the generation takes (it was, and
   * the top bar's TIMING read BAD with a 1.1 s lowstate gap after every box Open); without a
   * worker it is generated here at once. Never throws: a failure is logged, and coreV1() tries
   * again when a trial needs it.
   */
  warmUp(): void {
    if (this.workload !== null || this.workloadFetch !== null) return;
    const files = this.o.files;
    if (!files) {
      try {
        this.coreV1();
      } catch (err) {
        this.log(`core-v1 could not be generated: ${errorText(err)}`);
      }
      return;
    }
    this.workloadFetch = files.builtinWorkload('core-v1').then(
      (wl) => {
        this.workload ??= wl;
      },
      (err: unknown) => {
        this.workloadFetch = null;
        this.log(`core-v1 could not be generated in the file worker: ${errorText(err)}`);
      },
    );
  }

  /** The built-in workload if the pair was decided on it (passed to the runner so it does not regenerate it). */
  private workloadFor(store: CampaignStore, pair: AdmittedPair): LoadedWorkload | undefined {
    const snap = pair.snapshotHash ? store.getWorkloadSnapshot(pair.snapshotHash) : null;
    return snap && snap.source === 'builtin' && snap.id === 'core-v1' ? this.coreV1() : undefined;
  }

  /** A clip by core-v1 id or name, or one this console loaded; null when unknown. */
  private findClip(ref: string): MotionClip | null {
    const cached = this.o.clips.get(ref);
    if (cached) return cached;
    const wl = this.coreV1();
    const i = wl.snapshot.clips.findIndex((c) => c.id === ref || c.name === ref);
    return i >= 0 ? wl.clips[i] : null;
  }

  // ---- lights ------------------------------------------------------------------------------

  /** Each robot connection's link figures (the link light: green only when fresh). */
  robotLinks(): RobotLinkStatusDto[] {
    return this.o.registry
      .list()
      .filter((c) => c.kind === 'robot')
      .map((c) => {
        const b = this.o.registry.existingBackend(c.id);
        return {
          connectionId: c.id,
          name: c.name,
          presence: c.presence,
          lastFrameAgeMs: c.lastFrameAgeMs,
          rateHz: c.rateHz,
          latencyMs: c.latencyMs,
          fresh: c.presence === 'present' && c.lastFrameAgeMs !== null && c.lastFrameAgeMs < ROBOT_LINK_FRESH_MS,
          freshLimitMs: ROBOT_LINK_FRESH_MS,
          globalRoot: b ? b.capabilities.globalRootPosition : false,
          ...robotLinkFigures(this.o.registry, c.id),
        };
      });
  }

  /** Whether the last safety.status pushed had a box or a robot in it. */
  private safetyStatusActive = false;

  private pushSafetyStatus(): void {
    if (this.closed) return;
    const interlock = this.o.interlocks.status();
    const robots = this.robotLinks();
    const active = interlock !== null || robots.some((r) => r.presence !== 'disconnected');
    // Idle: nothing to push, except once when the last robot and box have gone, so that the
    // top bar's chips (WBC, tilt, timing, reset) do not keep the last connected robot's state.
    if (!active && !this.safetyStatusActive) return;
    this.safetyStatusActive = active;
    const event = {
      type: 'safety.status' as const,
      atMs: this.now(),
      interlock,
      robots,
      host: schedulerFacts(performance.now()),
    };
    this.o.hub.broadcastTransient(() => event);
  }

  // ---- calibration -------------------------------------------------------------------------

  private requireRobot(connectionId: string): Promise<Backend> {
    const kind = this.o.registry.kindOf(connectionId);
    if (kind === null) throw new ApiFailure('not_found', `no connection "${connectionId}"`, 'params.connectionId');
    if (kind !== 'robot')
      throw new ApiFailure(
        'bad_params',
        `connection "${connectionId}" is a simulator: calibrations and real trials need the robot (add it in Connections as a robot)`,
        'params.connectionId',
      );
    return this.o.registry.backend(connectionId);
  }

  private requireCampaign(dir: string): string {
    const abs = path.resolve(dir);
    if (!fs.existsSync(path.join(abs, 'campaign.sqlite')))
      throw new ApiFailure('not_found', `no campaign at ${abs} (no campaign.sqlite)`, 'params.campaignDir');
    return abs;
  }

  /** A campaign a job will write: refused at once while another process holds its writer lock (writerLock.ts). */
  private requireWritableCampaign(dir: string): string {
    const abs = this.requireCampaign(dir);
    const other = otherWriterOf(abs);
    if (other) throw new ApiFailure('busy', other, 'params.campaignDir');
    return abs;
  }

  async captureCalibration(p: ApiParams<'calibration.capture'>): Promise<CalibrationCaptureDto> {
    if (this.capture)
      throw new ApiFailure(
        'conflict',
        `a capture is running on ${this.capture.connectionId}: wait for it or cancel it`,
      );
    const running = this.runningJob();
    if (running) throw new ApiFailure('conflict', `trial ${running.status.jobId} is running: calibrate between pairs`);
    this.refuseDuringOtherWork();
    const campaignDir = this.requireWritableCampaign(p.campaignDir);
    let clip: MotionClip | null = null;
    if (p.clipId !== undefined) {
      clip = this.findClip(p.clipId);
      if (!clip)
        throw new ApiFailure(
          'not_found',
          `clip "${p.clipId}" is neither in core-v1 nor loaded in this console`,
          'params.clipId',
        );
    }
    const backend = await this.requireRobot(p.connectionId);
    const link = registryTrialRobot(this.o.registry, p.connectionId, backend, this.log);
    const captureId = nextId('capture', this.now());
    const controller = new AbortController();
    this.capture = { captureId, connectionId: p.connectionId, controller };
    let lastPush = 0;
    const push = (progress: StillnessProgress, force: boolean): void => {
      const t = this.now();
      if (!force && t - lastPush < 1000 / STILLNESS_PUSH_HZ) return;
      lastPush = t;
      this.o.hub.broadcast({
        type: 'calibration.stillness',
        captureId,
        connectionId: p.connectionId,
        progress: stillnessDto(progress),
      });
    };
    try {
      const s = await this.svc();
      const r = await s.captureRobotCalibration({
        link,
        profile: this.o.profile(),
        clip,
        ...(p.timeoutS !== undefined && { timeoutMs: p.timeoutS * 1000 }),
        onProgress: (progress) => push(progress, progress.still),
        signal: controller.signal,
      });
      if (!r.ok) {
        return {
          ok: false,
          captureId,
          message: r.message,
          reasons: r.reasons.map((x) => ({
            code: x.code,
            message: x.message,
            ...(x.joint !== undefined && { joint: x.joint }),
          })),
          stats: r.stats ? numericRecord(r.stats) : null,
        };
      }
      this.captures.set(captureId, { captureId, campaignDir, record: r.record });
      while (this.captures.size > 8) this.captures.delete(this.captures.keys().next().value as string);
      return {
        ok: true,
        captureId,
        connectionId: p.connectionId,
        campaignDir,
        robotUnit: r.record.robotUnit,
        capturedAt: r.record.capturedAt,
        clip: clip ? { id: clip.id, name: clip.name } : null,
        record: JSON.parse(JSON.stringify(r.record)) as Record<string, unknown>,
        residualsVsClip: residualsDto(r.residualsVsClip),
        clipStartJointRad: clip
          ? Array.from(clip.jointPosRad.subarray(0, clip.jointPosRad.length / clip.frameCount))
          : null,
        measuredJointRad: [...r.record.measured.jointPosRad],
        stats: numericRecord(r.stats),
      };
    } finally {
      this.capture = null;
    }
  }

  async acceptCalibration(p: ApiParams<'calibration.accept'>): Promise<CalibrationAcceptResult> {
    const c = this.captures.get(p.captureId);
    if (!c)
      throw new ApiFailure(
        'not_found',
        `no capture "${p.captureId}" waiting to be accepted (captures are kept until the services restart; capture again)`,
        'params.captureId',
      );
    const store = await openCampaign(c.campaignDir);
    try {
      const stored = store.putCalibration(c.record);
      this.captures.delete(p.captureId);
      return { calibrationId: stored.id, campaignDir: c.campaignDir, captureId: p.captureId };
    } finally {
      store.close();
    }
  }

  cancelCapture(reason = 'cancelled by the operator'): { cancelled: string[] } {
    const c = this.capture;
    if (!c || c.controller.signal.aborted) return { cancelled: [] };
    c.controller.abort(reason);
    return { cancelled: [c.captureId] };
  }

  // ---- trials ------------------------------------------------------------------------------

  /** A sentence for what holds the robot here (a running trial, a capture), or null. */
  busyWith(): string | null {
    const running = this.runningJob();
    if (running) return `trial ${running.status.jobId} is running (pair ${running.status.pairId})`;
    if (this.capture) return `a calibration capture is running on ${this.capture.connectionId}`;
    return null;
  }

  /** Refuses while batch work holds the cores: a robot's heartbeats must not share them. */
  private refuseDuringOtherWork(): void {
    const other = this.o.otherWork?.();
    if (other) throw new ApiFailure('conflict', `${other}: wait for its end before a robot trial or a capture`);
  }

  private runningJob(): Job | null {
    for (const j of this.jobs.values()) if (j.status.state === 'running') return j;
    return null;
  }

  async queue(p: ApiParams<'trial.queue'>): Promise<TrialQueueDto> {
    const dir = this.requireCampaign(p.campaignDir);
    const trials = p.trials ?? DEFAULT_TRIALS;
    const s = await this.svc();
    const store = await openCampaign(dir, { readOnly: true });
    try {
      const pairs: AdmittedPairDto[] = s.listAdmittedPairs(store, trials).map((x) => ({
        pairId: x.pairId,
        clipId: x.clipId,
        clipName: x.clipName,
        bindingKey: x.bindingKey,
        bindingName: x.bindingName,
        bindingLabel: x.bindingLabel,
        contractId: x.contractId,
        admitted: x.admitted,
        reasons: [...x.reasons],
        decidedAt: x.decidedAt,
        snapshotHash: x.snapshotHash,
        matched: x.matched ? { ...x.matched } : null,
      }));
      return { campaignDir: dir, trials, pairs };
    } finally {
      store.close();
    }
  }

  private async simulator(): Promise<EmbeddedSimulator> {
    if (this.o.simulator) return this.o.simulator();
    const b = await this.o.registry.backend(EMBEDDED_SIM_ID);
    const { EmbeddedSimulator: Sim } = await import('../sim/embeddedSimulator');
    if (!(b instanceof Sim))
      throw new ApiFailure(
        'unsupported',
        'the simulation branch needs the embedded MuJoCo simulator, and this build has another backend in its place',
      );
    return b;
  }

  async start(p: ApiParams<'trial.start'>): Promise<TrialStartResult> {
    if (this.closed) throw new ApiFailure('conflict', 'the console services are shutting down');
    const running = this.runningJob();
    if (running)
      throw new ApiFailure(
        'conflict',
        `trial ${running.status.jobId} is running (pair ${running.status.pairId}): stop it or wait for its end`,
      );
    if (this.capture) throw new ApiFailure('conflict', 'a calibration capture is running: wait for it or cancel it');
    this.refuseDuringOtherWork();
    const dir = this.requireWritableCampaign(p.campaignDir);
    const interlock = this.o.interlocks.feed();
    if (!interlock)
      throw new ApiFailure(
        'conflict',
        'no interlock is open: open the interlock box (its device path) before a real trial',
      );
    const backend = await this.requireRobot(p.connectionId);
    const s = await this.svc();
    const sim = await this.simulator();
    const trials = p.trials ?? DEFAULT_TRIALS;

    // The pair and its clip (the reference the viewport shows).
    const store = await openCampaign(dir);
    let pair: AdmittedPair | undefined;
    try {
      const pairs = s.listAdmittedPairs(store, trials);
      const hits = pairs.filter((x) => x.pairId === p.pairId || x.pairId.startsWith(p.pairId));
      if (hits.length > 1 && !hits.some((x) => x.pairId === p.pairId))
        throw new ApiFailure(
          'bad_params',
          `pair "${p.pairId}" is ambiguous (${hits.length} admitted pairs start with it)`,
          'params.pairId',
        );
      pair = hits.find((x) => x.pairId === p.pairId) ?? hits[0];
      if (!pair)
        throw new ApiFailure('not_found', `no qualification pair "${p.pairId}" in this campaign`, 'params.pairId');
      // The refusal the runner would make (its type), raised here before a job starts, so the
      // operator gets it as the answer to trial.start: refused, with the admission's reasons verbatim.
      if (!pair.admitted)
        throw new FieldError(
          'params.pairId',
          new TrialRefusedError(
            `pair ${pair.clipName} × ${pair.bindingName} is not admitted for hardware: ${pair.reasons.join('; ') || 'no reason recorded'}`,
            [...pair.reasons],
          ),
        );
      if (p.calibrationId !== undefined && !store.getCalibration(p.calibrationId))
        throw new ApiFailure(
          'not_found',
          `calibration ${p.calibrationId} is not stored in this campaign: accept a capture first`,
          'params.calibrationId',
        );
    } catch (err) {
      store.close();
      throw err;
    }
    const clip = this.findClip(pair.clipId);
    const workload = this.workloadFor(store, pair);
    const jobId = nextId('trial', this.now());
    const controller = new AbortController();
    const status: TrialJobStatus = {
      jobId,
      campaignDir: dir,
      pairId: pair.pairId,
      connectionId: p.connectionId,
      calibrationId: p.calibrationId ?? null,
      trials,
      state: 'running',
      phase: null,
      phaseMessage: 'starting',
      trialIndex: null,
      clip: { id: pair.clipId, name: pair.clipName },
      binding: pair.bindingKey,
      bindingName: pair.bindingName,
      prompt: null,
      refusals: [],
      lastTrip: null,
      episodes: [],
      liveRunId: null,
      stopRequested: null,
      result: null,
      error: null,
      startedAtMs: this.now(),
      endedAtMs: null,
    };
    const job: Job = {
      status,
      controller,
      store,
      prompt: null,
      latest: { jointPosRad: new Float64Array(29), rootPosM: null, rootQuatWxyz: null, have: false },
      live: { runId: null, buffer: [], failure: null, skipped: new Map() },
      unsubscribe: null,
      timer: null,
      done: Promise.resolve(),
    };
    this.jobs.set(jobId, job);
    this.lastJobId = jobId;
    while (this.jobs.size > 16) {
      const oldest = [...this.jobs.values()].find((j) => j.status.state !== 'running');
      if (!oldest) break;
      this.jobs.delete(oldest.status.jobId);
    }

    // The robot's measured joint angles, for the live robot in the viewport.
    job.unsubscribe = this.o.registry.subscribe(
      p.connectionId,
      async (events: BackendEvent[]) => {
        for (let i = events.length - 1; i >= 0; i--) {
          const ev = events[i];
          if (ev.type !== 'frames' || ev.frames.length === 0) continue;
          const f = ev.frames[ev.frames.length - 1];
          job.latest.jointPosRad.set(f.jointPosRad.subarray(0, 29));
          job.latest.rootPosM = f.rootPosM ? Float64Array.from(f.rootPosM) : null;
          job.latest.rootQuatWxyz = f.rootQuatWxyz ? Float64Array.from(f.rootQuatWxyz) : null;
          job.latest.have = true;
          break;
        }
      },
      'latest',
    );
    job.timer = setInterval(() => this.flushLive(job), 1000 / TRIAL_LIVE_PUSH_HZ);
    job.timer.unref?.();

    const link = registryTrialRobot(this.o.registry, p.connectionId, backend, this.log);
    const ask = (prompt: TrialPromptDto): Promise<{ ok: boolean; note: string | null }> =>
      new Promise((resolve) => {
        if (controller.signal.aborted) return resolve({ ok: false, note: null });
        job.prompt = { prompt, resolve };
        status.prompt = prompt;
        this.o.hub.broadcast({ type: 'trial.prompt', jobId, prompt });
        this.pushProgress(job, null);
        controller.signal.addEventListener('abort', () => this.answer(job, prompt.promptId, false, null), {
          once: true,
        });
      });

    job.done = (async () => {
      try {
        const result = await s.runMatchedPair({
          store,
          link,
          interlock,
          sim,
          profile: this.o.profile(),
          ...(workload && { workload }),
          pairId: pair.pairId,
          trials,
          calibrationId: p.calibrationId ?? null,
          operator: {
            confirmTrial: async (info) =>
              (
                await ask({
                  promptId: nextId('prompt', this.now()),
                  kind: 'confirm_trial',
                  askedAtMs: this.now(),
                  trial: { ...info, calibrationCheck: { ...info.calibrationCheck } },
                  reset: null,
                })
              ).ok,
            confirmReset: async (info) => {
              const a = await ask({
                promptId: nextId('prompt', this.now()),
                kind: 'confirm_reset',
                askedAtMs: this.now(),
                trial: null,
                reset: { ...info },
              });
              return a.ok ? (a.note ?? 'reset confirmed from the console') : null;
            },
          },
          onProgress: (e) => this.onProgress(job, e),
          signal: controller.signal,
          log: this.log,
        });
        status.result = {
          parentTraceId: result.parentTraceId,
          calibrationId: result.calibrationId,
          sim: {
            runId: result.sim.runId,
            outcome: result.sim.outcome,
            resumed: result.sim.resumed,
            mpjpeLMm: mpjpeOf(result.sim.metrics),
          },
          real: result.real.map((r) => ({
            runId: r.runId,
            trialIndex: r.trialIndex,
            outcome: r.outcome,
            reason: r.reason,
            frames: r.frames,
            resumed: r.resumed,
            mpjpeLMm: mpjpeOf(r.metrics),
          })),
          remaining: result.remaining,
          stoppedEarly: result.stoppedEarly,
        };
        status.calibrationId = result.calibrationId;
        status.state = result.stoppedEarly !== null || controller.signal.aborted ? 'stopped' : 'completed';
      } catch (err) {
        status.state = controller.signal.aborted ? 'stopped' : 'failed';
        status.error = errorText(err);
      } finally {
        this.finish(job);
      }
    })();
    this.pushProgress(job, null);
    return { status: this.copy(status), reference: clip ? clipToDto(clip) : null };
  }

  private finish(job: Job): void {
    const s = job.status;
    if (job.prompt) this.answer(job, job.prompt.prompt.promptId, false, null);
    this.flushLive(job);
    job.unsubscribe?.();
    job.unsubscribe = null;
    if (job.timer) clearInterval(job.timer);
    job.timer = null;
    try {
      job.store?.close();
    } catch {
      // closing twice or after a failure: nothing left to do
    }
    job.store = null;
    s.liveRunId = null;
    s.prompt = null;
    s.endedAtMs = this.now();
    const message =
      s.state === 'failed'
        ? (s.error ?? 'failed')
        : s.state === 'stopped'
          ? (s.result?.stoppedEarly ?? s.stopRequested?.reason ?? 'stopped')
          : 'all trials done';
    this.pushProgress(job, { type: 'ended', state: s.state === 'running' ? 'failed' : s.state, message });
  }

  private copy(s: TrialJobStatus): TrialJobStatus {
    return structuredClone(s);
  }

  private pushProgress(job: Job, detail: TrialProgressDetail | null): void {
    this.o.hub.broadcast({ type: 'trial.progress', jobId: job.status.jobId, status: this.copy(job.status), detail });
  }

  private onProgress(job: Job, e: TrialProgressEvent): void {
    const s = job.status;
    switch (e.type) {
      case 'live': {
        if (job.live.runId !== e.runId) {
          job.live.runId = e.runId;
          job.live.buffer.length = 0;
          job.live.failure = null;
          s.liveRunId = e.runId;
          this.pushProgress(job, null);
        }
        const l = job.latest;
        job.live.buffer.push({
          frame: e.frame,
          timeS: e.timeS,
          mpjpeLMm: e.mpjpeLMm,
          jointRmseRad: e.jointRmseRad,
          failed: e.failed,
          jointPosRad: l.have ? Array.from(l.jointPosRad) : new Array<number>(29).fill(0),
          rootPosM: l.rootPosM ? Array.from(l.rootPosM) : null,
          rootQuatWxyz: l.rootQuatWxyz ? Array.from(l.rootQuatWxyz) : null,
        });
        if (e.failed && job.live.failure === null) job.live.failure = e.failure ?? 'hard failure';
        if (job.live.buffer.length > MAX_LIVE_BUFFER) {
          const drop = job.live.buffer.length - MAX_LIVE_BUFFER;
          job.live.buffer.splice(0, drop);
          for (const id of this.o.hub.clientIds()) job.live.skipped.set(id, (job.live.skipped.get(id) ?? 0) + drop);
        }
        // A failure is shown the moment it trips: flush now rather than at the next tick.
        if (e.failed && job.live.buffer.length === 1) this.flushLive(job);
        return;
      }
      case 'stillness':
        this.o.hub.broadcast({
          type: 'calibration.stillness',
          captureId: `capture-${s.jobId.slice('trial-'.length)}`,
          connectionId: s.connectionId,
          progress: stillnessDto(e.progress),
        });
        return;
      case 'phase':
        s.phase = e.phase;
        s.phaseMessage = e.message;
        s.trialIndex = e.trialIndex;
        // A new trial runs: what refused or tripped before it (and was reset) is history (the trace keeps it).
        if (e.phase === 'running') {
          s.refusals = [];
          s.lastTrip = null;
        }
        this.pushProgress(job, { type: 'phase', phase: e.phase, trialIndex: e.trialIndex, message: e.message });
        return;
      case 'refusal':
        s.refusals = e.reasons.map((r) => ({ code: r.code, condition: r.condition, message: r.message }));
        this.pushProgress(job, { type: 'refusal', runId: e.runId, reasons: s.refusals.map((r) => ({ ...r })) });
        return;
      case 'trip':
        s.lastTrip = { cause: e.trip.cause, reason: e.trip.reason, outcome: e.trip.outcome };
        this.pushProgress(job, {
          type: 'trip',
          cause: e.trip.cause,
          reason: e.trip.reason,
          outcome: e.trip.outcome,
          runId: e.trip.runId,
        });
        return;
      case 'episode_end': {
        this.flushLive(job);
        const end = {
          runId: e.runId,
          domain: e.domain,
          trialIndex: e.trialIndex,
          outcome: e.outcome,
          reason: e.reason,
          frames: e.frames,
          resumed: e.resumed,
        };
        s.episodes.push(end);
        if (s.liveRunId === e.runId) s.liveRunId = null;
        this.pushProgress(job, { type: 'episode_end', ...end });
        return;
      }
    }
  }

  /** Sends the live samples gathered since the last batch to every client that keeps up. */
  private flushLive(job: Job): void {
    const buf = job.live.buffer;
    const runId = job.live.runId;
    if (buf.length === 0 || runId === null) return;
    job.live.buffer = [];
    const n = buf.length;
    const hasRoot = buf.every((x) => x.rootPosM !== null);
    // Without a global root (no motion capture) the IMU's heading is in the robot's own frame: the
    // console then draws the robot at the reference root pose and says so, so no orientation either.
    const hasQuat = hasRoot && buf.every((x) => x.rootQuatWxyz !== null);
    const base = {
      type: 'trial.live' as const,
      jobId: job.status.jobId,
      runId,
      count: n,
      frame: buf.map((x) => x.frame),
      timeS: buf.map((x) => x.timeS),
      mpjpeLMm: buf.map((x) => x.mpjpeLMm),
      jointRmseRad: buf.map((x) => x.jointRmseRad),
      failed: buf.map((x) => x.failed),
      failure: job.live.failure,
      jointPosRad: buf.flatMap((x) => x.jointPosRad),
      rootPosM: hasRoot ? buf.flatMap((x) => x.rootPosM!) : null,
      rootQuatWxyz: hasQuat ? buf.flatMap((x) => x.rootQuatWxyz!) : null,
    };
    const skipped = job.live.skipped;
    this.o.hub.broadcastTransient(
      (clientId) => ({ ...base, skipped: skipped.get(clientId) ?? 0 }),
      (clientId) => skipped.set(clientId, (skipped.get(clientId) ?? 0) + n),
    );
  }

  private answer(job: Job, promptId: string, ok: boolean, note: string | null): boolean {
    const w = job.prompt;
    if (!w || w.prompt.promptId !== promptId) return false;
    job.prompt = null;
    job.status.prompt = null;
    w.resolve({ ok, note });
    this.pushProgress(job, { type: 'prompt_answered', promptId, ok });
    return true;
  }

  confirm(p: ApiParams<'trial.confirm'>): { answered: string } {
    const job = this.jobs.get(p.jobId);
    if (!job) throw new ApiFailure('not_found', `no trial job "${p.jobId}"`, 'params.jobId');
    if (job.status.state !== 'running')
      throw new ApiFailure('conflict', `trial ${p.jobId} has ended (${job.status.state})`, 'params.jobId');
    const w = job.prompt;
    if (!w || w.prompt.promptId !== p.promptId)
      throw new ApiFailure(
        'conflict',
        `prompt ${p.promptId} is not the one waiting${w ? ` (${w.prompt.promptId} is)` : ' (nothing is asked now)'}`,
        'params.promptId',
      );
    if (w.prompt.kind === 'confirm_reset' && p.ok && (p.note ?? '').trim() === '') {
      throw new ApiFailure(
        'bad_params',
        'a reset confirmation needs a note: who put the robot back, and how (it is a trace event with a reason)',
        'params.note',
      );
    }
    this.answer(job, p.promptId, p.ok, p.note?.trim() || null);
    return { answered: p.promptId };
  }

  stop(p: ApiParams<'trial.stop'>): { stopped: string[] } {
    const targets = p.all ? [...this.jobs.values()] : [this.jobs.get(p.jobId!)].filter((j): j is Job => !!j);
    if (!p.all && targets.length === 0) throw new ApiFailure('not_found', `no trial job "${p.jobId}"`, 'params.jobId');
    const reason = p.reason ?? 'operator stop';
    const out: string[] = [];
    for (const j of targets) {
      if (j.status.state !== 'running' || j.controller.signal.aborted) continue;
      j.status.stopRequested = { atMs: this.now(), intervention: p.intervention === true, reason };
      // The runner reads the abort reason: 'intervention' ends the running trial as an intervention.
      j.controller.abort(p.intervention ? 'intervention' : reason);
      this.pushProgress(j, null);
      out.push(j.status.jobId);
    }
    if (p.all) {
      this.cancelCapture(reason);
      this.dampRobots(reason);
    }
    return { stopped: out };
  }

  /**
   * The operator's STOP (`trial.stop {all: true}`) also damps every robot connected as a robot:
   * after a pair's last trial, or a job stopped, a runner keeps holding the clip's last targets (or
   * stands on its standing controller) with its motors stiff, and STOP is the console's one control
   * that stops everything that moves (DESIGN §6). A running job's gate has sent its own stop and
   * damp at its trip in this same turn; a second damp changes nothing. Fire-and-forget: damp never
   * rejects and is retried until answered (RobotBackend).
   */
  private dampRobots(reason: string): void {
    for (const c of this.o.registry.list()) {
      if (c.kind !== 'robot') continue;
      const b = this.o.registry.existingBackend(c.id);
      const robot = b ? robotBackendOf(b) : null;
      if (!robot || robot.presence === 'disconnected') continue;
      void robot.damp(`STOP: ${reason}`).then((d) => this.log(`STOP: damp to ${c.id}: ${JSON.stringify(d)}`));
    }
  }

  status(p: ApiParams<'trial.status'>): TrialJobStatus | null {
    const id = p.jobId ?? this.lastJobId;
    if (!id) return null;
    const j = this.jobs.get(id);
    if (!j) {
      if (p.jobId) throw new ApiFailure('not_found', `no trial job "${p.jobId}"`, 'params.jobId');
      return null;
    }
    return this.copy(j.status);
  }

  /** trial.episode: read and parsed in the file worker (trialEpisode.ts), sent as the JSON it made there. */
  async episode(p: ApiParams<'trial.episode'>): Promise<SerializedResult<TrialEpisodeDto>> {
    const dir = this.requireCampaign(p.campaignDir);
    const files = this.o.files ?? (this.ownFiles ??= new OffThreadFiles());
    return files.trialEpisode(dir, p.runId);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.statusTimer) clearInterval(this.statusTimer);
    this.statusTimer = null;
    this.cancelCapture('the console services are shutting down');
    await this.ownFiles?.close();
    for (const j of this.jobs.values())
      if (j.status.state === 'running') j.controller.abort('the console services are shutting down');
    await Promise.race([
      Promise.all([...this.jobs.values()].map((j) => j.done)),
      new Promise((r) => setTimeout(r, 5000).unref()),
    ]);
  }
}
