// Versioned schema of campaign.sqlite. Policy (docs/TRACE_STORE.md): migrations are append-only
// (a released migration is never edited; a change is a new one), each runs in its own IMMEDIATE
// transaction together with its schema_version row, so a database is always at exactly one
// version; a database at a version this program does not know is refused before anything is
// written. Tables are STRICT (column types enforced) and carry CHECK constraints for the
// invariants the store relies on (outcome vocabulary, running ⇔ no outcome, interrupted ⇒
// infrastructure_error, refusals have a reason).

import type Database from 'better-sqlite3';
import { EPISODE_OUTCOMES, TRACE_EVENT_KINDS } from '../../domain/trace/records';
import { CAPABILITY_GROUPS } from '../../domain/workload/snapshot';
import { TraceStoreError } from './errors';

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

const list = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');

/** Frozen at release: edit nothing here, append a new migration instead. */
const V1 = `
CREATE TABLE campaigns (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  created_by  TEXT NOT NULL,
  meta_json   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(meta_json))
) STRICT;

CREATE TABLE workload_snapshots (
  snapshot_hash TEXT PRIMARY KEY CHECK (length(snapshot_hash) = 64),
  id            TEXT NOT NULL,
  version       TEXT NOT NULL,
  source        TEXT NOT NULL CHECK (source IN ('builtin', 'folder')),
  format        TEXT NOT NULL,
  record_json   TEXT NOT NULL CHECK (json_valid(record_json)),
  created_at    TEXT NOT NULL,
  UNIQUE (id, version)
) STRICT;

CREATE TABLE snapshot_clips (
  snapshot_hash    TEXT NOT NULL REFERENCES workload_snapshots (snapshot_hash),
  position         INTEGER NOT NULL CHECK (position >= 0),
  clip_id          TEXT NOT NULL,
  name             TEXT NOT NULL,
  capability_group TEXT NOT NULL CHECK (capability_group IN (${list(CAPABILITY_GROUPS)})),
  frames           INTEGER NOT NULL CHECK (frames > 0),
  fps              REAL NOT NULL CHECK (fps > 0),
  duration_s       REAL NOT NULL,
  file             TEXT,
  PRIMARY KEY (snapshot_hash, position)
) STRICT;
CREATE INDEX snapshot_clips_by_clip ON snapshot_clips (clip_id);

CREATE TABLE bindings (
  id              TEXT NOT NULL,
  version         TEXT NOT NULL,
  kind            TEXT NOT NULL CHECK (kind IN ('builtin', 'onnx', 'remote')),
  checkpoint_hash TEXT,
  label           TEXT NOT NULL,
  control_rate_hz REAL NOT NULL CHECK (control_rate_hz > 0),
  record_json     TEXT NOT NULL CHECK (json_valid(record_json)),
  created_at      TEXT NOT NULL,
  PRIMARY KEY (id, version)
) STRICT;

CREATE TABLE calibrations (
  id          TEXT PRIMARY KEY,
  robot_unit  TEXT NOT NULL,
  captured_at TEXT NOT NULL,
  clip_id     TEXT,
  record_json TEXT NOT NULL CHECK (json_valid(record_json)),
  created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX calibrations_by_unit ON calibrations (robot_unit, captured_at);

CREATE TABLE parent_traces (
  id               TEXT PRIMARY KEY,
  campaign_id      TEXT NOT NULL REFERENCES campaigns (id),
  scheme           TEXT NOT NULL,
  identity_text    TEXT NOT NULL,
  binding_id       TEXT NOT NULL,
  binding_version  TEXT NOT NULL,
  checkpoint_hash  TEXT,
  clip_id          TEXT NOT NULL,
  reference_sha256 TEXT NOT NULL CHECK (length(reference_sha256) = 64),
  model_sha256     TEXT NOT NULL CHECK (length(model_sha256) = 64),
  adapter_version  TEXT NOT NULL,
  body_set_json    TEXT NOT NULL CHECK (json_valid(body_set_json)),
  contract_id      TEXT NOT NULL,
  calibration_id   TEXT REFERENCES calibrations (id),
  created_at       TEXT NOT NULL,
  FOREIGN KEY (binding_id, binding_version) REFERENCES bindings (id, version)
) STRICT;
CREATE INDEX parent_traces_by_pair ON parent_traces (binding_id, binding_version, clip_id, contract_id);
CREATE INDEX parent_traces_by_clip ON parent_traces (clip_id);
CREATE INDEX parent_traces_by_calibration ON parent_traces (calibration_id);

CREATE TABLE branches (
  id               TEXT PRIMARY KEY,
  parent_trace_id  TEXT NOT NULL REFERENCES parent_traces (id),
  execution_domain TEXT NOT NULL CHECK (execution_domain IN ('simulation', 'real_robot')),
  created_at       TEXT NOT NULL,
  UNIQUE (parent_trace_id, execution_domain)
) STRICT;

CREATE TABLE episodes (
  run_id              TEXT PRIMARY KEY,
  branch_id           TEXT NOT NULL REFERENCES branches (id),
  snapshot_hash       TEXT REFERENCES workload_snapshots (snapshot_hash),
  rollout_index       INTEGER CHECK (rollout_index >= 0),
  backend_id          TEXT NOT NULL,
  robot_unit          TEXT,
  seed                INTEGER NOT NULL,
  status              TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted')),
  outcome             TEXT CHECK (outcome IN (${list(EPISODE_OUTCOMES)})),
  reason              TEXT,
  started_at          TEXT NOT NULL,
  ended_at            TEXT,
  frame_count         INTEGER NOT NULL DEFAULT 0 CHECK (frame_count >= 0),
  sim_seconds         REAL,
  wall_seconds        REAL,
  mcap_path           TEXT NOT NULL UNIQUE,
  mcap_bytes          INTEGER,
  mcap_sha256         TEXT,
  recovered_mcap_path TEXT,
  trajectory_sha256   TEXT,
  writer_host         TEXT NOT NULL,
  writer_pid          INTEGER NOT NULL,
  writer_start        TEXT,
  meta_json           TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(meta_json)),
  CHECK ((status = 'running') = (outcome IS NULL)),
  CHECK (status <> 'interrupted' OR outcome = 'infrastructure_error'),
  CHECK ((status = 'running') = (ended_at IS NULL)),
  CHECK (status <> 'finished' OR (mcap_bytes IS NOT NULL AND mcap_sha256 IS NOT NULL))
) STRICT;
CREATE INDEX episodes_by_branch ON episodes (branch_id, rollout_index);
CREATE INDEX episodes_running ON episodes (status) WHERE status = 'running';

CREATE TABLE events (
  id              INTEGER PRIMARY KEY,
  campaign_id     TEXT NOT NULL REFERENCES campaigns (id),
  parent_trace_id TEXT REFERENCES parent_traces (id),
  run_id          TEXT REFERENCES episodes (run_id),
  at              TEXT NOT NULL,
  t_s             REAL,
  kind            TEXT NOT NULL CHECK (kind IN (${list(TRACE_EVENT_KINDS)})),
  reason          TEXT,
  detail_json     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail_json)),
  CHECK (kind NOT IN ('refusal', 'human_reset') OR length(trim(coalesce(reason, ''))) > 0)
) STRICT;
CREATE INDEX events_by_run ON events (run_id, id);
CREATE INDEX events_by_parent ON events (parent_trace_id, id);
CREATE INDEX events_by_kind ON events (kind, id);

CREATE TABLE metrics (
  run_id            TEXT NOT NULL REFERENCES episodes (run_id),
  contract_id       TEXT NOT NULL,
  k                 INTEGER NOT NULL CHECK (k >= 0),
  failed            INTEGER CHECK (failed IN (0, 1)),
  failure_frame     INTEGER,
  failure_condition TEXT,
  failure_body      TEXT,
  progress_soft     REAL,
  mpjpe_l_mm        REAL,
  joint_pos_rmse    REAL,
  joint_vel_rmse    REAL,
  joint_acc_rms     REAL,
  joint_acc_p95     REAL,
  joint_jerk_rms    REAL,
  joint_jerk_p95    REAL,
  result_json       TEXT NOT NULL CHECK (json_valid(result_json)),
  created_at        TEXT NOT NULL,
  PRIMARY KEY (run_id, contract_id)
) STRICT;
CREATE INDEX metrics_by_contract ON metrics (contract_id);

CREATE TABLE admissions (
  parent_trace_id TEXT NOT NULL REFERENCES parent_traces (id),
  policy_id       TEXT NOT NULL,
  policy_version  TEXT NOT NULL,
  admitted        INTEGER NOT NULL CHECK (admitted IN (0, 1)),
  reasons_json    TEXT NOT NULL CHECK (json_valid(reasons_json)),
  evidence_json   TEXT NOT NULL CHECK (json_valid(evidence_json)),
  decided_at      TEXT NOT NULL,
  PRIMARY KEY (parent_trace_id, policy_id, policy_version),
  CHECK (admitted = 1 OR json_array_length(reasons_json) > 0)
) STRICT;
`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description:
      'campaign index: campaigns, workload snapshots, bindings, calibrations, parent traces, branches, episodes, events, metrics, admissions',
    sql: V1,
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** "MBTC" — PRAGMA application_id of a campaign database (`file` reports it). */
export const APPLICATION_ID = 0x4d425443;

const SCHEMA_VERSION_TABLE = `
CREATE TABLE IF NOT EXISTS schema_version (
  version    INTEGER PRIMARY KEY,
  description TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  applied_by TEXT NOT NULL
) STRICT;`;

/** The schema version of an open database (0: empty, never migrated). */
export function schemaVersionOf(db: Database.Database): number {
  const t = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`).get();
  if (!t) return 0;
  const row = db.prepare('SELECT max(version) AS v FROM schema_version').get() as { v: number | null };
  return row.v ?? 0;
}

/** Refuses a database written by a newer program (nothing is changed). */
export function refuseNewer(version: number, dbFile: string, known: readonly Migration[] = MIGRATIONS): void {
  const latest = known[known.length - 1].version;
  if (version > latest) {
    throw new TraceStoreError(
      'schema_too_new',
      dbFile,
      `${dbFile} has schema version ${version}, but this program knows versions up to ${latest}: open the campaign with a newer motionbench (nothing was changed)`,
    );
  }
}

/**
 * Applies every pending migration, each in its own IMMEDIATE transaction with its
 * schema_version row (re-checking the version inside, so two processes opening a new campaign at
 * once apply each migration exactly once). Returns the versions applied.
 */
export function migrate(
  db: Database.Database,
  dbFile: string,
  appliedBy: string,
  migrations: readonly Migration[] = MIGRATIONS,
): number[] {
  const applied: number[] = [];
  for (const m of migrations) {
    const run = db.transaction(() => {
      const current = schemaVersionOf(db);
      refuseNewer(current, dbFile, migrations);
      if (current >= m.version) return false;
      if (current !== m.version - 1)
        throw new TraceStoreError(
          'corrupt',
          dbFile,
          `${dbFile} is at schema version ${current}; migration ${m.version} needs version ${m.version - 1}`,
        );
      if (m.version === 1) {
        db.exec(SCHEMA_VERSION_TABLE);
        db.pragma(`application_id = ${APPLICATION_ID}`);
      }
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_version (version, description, applied_at, applied_by) VALUES (?, ?, ?, ?)').run(
        m.version,
        m.description,
        new Date().toISOString(),
        appliedBy,
      );
      return true;
    });
    if (run.immediate()) applied.push(m.version);
  }
  return applied;
}
