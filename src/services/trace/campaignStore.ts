// The trace store (DESIGN §3 Trace, §7 Storage): a campaign folder
//
//     <dir>/campaign.sqlite          the index (schema: src/services/trace/migrations.ts)
//     <dir>/episodes/<run_id>.mcap   one MCAP file per episode (src/services/episode/)
//
// and the typed repository over it. No SQL lives outside src/services/trace. CampaignStore is the
// facade over one repository per table group (workloadSnapshotRepository, bindingRepository,
// calibrationRepository, parentTraceRepository, episodeRepository, eventRepository,
// metricsRepository, admissionRepository), all on the one connection of campaignDb.ts, so a write
// that spans groups is one transaction. Episodes are recorded through beginEpisode() →
// EpisodeRecorder (episodeRecorder.ts; the row's lifecycle is episodeLifecycle.ts). Opening a
// campaign recovers episodes whose recording process died (kill -9, power loss): they are marked
// `interrupted` with outcome `infrastructure_error`, their readable frames counted and, by
// default, rewritten beside the original as an indexed MCAP.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { ExecutionDomain } from '../../domain/backend/backend';
import type { EpisodeMetrics } from '../../domain/metrics/readings';
import { episodeFileRelative, makeCampaignId } from '../../domain/trace/ids';
import type {
  AdmissionRecord,
  BindingRecord,
  BranchRecord,
  CalibrationRecord,
  CampaignRecord,
  EpisodeRecord,
  EpisodeResultRow,
  MetricsRecord,
  NewTraceEvent,
  ParentTraceRecord,
  StoredCalibration,
  TraceEvent,
  TraceEventKind,
} from '../../domain/trace/records';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { WorkloadSnapshot } from '../../domain/workload/snapshot';
import { createFolderTree, FolderRefusedError } from '../files/folders';
import { AdmissionRepository } from './admissionRepository';
import { BindingRepository } from './bindingRepository';
import { CalibrationRepository } from './calibrationRepository';
import { CAMPAIGN_DB, CampaignDb, EPISODES_DIR } from './campaignDb';
import { campaignOf, nowIso, type CampaignRow } from './campaignRows';
import { EpisodeLifecycle, type BeginEpisodeRequest, type RecoveredEpisode } from './episodeLifecycle';
import type { EpisodeRecorder } from './episodeRecorder';
import { EpisodeRepository, type EpisodeFilter } from './episodeRepository';
import { fromFsError, fromSqliteError, TraceStoreError } from './errors';
import { EventRepository } from './eventRepository';
import { MetricsRepository, type ResultFilter } from './metricsRepository';
import { LATEST_SCHEMA_VERSION, migrate, refuseNewer, schemaVersionOf } from './migrations';
import { ParentTraceRepository, type ParentTraceFilter, type ParentTraceInputs } from './parentTraceRepository';
import { openDatabase } from './sqlite';
import { WorkloadSnapshotRepository } from './workloadSnapshotRepository';
import { acquireWriterLock, describeHolder, type LockHolder, type WriterLockHandle } from './writerLock';

export { CAMPAIGN_DB, EPISODES_DIR };
export type {
  BeginEpisodeRequest,
  EpisodeFilter,
  ParentTraceFilter,
  ParentTraceInputs,
  RecoveredEpisode,
  ResultFilter,
};

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

export class CampaignStore {
  /** Episodes this open() found interrupted and marked. */
  readonly recovered: RecoveredEpisode[] = [];
  private readonly c: CampaignDb;
  private readonly workloads: WorkloadSnapshotRepository;
  private readonly bindings: BindingRepository;
  private readonly calibrations: CalibrationRepository;
  private readonly parents: ParentTraceRepository;
  private readonly episodes: EpisodeRepository;
  private readonly events: EventRepository;
  private readonly metrics: MetricsRepository;
  private readonly admissions: AdmissionRepository;
  private readonly lifecycle: EpisodeLifecycle;

  /** @internal use openCampaign() */
  constructor(
    dir: string,
    dbFile: string,
    db: Database.Database,
    campaign: CampaignRecord,
    readOnly: boolean,
    /** Set when a read-only folder is read through a private copy of the database. */
    readonly readingCopy: string | null,
    rewriteRecovered: boolean,
    /** The campaign's writer lock (writerLock.ts); null when read-only. */
    private readonly writerLock: WriterLockHandle | null = null,
  ) {
    const c = new CampaignDb(dir, dbFile, db, campaign, readOnly);
    this.c = c;
    this.workloads = new WorkloadSnapshotRepository(c);
    this.bindings = new BindingRepository(c);
    this.calibrations = new CalibrationRepository(c);
    this.parents = new ParentTraceRepository(c, this.bindings);
    this.episodes = new EpisodeRepository(c);
    this.events = new EventRepository(c);
    this.metrics = new MetricsRepository(c);
    this.admissions = new AdmissionRepository(c, this.events);
    this.lifecycle = new EpisodeLifecycle(c, this.parents, this.workloads, this.events, this.metrics, rewriteRecovered);
  }

  /** The campaign folder (absolute). */
  get dir(): string {
    return this.c.dir;
  }

  /** campaign.sqlite in it. */
  get dbFile(): string {
    return this.c.dbFile;
  }

  get campaign(): CampaignRecord {
    return this.c.campaign;
  }

  get readOnly(): boolean {
    return this.c.readOnly;
  }

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

  // ---------------------------------------------------------------- the connection

  schemaVersion(): number {
    return this.c.read('cannot read the schema version of', () => schemaVersionOf(this.c.db));
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
    return this.c.read('cannot read the settings of', () => ({
      journalMode: String(this.c.db.pragma('journal_mode', { simple: true })),
      synchronous: (['OFF', 'NORMAL', 'FULL', 'EXTRA'] as const)[
        Number(this.c.db.pragma('synchronous', { simple: true }))
      ],
      foreignKeys: Number(this.c.db.pragma('foreign_keys', { simple: true })) === 1,
      busyTimeoutMs: Number(this.c.db.pragma('busy_timeout', { simple: true })),
      applicationId: Number(this.c.db.pragma('application_id', { simple: true })),
      sqliteVersion: String((this.c.db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v),
    }));
  }

  /** `PRAGMA integrity_check` lines other than "ok", and every foreign-key violation: both empty when sound. */
  integrityCheck(): { integrity: string[]; foreignKeys: unknown[] } {
    return this.c.read('cannot check', () => {
      const integrity = (this.c.db.pragma('integrity_check') as { integrity_check: string }[])
        .map((r) => r.integrity_check)
        .filter((s) => s !== 'ok');
      const foreignKeys = this.c.db.pragma('foreign_key_check') as unknown[];
      return { integrity, foreignKeys };
    });
  }

  /** Absolute path of a file named relative to the campaign folder (as mcap_path is). */
  resolve(relative: string): string {
    return this.c.resolve(relative);
  }

  /** The episode's MCAP file (absolute). */
  episodeFile(runId: string): string {
    return this.resolve(episodeFileRelative(runId));
  }

  /** Closes the database. Refused while episodes are still being recorded by this store. */
  close(): void {
    if (this.c.closed) return;
    if (this.lifecycle.recorders.size > 0) {
      throw new TraceStoreError(
        'state',
        this.dbFile,
        `cannot close ${this.dir}: ${this.lifecycle.recorders.size} episode(s) still recording (${[...this.lifecycle.recorders].map((r) => r.runId).join(', ')}); finish or abort them first`,
      );
    }
    this.c.closed = true;
    this.c.db.close();
    this.writerLock?.release();
    if (this.readingCopy) fs.rmSync(path.dirname(this.readingCopy), { recursive: true, force: true });
  }

  // ---------------------------------------------------------------- workload snapshots

  /** Stores a snapshot and its clip list; storing the same snapshot again is a no-op. */
  putWorkloadSnapshot(s: WorkloadSnapshot): void {
    this.workloads.putWorkloadSnapshot(s);
  }

  /** By snapshot hash, or by `id@version`. */
  getWorkloadSnapshot(key: string): WorkloadSnapshot | null {
    return this.workloads.getWorkloadSnapshot(key);
  }

  listWorkloadSnapshots(): { id: string; version: string; snapshotHash: string; clips: number }[] {
    return this.workloads.listWorkloadSnapshots();
  }

  // ---------------------------------------------------------------- bindings and calibrations

  /** Stores a binding; an id@version already stored with a different record is a conflict. */
  putBinding(b: WbcBinding): BindingRecord {
    return this.bindings.putBinding(b);
  }

  getBinding(id: string, version: string): BindingRecord | null {
    return this.bindings.getBinding(id, version);
  }

  listBindings(): BindingRecord[] {
    return this.bindings.listBindings();
  }

  /** Stores a calibration under its content id (`cal-…`); the same record stores once. */
  putCalibration(rec: CalibrationRecord): StoredCalibration {
    return this.calibrations.putCalibration(rec);
  }

  getCalibration(id: string): StoredCalibration | null {
    return this.calibrations.getCalibration(id);
  }

  // ---------------------------------------------------------------- parent traces and branches

  /** The parent trace of these inputs, created when new (idempotent: identical inputs → the same id and row). */
  ensureParentTrace(inputs: ParentTraceInputs): ParentTraceRecord {
    return this.parents.ensureParentTrace(inputs);
  }

  getParentTrace(id: string): ParentTraceRecord | null {
    return this.parents.getParentTrace(id);
  }

  findParentTraces(f: ParentTraceFilter = {}): ParentTraceRecord[] {
    return this.parents.findParentTraces(f);
  }

  /** The branch of a parent for an execution domain, created when new. */
  ensureBranch(parentTraceId: string, domain: ExecutionDomain): BranchRecord {
    return this.parents.ensureBranch(parentTraceId, domain);
  }

  listBranches(parentTraceId: string): BranchRecord[] {
    return this.parents.listBranches(parentTraceId);
  }

  // ---------------------------------------------------------------- episodes

  /** Starts recording an episode (EpisodeLifecycle.beginEpisode says how a failed start stays on record). */
  beginEpisode(req: BeginEpisodeRequest): Promise<EpisodeRecorder> {
    return this.lifecycle.beginEpisode(req);
  }

  /** Marks every `running` episode whose writer is gone as interrupted (EpisodeLifecycle.recoverInterrupted). */
  recoverInterrupted(options: { force?: boolean } = {}): Promise<RecoveredEpisode[]> {
    return this.lifecycle.recoverInterrupted(options);
  }

  getEpisode(runId: string): EpisodeRecord | null {
    return this.episodes.getEpisode(runId);
  }

  findEpisodes(f: EpisodeFilter = {}): EpisodeRecord[] {
    return this.episodes.findEpisodes(f);
  }

  /** The rollouts of a parent's branch that need no rerun (EpisodeRepository.settledRollouts). */
  settledRollouts(parentTraceId: string, domain: ExecutionDomain): EpisodeRecord[] {
    return this.episodes.settledRollouts(parentTraceId, domain);
  }

  // ---------------------------------------------------------------- events

  /** Records an event (a refusal or human-gated reset needs a reason). Outside an episode, name the parent trace (or nothing: a campaign-level event). */
  recordEvent(e: NewTraceEvent): TraceEvent {
    return this.events.recordEvent(e);
  }

  listEvents(f: { runId?: string; parentTraceId?: string; kind?: TraceEventKind } = {}): TraceEvent[] {
    return this.events.listEvents(f);
  }

  // ---------------------------------------------------------------- metrics

  /** Stores an episode's metrics under their contract (e.g. a re-evaluation under another contract); identical → no-op, different → conflict. */
  putMetrics(runId: string, m: EpisodeMetrics): MetricsRecord {
    return this.metrics.putMetrics(runId, m);
  }

  /** Stores an episode's readings under a peer's metric contract (MetricsRepository.putPeerMetrics). */
  putPeerMetrics(runId: string, contractId: string, frames: number, success: boolean, result: object): void {
    this.metrics.putPeerMetrics(runId, contractId, frames, success, result);
  }

  /** Every stored result under a peer contract: run id → the peer's result. */
  peerMetrics(contractId: string): Map<string, unknown> {
    return this.metrics.peerMetrics(contractId);
  }

  /** Metrics of an episode under a contract (default: its parent trace's contract). */
  getMetrics(runId: string, contractId?: string): MetricsRecord | null {
    return this.metrics.getMetrics(runId, contractId);
  }

  /** Episodes joined with their parent identity and scalar metrics (under the parent's contract): one query for reports. */
  episodeResults(f: ResultFilter = {}): EpisodeResultRow[] {
    return this.metrics.episodeResults(f);
  }

  // ---------------------------------------------------------------- admissions

  /** Stores (or replaces, with an `admission` event keeping the previous decision) a pair's admission under a policy version. */
  putAdmission(a: Omit<AdmissionRecord, 'decidedAt'> & { decidedAt?: string }): AdmissionRecord {
    return this.admissions.putAdmission(a);
  }

  listAdmissions(f: { parentTraceId?: string; policyId?: string; policyVersion?: string } = {}): AdmissionRecord[] {
    return this.admissions.listAdmissions(f);
  }
}
