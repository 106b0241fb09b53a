// An episode's row from `running` to `finished` or `interrupted`: beginEpisode commits the row and
// creates the MCAP file, the EpisodeRecorder it returns finishes or aborts it through this host,
// and recovery marks the episodes whose recording process died. Each change of an episode's row
// commits with its event (and its metrics) in one transaction.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { ExecutionDomain } from '../../domain/backend/backend';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { episodeFileRelative, makeRunId, recoveredFileRelative, runIdProblem } from '../../domain/trace/ids';
import {
  EPISODE_OUTCOMES,
  EXECUTION_DOMAINS,
  type BranchRecord,
  type EpisodeRecord,
  type EpisodeStatus,
  type NewTraceEvent,
  type TraceEvent,
  type WriterIdentity,
} from '../../domain/trace/records';
import { recoverEpisodeFile, type EpisodeRecoveryReport } from '../episode/episodeRecovery';
import { EpisodeWriter, type FlushPolicy, type ReferenceFrames } from '../episode/episodeWriter';
import { EPISODES_DIR, type CampaignDb } from './campaignDb';
import { EPISODE_SELECT, episodeOf, json, nowIso, parse, type EpisodeRow } from './campaignRows';
import { EpisodeRecorder, RECORDER_FLUSH_POLICY, type FinishedEpisode, type RecorderHost } from './episodeRecorder';
import { fromFsError, TraceStoreError } from './errors';
import type { EventRepository } from './eventRepository';
import type { MetricsRepository } from './metricsRepository';
import type { ParentTraceRepository } from './parentTraceRepository';
import type { WorkloadSnapshotRepository } from './workloadSnapshotRepository';
import { activeRuns, currentWriter, markActive, markInactive, writerState } from './writerLiveness';

export interface RecoveredEpisode {
  runId: string;
  reason: string;
  report: EpisodeRecoveryReport | null;
}

export interface BeginEpisodeRequest {
  parentTraceId: string;
  executionDomain: ExecutionDomain;
  /** The backend that ran it (simulator worker, robot link). */
  backendId: string;
  seed: number;
  /** Default: a new `<sim|real>-<time>-<random>` id. */
  runId?: string;
  /** The physical robot (serial, name); null for a simulator. */
  robotUnit?: string | null;
  rolloutIndex?: number | null;
  /** The workload snapshot the episode runs for (must be stored). */
  snapshotHash?: string | null;
  /** The reference written to /reference as frames arrive. */
  reference?: ReferenceFrames | null;
  /** The robot's model: the episode file then carries the 3D tracks Foxglove draws (episodeWriter.ts). */
  robot?: RobotProfile | null;
  /** More entries for the file's "episode" metadata (clip name, binding label, …). */
  fileMetadata?: Record<string, string | number | boolean | null>;
  /** Kept in episodes.meta_json. */
  meta?: Record<string, unknown>;
  /** Wall-clock start, ms since the epoch (default now). */
  startMs?: number;
  /** Chunking and durability of the episode file: what is given overrides RECORDER_FLUSH_POLICY. */
  flush?: FlushPolicy;
}

export class EpisodeLifecycle implements RecorderHost {
  /** Episodes being recorded through this store: it refuses to close while any is. */
  readonly recorders = new Set<EpisodeRecorder>();

  constructor(
    private readonly c: CampaignDb,
    private readonly parents: ParentTraceRepository,
    private readonly workloads: WorkloadSnapshotRepository,
    private readonly events: EventRepository,
    private readonly metrics: MetricsRepository,
    /** Rewrite a recovered episode's readable part as an indexed MCAP beside it. */
    private readonly rewriteRecovered: boolean,
  ) {}

  get dbFile(): string {
    return this.c.dbFile;
  }

  /**
   * Starts recording an episode: the `running` row (with an episode_start event) is committed
   * first, then the MCAP file is created (never replacing an existing one). If the file cannot be
   * created, the attempt stays on record as interrupted/infrastructure_error with the reason, and
   * a TraceStoreError naming the file is thrown.
   */
  async beginEpisode(req: BeginEpisodeRequest): Promise<EpisodeRecorder> {
    this.c.assertOpen(true);
    const startMs = req.startMs ?? Date.now();
    const runId = req.runId ?? makeRunId(req.executionDomain, startMs, randomBytes(4).toString('hex'));
    const bad = runIdProblem(runId);
    if (bad) throw new TraceStoreError('invalid', this.c.dbFile, bad);
    if (!EXECUTION_DOMAINS.includes(req.executionDomain))
      throw new TraceStoreError('invalid', this.c.dbFile, `unknown execution domain ${String(req.executionDomain)}`);
    if (!Number.isSafeInteger(req.seed))
      throw new TraceStoreError('invalid', this.c.dbFile, `seed must be an integer, got ${req.seed}`);
    if (typeof req.backendId !== 'string' || req.backendId === '')
      throw new TraceStoreError('invalid', this.c.dbFile, 'backendId is required');
    if (req.rolloutIndex != null && !(Number.isSafeInteger(req.rolloutIndex) && req.rolloutIndex >= 0))
      throw new TraceStoreError(
        'invalid',
        this.c.dbFile,
        `rolloutIndex must be an integer ≥ 0, got ${req.rolloutIndex}`,
      );
    const parent = this.parents.getParentTrace(req.parentTraceId);
    if (!parent)
      throw new TraceStoreError(
        'invalid',
        this.c.dbFile,
        `parent trace ${req.parentTraceId} is not stored in this campaign`,
      );
    if (req.snapshotHash && !this.workloads.getWorkloadSnapshot(req.snapshotHash))
      throw new TraceStoreError(
        'invalid',
        this.c.dbFile,
        `workload snapshot ${req.snapshotHash} is not stored in this campaign`,
      );
    const rel = episodeFileRelative(runId);
    const file = this.c.resolve(rel);
    const writer = currentWriter();
    const at = nowIso(startMs);
    markActive(this.c.dbFile, runId);
    let branch: BranchRecord;
    try {
      branch = this.c.tx('cannot start the episode in', () => {
        if (this.c.db.prepare('SELECT 1 FROM episodes WHERE run_id = ?').get(runId))
          throw new TraceStoreError('conflict', this.c.dbFile, `episode ${runId} already exists in this campaign`);
        const br = this.parents.ensureBranchIn(parent.id, req.executionDomain);
        this.c.db
          .prepare(
            `INSERT INTO episodes (run_id, branch_id, snapshot_hash, rollout_index, backend_id, robot_unit, seed, status, started_at, mcap_path, writer_host, writer_pid, writer_start, meta_json)
             VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            runId,
            br.id,
            req.snapshotHash ?? null,
            req.rolloutIndex ?? null,
            req.backendId,
            req.robotUnit ?? null,
            req.seed,
            at,
            rel,
            writer.host,
            writer.pid,
            writer.start,
            json(req.meta),
          );
        this.events.insertEvent({
          kind: 'episode_start',
          runId,
          tS: 0,
          atMs: startMs,
          detail: {
            backend_id: req.backendId,
            seed: req.seed,
            robot_unit: req.robotUnit ?? null,
            rollout_index: req.rolloutIndex ?? null,
          },
        });
        return br;
      });
    } catch (err) {
      markInactive(this.c.dbFile, runId);
      throw err;
    }
    const id = parent.identity;
    let ew: EpisodeWriter;
    try {
      ew = await EpisodeWriter.create(file, {
        startMs,
        exclusive: true,
        flush: { ...RECORDER_FLUSH_POLICY, ...(req.flush ?? {}) },
        reference: req.reference ?? null,
        robot: req.robot ?? null,
        // A robot's lowstate is float32 (unitree_hg MotorState/IMUState): stored as such, exactly.
        measuredPrecision: req.executionDomain === 'real_robot' ? 'float32' : 'float64',
        episode: {
          ...(req.fileMetadata ?? {}),
          run_id: runId,
          campaign_id: this.c.campaign.id,
          parent_trace_id: parent.id,
          branch_id: branch.id,
          execution_domain: req.executionDomain,
          backend: req.backendId,
          robot_unit: req.robotUnit ?? null,
          seed: req.seed,
          rollout_index: req.rolloutIndex ?? null,
          binding: `${id.bindingId}@${id.bindingVersion}`,
          checkpoint_hash: id.checkpointHash,
          clip_id: id.clipId,
          reference_sha256: id.referenceSha256,
          model_sha256: id.modelSha256,
          adapter_version: id.adapterVersion,
          contract: id.contractId,
          calibration_id: id.calibrationId,
          workload_snapshot: req.snapshotHash ?? null,
          started_at: at,
        },
      });
      await ew.writeEvent(
        0,
        'episode_start',
        `episode ${runId} (${req.executionDomain}, ${req.backendId}, seed ${req.seed})`,
      );
    } catch (err) {
      const e = fromFsError(err, file, 'cannot create the episode file');
      try {
        await this.markInterrupted(runId, `the episode file could not be created: ${e.message}`, {
          cause: 'file_create_failed',
        });
      } finally {
        markInactive(this.c.dbFile, runId);
      }
      throw e;
    }
    const rec = new EpisodeRecorder(this, runId, file, parent, req.executionDomain, ew, () => {
      this.recorders.delete(rec);
      markInactive(this.c.dbFile, runId);
    });
    this.recorders.add(rec);
    return rec;
  }

  /**
   * Marks every `running` episode whose writer is gone as interrupted (infrastructure_error),
   * counting (and by default rewriting) what its file holds. Episodes recorded by a live process
   * (this one included) are left alone; `force` also takes episodes of other hosts.
   */
  async recoverInterrupted(options: { force?: boolean } = {}): Promise<RecoveredEpisode[]> {
    this.c.assertOpen(true);
    const running = this.c.read(
      'cannot read',
      () =>
        this.c.db.prepare(`${EPISODE_SELECT} WHERE e.status = 'running' ORDER BY e.started_at`).all() as EpisodeRow[],
    );
    const mine = new Set(activeRuns(this.c.dbFile));
    this.removeStaleRecoveryCopies();
    const out: RecoveredEpisode[] = [];
    for (const row of running) {
      if (mine.has(row.run_id)) continue;
      const w: WriterIdentity = { host: row.writer_host, pid: row.writer_pid, start: row.writer_start };
      const state = writerState(w, this.c.dbFile, row.run_id);
      if (state === 'alive' || (state === 'unknown' && !options.force)) continue;
      const who = `pid ${w.pid} on ${w.host}`;
      const r = await this.markInterrupted(
        row.run_id,
        `the recording process (${who}) stopped before the episode finished`,
        { cause: 'writer_gone', writer: w },
      );
      if (r) out.push(r);
    }
    return out;
  }

  /** Temporary copies (`<run_id>.recovered.mcap.tmp-<pid>`) left by a recovery that was itself killed. */
  private removeStaleRecoveryCopies(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.c.resolve(EPISODES_DIR));
    } catch {
      return;
    }
    const me = currentWriter();
    for (const name of names) {
      const m = /\.recovered\.mcap\.tmp-(\d+)$/.exec(name);
      if (!m) continue;
      const pid = Number(m[1]);
      if (pid === me.pid || writerState({ host: me.host, pid, start: null }, this.c.dbFile, '') !== 'dead') continue;
      fs.rmSync(this.c.resolve(`${EPISODES_DIR}/${name}`), { force: true });
    }
  }

  /** @internal RecorderHost: marks a running episode interrupted/infrastructure_error after reading what its file holds. */
  async markInterrupted(runId: string, why: string, detail: Record<string, unknown>): Promise<RecoveredEpisode | null> {
    const rel = episodeFileRelative(runId);
    const file = this.c.resolve(rel);
    const recRel = recoveredFileRelative(runId);
    let report: EpisodeRecoveryReport | null = null;
    let readError: string | null = null;
    try {
      report = await recoverEpisodeFile(file, {
        rewriteTo: this.rewriteRecovered ? this.c.resolve(recRel) : null,
        recoveryMetadata: { run_id: runId, reason: why },
      });
    } catch (err) {
      readError = (err as Error).message;
      // The copy could not be written (e.g. the disk is full): count without rewriting.
      try {
        report = await recoverEpisodeFile(file);
      } catch (err2) {
        readError = (err2 as Error).message;
      }
    }
    const frames = report?.executedFrames ?? 0;
    const tail = report
      ? report.exists
        ? `${frames} executed frame(s) recovered${report.lastExecutedTimeS !== null ? ` up to t = ${report.lastExecutedTimeS.toFixed(3)} s` : ''}`
        : 'no episode file was written'
      : `the episode file could not be read (${readError})`;
    const reason = `interrupted: ${why}; ${tail}`;
    return this.c.tx('cannot mark the interrupted episode in', () => {
      const row = this.c.db.prepare('SELECT status, meta_json FROM episodes WHERE run_id = ?').get(runId) as
        { status: EpisodeStatus; meta_json: string } | undefined;
      if (!row || row.status !== 'running') return null;
      const recoveryDetail = {
        ...detail,
        recovered_frames: frames,
        last_time_s: report?.lastExecutedTimeS ?? null,
        file_exists: report?.exists ?? null,
        file_bytes: report?.bytes ?? null,
        file_complete: report?.complete ?? null,
        messages: report?.messages ?? null,
        stopped_by: report?.error ?? null,
        recovered_file: report?.rewrittenFile ? recRel : null,
        read_error: readError,
      };
      const meta = { ...parse<Record<string, unknown>>(row.meta_json), recovery: recoveryDetail };
      this.c.db
        .prepare(
          `UPDATE episodes SET status = 'interrupted', outcome = 'infrastructure_error', reason = ?, ended_at = ?, frame_count = ?, recovered_mcap_path = ?, meta_json = ? WHERE run_id = ? AND status = 'running'`,
        )
        .run(reason, nowIso(), frames, report?.rewrittenFile ? recRel : null, json(meta), runId);
      this.events.insertEvent({
        kind: 'recovery',
        runId,
        reason,
        tS: report?.lastExecutedTimeS ?? null,
        detail: recoveryDetail,
      });
      return { runId, reason, report };
    });
  }

  /** @internal RecorderHost: commits a finished episode, its episode_end event and its metrics in one transaction. */
  commitFinished(runId: string, f: FinishedEpisode): EpisodeRecord {
    if (!EPISODE_OUTCOMES.includes(f.outcome))
      throw new TraceStoreError('invalid', this.c.dbFile, `unknown outcome ${String(f.outcome)}`);
    return this.c.tx('cannot commit the finished episode to', () => {
      const row = this.c.db.prepare('SELECT status, meta_json FROM episodes WHERE run_id = ?').get(runId) as
        { status: EpisodeStatus; meta_json: string } | undefined;
      if (!row) throw new TraceStoreError('state', this.c.dbFile, `episode ${runId} is not in the campaign`);
      if (row.status !== 'running')
        throw new TraceStoreError(
          'state',
          this.c.dbFile,
          `episode ${runId} is ${row.status}, not running: it cannot be finished`,
        );
      const meta = { ...parse<Record<string, unknown>>(row.meta_json), ...f.meta };
      this.c.db
        .prepare(
          `UPDATE episodes SET status = 'finished', outcome = ?, reason = ?, ended_at = ?, frame_count = ?, sim_seconds = ?, wall_seconds = ?, mcap_bytes = ?, mcap_sha256 = ?, trajectory_sha256 = ?, meta_json = ?
            WHERE run_id = ? AND status = 'running'`,
        )
        .run(
          f.outcome,
          f.reason,
          nowIso(),
          f.frames,
          f.simSeconds,
          f.wallSeconds,
          f.bytes,
          f.sha256,
          f.trajectorySha256,
          json(meta),
          runId,
        );
      this.events.insertEvent({
        kind: 'episode_end',
        runId,
        tS: f.simSeconds,
        reason: f.reason,
        detail: { outcome: f.outcome, frames: f.frames },
      });
      if (f.metrics) this.metrics.insertMetrics(runId, f.metrics);
      return episodeOf(this.c.db.prepare(`${EPISODE_SELECT} WHERE e.run_id = ?`).get(runId) as EpisodeRow);
    });
  }

  /** @internal RecorderHost */
  insertEpisodeEvent(e: NewTraceEvent): TraceEvent {
    return this.events.recordEvent(e);
  }
}
