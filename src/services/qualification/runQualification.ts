// The qualification pipeline (DESIGN §1 step 2): every WBC binding × clip of a
// workload snapshot, N seeded rollouts per pair across the simulator's worker pool, each
// rollout recorded as an episode of the pair's parent trace (simulation branch, MCAP file,
// metrics row), and one admission decision per pair with its reasons.
//
// Resume and skip (docs/QUALIFICATION.md):
//   - A rollout k of a pair is *settled* when an episode of the pair's simulation branch with
//     rollout_index k, the same snapshot hash and the same rollout protocol (perturbation and
//     measurement parameters) finished with an outcome other than infrastructure_error and has
//     its measures recorded. Settled rollouts are never rerun.
//   - An infrastructure_error (a simulator fault, or an interrupted episode — kill -9, a
//     cancelled run) is rerun; after `maxInfrastructureAttempts` finished attempts that all ended
//     in infrastructure_error the rollout is reported as unrunnable and the pair decided.
//     Interrupted episodes (a killed process, a cancellation) do not count as attempts.
//   - A pair is *done* when its admission under this policy id and version exists for this
//     snapshot and protocol and names exactly the settled rollouts: it is skipped entirely. The
//     parent trace identity already fixes the binding version and checkpoint, the clip content,
//     the model hash, the adapter and the contract.
// Cancellation (AbortSignal): no new rollout starts; the rollouts already running finish and are
// recorded as usual (at the simulator's speed that is well under a second), decisions already
// stored stay, and the unfinished pairs stay pending until the campaign is run again.

import type { MetricContract } from '../../domain/metrics';
import { MB_METRICS_1 } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import {
  decideAdmission,
  MB_ADMISSION_1,
  policyKey,
  resolvedLimits,
  rolloutProtocolKey,
  rolloutSeed,
  notPairedReason,
  progressRates,
  type AdmissionDecision,
  type AdmissionPolicy,
  type NotPaired,
  type OwnMotion,
  type RolloutEvidence,
  type RolloutMeasures,
  type UnrunnableRollout,
} from '../../domain/qualification';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { EpisodeRecord } from '../../domain/trace/records';
import type { WorkloadClipMeta, LoadedWorkload } from '../../domain/workload/snapshot';
import { bindingKey, bindingTracksClip, type WbcBinding } from '../../domain/wbc/wbcBinding';
import { EmbeddedSimulator } from '../sim/embeddedSimulator';
import {
  describeHolder,
  fileSha256,
  openCampaign,
  parentTraceInputs,
  type CampaignStore,
  type LockHolder,
} from '../trace';
import { modelActuatorLimits } from './modelLimits';
import { MEASURES_EVENT_KIND, runRollout, type RolloutContext } from './rolloutRunner';

/**
 * Rollout loops beyond the simulator's workers: the extra one begins the next rollout (perturbed
 * start, episode row and file) as soon as a worker is released, so no worker idles while a
 * finished rollout's measures, metrics and decision are stored.
 */
const ROLLOUTS_PREPARED_AHEAD = 1;

export interface QualificationOptions {
  campaignDir: string;
  workload: LoadedWorkload;
  bindings: readonly WbcBinding[];
  /** The robot model the simulator runs (its file is hashed into every parent trace). */
  profile: RobotProfile;
  /** Default MB_ADMISSION_1. */
  policy?: AdmissionPolicy;
  /** Simulator workers (default: the simulator's default). Ignored when `simulator` is given. */
  workers?: number;
  /** Only these clips (names or ids), in snapshot order. */
  clips?: readonly string[];
  /** Only the first N clips (after `clips`). */
  limit?: number;
  /** A simulator to run on (left open); default: a new one with `workers` workers, closed at the end. */
  simulator?: EmbeddedSimulator;
  signal?: AbortSignal;
  onProgress?: (p: QualificationProgress) => void;
  /** What this run is, shown to a second writer of the campaign that is refused (default: the command line). */
  purpose?: string;
  /** One-line notices (e.g. a stale writer lock taken over). */
  onNotice?: (line: string) => void;
  /**
   * Single-motion bindings by bindingKey: each is paired only with its own motion clips
   * (src/domain/qualification/pairing.ts); the other clips are reported as not paired.
   */
  ownMotions?: ReadonlyMap<string, OwnMotion>;
}

export interface PairOutcome {
  binding: string;
  clipId: string;
  clipName: string;
  group: string;
  parentTraceId: string;
  /** skipped: decided before under the same versions; decided: decided in this run; pending: not decided (cancelled). */
  status: 'skipped' | 'decided' | 'pending';
  admitted: boolean | null;
  reasons: string[];
}

export interface QualificationProgress {
  kind: 'plan' | 'rollout' | 'pair' | 'tick' | 'retry';
  pairsTotal: number;
  pairsDone: number;
  pairsSkipped: number;
  admitted: number;
  rejected: number;
  rolloutsPlanned: number;
  rolloutsDone: number;
  /** Clip seconds this run plans to simulate, and has simulated so far (partial rollouts included). */
  clipSecondsPlanned: number;
  clipSecondsDone: number;
  elapsedS: number;
  /** Clip-seconds simulated per wall second so far; null until something was simulated. */
  clipSecondsPerS: number | null;
  /** Seconds left at the observed rate; null until something was simulated. */
  etaS: number | null;
  /** What just happened (for 'rollout', 'pair', 'retry'). */
  pair?: PairOutcome;
  rollout?: { index: number; attempt: number; runId: string; outcome: string; reason: string };
}

export interface QualificationSummary {
  campaignDir: string;
  campaignId: string;
  snapshot: { id: string; version: string; hash: string };
  policy: { id: string; version: string; key: string };
  contract: string;
  protocol: string;
  bindings: { key: string; kind: string; label: string }[];
  pairs: PairOutcome[];
  /** Binding × clip combinations of the selection that are not pairs, with why (nothing ran for them). */
  notPaired: NotPaired[];
  pairsTotal: number;
  pairsSkipped: number;
  pairsDecided: number;
  pairsPending: number;
  admitted: number;
  rejected: number;
  episodesRecorded: number;
  infrastructureRetries: number;
  simSeconds: number;
  wallSeconds: number;
  cancelled: boolean;
  /** Episodes the campaign found interrupted on open (a previous run was killed) and marked. */
  recoveredEpisodes: number;
  /** The holder of a stale writer lock this run took over (its process was gone), or null. */
  writerLockTakenOver: LockHolder | null;
}

interface PairPlan {
  binding: WbcBinding;
  clip: MotionClip;
  meta: WorkloadClipMeta;
  parentTraceId: string;
  settled: Map<number, RolloutEvidence>;
  infraAttempts: Map<number, { attempts: number; reason: string }>;
  todo: number[];
  unrunnable: UnrunnableRollout[];
  outcome: PairOutcome;
}

export class QualificationCancelled extends Error {
  override readonly name = 'QualificationCancelled';
}

/** A request that cannot be run as given (unknown clip, a binding twice, no binding). */
export class QualificationRequestError extends Error {
  override readonly name = 'QualificationRequestError';
}

/** Selects the clips of a run: `clips` (names or ids) then the first `limit`. Throws on an unknown name. */
export function selectClips(
  workload: LoadedWorkload,
  clips?: readonly string[],
  limit?: number,
): { meta: WorkloadClipMeta; clip: MotionClip }[] {
  let list = workload.snapshot.clips.map((meta, i) => ({ meta, clip: workload.clips[i] }));
  if (clips && clips.length > 0) {
    const want = new Set(clips);
    const known = new Set(list.flatMap((c) => [c.meta.name, c.meta.id]));
    const unknown = [...want].filter((w) => !known.has(w));
    if (unknown.length > 0)
      throw new QualificationRequestError(
        `workload ${workload.snapshot.id}@${workload.snapshot.version} has no clip ${unknown.map((u) => `"${u}"`).join(', ')}`,
      );
    list = list.filter((c) => want.has(c.meta.name) || want.has(c.meta.id));
  }
  if (limit !== undefined) list = list.slice(0, limit);
  return list;
}

export async function runQualification(o: QualificationOptions): Promise<QualificationSummary> {
  const t0 = performance.now();
  const policy = o.policy ?? MB_ADMISSION_1;
  const snap = o.workload.snapshot;
  if (o.bindings.length === 0) throw new QualificationRequestError('qualification needs at least one binding');
  const keys = o.bindings.map(bindingKey);
  const dup = keys.find((k, i) => keys.indexOf(k) !== i);
  if (dup) throw new QualificationRequestError(`binding ${dup} is given twice`);
  const selected = selectClips(o.workload, o.clips, o.limit);
  if (o.signal?.aborted) throw new QualificationCancelled('qualification cancelled before it started');

  const store = await openCampaign(o.campaignDir, { create: true, ...(o.purpose ? { purpose: o.purpose } : {}) });
  const tookOver = store.writerLockTakenOver;
  if (tookOver) o.onNotice?.(`took over the stale writer lock of ${describeHolder(tookOver)}: that process is gone`);
  const run = new QualificationRun(o, store, policy, t0);
  try {
    store.putWorkloadSnapshot(snap);
    const { plans, notPaired } = run.plan(selected);
    await run.runRollouts(plans);
    return run.summary(plans, notPaired, tookOver);
  } finally {
    await run.close();
    store.close();
  }
}

/** One qualification run over an open campaign: its plan, its progress, its rollouts on the worker pool, its summary. */
class QualificationRun {
  private readonly contract: MetricContract = MB_METRICS_1;
  private readonly pKey: string;
  private readonly protocol: string;
  private readonly snap: LoadedWorkload['snapshot'];
  /** The model file's hash, named in every parent trace (read when the run plans). */
  private modelSha256 = '';
  private progress!: Progress;
  private sim: EmbeddedSimulator | null = null;
  private episodesRecorded = 0;
  private retries = 0;
  private simSeconds = 0;
  private cancelled = false;

  constructor(
    private readonly o: QualificationOptions,
    private readonly store: CampaignStore,
    private readonly policy: AdmissionPolicy,
    private readonly t0: number,
  ) {
    this.pKey = policyKey(policy);
    this.protocol = rolloutProtocolKey(policy);
    this.snap = o.workload.snapshot;
  }

  /** Every binding × selected clip: a pair (its parent trace stored, what is settled read back) or why it is none. */
  plan(selected: { meta: WorkloadClipMeta; clip: MotionClip }[]): { plans: PairPlan[]; notPaired: NotPaired[] } {
    const { o, store, contract } = this;
    const modelSha256 = fileSha256(o.profile.sourceFile);
    this.modelSha256 = modelSha256;
    const plans: PairPlan[] = [];
    const notPaired: NotPaired[] = [];
    for (const binding of o.bindings) {
      const key = bindingKey(binding);
      for (const { meta, clip } of selected) {
        const why =
          notPairedReason(o.ownMotions?.get(key), clip.id) ??
          (bindingTracksClip(binding, clip.id)
            ? null
            : 'a single-motion policy: it tracks only the motion baked into it');
        if (why !== null) {
          notPaired.push({ binding: key, clipId: clip.id, clipName: meta.name, why });
          continue;
        }
        const parent = store.ensureParentTrace(
          parentTraceInputs({ binding, clip, profile: o.profile, contract, modelSha256 }),
        );
        plans.push(
          planPair(store, this.policy, this.protocol, this.snap.snapshot_hash, binding, clip, meta, parent.id),
        );
      }
    }
    this.progress = new Progress(plans, this.t0, o.onProgress);
    this.progress.emit('plan');
    // Pairs whose rollouts are all settled (or unrunnable) but that have no current decision.
    for (const p of plans) if (p.outcome.status === 'pending' && p.todo.length === 0) this.decide(p);
    return { plans, notPaired };
  }

  private decide(p: PairPlan): void {
    const d = decidePair(this.store, this.policy, this.contract, this.snap, p, this.modelSha256);
    p.outcome.status = 'decided';
    p.outcome.admitted = d.admitted;
    p.outcome.reasons = d.reasons;
    this.progress.pairDecided(p.outcome);
  }

  /** The pending rollouts across the simulator's workers until done, cancelled, or one fails (rethrown). */
  async runRollouts(plans: PairPlan[]): Promise<void> {
    const { o, policy, progress } = this;
    const jobs: { plan: PairPlan; k: number }[] = [];
    for (const p of plans) for (const k of p.todo) jobs.push({ plan: p, k });
    let failure: unknown = null;
    const onAbort = () => {
      this.cancelled = true;
    };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    if (o.signal?.aborted) onAbort();
    if (jobs.length > 0 && !this.cancelled) {
      const ownSim = !o.simulator;
      const sim =
        o.simulator ??
        new EmbeddedSimulator({
          modelFile: o.profile.sourceFile,
          ...(o.workers !== undefined ? { workers: o.workers } : {}),
        });
      this.sim = sim;
      const [limits] = await Promise.all([modelActuatorLimits(o.profile), ownSim ? sim.ready() : null]);
      const ctx: RolloutContext = {
        store: this.store,
        sim,
        profile: o.profile,
        policy,
        policyKey: this.pKey,
        protocolKey: this.protocol,
        snapshotHash: this.snap.snapshot_hash,
        limits,
        onSimSeconds: (runId, s) => progress.running(runId, s),
      };
      const remaining = new Map<PairPlan, number>();
      for (const p of plans) if (p.todo.length > 0) remaining.set(p, p.todo.length);
      const worker = async () => {
        while (jobs.length > 0 && !this.cancelled && failure === null) {
          // A loop beyond the workers' count waits here for a worker to be released, then begins
          // its rollout while the rollout that released it is still being measured and stored.
          await sim.whenWorkerFree();
          if (jobs.length === 0 || this.cancelled || failure !== null) break;
          const { plan, k } = jobs.shift()!;
          try {
            const settled = await runUntilSettled(
              ctx,
              plan,
              k,
              policy,
              () => this.cancelled || failure !== null,
              (r) => this.episodeRecorded(k, r),
            );
            if (settled === 'cancelled') break;
            progress.rolloutSettled(plan, settled.rollout);
            const left = remaining.get(plan)! - 1;
            remaining.set(plan, left);
            if (left === 0) this.decide(plan);
          } catch (err) {
            if (failure === null) failure = err;
            break;
          }
        }
      };
      await Promise.all(Array.from({ length: sim.workerCount + ROLLOUTS_PREPARED_AHEAD }, () => worker()));
    }
    o.signal?.removeEventListener('abort', onAbort);
    if (failure !== null) throw failure;
  }

  private episodeRecorded(
    k: number,
    r: { runId: string; outcome: string; reason: string; attempt: number; simSeconds: number },
  ): void {
    this.episodesRecorded++;
    this.simSeconds += r.simSeconds;
    this.progress.episodeEnded(r.runId);
    if (r.outcome === 'infrastructure_error') {
      this.retries++;
      this.progress.emit('retry', {
        rollout: { index: k, attempt: r.attempt, runId: r.runId, outcome: r.outcome, reason: r.reason },
      });
    }
  }

  summary(plans: PairPlan[], notPaired: NotPaired[], tookOver: LockHolder | null): QualificationSummary {
    const { o, store, snap, policy } = this;
    const pairs = plans.map((p) => p.outcome);
    const decidedNow = pairs.filter((p) => p.status === 'decided').length;
    return {
      campaignDir: store.dir,
      campaignId: store.campaign.id,
      snapshot: { id: snap.id, version: snap.version, hash: snap.snapshot_hash },
      policy: { id: policy.id, version: policy.version, key: this.pKey },
      contract: this.contract.id,
      protocol: this.protocol,
      bindings: o.bindings.map((b) => ({ key: bindingKey(b), kind: b.kind, label: b.label })),
      pairs,
      notPaired,
      pairsTotal: plans.length,
      pairsSkipped: this.progress.pairsSkipped,
      pairsDecided: decidedNow,
      pairsPending: pairs.filter((p) => p.status === 'pending').length,
      admitted: pairs.filter((p) => p.admitted === true).length,
      rejected: pairs.filter((p) => p.admitted === false).length,
      episodesRecorded: this.episodesRecorded,
      infrastructureRetries: this.retries,
      simSeconds: this.simSeconds,
      wallSeconds: (performance.now() - this.t0) / 1000,
      cancelled: this.cancelled && pairs.some((p) => p.status === 'pending'),
      recoveredEpisodes: store.recovered.length,
      writerLockTakenOver: tookOver,
    };
  }

  /** Closes the simulator this run made (one it was given stays open). */
  async close(): Promise<void> {
    if (this.sim && !this.o.simulator) await this.sim.close();
  }
}

/** A run's progress: pairs and rollouts done, clip-seconds simulated (partial rollouts included), the ETA. */
class Progress {
  private readonly progress: QualificationProgress;
  readonly pairsSkipped: number;
  private readonly clipSecondsPlanned: number;
  /** Simulated seconds of the rollouts running now, by run id. */
  private readonly partial = new Map<string, number>();
  private doneSeconds = 0;

  constructor(
    plans: PairPlan[],
    private readonly t0: number,
    private readonly onProgress: QualificationOptions['onProgress'],
  ) {
    let pairsSkipped = 0;
    for (const p of plans) {
      if (p.outcome.status === 'skipped') pairsSkipped++;
    }
    this.pairsSkipped = pairsSkipped;
    const rolloutsPlanned = plans.reduce((a, p) => a + p.todo.length, 0);
    this.clipSecondsPlanned = plans.reduce((a, p) => a + p.todo.length * p.meta.duration_s, 0);
    this.progress = {
      kind: 'plan',
      pairsTotal: plans.length,
      pairsDone: pairsSkipped,
      pairsSkipped,
      admitted: 0,
      rejected: 0,
      rolloutsPlanned,
      rolloutsDone: 0,
      clipSecondsPlanned: this.clipSecondsPlanned,
      clipSecondsDone: 0,
      elapsedS: 0,
      clipSecondsPerS: null,
      etaS: null,
    };
    for (const p of plans) {
      if (p.outcome.status === 'skipped') {
        if (p.outcome.admitted) this.progress.admitted++;
        else this.progress.rejected++;
      }
    }
  }

  emit(kind: QualificationProgress['kind'], extra: Partial<QualificationProgress> = {}): void {
    const { progress, clipSecondsPlanned } = this;
    const elapsed = (performance.now() - this.t0) / 1000;
    let inFlight = 0;
    for (const v of this.partial.values()) inFlight += v;
    progress.clipSecondsDone = Math.min(clipSecondsPlanned, this.doneSeconds + inFlight);
    progress.elapsedS = elapsed;
    const { clipSecondsPerS, etaS } = progressRates(progress);
    progress.clipSecondsPerS = clipSecondsPerS;
    progress.etaS = etaS;
    progress.kind = kind;
    this.onProgress?.({ ...progress, ...extra });
  }

  running(runId: string, simSeconds: number): void {
    this.partial.set(runId, simSeconds);
    this.emit('tick');
  }

  episodeEnded(runId: string): void {
    this.partial.delete(runId);
  }

  rolloutSettled(plan: PairPlan, rollout: NonNullable<QualificationProgress['rollout']>): void {
    this.doneSeconds += plan.meta.duration_s;
    this.progress.rolloutsDone++;
    this.emit('rollout', { rollout, pair: { ...plan.outcome } });
  }

  pairDecided(outcome: PairOutcome): void {
    this.progress.pairsDone++;
    if (outcome.admitted) this.progress.admitted++;
    else this.progress.rejected++;
    this.emit('pair', { pair: { ...outcome } });
  }
}

/** Runs rollout k of a pair until it settles, is unrunnable, or the run is cancelled. */
async function runUntilSettled(
  ctx: RolloutContext,
  plan: PairPlan,
  k: number,
  policy: AdmissionPolicy,
  stopped: () => boolean,
  onEpisode: (r: { runId: string; outcome: string; reason: string; attempt: number; simSeconds: number }) => void,
): Promise<'cancelled' | { rollout: NonNullable<QualificationProgress['rollout']> }> {
  const prior = plan.infraAttempts.get(k) ?? { attempts: 0, reason: '' };
  let attempts = prior.attempts;
  let lastReason = prior.reason;
  while (attempts < policy.parameters.maxInfrastructureAttempts) {
    if (stopped()) return 'cancelled';
    const seed = rolloutSeed(plan.parentTraceId, k);
    const r = await runRollout(ctx, {
      parentTraceId: plan.parentTraceId,
      binding: plan.binding,
      clip: plan.clip,
      rolloutIndex: k,
      seed,
      attempt: attempts + 1,
    });
    onEpisode({
      runId: r.episode.runId,
      outcome: r.end.outcome,
      reason: r.end.reason,
      attempt: attempts + 1,
      simSeconds: r.end.simSeconds,
    });
    if (r.end.outcome !== 'infrastructure_error') {
      plan.settled.set(k, {
        rolloutIndex: k,
        runId: r.episode.runId,
        seed,
        outcome: r.end.outcome,
        reason: r.end.reason,
        metrics: r.metrics,
        measures: r.measures,
      });
      return {
        rollout: {
          index: k,
          attempt: attempts + 1,
          runId: r.episode.runId,
          outcome: r.end.outcome,
          reason: r.end.reason,
        },
      };
    }
    attempts++;
    lastReason = r.end.reason;
  }
  plan.unrunnable.push({ rolloutIndex: k, attempts, reason: lastReason });
  return {
    rollout: {
      index: k,
      attempt: attempts,
      runId: '',
      outcome: 'infrastructure_error',
      reason: `unrunnable after ${attempts} attempt(s): ${lastReason}`,
    },
  };
}

interface QualMeta {
  policy?: string;
  protocol?: string;
}
const qualMeta = (e: EpisodeRecord): QualMeta => (e.meta?.qualification ?? {}) as QualMeta;

/** What is settled, what must run, and whether the pair's decision is current. */
function planPair(
  store: CampaignStore,
  policy: AdmissionPolicy,
  protocol: string,
  snapshotHash: string,
  binding: WbcBinding,
  clip: MotionClip,
  meta: WorkloadClipMeta,
  parentTraceId: string,
): PairPlan {
  const N = policy.parameters.rollouts;
  const eps = store
    .findEpisodes({ parentTraceId, executionDomain: 'simulation', snapshotHash })
    .filter((e) => qualMeta(e).protocol === protocol);
  const measures = new Map<string, RolloutMeasures>();
  for (const ev of store.listEvents({ parentTraceId, kind: 'note' })) {
    const d = ev.detail as { kind?: string; protocol?: string; measures?: RolloutMeasures };
    if (ev.runId && d.kind === MEASURES_EVENT_KIND && d.protocol === protocol && d.measures)
      measures.set(ev.runId, d.measures);
  }
  const settled = new Map<number, RolloutEvidence>();
  const infraAttempts = new Map<number, { attempts: number; reason: string }>();
  const todo: number[] = [];
  const unrunnable: UnrunnableRollout[] = [];
  for (let k = 0; k < N; k++) {
    const mine = eps.filter((e) => e.rolloutIndex === k);
    const ok = mine
      .filter((e) => e.status === 'finished' && e.outcome !== 'infrastructure_error' && measures.has(e.runId))
      .sort((a, b) => (a.endedAt ?? '').localeCompare(b.endedAt ?? '') || a.runId.localeCompare(b.runId))[0];
    if (ok) {
      settled.set(k, {
        rolloutIndex: k,
        runId: ok.runId,
        seed: ok.seed,
        outcome: ok.outcome!,
        reason: ok.reason,
        metrics: store.getMetrics(ok.runId, MB_METRICS_1.id)?.result ?? null,
        measures: measures.get(ok.runId)!,
      });
      continue;
    }
    // Finished infrastructure errors count as attempts; interrupted episodes (kill -9, cancellation) do not.
    const infra = mine
      .filter((e) => e.status === 'finished' && e.outcome === 'infrastructure_error')
      .sort((a, b) => (a.endedAt ?? '').localeCompare(b.endedAt ?? ''));
    if (infra.length > 0)
      infraAttempts.set(k, {
        attempts: infra.length,
        reason: infra[infra.length - 1].reason ?? 'infrastructure error',
      });
    if (infra.length >= policy.parameters.maxInfrastructureAttempts)
      unrunnable.push({
        rolloutIndex: k,
        attempts: infra.length,
        reason: infra[infra.length - 1].reason ?? 'infrastructure error',
      });
    else todo.push(k);
  }
  const outcome: PairOutcome = {
    binding: bindingKey(binding),
    clipId: clip.id,
    clipName: meta.name,
    group: meta.group,
    parentTraceId,
    status: 'pending',
    admitted: null,
    reasons: [],
  };
  if (todo.length === 0) {
    const adm = store.listAdmissions({ parentTraceId, policyId: policy.id, policyVersion: policy.version })[0];
    const ev = adm?.evidence as
      | { snapshot_hash?: string; protocol?: string; rollouts?: { run_id: string }[]; unrunnable?: unknown[] }
      | undefined;
    const runIds = [...settled.values()].map((r) => r.runId).sort();
    const decidedOn = (ev?.rollouts ?? []).map((r) => r.run_id).sort();
    if (
      adm &&
      ev &&
      ev.snapshot_hash === snapshotHash &&
      ev.protocol === protocol &&
      JSON.stringify(runIds) === JSON.stringify(decidedOn) &&
      (ev.unrunnable?.length ?? 0) === unrunnable.length
    ) {
      outcome.status = 'skipped';
      outcome.admitted = adm.admitted;
      outcome.reasons = adm.reasons;
    }
  }
  return { binding, clip, meta, parentTraceId, settled, infraAttempts, todo, unrunnable, outcome };
}

function decidePair(
  store: CampaignStore,
  policy: AdmissionPolicy,
  contract: MetricContract,
  snap: LoadedWorkload['snapshot'],
  p: PairPlan,
  modelSha256: string,
): AdmissionDecision {
  const rollouts = [...p.settled.values()].sort((a, b) => a.rolloutIndex - b.rolloutIndex);
  const d = decideAdmission(policy, contract, {
    clipName: p.meta.name,
    group: p.meta.group,
    rollouts,
    unrunnable: p.unrunnable,
  });
  store.putAdmission({
    parentTraceId: p.parentTraceId,
    policyId: policy.id,
    policyVersion: policy.version,
    admitted: d.admitted,
    reasons: d.reasons,
    evidence: {
      policy: policyKey(policy),
      policy_parameters: policy.parameters,
      limits: {
        ...resolvedLimits(policy, contract.thresholds),
        mpjpe_l_mm: policy.parameters.maxMpjpeLMm,
        saturation_fraction: policy.parameters.maxSaturationFraction,
      },
      contract: contract.id,
      binding: bindingKey(p.binding),
      binding_kind: p.binding.kind,
      binding_label: p.binding.label,
      checkpoint_hash: p.binding.checkpointHash ?? null,
      model_sha256: modelSha256,
      snapshot: { id: snap.id, version: snap.version },
      snapshot_hash: snap.snapshot_hash,
      clip: { id: p.clip.id, name: p.meta.name, group: p.meta.group },
      protocol: rolloutProtocolKey(policy),
      rollouts: rollouts.map((r) => ({ index: r.rolloutIndex, run_id: r.runId, seed: r.seed, outcome: r.outcome })),
      unrunnable: p.unrunnable,
      criteria: d.criteria,
    },
  });
  return d;
}
