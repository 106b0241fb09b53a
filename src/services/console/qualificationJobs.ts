import fs from 'node:fs';
import path from 'node:path';
import type {
  ApiParams,
  CapabilityGroupId,
  QualificationJobStatus,
  QualificationOpenResult,
  QualificationProgressEvent,
  QualificationReplayDto,
  QualificationReportDto,
} from '../../api/contract';
import type { MotionClip } from '../../domain/motion/motionClip';
import { customPolicy, MB_ADMISSION_1, notPairedReason, type AdmissionPolicy } from '../../domain/qualification';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { BUILTIN_LABEL } from '../../domain/sim/builtinBinding';
import type { LoadedWorkload } from '../../domain/workload/snapshot';
import { bindingKey, bindingTracksClip, type WbcBinding } from '../../domain/wbc/wbcBinding';
import { bindingName } from '../../domain/wbc/bindingName';
import {
  QualificationCancelled,
  QualificationRequestError,
  runQualification,
  selectClips,
  type QualificationProgress,
} from '../qualification';
import { otherWriterOf } from '../trace';
import { loadWorkload } from '../workload';
import type { OffThreadFiles } from './offThread';
import { ApiFailure } from './apiFailure';
import type { PolicyRegistry } from './policyRegistry';
import { ownMotionsOf, policyMotionsWorkload } from '../workload/policyWorkload';
import type { EventHub } from './eventHub';

// Qualification from the console: the board's campaign, matrix, runs and replay.
// A run is runQualification (src/services/qualification) in this process with an AbortController;
// its progress goes to every console as `qualification.progress` pushes (at most PUSH_HZ, plus every
// decided pair and the end), and `qualification.status` answers the same figures on demand.
// One run at a time: the simulator pool is the machine's cores.

const PUSH_HZ = 4;
/** Default simulator workers for a run started from the console. */
const DEFAULT_WORKERS = 2;

interface Job {
  status: QualificationJobStatus;
  controller: AbortController;
  /** Planned pairs in run order (binding × clip), with whether each is decided. */
  plan: { bindingKey: string; clipId: string; clipName: string; decided: boolean }[];
  /** The run's bindings by key (its matrix columns before their first pair is stored). */
  bindings: Map<string, WbcBinding>;
  workers: number;
  done: Promise<void>;
}

let serial = 0;

/** A new job's status: running, nothing planned or done yet. */
function initialStatus(jobId: string, campaignDir: string, keys: string[], nowMs: number): QualificationJobStatus {
  return {
    jobId,
    campaignDir,
    state: 'running',
    bindings: keys,
    pairsTotal: 0,
    pairsDone: 0,
    admitted: 0,
    rejected: 0,
    fraction: 0,
    rolloutsDone: 0,
    rolloutsTotal: 0,
    clipSecondsDone: 0,
    clipSecondsPlanned: 0,
    clipSecondsPerS: null,
    elapsedS: 0,
    etaS: null,
    running: [],
    lastPair: null,
    error: null,
    startedAtMs: nowMs,
    endedAtMs: null,
  };
}

/** The clips a start asks for: capability groups first, then clips, then limit. */
function selectRequestedClips(
  full: LoadedWorkload,
  p: ApiParams<'qualification.start'>,
): { meta: { id: string; name: string } }[] {
  let selectedNames: string[] | undefined = p.clips;
  if (p.groups) {
    const inGroups = full.snapshot.clips
      .filter((c) => p.groups!.includes(c.group as CapabilityGroupId))
      .map((c) => c.id);
    selectedNames = p.clips
      ? inGroups.filter((id) =>
          p.clips!.some((c) => c === id || full.snapshot.clips.find((m) => m.id === id)?.name === c),
        )
      : inGroups;
    if (selectedNames.length === 0)
      throw new ApiFailure(
        'bad_params',
        `no clip of ${full.snapshot.id} in group(s) ${p.groups.join(', ')}${p.clips ? ' among the clips given' : ''}`,
        'params.groups',
      );
  }
  try {
    return selectClips(full, selectedNames, p.limit);
  } catch (err) {
    if (err instanceof QualificationRequestError) throw new ApiFailure('bad_params', err.message, 'params.clips');
    throw err;
  }
}

/** Folds one progress report into the job's status and plan; whether it must be pushed at once. */
function applyProgress(job: Job, q: QualificationProgress): boolean {
  const { status, plan, workers } = job;
  status.pairsTotal = q.pairsTotal;
  status.pairsDone = q.pairsDone;
  status.admitted = q.admitted;
  status.rejected = q.rejected;
  status.fraction =
    q.clipSecondsPlanned > 0
      ? Math.min(1, q.clipSecondsDone / q.clipSecondsPlanned)
      : q.pairsTotal > 0
        ? q.pairsDone / q.pairsTotal
        : 1;
  status.rolloutsDone = q.rolloutsDone;
  status.rolloutsTotal = q.rolloutsPlanned;
  status.clipSecondsDone = q.clipSecondsDone;
  status.clipSecondsPlanned = q.clipSecondsPlanned;
  status.clipSecondsPerS = q.clipSecondsPerS;
  status.elapsedS = q.elapsedS;
  status.etaS = q.etaS;
  if (q.kind === 'plan') {
    // Pairs decided before (skipped) are not running.
    status.fraction = q.rolloutsPlanned === 0 ? 1 : 0;
  }
  if (q.pair && (q.pair.status === 'decided' || q.pair.status === 'skipped')) {
    const pl = plan.find((x) => x.clipId === q.pair!.clipId && x.bindingKey === q.pair!.binding);
    if (pl) pl.decided = true;
    if (q.kind === 'pair')
      status.lastPair = {
        bindingKey: q.pair.binding,
        clipId: q.pair.clipId,
        clipName: q.pair.clipName,
        admitted: q.pair.admitted,
        reasons: q.pair.reasons,
      };
  }
  // Rollouts are taken in plan order, one per worker: the running pairs are the first undecided ones.
  status.running =
    q.kind === 'plan' && q.rolloutsPlanned === 0
      ? []
      : plan
          .filter((x) => !x.decided)
          .slice(0, workers)
          .map(({ bindingKey: b, clipId, clipName }) => ({ bindingKey: b, clipId, clipName }));
  return q.kind === 'pair' || q.kind === 'plan';
}

export interface QualificationJobsOptions {
  hub: EventHub;
  /** The console's file worker: qualification.open runs there. */
  files: OffThreadFiles;
  profile: () => RobotProfile;
  /** The robot model's file: the file worker reads it for a replay's evaluation. */
  modelFile: string;
  /** Resolves console binding specs (builtin…, or an opened policy's id) and holds the opened policies. */
  policies: Pick<PolicyRegistry, 'resolve' | 'get' | 'bakedClip'>;
  now?: () => number;
  /** Other batch work on the machine's cores (a sensitivity run): a start is refused meanwhile. */
  otherWork?: () => string | null;
}

export class QualificationJobs {
  private readonly jobs = new Map<string, Job>();
  private lastJobId: string | null = null;
  private workload: LoadedWorkload | null = null;
  private readonly now: () => number;

  constructor(private readonly o: QualificationJobsOptions) {
    this.now = o.now ?? Date.now;
  }

  private coreV1(): LoadedWorkload {
    return (this.workload ??= loadWorkload('core-v1', { profile: this.o.profile() }));
  }

  /**
   * The built-in workload for a start or a replay, generated in the file worker the first time
   * (0.5–2 s that would block STOP on this loop); the same result as coreV1(), which the report
   * uses while a job runs (by then this has filled it).
   */
  private async coreV1OffThread(): Promise<LoadedWorkload> {
    if (this.workload) return this.workload;
    const wl = await this.o.files.builtinWorkload('core-v1');
    return (this.workload ??= wl);
  }

  /** Checks, creates or opens the campaign in the file worker (campaignOpen.ts), off the event loop. */
  async open(p: ApiParams<'qualification.open'>): Promise<QualificationOpenResult> {
    return this.o.files.openCampaign(p.campaignDir, p.create === true);
  }

  /**
   * The board's matrix: the campaign's stored pairs read in the file worker (campaignBoardReads.ts),
   * then the planned pairs of a job running on this campaign added here.
   */
  async report(p: ApiParams<'qualification.report'>): Promise<QualificationReportDto> {
    const { report, snapshotOrder } = await this.o.files.campaignBoard(p);
    const clips = new Map(report.clips.map((c) => [c.id, c]));
    const bindings = report.bindings;
    const bindingKeys = new Set(bindings.map((b) => b.key));
    const job = this.activeJobFor(report.campaignDir);
    if (job) {
      const wl = this.coreV1();
      for (const pl of job.plan) {
        if (!clips.has(pl.clipId)) {
          const meta = wl.snapshot.clips.find((c) => c.id === pl.clipId);
          clips.set(pl.clipId, {
            id: pl.clipId,
            name: pl.clipName,
            group: (meta?.group as CapabilityGroupId | undefined) ?? null,
            durationS: meta?.duration_s ?? null,
          });
        }
        const planned = job.bindings.get(pl.bindingKey);
        if (!bindingKeys.has(pl.bindingKey) && planned) {
          bindingKeys.add(pl.bindingKey);
          bindings.push({
            key: pl.bindingKey,
            name: bindingName(planned),
            kind: planned.kind,
            label: planned.label,
            note: planned.kind === 'builtin' ? BUILTIN_LABEL : null,
            summary: { pairs: 0, admitted: 0, rejected: 0, pending: 0, sr: null, progressSoft: null, mpjpeLMm: null },
          });
        }
      }
    }
    // Clip rows in snapshot order (core-v1 order when known).
    const order = new Map(snapshotOrder);
    if (job) this.coreV1().snapshot.clips.forEach((c, i) => order.has(c.id) || order.set(c.id, i));
    const rows = [...clips.values()].sort(
      (a, b) => (order.get(a.id) ?? 1e9) - (order.get(b.id) ?? 1e9) || a.name.localeCompare(b.name),
    );
    return { ...report, bindings, clips: rows };
  }

  private activeJobFor(dir: string): Job | null {
    for (const j of this.jobs.values())
      if (j.status.state === 'running' && path.resolve(j.status.campaignDir) === path.resolve(dir)) return j;
    return null;
  }

  async start(p: ApiParams<'qualification.start'>): Promise<QualificationJobStatus> {
    const abs = this.checkCanStart(p.campaignDir);
    const bindings = await this.resolveBindings(p.bindings);
    const keys = bindings.map(bindingKey);
    const profile = this.o.profile();
    // The opened policies among the bindings; the single-motion ones are paired with their own motion only.
    const plans = p.bindings.flatMap((spec) => this.o.policies.get(spec) ?? []);
    const ownMotions = ownMotionsOf(plans, profile);
    const full = await this.workloadFor(p.workload, plans, profile);
    const selected = selectRequestedClips(full, p);
    const policy: AdmissionPolicy =
      p.rollouts === undefined || p.rollouts === MB_ADMISSION_1.parameters.rollouts
        ? MB_ADMISSION_1
        : customPolicy({ rollouts: p.rollouts });
    const jobId = `qual-${this.now().toString(36)}-${++serial}`;
    const workers = p.workers ?? DEFAULT_WORKERS;
    const status = initialStatus(jobId, abs, keys, this.now());
    const plan = bindings.flatMap((b) =>
      selected
        .filter(
          (s) => notPairedReason(ownMotions.get(bindingKey(b)), s.meta.id) === null && bindingTracksClip(b, s.meta.id),
        )
        .map((s) => ({ bindingKey: bindingKey(b), clipId: s.meta.id, clipName: s.meta.name, decided: false })),
    );
    status.pairsTotal = plan.length;
    const job: Job = {
      status,
      controller: new AbortController(),
      plan,
      bindings: new Map(bindings.map((b) => [bindingKey(b), b])),
      workers,
      done: Promise.resolve(),
    };
    this.jobs.set(jobId, job);
    this.lastJobId = jobId;
    let lastPush = 0;
    const push = (force: boolean) => {
      const t = this.now();
      if (!force && t - lastPush < 1000 / PUSH_HZ) return;
      lastPush = t;
      this.o.hub.broadcast(this.event(job));
    };
    job.done = this.runJob(job, push, {
      campaignDir: abs,
      workload: full,
      bindings,
      profile,
      policy,
      workers,
      clips: selected.map((s) => s.meta.id),
      ownMotions,
      signal: job.controller.signal,
      onProgress: (q) => push(applyProgress(job, q)),
      purpose: `MotionBench console, qualification job ${jobId}`,
    });
    push(true);
    return { ...status };
  }

  /** Refuses a start while other work holds the cores or another writer holds the campaign; the campaign's absolute path. */
  private checkCanStart(campaignDir: string): string {
    const running = this.busyWith();
    if (running) throw new ApiFailure('conflict', `${running}: cancel it or wait for its end`);
    const other = this.o.otherWork?.();
    if (other) throw new ApiFailure('conflict', `${other}: wait for its end before a qualification`);
    const abs = path.resolve(campaignDir);
    if (fs.existsSync(abs) && !fs.statSync(abs).isDirectory())
      throw new ApiFailure('input_error', `${abs} is a file, not a folder`, 'params.campaignDir');
    const otherWriter = otherWriterOf(abs);
    if (otherWriter) throw new ApiFailure('busy', otherWriter, 'params.campaignDir');
    return abs;
  }

  /** The bindings of the console specs, each at most once. */
  private async resolveBindings(specs: string[]): Promise<WbcBinding[]> {
    const bindings: WbcBinding[] = [];
    for (const spec of specs) bindings.push(await this.o.policies.resolve(spec, 'params.bindings'));
    const keys = bindings.map(bindingKey);
    const dup = keys.find((k, i) => keys.indexOf(k) !== i);
    if (dup) throw new ApiFailure('bad_params', `binding ${dup} is given twice`, 'params.bindings');
    return bindings;
  }

  /** The workload to qualify over: the opened policies' motions, or core-v1. */
  private async workloadFor(
    workload: ApiParams<'qualification.start'>['workload'],
    plans: Parameters<typeof policyMotionsWorkload>[0],
    profile: RobotProfile,
  ): Promise<LoadedWorkload> {
    if (workload !== 'policies') return this.coreV1OffThread();
    // The opened policies among the bindings give the clips; the other bindings take every one.
    if (plans.length === 0)
      throw new ApiFailure(
        'bad_params',
        'workload "policies" is made of the motions of the policies given as bindings: give at least one opened policy (policy-…)',
        'params.workload',
      );
    return policyMotionsWorkload(plans, profile);
  }

  /** Runs the qualification and records its end in the job's status (pushed once more). */
  private async runJob(
    job: Job,
    push: (force: boolean) => void,
    options: Parameters<typeof runQualification>[0],
  ): Promise<void> {
    const status = job.status;
    try {
      const summary = await runQualification(options);
      status.state = summary.cancelled ? 'cancelled' : 'completed';
      status.pairsDone = summary.pairsTotal - summary.pairsPending;
      status.admitted = summary.admitted;
      status.rejected = summary.rejected;
      if (!summary.cancelled) status.fraction = 1;
    } catch (err) {
      if (err instanceof QualificationCancelled) status.state = 'cancelled';
      else {
        status.state = 'failed';
        status.error = err instanceof Error ? err.message : String(err);
      }
    } finally {
      status.running = [];
      status.etaS = null;
      status.endedAtMs = this.now();
      status.elapsedS = (status.endedAtMs - status.startedAtMs) / 1000;
      push(true);
    }
  }

  private event(job: Job): Omit<QualificationProgressEvent, 'seq'> {
    const s = job.status;
    return {
      type: 'qualification.progress',
      ...s,
      running: s.running.map((r) => ({ ...r })),
      lastPair: s.lastPair ? { ...s.lastPair, reasons: [...s.lastPair.reasons] } : null,
    };
  }

  cancel(p: ApiParams<'qualification.cancel'>): { cancelled: string[] } {
    const targets = p.all ? [...this.jobs.values()] : [this.jobs.get(p.jobId!)].filter((j): j is Job => !!j);
    if (!p.all && targets.length === 0)
      throw new ApiFailure('not_found', `no qualification job "${p.jobId}"`, 'params.jobId');
    const out: string[] = [];
    for (const j of targets) {
      if (j.status.state !== 'running' || j.controller.signal.aborted) continue;
      j.controller.abort(p.reason ?? 'operator cancel');
      out.push(j.status.jobId);
    }
    return { cancelled: out };
  }

  /** A sentence for the running qualification, or null. */
  busyWith(): string | null {
    const running = [...this.jobs.values()].find((j) => j.status.state === 'running');
    return running ? `qualification ${running.status.jobId} is running on ${running.status.campaignDir}` : null;
  }

  status(p: ApiParams<'qualification.status'>): QualificationJobStatus | null {
    const id = p.jobId ?? this.lastJobId;
    if (!id) return null;
    const j = this.jobs.get(id);
    if (!j) {
      if (p.jobId) throw new ApiFailure('not_found', `no qualification job "${p.jobId}"`, 'params.jobId');
      return null;
    }
    return { ...j.status };
  }

  /**
   * The worst rollout of a pair against its reference: the campaign and the episode are read and
   * evaluated in the file worker (campaignBoardReads.ts); the reference is core-v1's clip or an
   * opened policy's motion, known here.
   */
  async replay(p: ApiParams<'qualification.replay'>): Promise<QualificationReplayDto> {
    const wl = await this.coreV1OffThread();
    const i = wl.snapshot.clips.findIndex((c) => c.id === p.clipId);
    const reference: MotionClip | null = i >= 0 ? wl.clips[i] : (this.o.policies.bakedClip(p.clipId) ?? null);
    return this.o.files.qualificationReplay(p, reference, this.o.modelFile);
  }

  async close(): Promise<void> {
    for (const j of this.jobs.values())
      if (j.status.state === 'running') j.controller.abort('the console services are shutting down');
    await Promise.race([
      Promise.all([...this.jobs.values()].map((j) => j.done)),
      new Promise((r) => setTimeout(r, 5000).unref()),
    ]);
  }
}
