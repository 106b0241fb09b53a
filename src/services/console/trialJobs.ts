import type {
  AdmittedPairDto,
  ApiParams,
  CalibrationAcceptResult,
  CalibrationCaptureDto,
  RobotLinkStatusDto,
  TrialEpisodeDto,
  TrialJobStatus,
  TrialQueueDto,
  TrialStartResult,
} from '../../api/contract';
import { clipToDto } from '../../api/clipDto';
import { robotBackendOf } from '../../domain/backend/backend';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { LoadedWorkload } from '../../domain/workload/snapshot';
import { OffThreadFiles } from './offThread';
import type { EmbeddedSimulator } from '../sim/embeddedSimulator';
import { openCampaign, type CampaignStore } from '../trace';
import type { AdmittedPair } from '../trial/admittedPairs';
import { TrialRefusedError } from '../trial/matchedTrialRunner';
import { loadWorkload } from '../workload';
import { ApiFailure, FieldError } from './apiFailure';
import { CalibrationCaptures } from './calibrationCaptures';
import type { ClipCache } from './clipCache';
import { EMBEDDED_SIM_ID, type ConnectionRegistry } from './connectionRegistry';
import type { EventHub } from './eventHub';
import type { InterlockSessions } from './interlockSessions';
import { SafetyStatusPublisher } from './safetyStatusPublisher';
import { SerializedResult } from './serializedResult';
import { TrialJob } from './trialJob';
import {
  defaultTrialServices,
  errorText,
  registryTrialRobot,
  requireCampaign,
  requireRobot,
  requireWritableCampaign,
  type TrialServices,
} from './trialServices';

export type { TrialServices } from './trialServices';

// The Calibration panel and the Trial runner from the console (DESIGN §6, §8), one robot at a time:
//
//   calibration.*        CalibrationCaptures (calibrationCaptures.ts)
//   trial.start          runMatchedPair as a job with an AbortController: the operator's STOP
//                        (trial.stop) aborts it; the runner's prompts (confirmTrial, confirmReset)
//                        become `trial.prompt` pushes answered by trial.confirm; its progress →
//                        `trial.progress` (with the job's status); its 50 Hz `live` readings →
//                        `live.frames` batches of source trial_job (TrialLiveBatches, trialLiveBatches.ts)
//   safety.status        SafetyStatusPublisher (safetyStatusPublisher.ts)
//
// The safety decisions are the runner's (its gate); this file never sends motion. One capture and
// one trial job at a time: there is one robot.

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

const DEFAULT_TRIALS = 3;
/** Ended jobs kept for trial.status; the oldest ended one is dropped beyond this. */
const MAX_KEPT_JOBS = 16;

export class TrialJobs {
  private readonly jobs = new Map<string, TrialJob>();
  private lastJobId: string | null = null;
  private workload: LoadedWorkload | null = null;
  /** The file worker's generation of core-v1 while it runs (warmUp); it never rejects. */
  private workloadFetch: Promise<void> | null = null;
  private services: TrialServices | null;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private closed = false;
  /** The file worker when none is given (started on first use, closed with this table). */
  private ownFiles: OffThreadFiles | null = null;
  private readonly captures: CalibrationCaptures;
  private readonly safetyStatus: SafetyStatusPublisher;

  constructor(private readonly o: TrialJobsOptions) {
    this.services = o.services ?? null;
    this.now = o.now ?? Date.now;
    this.log = o.log ?? (() => {});
    this.safetyStatus = new SafetyStatusPublisher({
      hub: o.hub,
      registry: o.registry,
      interlocks: o.interlocks,
      now: this.now,
    });
    this.captures = new CalibrationCaptures({
      hub: o.hub,
      registry: o.registry,
      profile: o.profile,
      services: () => this.svc(),
      findClip: (ref) => this.findClip(ref),
      refuseWhileBusy: () => {
        const running = this.runningJob();
        if (running)
          throw new ApiFailure('conflict', `trial ${running.status.jobId} is running: calibrate between pairs`);
        this.refuseDuringOtherWork();
      },
      now: this.now,
      log: this.log,
    });
  }

  private async svc(): Promise<TrialServices> {
    return (this.services ??= await defaultTrialServices());
  }

  /** The built-in workload: the one warmUp fetched, else generated here (blocking, 0.5–2 s). */
  private coreV1(): LoadedWorkload {
    return (this.workload ??= loadWorkload('core-v1', { profile: this.o.profile() }));
  }

  /**
   * Has the built-in workload generated before it is needed (called when an interlock box opens:
   * a matched trial follows). In the file worker when there is one, so this loop — STOP, the
   * robot link, the safety gate — is not blocked for the 0.5–2 s the generation takes (a lowstate
   * gap that long reads TIMING BAD in the top bar); without a
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
    return this.safetyStatus.robotLinks();
  }

  // ---- calibration -------------------------------------------------------------------------

  captureCalibration(p: ApiParams<'calibration.capture'>): Promise<CalibrationCaptureDto> {
    return this.captures.capture(p);
  }

  acceptCalibration(p: ApiParams<'calibration.accept'>): Promise<CalibrationAcceptResult> {
    return this.captures.accept(p);
  }

  cancelCapture(reason?: string): { cancelled: string[] } {
    return this.captures.cancel(reason);
  }

  // ---- trials ------------------------------------------------------------------------------

  /** A sentence for what holds the robot here (a running trial, a capture), or null. */
  busyWith(): string | null {
    const running = this.runningJob();
    if (running) return `trial ${running.status.jobId} is running (pair ${running.status.pairId})`;
    const capturing = this.captures.runningOn();
    if (capturing !== null) return `a calibration capture is running on ${capturing}`;
    return null;
  }

  /** Refuses while batch work holds the cores: a robot's heartbeats must not share them. */
  private refuseDuringOtherWork(): void {
    const other = this.o.otherWork?.();
    if (other) throw new ApiFailure('conflict', `${other}: wait for its end before a robot trial or a capture`);
  }

  private runningJob(): TrialJob | null {
    for (const j of this.jobs.values()) if (j.status.state === 'running') return j;
    return null;
  }

  async queue(p: ApiParams<'trial.queue'>): Promise<TrialQueueDto> {
    const dir = requireCampaign(p.campaignDir);
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
    if (this.captures.runningOn() !== null)
      throw new ApiFailure('conflict', 'a calibration capture is running: wait for it or cancel it');
    this.refuseDuringOtherWork();
    const dir = requireWritableCampaign(p.campaignDir);
    const interlock = this.o.interlocks.feed();
    if (!interlock)
      throw new ApiFailure(
        'conflict',
        'no interlock is open: open the interlock box (its device path) before a real trial',
      );
    const backend = await requireRobot(this.o.registry, p.connectionId);
    const s = await this.svc();
    const sim = await this.simulator();
    const trials = p.trials ?? DEFAULT_TRIALS;

    // The pair and its clip (the reference the viewport shows).
    const store = await openCampaign(dir);
    let pair: AdmittedPair;
    try {
      pair = this.admittedPair(store, s, p, trials);
    } catch (err) {
      store.close();
      throw err;
    }
    const clip = this.findClip(pair.clipId);
    const workload = this.workloadFor(store, pair);
    const job = this.newJob(p, dir, pair, trials, store);
    job.live.watch(this.o.registry, p.connectionId);

    job.done = job.run(s, {
      store,
      link: registryTrialRobot(this.o.registry, p.connectionId, backend, this.log),
      interlock,
      sim,
      profile: this.o.profile(),
      ...(workload && { workload }),
      pairId: pair.pairId,
      trials,
      calibrationId: p.calibrationId ?? null,
      operator: job.operator(),
      onProgress: (e) => job.onProgress(e),
      signal: job.controller.signal,
      log: this.log,
    });
    job.pushProgress(null);
    return { status: job.snapshot(), reference: clip ? clipToDto(clip) : null };
  }

  /** The admitted pair trial.start names (an id or its unique prefix); refused as the runner would refuse it. */
  private admittedPair(
    store: CampaignStore,
    s: TrialServices,
    p: ApiParams<'trial.start'>,
    trials: number,
  ): AdmittedPair {
    const pairs = s.listAdmittedPairs(store, trials);
    const hits = pairs.filter((x) => x.pairId === p.pairId || x.pairId.startsWith(p.pairId));
    if (hits.length > 1 && !hits.some((x) => x.pairId === p.pairId))
      throw new ApiFailure(
        'bad_params',
        `pair "${p.pairId}" is ambiguous (${hits.length} admitted pairs start with it)`,
        'params.pairId',
      );
    const pair = hits.find((x) => x.pairId === p.pairId) ?? hits[0];
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
    return pair;
  }

  /** A running job for the pair, kept in the table (the oldest ended jobs leave it). */
  /** A running job for the pair, kept in the table (the oldest ended jobs leave it). */
  private newJob(
    p: ApiParams<'trial.start'>,
    dir: string,
    pair: AdmittedPair,
    trials: number,
    store: CampaignStore,
  ): TrialJob {
    const job = new TrialJob(this.o.hub, this.now, p, dir, pair, trials, store);
    const jobId = job.status.jobId;
    this.jobs.set(jobId, job);
    this.lastJobId = jobId;
    while (this.jobs.size > MAX_KEPT_JOBS) {
      const oldest = [...this.jobs.values()].find((j) => j.status.state !== 'running');
      if (!oldest) break;
      this.jobs.delete(oldest.status.jobId);
    }
    return job;
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
    job.answer(p.promptId, p.ok, p.note?.trim() || null);
    return { answered: p.promptId };
  }

  stop(p: ApiParams<'trial.stop'>): { stopped: string[] } {
    const targets = p.all ? [...this.jobs.values()] : [this.jobs.get(p.jobId!)].filter((j): j is TrialJob => !!j);
    if (!p.all && targets.length === 0) throw new ApiFailure('not_found', `no trial job "${p.jobId}"`, 'params.jobId');
    const reason = p.reason ?? 'operator stop';
    const out: string[] = [];
    for (const j of targets) {
      if (j.status.state !== 'running' || j.controller.signal.aborted) continue;
      j.status.stopRequested = { atMs: this.now(), intervention: p.intervention === true, reason };
      // The runner reads the abort reason: 'intervention' ends the running trial as an intervention.
      j.controller.abort(p.intervention ? 'intervention' : reason);
      j.pushProgress(null);
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
    return j.snapshot();
  }

  /** trial.episode: read and parsed in the file worker (trialEpisode.ts), sent as the JSON it made there. */
  async episode(p: ApiParams<'trial.episode'>): Promise<SerializedResult<TrialEpisodeDto>> {
    const dir = requireCampaign(p.campaignDir);
    const files = this.o.files ?? (this.ownFiles ??= new OffThreadFiles());
    return files.trialEpisode(dir, p.runId);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.safetyStatus.close();
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
