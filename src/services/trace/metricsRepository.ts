// Metrics (table metrics): an episode's results under each contract (mb-metrics/1 with its
// scalar columns, or a peer's), never replaced, checked against their columns when read back;
// and the report join of episodes with their parent identity and scores.

import type { EpisodeOutcome, ExecutionDomain } from '../../domain/backend/backend';
import type { EpisodeMetrics } from '../../domain/metrics/readings';
import { PEER_CONTRACTS } from '../../domain/metrics/peerContracts';
import { canonicalJson } from '../../domain/trace/canonicalJson';
import {
  metricScalars,
  type EpisodeResultRow,
  type EpisodeStatus,
  type MetricScalars,
  type MetricsRecord,
} from '../../domain/trace/records';
import { episodeMetricsProblem, scalarDisagreement } from '../../domain/trace/storedRecords';
import type { CampaignDb } from './campaignDb';
import { nowIso, scalarsOf, type MetricsRow } from './campaignRows';
import { TraceStoreError } from './errors';
import { parentWhere, type ParentTraceFilter } from './parentTraceRepository';
import { Where } from './whereClause';

export interface ResultFilter extends ParentTraceFilter {
  executionDomain?: ExecutionDomain;
  status?: EpisodeStatus;
  snapshotHash?: string;
}

/** Contracts whose results are a peer's (putPeerMetrics), not EpisodeMetrics. */
const PEER_CONTRACT_IDS: ReadonlySet<string> = new Set(PEER_CONTRACTS.map((c) => c.id));

/** A stored value for a one-line message. */
const shown = (v: unknown): string => {
  const t = v === undefined ? 'nothing' : JSON.stringify(v);
  return t.length > 80 ? `${t.slice(0, 79)}…` : t;
};

export class MetricsRepository {
  constructor(private readonly c: CampaignDb) {}

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
    const where = `${this.c.dbFile}, table metrics, run ${runId} (contract ${contract})`;
    const v = this.c.storedJson(text, `${where}, column result_json`);
    if (PEER_CONTRACT_IDS.has(contract)) return v;
    const problem = episodeMetricsProblem(v, contract);
    if (problem) throw new TraceStoreError('corrupt', this.c.dbFile, `${where}, column result_json: ${problem}`);
    const d = columns ? scalarDisagreement(columns, v as EpisodeMetrics) : null;
    if (d)
      throw new TraceStoreError(
        'corrupt',
        this.c.dbFile,
        `${where}: column ${d.column} holds ${shown(d.stored)} but result_json says ${shown(d.fromResult)}; scores (the columns) and gaps (result_json) must come from the same numbers`,
      );
    return v;
  }

  /** Stores an episode's metrics under their contract (e.g. a re-evaluation under another contract); identical → no-op, different → conflict. */
  putMetrics(runId: string, m: EpisodeMetrics): MetricsRecord {
    return this.c.tx('cannot store the metrics in', () => {
      const ep = this.c.db.prepare('SELECT status FROM episodes WHERE run_id = ?').get(runId) as
        { status: EpisodeStatus } | undefined;
      if (!ep) throw new TraceStoreError('invalid', this.c.dbFile, `episode ${runId} is not stored in this campaign`);
      return this.insertMetrics(runId, m);
    });
  }

  /** putMetrics inside the caller's transaction, the episode known to exist. */
  insertMetrics(runId: string, m: EpisodeMetrics): MetricsRecord {
    if (!m || typeof m.contract !== 'string' || m.contract === '')
      throw new TraceStoreError('invalid', this.c.dbFile, 'metrics must name their contract');
    const result = canonicalJson(m);
    const existing = this.c.db
      .prepare('SELECT * FROM metrics WHERE run_id = ? AND contract_id = ?')
      .get(runId, m.contract) as MetricsRow | undefined;
    if (existing) {
      if (existing.result_json !== result)
        throw new TraceStoreError(
          'conflict',
          this.c.dbFile,
          `episode ${runId} already has different ${m.contract} metrics; stored results are never replaced`,
        );
      return this.metricsOf(existing);
    }
    const s = metricScalars(m);
    this.c.db
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
      this.c.db
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
    this.c.tx('cannot store the peer metrics in', () => {
      const ep = this.c.db.prepare('SELECT 1 FROM episodes WHERE run_id = ?').get(runId);
      if (!ep) throw new TraceStoreError('invalid', this.c.dbFile, `episode ${runId} is not stored in this campaign`);
      const json = canonicalJson(result);
      const existing = this.c.db
        .prepare('SELECT result_json FROM metrics WHERE run_id = ? AND contract_id = ?')
        .get(runId, contractId) as { result_json: string } | undefined;
      if (existing) {
        if (existing.result_json !== json)
          throw new TraceStoreError(
            'conflict',
            this.c.dbFile,
            `episode ${runId} already has different ${contractId} metrics; stored results are never replaced`,
          );
        return;
      }
      this.c.db
        .prepare(
          'INSERT INTO metrics (run_id, contract_id, k, failed, result_json, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(runId, contractId, frames, success ? 0 : 1, json, nowIso());
    });
  }

  /** Every stored result under a peer contract: run id → the peer's result. */
  peerMetrics(contractId: string): Map<string, unknown> {
    return this.c.read('cannot read', () => {
      const rows = this.c.db
        .prepare('SELECT run_id, result_json FROM metrics WHERE contract_id = ?')
        .all(contractId) as {
        run_id: string;
        result_json: string;
      }[];
      return new Map(rows.map((r) => [r.run_id, this.storedResult(r.run_id, contractId, r.result_json, null)]));
    });
  }

  /** Metrics of an episode under a contract (default: its parent trace's contract). */
  getMetrics(runId: string, contractId?: string): MetricsRecord | null {
    return this.c.read('cannot read', () => {
      const row = (
        contractId !== undefined
          ? this.c.db.prepare('SELECT * FROM metrics WHERE run_id = ? AND contract_id = ?').get(runId, contractId)
          : this.c.db
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
    return this.c.read('cannot read', () => {
      const rows = this.c.db
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
}
