// The trace store (DESIGN §3 Trace, §7 Storage): a campaign folder
//
//     <dir>/campaign.sqlite          the index (schema: src/services/trace/migrations.ts)
//     <dir>/episodes/<run_id>.mcap   one MCAP file per episode (src/services/episode/)
//
// and the typed repository over it. No SQL lives outside src/services/trace. Episodes are
// recorded through beginEpisode() → EpisodeRecorder (episodeRecorder.ts). Opening a campaign
// recovers episodes whose recording process died (kill -9, power loss): they are marked
// `interrupted` with outcome `infrastructure_error`, their readable frames counted and, by
// default, rewritten beside the original as an indexed MCAP.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { EpisodeOutcome, ExecutionDomain } from '../../domain/backend/backend';
import type { EpisodeMetrics } from '../../domain/metrics/readings';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { canonicalJson } from '../../domain/trace/canonicalJson';
import {
  branchId,
  episodeFileRelative,
  makeCampaignId,
  makeRunId,
  recoveredFileRelative,
  runIdProblem,
} from '../../domain/trace/ids';
import {
  PARENT_TRACE_SCHEME,
  parentTraceId,
  parentTraceProblems,
  parentTraceText,
  type ParentTraceIdentity,
} from '../../domain/trace/parentTrace';
import {
  calibrationIdOf,
  EPISODE_OUTCOMES,
  EVENT_KINDS_NEEDING_REASON,
  EXECUTION_DOMAINS,
  metricScalars,
  TRACE_EVENT_KINDS,
  type AdmissionRecord,
  type BindingRecord,
  type BranchRecord,
  type CalibrationRecord,
  type CampaignRecord,
  type EpisodeRecord,
  type EpisodeResultRow,
  type EpisodeStatus,
  type MetricScalars,
  type MetricsRecord,
  type NewTraceEvent,
  type ParentTraceRecord,
  type StoredCalibration,
  type TraceEvent,
  type TraceEventKind,
  type WriterIdentity,
} from '../../domain/trace/records';
import { PEER_CONTRACTS } from '../../domain/metrics/peerContracts';
import { calibrationRecordProblem, episodeMetricsProblem, scalarDisagreement } from '../../domain/trace/storedRecords';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import { CAPABILITY_GROUPS, snapshotHash, type WorkloadSnapshot } from '../../domain/workload/snapshot';
import { recoverEpisodeFile, type EpisodeRecoveryReport } from '../episode/episodeRecovery';
import { createFolderTree, FolderRefusedError } from '../files/folders';
import { EpisodeWriter, type FlushPolicy, type ReferenceFrames } from '../episode/episodeWriter';
import { fromFsError, fromSqliteError, TraceStoreError } from './errors';
import { EpisodeRecorder, RECORDER_FLUSH_POLICY, type FinishedEpisode, type RecorderHost } from './episodeRecorder';
import { LATEST_SCHEMA_VERSION, migrate, refuseNewer, schemaVersionOf } from './migrations';
import { openDatabase } from './sqlite';
import { acquireWriterLock, describeHolder, type LockHolder, type WriterLockHandle } from './writerLock';
import { activeRuns, currentWriter, markActive, markInactive, writerState } from './writerLiveness';

export const CAMPAIGN_DB = 'campaign.sqlite';
export const EPISODES_DIR = 'episodes';

export interface OpenCampaignOptions {
  /** Create the folder and database when missing (default false: a missing campaign is an error). */
  create?: boolean;
  /** Name of a new campaign (default: the folder's name). */
  name?: string;
  /** Open for reading only: no migration, no recovery, no writes (a read-only folder is read through a private copy). */
  readOnly?: boolean;
  /** Recover episodes whose writer died (default true). */
  recover?: boolean;
  /** Rewrite a recovered episode's readable part as an indexed MCAP beside it (default true). */
  rewriteRecovered?: boolean;
  busyTimeoutMs?: number;
  /** SQLite synchronous mode (default FULL; see sqlite.ts). */
  synchronous?: 'FULL' | 'NORMAL';
  /** What this writer is doing, shown to a second writer that is refused (default: this process's command line). */
  purpose?: string;
}

export interface RecoveredEpisode {
  runId: string;
  reason: string;
  report: EpisodeRecoveryReport | null;
}

export interface ParentTraceInputs {
  /** Stored (or checked against the stored record) in `bindings`. */
  binding: WbcBinding;
  clipId: string;
  referenceSha256: string;
  modelSha256: string;
  adapterVersion: string;
  bodySet: readonly string[];
  contractId: string;
  /** null for qualification; a stored calibration's id for a matched pair. */
  calibrationId: string | null;
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

export interface EpisodeFilter {
  parentTraceId?: string;
  executionDomain?: ExecutionDomain;
  status?: EpisodeStatus;
  outcome?: EpisodeOutcome;
  snapshotHash?: string;
  rolloutIndex?: number;
}

export interface ParentTraceFilter {
  bindingId?: string;
  bindingVersion?: string;
  clipId?: string;
  contractId?: string;
  /** A calibration id, or null for qualification pairs only. */
  calibrationId?: string | null;
}

export interface ResultFilter extends ParentTraceFilter {
  executionDomain?: ExecutionDomain;
  status?: EpisodeStatus;
  snapshotHash?: string;
}

const PROGRAM = (() => {
  try {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      name?: string;
      version?: string;
    };
    return `${pkg.name ?? 'motionbench'} ${pkg.version ?? ''}`.trim();
  } catch {
    return 'motionbench';
  }
})();

const nowIso = (ms = Date.now()) => new Date(ms).toISOString();
const json = (v: unknown) => canonicalJson(v ?? {});
const parse = <T>(s: string | null): T => (s === null ? (null as T) : (JSON.parse(s) as T));

/**
 * Opens (or with `create`, creates) the campaign in `dir`. Refuses a database written by a newer
 * program, migrates an older one, and recovers episodes whose recording process died.
 */
export async function openCampaign(dir: string, options: OpenCampaignOptions = {}): Promise<CampaignStore> {
  const abs = path.resolve(dir);
  const readOnly = options.readOnly ?? false;
  let st: fs.Stats | null = null;
  try {
    st = fs.statSync(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw fromFsError(err, abs, 'cannot open the campaign folder');
  }
  if (!st) {
    if (!options.create || readOnly)
      throw new TraceStoreError('not_found', abs, `no campaign at ${abs} (the folder does not exist)`);
    try {
      // Checked (no /proc, /sys, /dev; a writable folder above) and made one level at a time:
      // a recursive mkdir spins forever under /proc (src/services/files/folders.ts).
      createFolderTree(abs);
    } catch (err) {
      if (err instanceof FolderRefusedError) {
        const code =
          err.code === 'not_writable' ? 'read_only' : err.code === 'not_a_folder' ? 'not_a_campaign' : 'invalid';
        throw new TraceStoreError(code, abs, `cannot create the campaign folder ${abs}: ${err.message}`, {
          cause: err,
        });
      }
      throw fromFsError(err, abs, 'cannot create the campaign folder');
    }
  } else if (!st.isDirectory()) {
    throw new TraceStoreError('not_a_campaign', abs, `${abs} is a file, not a campaign folder`);
  }
  const dbFile = path.join(abs, CAMPAIGN_DB);
  const exists = fs.existsSync(dbFile);
  if (!exists && (!options.create || readOnly))
    throw new TraceStoreError(
      'not_a_campaign',
      abs,
      `${abs} is not a campaign folder (no ${CAMPAIGN_DB}); create one first`,
    );
  if (!readOnly) {
    try {
      fs.accessSync(abs, fs.constants.W_OK);
    } catch (err) {
      throw fromFsError(err, abs, 'cannot write to the campaign folder');
    }
  }
  const episodesDir = path.join(abs, EPISODES_DIR);
  const { db, copyOf } = openDatabase(dbFile, {
    readOnly,
    create: !!options.create,
    busyTimeoutMs: options.busyTimeoutMs ?? 5000,
    synchronous: options.synchronous ?? 'FULL',
  });
  let store: CampaignStore;
  let lock: WriterLockHandle | null = null;
  try {
    // One writer per campaign (writerLock.ts): taken before anything is migrated or recovered.
    if (!readOnly) lock = acquireWriterLock(db, dbFile, options.purpose);
    const version = schemaVersionOf(db);
    refuseNewer(version, dbFile);
    if (readOnly) {
      if (version < LATEST_SCHEMA_VERSION)
        throw new TraceStoreError(
          'state',
          dbFile,
          `${dbFile} is at schema version ${version} (this program uses ${LATEST_SCHEMA_VERSION}); open it once for writing to migrate it`,
        );
    } else {
      try {
        migrate(db, dbFile, PROGRAM);
      } catch (err) {
        throw fromSqliteError(err, dbFile, 'cannot migrate the campaign database');
      }
      const est = fs.statSync(episodesDir, { throwIfNoEntry: false });
      if (est && !est.isDirectory())
        throw new TraceStoreError('not_a_campaign', episodesDir, `${episodesDir} is a file, not the episodes folder`);
      if (!est) {
        try {
          fs.mkdirSync(episodesDir);
        } catch (err) {
          throw fromFsError(err, episodesDir, 'cannot create the episodes folder');
        }
      }
    }
    let campaign = db.prepare('SELECT * FROM campaigns ORDER BY created_at, id LIMIT 1').get() as
      CampaignRow | undefined;
    if (!campaign) {
      if (readOnly) throw new TraceStoreError('not_a_campaign', dbFile, `${dbFile} holds no campaign record`);
      try {
        db.prepare('INSERT INTO campaigns (id, name, created_at, created_by, meta_json) VALUES (?, ?, ?, ?, ?)').run(
          makeCampaignId(randomBytes(8).toString('hex')),
          options.name ?? path.basename(abs),
          nowIso(),
          PROGRAM,
          '{}',
        );
      } catch (err) {
        throw fromSqliteError(err, dbFile, 'cannot write the campaign database');
      }
      campaign = db.prepare('SELECT * FROM campaigns ORDER BY created_at, id LIMIT 1').get() as CampaignRow;
    }
    store = new CampaignStore(
      abs,
      dbFile,
      db,
      campaignOf(campaign),
      readOnly,
      copyOf,
      options.rewriteRecovered ?? true,
      lock,
    );
  } catch (err) {
    lock?.release();
    db.close();
    if (copyOf) fs.rmSync(path.dirname(copyOf), { recursive: true, force: true });
    throw err;
  }
  if (lock?.tookOver) {
    try {
      store.noteLockTakeOver(lock.tookOver);
    } catch (err) {
      store.close();
      throw err;
    }
  }
  if (!readOnly && (options.recover ?? true)) {
    try {
      store.recovered.push(...(await store.recoverInterrupted()));
    } catch (err) {
      store.close();
      throw err;
    }
  }
  return store;
}

interface CampaignRow {
  id: string;
  name: string;
  created_at: string;
  created_by: string;
  meta_json: string;
}
interface EpisodeRow {
  run_id: string;
  branch_id: string;
  parent_trace_id: string;
  execution_domain: ExecutionDomain;
  snapshot_hash: string | null;
  rollout_index: number | null;
  backend_id: string;
  robot_unit: string | null;
  seed: number;
  status: EpisodeStatus;
  outcome: EpisodeOutcome | null;
  reason: string | null;
  started_at: string;
  ended_at: string | null;
  frame_count: number;
  sim_seconds: number | null;
  wall_seconds: number | null;
  mcap_path: string;
  mcap_bytes: number | null;
  mcap_sha256: string | null;
  recovered_mcap_path: string | null;
  trajectory_sha256: string | null;
  writer_host: string;
  writer_pid: number;
  writer_start: string | null;
  meta_json: string;
}
interface ParentRow {
  id: string;
  campaign_id: string;
  scheme: string;
  identity_text: string;
  binding_id: string;
  binding_version: string;
  checkpoint_hash: string | null;
  clip_id: string;
  reference_sha256: string;
  model_sha256: string;
  adapter_version: string;
  body_set_json: string;
  contract_id: string;
  calibration_id: string | null;
  created_at: string;
}
interface EventRow {
  id: number;
  campaign_id: string;
  parent_trace_id: string | null;
  run_id: string | null;
  at: string;
  t_s: number | null;
  kind: TraceEventKind;
  reason: string | null;
  detail_json: string;
}
interface MetricsRow {
  run_id: string;
  contract_id: string;
  k: number;
  failed: number | null;
  failure_frame: number | null;
  failure_condition: string | null;
  failure_body: string | null;
  progress_soft: number | null;
  mpjpe_l_mm: number | null;
  joint_pos_rmse: number | null;
  joint_vel_rmse: number | null;
  joint_acc_rms: number | null;
  joint_acc_p95: number | null;
  joint_jerk_rms: number | null;
  joint_jerk_p95: number | null;
  result_json: string;
  created_at: string;
}

const campaignOf = (r: CampaignRow): CampaignRecord => ({
  id: r.id,
  name: r.name,
  createdAt: r.created_at,
  createdBy: r.created_by,
  meta: parse(r.meta_json),
});

const episodeOf = (r: EpisodeRow): EpisodeRecord => ({
  runId: r.run_id,
  branchId: r.branch_id,
  parentTraceId: r.parent_trace_id,
  executionDomain: r.execution_domain,
  snapshotHash: r.snapshot_hash,
  rolloutIndex: r.rollout_index,
  backendId: r.backend_id,
  robotUnit: r.robot_unit,
  seed: r.seed,
  status: r.status,
  outcome: r.outcome,
  reason: r.reason,
  startedAt: r.started_at,
  endedAt: r.ended_at,
  frameCount: r.frame_count,
  simSeconds: r.sim_seconds,
  wallSeconds: r.wall_seconds,
  mcapPath: r.mcap_path,
  mcapBytes: r.mcap_bytes,
  mcapSha256: r.mcap_sha256,
  recoveredMcapPath: r.recovered_mcap_path,
  trajectorySha256: r.trajectory_sha256,
  writer: { host: r.writer_host, pid: r.writer_pid, start: r.writer_start },
  meta: parse(r.meta_json),
});

const parentOf = (r: ParentRow): ParentTraceRecord => ({
  id: r.id,
  campaignId: r.campaign_id,
  scheme: r.scheme,
  identityText: r.identity_text,
  createdAt: r.created_at,
  identity: {
    bindingId: r.binding_id,
    bindingVersion: r.binding_version,
    checkpointHash: r.checkpoint_hash,
    clipId: r.clip_id,
    referenceSha256: r.reference_sha256,
    modelSha256: r.model_sha256,
    adapterVersion: r.adapter_version,
    bodySet: parse<string[]>(r.body_set_json),
    contractId: r.contract_id,
    calibrationId: r.calibration_id,
  },
});

const eventOf = (r: EventRow): TraceEvent => ({
  id: r.id,
  campaignId: r.campaign_id,
  parentTraceId: r.parent_trace_id,
  runId: r.run_id,
  at: r.at,
  tS: r.t_s,
  kind: r.kind,
  reason: r.reason,
  detail: parse(r.detail_json),
});

const scalarsOf = (r: MetricsRow): MetricScalars => ({
  K: r.k,
  failed: r.failed === null ? null : r.failed === 1,
  failureFrame: r.failure_frame,
  failureCondition: r.failure_condition,
  failureBody: r.failure_body,
  progressSoft: r.progress_soft,
  mpjpeLMm: r.mpjpe_l_mm,
  jointPosRmse: r.joint_pos_rmse,
  jointVelRmse: r.joint_vel_rmse,
  jointAccRms: r.joint_acc_rms,
  jointAccP95: r.joint_acc_p95,
  jointJerkRms: r.joint_jerk_rms,
  jointJerkP95: r.joint_jerk_p95,
});

/** Contracts whose results are a peer's (putPeerMetrics), not EpisodeMetrics. */
const PEER_CONTRACT_IDS: ReadonlySet<string> = new Set(PEER_CONTRACTS.map((c) => c.id));

/** A stored value for a one-line message. */
const shown = (v: unknown): string => {
  const t = v === undefined ? 'nothing' : JSON.stringify(v);
  return t.length > 80 ? `${t.slice(0, 79)}…` : t;
};

/** A WHERE clause built from optional filters (values always bound, never spliced). */
class Where {
  private readonly conds: string[] = [];
  readonly args: unknown[] = [];
  /** Adds `cond` (with `?` placeholders) when `value` is not undefined. */
  when(value: unknown, cond: string): this {
    if (value !== undefined) {
      this.conds.push(cond);
      this.args.push(value);
    }
    return this;
  }
  raw(cond: string): this {
    this.conds.push(cond);
    return this;
  }
  get sql(): string {
    return this.conds.length ? `WHERE ${this.conds.join(' AND ')}` : '';
  }
}

const EPISODE_SELECT = `SELECT e.*, b.parent_trace_id, b.execution_domain FROM episodes e JOIN branches b ON b.id = e.branch_id`;

export class CampaignStore implements RecorderHost {
  /** Episodes this open() found interrupted and marked. */
  readonly recovered: RecoveredEpisode[] = [];
  private closed = false;
  private readonly recorders = new Set<EpisodeRecorder>();

  /** @internal use openCampaign() */
  constructor(
    /** The campaign folder (absolute). */
    readonly dir: string,
    /** campaign.sqlite in it. */
    readonly dbFile: string,
    private readonly db: Database.Database,
    readonly campaign: CampaignRecord,
    readonly readOnly: boolean,
    /** Set when a read-only folder is read through a private copy of the database. */
    readonly readingCopy: string | null,
    private readonly rewriteRecovered: boolean,
    /** The campaign's writer lock (writerLock.ts); null when read-only. */
    private readonly writerLock: WriterLockHandle | null = null,
  ) {}

  /** The holder of a stale writer lock this open took over (its process was gone), or null. */
  get writerLockTakenOver(): LockHolder | null {
    return this.writerLock?.tookOver ?? null;
  }

  /** @internal Records, as a campaign `note` event, that a stale writer lock was taken over. */
  noteLockTakeOver(previous: LockHolder): void {
    this.recordEvent({
      kind: 'note',
      reason: `the writer lock of ${describeHolder(previous)} was taken over: that process is gone`,
      detail: { writer_lock_taken_over: { ...previous } },
    });
  }

  // ---------------------------------------------------------------- plumbing

  private assertOpen(write: boolean): void {
    if (this.closed) throw new TraceStoreError('state', this.dbFile, `the campaign ${this.dir} is closed`);
    if (write && this.readOnly)
      throw new TraceStoreError('read_only', this.dbFile, `the campaign ${this.dir} was opened read-only`);
  }

  /** Runs fn in an IMMEDIATE transaction; SQLite errors become TraceStoreErrors naming the database. */
  private tx<T>(action: string, fn: () => T): T {
    this.assertOpen(true);
    try {
      return this.db.transaction(fn).immediate();
    } catch (err) {
      throw fromSqliteError(err, this.dbFile, action);
    }
  }

  private read<T>(action: string, fn: () => T): T {
    this.assertOpen(false);
    try {
      return fn();
    } catch (err) {
      throw fromSqliteError(err, this.dbFile, action);
    }
  }

  /** A metrics row as a record, its result checked against its shape and its scalar columns (storedResult). */
  private metricsOf(r: MetricsRow): MetricsRecord {
    const columns = scalarsOf(r);
    return {
      runId: r.run_id,
      contractId: r.contract_id,
      ...columns,
      result: this.storedResult(r.run_id, r.contract_id, r.result_json, columns) as EpisodeMetrics,
      createdAt: r.created_at,
    };
  }

  /**
   * A metrics row's `result_json`, parsed and checked: an EpisodeMetrics of the row's contract
   * whose scalars are the row's columns (a peer contract's result is only parsed). A damaged row
   * is a TraceStoreError('corrupt') naming the database, the table, the run, the contract and the
   * column.
   */
  private storedResult(runId: string, contract: string, text: string, columns: MetricScalars | null): unknown {
    const where = `${this.dbFile}, table metrics, run ${runId} (contract ${contract})`;
    const v = this.storedJson(text, `${where}, column result_json`);
    if (PEER_CONTRACT_IDS.has(contract)) return v;
    const problem = episodeMetricsProblem(v, contract);
    if (problem) throw new TraceStoreError('corrupt', this.dbFile, `${where}, column result_json: ${problem}`);
    const d = columns ? scalarDisagreement(columns, v as EpisodeMetrics) : null;
    if (d)
      throw new TraceStoreError(
        'corrupt',
        this.dbFile,
        `${where}: column ${d.column} holds ${shown(d.stored)} but result_json says ${shown(d.fromResult)}; scores (the columns) and gaps (result_json) must come from the same numbers`,
      );
    return v;
  }

  /** A stored JSON column parsed, or a TraceStoreError('corrupt') naming `where` (database, table, row, column). */
  private storedJson(text: string, where: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new TraceStoreError(
        'corrupt',
        this.dbFile,
        `${where}: not JSON (${(err as Error).message.split('\n')[0].slice(0, 120)})`,
      );
    }
  }

  /** A calibration's `record_json`, parsed and checked (calibrationRecordProblem), or a located TraceStoreError('corrupt'). */
  private storedCalibration(id: string, text: string): CalibrationRecord {
    const where = `${this.dbFile}, table calibrations, row ${id}, column record_json`;
    const v = this.storedJson(text, where);
    const problem = calibrationRecordProblem(v);
    if (problem) throw new TraceStoreError('corrupt', this.dbFile, `${where}: ${problem}`);
    return v as CalibrationRecord;
  }

  schemaVersion(): number {
    return this.read('cannot read the schema version of', () => schemaVersionOf(this.db));
  }

  /** The SQLite settings in force on this connection (docs/TRACE_STORE.md says why). */
  settings(): {
    journalMode: string;
    synchronous: 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';
    foreignKeys: boolean;
    busyTimeoutMs: number;
    applicationId: number;
    sqliteVersion: string;
  } {
    return this.read('cannot read the settings of', () => ({
      journalMode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: (['OFF', 'NORMAL', 'FULL', 'EXTRA'] as const)[
        Number(this.db.pragma('synchronous', { simple: true }))
      ],
      foreignKeys: Number(this.db.pragma('foreign_keys', { simple: true })) === 1,
      busyTimeoutMs: Number(this.db.pragma('busy_timeout', { simple: true })),
      applicationId: Number(this.db.pragma('application_id', { simple: true })),
      sqliteVersion: String((this.db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v),
    }));
  }

  /** `PRAGMA integrity_check` lines other than "ok", and every foreign-key violation: both empty when sound. */
  integrityCheck(): { integrity: string[]; foreignKeys: unknown[] } {
    return this.read('cannot check', () => {
      const integrity = (this.db.pragma('integrity_check') as { integrity_check: string }[])
        .map((r) => r.integrity_check)
        .filter((s) => s !== 'ok');
      const foreignKeys = this.db.pragma('foreign_key_check') as unknown[];
      return { integrity, foreignKeys };
    });
  }

  /** Absolute path of a file named relative to the campaign folder (as mcap_path is). */
  resolve(relative: string): string {
    return path.join(this.dir, ...relative.split('/'));
  }

  /** The episode's MCAP file (absolute). */
  episodeFile(runId: string): string {
    return this.resolve(episodeFileRelative(runId));
  }

  /** Closes the database. Refused while episodes are still being recorded by this store. */
  close(): void {
    if (this.closed) return;
    if (this.recorders.size > 0) {
      throw new TraceStoreError(
        'state',
        this.dbFile,
        `cannot close ${this.dir}: ${this.recorders.size} episode(s) still recording (${[...this.recorders].map((r) => r.runId).join(', ')}); finish or abort them first`,
      );
    }
    this.closed = true;
    this.db.close();
    this.writerLock?.release();
    if (this.readingCopy) fs.rmSync(path.dirname(this.readingCopy), { recursive: true, force: true });
  }

  // ---------------------------------------------------------------- workload snapshots

  /** Stores a snapshot and its clip list; storing the same snapshot again is a no-op. */
  putWorkloadSnapshot(s: WorkloadSnapshot): void {
    const recomputed = snapshotHash(s.clips);
    if (recomputed !== s.snapshot_hash)
      throw new TraceStoreError(
        'invalid',
        this.dbFile,
        `workload ${s.id}@${s.version}: snapshot_hash ${s.snapshot_hash} does not match its clips (${recomputed})`,
      );
    for (const c of s.clips)
      if (!CAPABILITY_GROUPS.includes(c.group))
        throw new TraceStoreError(
          'invalid',
          this.dbFile,
          `workload ${s.id}@${s.version}: clip ${c.name} has unknown group ${c.group}`,
        );
    const record = canonicalJson(s);
    this.tx('cannot store the workload snapshot in', () => {
      const byHash = this.db
        .prepare('SELECT id, version, record_json FROM workload_snapshots WHERE snapshot_hash = ?')
        .get(s.snapshot_hash) as { id: string; version: string; record_json: string } | undefined;
      if (byHash) {
        if (byHash.id !== s.id || byHash.version !== s.version) {
          throw new TraceStoreError(
            'conflict',
            this.dbFile,
            `workload ${s.id}@${s.version} has the same content (snapshot_hash ${s.snapshot_hash}) as the stored ${byHash.id}@${byHash.version}; results name one snapshot per content`,
          );
        }
        if (byHash.record_json !== record)
          throw new TraceStoreError(
            'conflict',
            this.dbFile,
            `workload ${s.id}@${s.version} is stored with different metadata; a changed snapshot needs a new version`,
          );
        return;
      }
      const byName = this.db
        .prepare('SELECT snapshot_hash FROM workload_snapshots WHERE id = ? AND version = ?')
        .get(s.id, s.version) as { snapshot_hash: string } | undefined;
      if (byName) {
        throw new TraceStoreError(
          'conflict',
          this.dbFile,
          `workload ${s.id}@${s.version} is already stored with snapshot_hash ${byName.snapshot_hash}, this one has ${s.snapshot_hash}: a changed workload needs a new version`,
        );
      }
      this.db
        .prepare(
          'INSERT INTO workload_snapshots (snapshot_hash, id, version, source, format, record_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(s.snapshot_hash, s.id, s.version, s.source, s.format, record, nowIso());
      const ins = this.db.prepare(
        'INSERT INTO snapshot_clips (snapshot_hash, position, clip_id, name, capability_group, frames, fps, duration_s, file) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      s.clips.forEach((c, i) =>
        ins.run(s.snapshot_hash, i, c.id, c.name, c.group, c.frames, c.fps, c.duration_s, c.file ?? null),
      );
    });
  }

  /** By snapshot hash, or by `id@version`. */
  getWorkloadSnapshot(key: string): WorkloadSnapshot | null {
    return this.read('cannot read', () => {
      const at = key.lastIndexOf('@');
      const row = (
        at > 0
          ? this.db
              .prepare('SELECT record_json FROM workload_snapshots WHERE id = ? AND version = ?')
              .get(key.slice(0, at), key.slice(at + 1))
          : this.db.prepare('SELECT record_json FROM workload_snapshots WHERE snapshot_hash = ?').get(key)
      ) as { record_json: string } | undefined;
      return row ? parse<WorkloadSnapshot>(row.record_json) : null;
    });
  }

  listWorkloadSnapshots(): { id: string; version: string; snapshotHash: string; clips: number }[] {
    return this.read('cannot read', () =>
      (
        this.db
          .prepare(
            'SELECT w.id, w.version, w.snapshot_hash, (SELECT count(*) FROM snapshot_clips c WHERE c.snapshot_hash = w.snapshot_hash) AS clips FROM workload_snapshots w ORDER BY w.created_at',
          )
          .all() as { id: string; version: string; snapshot_hash: string; clips: number }[]
      ).map((r) => ({
        id: r.id,
        version: r.version,
        snapshotHash: r.snapshot_hash,
        clips: r.clips,
      })),
    );
  }

  // ---------------------------------------------------------------- bindings

  /** Stores a binding; an id@version already stored with a different record is a conflict. */
  putBinding(b: WbcBinding): BindingRecord {
    return this.tx('cannot store the binding in', () => this.putBindingIn(b));
  }

  private putBindingIn(b: WbcBinding): BindingRecord {
    if (!b || typeof b.id !== 'string' || !b.id || typeof b.version !== 'string' || !b.version)
      throw new TraceStoreError('invalid', this.dbFile, 'a binding needs an id and a version');
    const record = canonicalJson(b);
    const row = this.db
      .prepare('SELECT record_json, created_at FROM bindings WHERE id = ? AND version = ?')
      .get(b.id, b.version) as { record_json: string; created_at: string } | undefined;
    if (row) {
      if (row.record_json !== record) {
        throw new TraceStoreError(
          'conflict',
          this.dbFile,
          `binding ${b.id}@${b.version} is stored with a different record: a binding whose gains, assist, checkpoint or interface change needs a new version`,
        );
      }
      return this.bindingOf(b, row.created_at);
    }
    const createdAt = nowIso();
    this.db
      .prepare(
        'INSERT INTO bindings (id, version, kind, checkpoint_hash, label, control_rate_hz, record_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(b.id, b.version, b.kind, b.checkpointHash ?? null, b.label, b.controlRateHz, record, createdAt);
    return this.bindingOf(b, createdAt);
  }

  private bindingOf(b: WbcBinding, createdAt: string): BindingRecord {
    return {
      id: b.id,
      version: b.version,
      kind: b.kind,
      checkpointHash: b.checkpointHash ?? null,
      label: b.label,
      controlRateHz: b.controlRateHz,
      binding: JSON.parse(canonicalJson(b)) as WbcBinding,
      createdAt,
    };
  }

  getBinding(id: string, version: string): BindingRecord | null {
    return this.read('cannot read', () => {
      const row = this.db
        .prepare('SELECT record_json, created_at FROM bindings WHERE id = ? AND version = ?')
        .get(id, version) as { record_json: string; created_at: string } | undefined;
      return row ? this.bindingOf(parse<WbcBinding>(row.record_json), row.created_at) : null;
    });
  }

  listBindings(): BindingRecord[] {
    return this.read('cannot read', () =>
      (
        this.db.prepare('SELECT record_json, created_at FROM bindings ORDER BY id, version').all() as {
          record_json: string;
          created_at: string;
        }[]
      ).map((r) => this.bindingOf(parse<WbcBinding>(r.record_json), r.created_at)),
    );
  }

  // ---------------------------------------------------------------- calibrations

  /** Stores a calibration under its content id (`cal-…`); the same record stores once. */
  putCalibration(rec: CalibrationRecord): StoredCalibration {
    const problems: string[] = [];
    if (typeof rec.robotUnit !== 'string' || rec.robotUnit.trim() === '') problems.push('robotUnit is required');
    if (typeof rec.capturedAt !== 'string' || Number.isNaN(Date.parse(rec.capturedAt)))
      problems.push('capturedAt must be an ISO 8601 time');
    if (!Array.isArray(rec.measured?.jointPosRad) || rec.measured.jointPosRad.length !== 29)
      problems.push('measured.jointPosRad must hold 29 joint angles');
    if (!Array.isArray(rec.measured?.imuQuatWxyz) || rec.measured.imuQuatWxyz.length !== 4)
      problems.push('measured.imuQuatWxyz must be a wxyz quaternion');
    if (problems.length === 0) {
      const p = calibrationRecordProblem(rec);
      if (p) problems.push(p);
    }
    if (problems.length > 0) throw new TraceStoreError('invalid', this.dbFile, `calibration: ${problems.join('; ')}`);
    let id: string;
    try {
      id = calibrationIdOf(rec);
    } catch (err) {
      throw new TraceStoreError('invalid', this.dbFile, `calibration: ${(err as Error).message}`);
    }
    const record = canonicalJson(rec);
    return this.tx('cannot store the calibration in', () => {
      const row = this.db.prepare('SELECT created_at FROM calibrations WHERE id = ?').get(id) as
        { created_at: string } | undefined;
      if (row) return { id, record: parse<CalibrationRecord>(record), createdAt: row.created_at };
      const createdAt = nowIso();
      this.db
        .prepare(
          'INSERT INTO calibrations (id, robot_unit, captured_at, clip_id, record_json, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(id, rec.robotUnit, rec.capturedAt, rec.clipId ?? null, record, createdAt);
      return { id, record: parse<CalibrationRecord>(record), createdAt };
    });
  }

  getCalibration(id: string): StoredCalibration | null {
    return this.read('cannot read', () => {
      const row = this.db.prepare('SELECT record_json, created_at FROM calibrations WHERE id = ?').get(id) as
        { record_json: string; created_at: string } | undefined;
      return row ? { id, record: this.storedCalibration(id, row.record_json), createdAt: row.created_at } : null;
    });
  }

  // ---------------------------------------------------------------- parent traces and branches

  /** The parent trace of these inputs, created when new (idempotent: identical inputs → the same id and row). */
  ensureParentTrace(inputs: ParentTraceInputs): ParentTraceRecord {
    const b = inputs.binding;
    const identity: ParentTraceIdentity = {
      bindingId: b.id,
      bindingVersion: b.version,
      checkpointHash: b.checkpointHash ?? null,
      clipId: inputs.clipId,
      referenceSha256: inputs.referenceSha256,
      modelSha256: inputs.modelSha256,
      adapterVersion: inputs.adapterVersion,
      bodySet: [...inputs.bodySet],
      contractId: inputs.contractId,
      calibrationId: inputs.calibrationId,
    };
    const problems = parentTraceProblems(identity);
    if (problems.length > 0) throw new TraceStoreError('invalid', this.dbFile, `parent trace: ${problems.join('; ')}`);
    const id = parentTraceId(identity);
    const text = parentTraceText(identity);
    return this.tx('cannot store the parent trace in', () => {
      this.putBindingIn(b);
      if (
        identity.calibrationId !== null &&
        !this.db.prepare('SELECT 1 FROM calibrations WHERE id = ?').get(identity.calibrationId)
      ) {
        throw new TraceStoreError(
          'invalid',
          this.dbFile,
          `calibration ${identity.calibrationId} is not stored in this campaign: putCalibration() first`,
        );
      }
      const row = this.db.prepare('SELECT * FROM parent_traces WHERE id = ?').get(id) as ParentRow | undefined;
      if (row) {
        if (row.identity_text !== text)
          throw new TraceStoreError(
            'corrupt',
            this.dbFile,
            `parent trace ${id} is stored with a different identity text (hash collision or a damaged row)`,
          );
        return parentOf(row);
      }
      this.db
        .prepare(
          `INSERT INTO parent_traces (id, campaign_id, scheme, identity_text, binding_id, binding_version, checkpoint_hash, clip_id, reference_sha256, model_sha256, adapter_version, body_set_json, contract_id, calibration_id, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          this.campaign.id,
          PARENT_TRACE_SCHEME,
          text,
          identity.bindingId,
          identity.bindingVersion,
          identity.checkpointHash,
          identity.clipId,
          identity.referenceSha256,
          identity.modelSha256,
          identity.adapterVersion,
          JSON.stringify(identity.bodySet),
          identity.contractId,
          identity.calibrationId,
          nowIso(),
        );
      return parentOf(this.db.prepare('SELECT * FROM parent_traces WHERE id = ?').get(id) as ParentRow);
    });
  }

  getParentTrace(id: string): ParentTraceRecord | null {
    return this.read('cannot read', () => {
      const row = this.db.prepare('SELECT * FROM parent_traces WHERE id = ?').get(id) as ParentRow | undefined;
      return row ? parentOf(row) : null;
    });
  }

  findParentTraces(f: ParentTraceFilter = {}): ParentTraceRecord[] {
    const w = parentWhere(f, 'p');
    return this.read('cannot read', () =>
      (
        this.db
          .prepare(`SELECT p.* FROM parent_traces p ${w.sql} ORDER BY p.created_at, p.id`)
          .all(...w.args) as ParentRow[]
      ).map(parentOf),
    );
  }

  /** The branch of a parent for an execution domain, created when new. */
  ensureBranch(parentTraceId: string, domain: ExecutionDomain): BranchRecord {
    if (!EXECUTION_DOMAINS.includes(domain))
      throw new TraceStoreError('invalid', this.dbFile, `unknown execution domain ${String(domain)}`);
    return this.tx('cannot store the branch in', () => this.ensureBranchIn(parentTraceId, domain));
  }

  private ensureBranchIn(parentTraceId: string, domain: ExecutionDomain): BranchRecord {
    if (!this.db.prepare('SELECT 1 FROM parent_traces WHERE id = ?').get(parentTraceId))
      throw new TraceStoreError('invalid', this.dbFile, `parent trace ${parentTraceId} is not stored in this campaign`);
    const id = branchId(parentTraceId, domain);
    this.db
      .prepare(
        'INSERT INTO branches (id, parent_trace_id, execution_domain, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
      )
      .run(id, parentTraceId, domain, nowIso());
    const r = this.db.prepare('SELECT * FROM branches WHERE id = ?').get(id) as {
      id: string;
      parent_trace_id: string;
      execution_domain: ExecutionDomain;
      created_at: string;
    };
    return { id: r.id, parentTraceId: r.parent_trace_id, executionDomain: r.execution_domain, createdAt: r.created_at };
  }

  listBranches(parentTraceId: string): BranchRecord[] {
    return this.read('cannot read', () =>
      (
        this.db
          .prepare('SELECT * FROM branches WHERE parent_trace_id = ? ORDER BY execution_domain')
          .all(parentTraceId) as {
          id: string;
          parent_trace_id: string;
          execution_domain: ExecutionDomain;
          created_at: string;
        }[]
      ).map((r) => ({
        id: r.id,
        parentTraceId: r.parent_trace_id,
        executionDomain: r.execution_domain,
        createdAt: r.created_at,
      })),
    );
  }

  // ---------------------------------------------------------------- episodes

  /**
   * Starts recording an episode: the `running` row (with an episode_start event) is committed
   * first, then the MCAP file is created (never replacing an existing one). If the file cannot be
   * created, the attempt stays on record as interrupted/infrastructure_error with the reason, and
   * a TraceStoreError naming the file is thrown.
   */
  async beginEpisode(req: BeginEpisodeRequest): Promise<EpisodeRecorder> {
    this.assertOpen(true);
    const startMs = req.startMs ?? Date.now();
    const runId = req.runId ?? makeRunId(req.executionDomain, startMs, randomBytes(4).toString('hex'));
    const bad = runIdProblem(runId);
    if (bad) throw new TraceStoreError('invalid', this.dbFile, bad);
    if (!EXECUTION_DOMAINS.includes(req.executionDomain))
      throw new TraceStoreError('invalid', this.dbFile, `unknown execution domain ${String(req.executionDomain)}`);
    if (!Number.isSafeInteger(req.seed))
      throw new TraceStoreError('invalid', this.dbFile, `seed must be an integer, got ${req.seed}`);
    if (typeof req.backendId !== 'string' || req.backendId === '')
      throw new TraceStoreError('invalid', this.dbFile, 'backendId is required');
    if (req.rolloutIndex != null && !(Number.isSafeInteger(req.rolloutIndex) && req.rolloutIndex >= 0))
      throw new TraceStoreError('invalid', this.dbFile, `rolloutIndex must be an integer ≥ 0, got ${req.rolloutIndex}`);
    const parent = this.getParentTrace(req.parentTraceId);
    if (!parent)
      throw new TraceStoreError(
        'invalid',
        this.dbFile,
        `parent trace ${req.parentTraceId} is not stored in this campaign`,
      );
    if (req.snapshotHash && !this.getWorkloadSnapshot(req.snapshotHash))
      throw new TraceStoreError(
        'invalid',
        this.dbFile,
        `workload snapshot ${req.snapshotHash} is not stored in this campaign`,
      );
    const rel = episodeFileRelative(runId);
    const file = this.resolve(rel);
    const writer = currentWriter();
    const at = nowIso(startMs);
    markActive(this.dbFile, runId);
    let branch: BranchRecord;
    try {
      branch = this.tx('cannot start the episode in', () => {
        if (this.db.prepare('SELECT 1 FROM episodes WHERE run_id = ?').get(runId))
          throw new TraceStoreError('conflict', this.dbFile, `episode ${runId} already exists in this campaign`);
        const br = this.ensureBranchIn(parent.id, req.executionDomain);
        this.db
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
        this.insertEvent({
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
      markInactive(this.dbFile, runId);
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
          campaign_id: this.campaign.id,
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
        markInactive(this.dbFile, runId);
      }
      throw e;
    }
    const rec = new EpisodeRecorder(this, runId, file, parent, req.executionDomain, ew, () => {
      this.recorders.delete(rec);
      markInactive(this.dbFile, runId);
    });
    this.recorders.add(rec);
    return rec;
  }

  getEpisode(runId: string): EpisodeRecord | null {
    return this.read('cannot read', () => {
      const row = this.db.prepare(`${EPISODE_SELECT} WHERE e.run_id = ?`).get(runId) as EpisodeRow | undefined;
      return row ? episodeOf(row) : null;
    });
  }

  findEpisodes(f: EpisodeFilter = {}): EpisodeRecord[] {
    const w = new Where()
      .when(f.parentTraceId, 'b.parent_trace_id = ?')
      .when(f.executionDomain, 'b.execution_domain = ?')
      .when(f.status, 'e.status = ?')
      .when(f.outcome, 'e.outcome = ?')
      .when(f.snapshotHash, 'e.snapshot_hash = ?')
      .when(f.rolloutIndex, 'e.rollout_index = ?');
    return this.read('cannot read', () =>
      (
        this.db.prepare(`${EPISODE_SELECT} ${w.sql} ORDER BY e.started_at, e.run_id`).all(...w.args) as EpisodeRow[]
      ).map(episodeOf),
    );
  }

  /**
   * The rollouts of a parent's branch that need no rerun: finished episodes whose outcome is not
   * infrastructure_error (only those may be retried automatically, DESIGN §3), one per
   * rollout_index (the first finished), in index order. A resumed qualification runs the others.
   */
  settledRollouts(parentTraceId: string, domain: ExecutionDomain): EpisodeRecord[] {
    return this.read('cannot read', () => {
      const rows = this.db
        .prepare(
          `${EPISODE_SELECT} WHERE b.parent_trace_id = ? AND b.execution_domain = ? AND e.status = 'finished' AND e.outcome <> 'infrastructure_error' AND e.rollout_index IS NOT NULL ORDER BY e.rollout_index, e.ended_at, e.run_id`,
        )
        .all(parentTraceId, domain) as EpisodeRow[];
      const seen = new Set<number>();
      return rows.filter((r) => !seen.has(r.rollout_index!) && seen.add(r.rollout_index!)).map(episodeOf);
    });
  }

  // ---------------------------------------------------------------- events

  /** Records an event (a refusal or human-gated reset needs a reason). Outside an episode, name the parent trace (or nothing: a campaign-level event). */
  recordEvent(e: NewTraceEvent): TraceEvent {
    return this.tx('cannot record the event in', () => this.insertEvent(e));
  }

  private insertEvent(e: NewTraceEvent): TraceEvent {
    if (!TRACE_EVENT_KINDS.includes(e.kind))
      throw new TraceStoreError('invalid', this.dbFile, `unknown event kind ${String(e.kind)}`);
    const reason = e.reason ?? null;
    if (EVENT_KINDS_NEEDING_REASON.includes(e.kind) && (reason === null || reason.trim() === ''))
      throw new TraceStoreError('invalid', this.dbFile, `a ${e.kind} event must give its reason`);
    if (e.tS != null && !Number.isFinite(e.tS))
      throw new TraceStoreError('invalid', this.dbFile, `event time must be finite, got ${e.tS}`);
    let parentId = e.parentTraceId ?? null;
    if (e.runId) {
      const row = this.db
        .prepare('SELECT b.parent_trace_id FROM episodes e JOIN branches b ON b.id = e.branch_id WHERE e.run_id = ?')
        .get(e.runId) as { parent_trace_id: string } | undefined;
      if (!row) throw new TraceStoreError('invalid', this.dbFile, `episode ${e.runId} is not stored in this campaign`);
      if (parentId !== null && parentId !== row.parent_trace_id)
        throw new TraceStoreError(
          'invalid',
          this.dbFile,
          `episode ${e.runId} belongs to parent trace ${row.parent_trace_id}, not ${parentId}`,
        );
      parentId = row.parent_trace_id;
    } else if (parentId !== null && !this.db.prepare('SELECT 1 FROM parent_traces WHERE id = ?').get(parentId)) {
      throw new TraceStoreError('invalid', this.dbFile, `parent trace ${parentId} is not stored in this campaign`);
    }
    const info = this.db
      .prepare(
        'INSERT INTO events (campaign_id, parent_trace_id, run_id, at, t_s, kind, reason, detail_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(this.campaign.id, parentId, e.runId ?? null, nowIso(e.atMs), e.tS ?? null, e.kind, reason, json(e.detail));
    return eventOf(this.db.prepare('SELECT * FROM events WHERE id = ?').get(info.lastInsertRowid) as EventRow);
  }

  listEvents(f: { runId?: string; parentTraceId?: string; kind?: TraceEventKind } = {}): TraceEvent[] {
    const w = new Where()
      .when(f.runId, 'run_id = ?')
      .when(f.parentTraceId, 'parent_trace_id = ?')
      .when(f.kind, 'kind = ?');
    return this.read('cannot read', () =>
      (this.db.prepare(`SELECT * FROM events ${w.sql} ORDER BY id`).all(...w.args) as EventRow[]).map(eventOf),
    );
  }

  // ---------------------------------------------------------------- metrics

  /** Stores an episode's metrics under their contract (e.g. a re-evaluation under another contract); identical → no-op, different → conflict. */
  putMetrics(runId: string, m: EpisodeMetrics): MetricsRecord {
    return this.tx('cannot store the metrics in', () => {
      const ep = this.db.prepare('SELECT status FROM episodes WHERE run_id = ?').get(runId) as
        { status: EpisodeStatus } | undefined;
      if (!ep) throw new TraceStoreError('invalid', this.dbFile, `episode ${runId} is not stored in this campaign`);
      return this.insertMetrics(runId, m);
    });
  }

  private insertMetrics(runId: string, m: EpisodeMetrics): MetricsRecord {
    if (!m || typeof m.contract !== 'string' || m.contract === '')
      throw new TraceStoreError('invalid', this.dbFile, 'metrics must name their contract');
    const result = canonicalJson(m);
    const existing = this.db
      .prepare('SELECT * FROM metrics WHERE run_id = ? AND contract_id = ?')
      .get(runId, m.contract) as MetricsRow | undefined;
    if (existing) {
      if (existing.result_json !== result)
        throw new TraceStoreError(
          'conflict',
          this.dbFile,
          `episode ${runId} already has different ${m.contract} metrics; stored results are never replaced`,
        );
      return this.metricsOf(existing);
    }
    const s = metricScalars(m);
    this.db
      .prepare(
        `INSERT INTO metrics (run_id, contract_id, k, failed, failure_frame, failure_condition, failure_body, progress_soft, mpjpe_l_mm, joint_pos_rmse, joint_vel_rmse, joint_acc_rms, joint_acc_p95, joint_jerk_rms, joint_jerk_p95, result_json, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        runId,
        m.contract,
        s.K,
        s.failed === null ? null : s.failed ? 1 : 0,
        s.failureFrame,
        s.failureCondition,
        s.failureBody,
        s.progressSoft,
        s.mpjpeLMm,
        s.jointPosRmse,
        s.jointVelRmse,
        s.jointAccRms,
        s.jointAccP95,
        s.jointJerkRms,
        s.jointJerkP95,
        result,
        nowIso(),
      );
    return this.metricsOf(
      this.db
        .prepare('SELECT * FROM metrics WHERE run_id = ? AND contract_id = ?')
        .get(runId, m.contract) as MetricsRow,
    );
  }

  /**
   * Stores an episode's readings under a peer's metric contract (`sonic-eval/1`,
   * `holomotion-eval/1`: src/domain/metrics/peerContracts.ts) beside its mb-metrics/1 row, in the
   * same table: `result_json` is the peer's result, `k` its frame count, `failed` the peer's
   * success rule negated, the mb-metrics/1 scalar columns NULL. Identical → no-op, different →
   * conflict (stored results are never replaced).
   */
  putPeerMetrics(runId: string, contractId: string, frames: number, success: boolean, result: object): void {
    this.tx('cannot store the peer metrics in', () => {
      const ep = this.db.prepare('SELECT 1 FROM episodes WHERE run_id = ?').get(runId);
      if (!ep) throw new TraceStoreError('invalid', this.dbFile, `episode ${runId} is not stored in this campaign`);
      const json = canonicalJson(result);
      const existing = this.db
        .prepare('SELECT result_json FROM metrics WHERE run_id = ? AND contract_id = ?')
        .get(runId, contractId) as { result_json: string } | undefined;
      if (existing) {
        if (existing.result_json !== json)
          throw new TraceStoreError(
            'conflict',
            this.dbFile,
            `episode ${runId} already has different ${contractId} metrics; stored results are never replaced`,
          );
        return;
      }
      this.db
        .prepare(
          'INSERT INTO metrics (run_id, contract_id, k, failed, result_json, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(runId, contractId, frames, success ? 0 : 1, json, nowIso());
    });
  }

  /** Every stored result under a peer contract: run id → the peer's result. */
  peerMetrics(contractId: string): Map<string, unknown> {
    return this.read('cannot read', () => {
      const rows = this.db.prepare('SELECT run_id, result_json FROM metrics WHERE contract_id = ?').all(contractId) as {
        run_id: string;
        result_json: string;
      }[];
      return new Map(rows.map((r) => [r.run_id, this.storedResult(r.run_id, contractId, r.result_json, null)]));
    });
  }

  /** Metrics of an episode under a contract (default: its parent trace's contract). */
  getMetrics(runId: string, contractId?: string): MetricsRecord | null {
    return this.read('cannot read', () => {
      const row = (
        contractId !== undefined
          ? this.db.prepare('SELECT * FROM metrics WHERE run_id = ? AND contract_id = ?').get(runId, contractId)
          : this.db
              .prepare(
                `SELECT m.* FROM metrics m JOIN episodes e ON e.run_id = m.run_id JOIN branches b ON b.id = e.branch_id JOIN parent_traces p ON p.id = b.parent_trace_id WHERE m.run_id = ? AND m.contract_id = p.contract_id`,
              )
              .get(runId)
      ) as MetricsRow | undefined;
      return row ? this.metricsOf(row) : null;
    });
  }

  /** Episodes joined with their parent identity and scalar metrics (under the parent's contract): one query for reports. */
  episodeResults(f: ResultFilter = {}): EpisodeResultRow[] {
    const w = parentWhere(
      f,
      'p',
      new Where()
        .when(f.executionDomain, 'b.execution_domain = ?')
        .when(f.status, 'e.status = ?')
        .when(f.snapshotHash, 'e.snapshot_hash = ?'),
    );
    return this.read('cannot read', () => {
      const rows = this.db
        .prepare(
          `SELECT e.run_id, e.snapshot_hash, e.rollout_index, e.seed, e.status, e.outcome, e.reason, e.frame_count,
                  b.parent_trace_id, b.execution_domain, p.binding_id, p.binding_version, p.clip_id, p.contract_id, p.calibration_id,
                  m.run_id AS m_run, m.k, m.failed, m.failure_frame, m.failure_condition, m.failure_body, m.progress_soft, m.mpjpe_l_mm,
                  m.joint_pos_rmse, m.joint_vel_rmse, m.joint_acc_rms, m.joint_acc_p95, m.joint_jerk_rms, m.joint_jerk_p95,
                  m.result_json, e.ended_at
             FROM episodes e
             JOIN branches b ON b.id = e.branch_id
             JOIN parent_traces p ON p.id = b.parent_trace_id
             LEFT JOIN metrics m ON m.run_id = e.run_id AND m.contract_id = p.contract_id
             ${w.sql}
            ORDER BY p.binding_id, p.binding_version, p.clip_id, b.execution_domain, e.rollout_index, e.started_at`,
        )
        .all(...w.args) as (MetricsRow & Record<string, unknown>)[];
      return rows.map((r) => {
        const metrics = r.m_run ? scalarsOf(r) : null;
        // The columns are what result_json says: a score read here and a gap read from the result agree.
        if (metrics) this.storedResult(r.run_id, r.contract_id, r.result_json, metrics);
        return {
          runId: r.run_id,
          parentTraceId: r.parent_trace_id as string,
          executionDomain: r.execution_domain as ExecutionDomain,
          bindingId: r.binding_id as string,
          bindingVersion: r.binding_version as string,
          clipId: r.clip_id as string,
          contractId: r.contract_id,
          calibrationId: r.calibration_id as string | null,
          snapshotHash: r.snapshot_hash as string | null,
          rolloutIndex: r.rollout_index as number | null,
          seed: r.seed as number,
          status: r.status as EpisodeStatus,
          outcome: r.outcome as EpisodeOutcome | null,
          reason: r.reason as string | null,
          frameCount: r.frame_count as number,
          endedAt: (r.ended_at as string | null) ?? null,
          metrics,
        };
      });
    });
  }

  // ---------------------------------------------------------------- admissions

  /** Stores (or replaces, with an `admission` event keeping the previous decision) a pair's admission under a policy version. */
  putAdmission(a: Omit<AdmissionRecord, 'decidedAt'> & { decidedAt?: string }): AdmissionRecord {
    if (!a.admitted && (!Array.isArray(a.reasons) || a.reasons.length === 0))
      throw new TraceStoreError('invalid', this.dbFile, `a rejection of ${a.parentTraceId} must give its reasons`);
    const decidedAt = a.decidedAt ?? nowIso();
    return this.tx('cannot store the admission in', () => {
      if (!this.db.prepare('SELECT 1 FROM parent_traces WHERE id = ?').get(a.parentTraceId))
        throw new TraceStoreError(
          'invalid',
          this.dbFile,
          `parent trace ${a.parentTraceId} is not stored in this campaign`,
        );
      const prev = this.db
        .prepare(
          'SELECT admitted, reasons_json, decided_at FROM admissions WHERE parent_trace_id = ? AND policy_id = ? AND policy_version = ?',
        )
        .get(a.parentTraceId, a.policyId, a.policyVersion) as
        { admitted: number; reasons_json: string; decided_at: string } | undefined;
      this.db
        .prepare(
          `INSERT INTO admissions (parent_trace_id, policy_id, policy_version, admitted, reasons_json, evidence_json, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (parent_trace_id, policy_id, policy_version) DO UPDATE SET admitted = excluded.admitted, reasons_json = excluded.reasons_json, evidence_json = excluded.evidence_json, decided_at = excluded.decided_at`,
        )
        .run(
          a.parentTraceId,
          a.policyId,
          a.policyVersion,
          a.admitted ? 1 : 0,
          canonicalJson(a.reasons ?? []),
          json(a.evidence),
          decidedAt,
        );
      this.insertEvent({
        kind: 'admission',
        parentTraceId: a.parentTraceId,
        reason: a.admitted ? null : a.reasons.join('; '),
        detail: {
          policy: `${a.policyId}@${a.policyVersion}`,
          admitted: a.admitted,
          ...(prev
            ? {
                replaces: {
                  admitted: prev.admitted === 1,
                  reasons: parse<string[]>(prev.reasons_json),
                  decided_at: prev.decided_at,
                },
              }
            : {}),
        },
      });
      return {
        parentTraceId: a.parentTraceId,
        policyId: a.policyId,
        policyVersion: a.policyVersion,
        admitted: a.admitted,
        reasons: [...(a.reasons ?? [])],
        evidence: a.evidence ?? {},
        decidedAt,
      };
    });
  }

  listAdmissions(f: { parentTraceId?: string; policyId?: string; policyVersion?: string } = {}): AdmissionRecord[] {
    const w = new Where()
      .when(f.parentTraceId, 'parent_trace_id = ?')
      .when(f.policyId, 'policy_id = ?')
      .when(f.policyVersion, 'policy_version = ?');
    return this.read('cannot read', () =>
      (
        this.db
          .prepare(`SELECT * FROM admissions ${w.sql} ORDER BY parent_trace_id, policy_id, policy_version`)
          .all(...w.args) as {
          parent_trace_id: string;
          policy_id: string;
          policy_version: string;
          admitted: number;
          reasons_json: string;
          evidence_json: string;
          decided_at: string;
        }[]
      ).map((r) => ({
        parentTraceId: r.parent_trace_id,
        policyId: r.policy_id,
        policyVersion: r.policy_version,
        admitted: r.admitted === 1,
        reasons: parse<string[]>(r.reasons_json),
        evidence: parse<Record<string, unknown>>(r.evidence_json),
        decidedAt: r.decided_at,
      })),
    );
  }

  // ---------------------------------------------------------------- recovery and the recorder host

  /**
   * Marks every `running` episode whose writer is gone as interrupted (infrastructure_error),
   * counting (and by default rewriting) what its file holds. Episodes recorded by a live process
   * (this one included) are left alone; `force` also takes episodes of other hosts.
   */
  async recoverInterrupted(options: { force?: boolean } = {}): Promise<RecoveredEpisode[]> {
    this.assertOpen(true);
    const running = this.read(
      'cannot read',
      () => this.db.prepare(`${EPISODE_SELECT} WHERE e.status = 'running' ORDER BY e.started_at`).all() as EpisodeRow[],
    );
    const mine = new Set(activeRuns(this.dbFile));
    this.removeStaleRecoveryCopies();
    const out: RecoveredEpisode[] = [];
    for (const row of running) {
      if (mine.has(row.run_id)) continue;
      const w: WriterIdentity = { host: row.writer_host, pid: row.writer_pid, start: row.writer_start };
      const state = writerState(w, this.dbFile, row.run_id);
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
      names = fs.readdirSync(this.resolve(EPISODES_DIR));
    } catch {
      return;
    }
    const me = currentWriter();
    for (const name of names) {
      const m = /\.recovered\.mcap\.tmp-(\d+)$/.exec(name);
      if (!m) continue;
      const pid = Number(m[1]);
      if (pid === me.pid || writerState({ host: me.host, pid, start: null }, this.dbFile, '') !== 'dead') continue;
      fs.rmSync(this.resolve(`${EPISODES_DIR}/${name}`), { force: true });
    }
  }

  /** @internal RecorderHost: marks a running episode interrupted/infrastructure_error after reading what its file holds. */
  async markInterrupted(runId: string, why: string, detail: Record<string, unknown>): Promise<RecoveredEpisode | null> {
    const rel = episodeFileRelative(runId);
    const file = this.resolve(rel);
    const recRel = recoveredFileRelative(runId);
    let report: EpisodeRecoveryReport | null = null;
    let readError: string | null = null;
    try {
      report = await recoverEpisodeFile(file, {
        rewriteTo: this.rewriteRecovered ? this.resolve(recRel) : null,
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
    return this.tx('cannot mark the interrupted episode in', () => {
      const row = this.db.prepare('SELECT status, meta_json FROM episodes WHERE run_id = ?').get(runId) as
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
      this.db
        .prepare(
          `UPDATE episodes SET status = 'interrupted', outcome = 'infrastructure_error', reason = ?, ended_at = ?, frame_count = ?, recovered_mcap_path = ?, meta_json = ? WHERE run_id = ? AND status = 'running'`,
        )
        .run(reason, nowIso(), frames, report?.rewrittenFile ? recRel : null, json(meta), runId);
      this.insertEvent({
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
      throw new TraceStoreError('invalid', this.dbFile, `unknown outcome ${String(f.outcome)}`);
    return this.tx('cannot commit the finished episode to', () => {
      const row = this.db.prepare('SELECT status, meta_json FROM episodes WHERE run_id = ?').get(runId) as
        { status: EpisodeStatus; meta_json: string } | undefined;
      if (!row) throw new TraceStoreError('state', this.dbFile, `episode ${runId} is not in the campaign`);
      if (row.status !== 'running')
        throw new TraceStoreError(
          'state',
          this.dbFile,
          `episode ${runId} is ${row.status}, not running: it cannot be finished`,
        );
      const meta = { ...parse<Record<string, unknown>>(row.meta_json), ...f.meta };
      this.db
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
      this.insertEvent({
        kind: 'episode_end',
        runId,
        tS: f.simSeconds,
        reason: f.reason,
        detail: { outcome: f.outcome, frames: f.frames },
      });
      if (f.metrics) this.insertMetrics(runId, f.metrics);
      return episodeOf(this.db.prepare(`${EPISODE_SELECT} WHERE e.run_id = ?`).get(runId) as EpisodeRow);
    });
  }

  /** @internal RecorderHost */
  insertEpisodeEvent(e: NewTraceEvent): TraceEvent {
    return this.recordEvent(e);
  }
}

function parentWhere(f: ParentTraceFilter, p: string, w = new Where()): Where {
  w.when(f.bindingId, `${p}.binding_id = ?`)
    .when(f.bindingVersion, `${p}.binding_version = ?`)
    .when(f.clipId, `${p}.clip_id = ?`)
    .when(f.contractId, `${p}.contract_id = ?`);
  if (f.calibrationId === null) w.raw(`${p}.calibration_id IS NULL`);
  else w.when(f.calibrationId, `${p}.calibration_id = ?`);
  return w;
}
