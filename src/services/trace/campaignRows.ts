// The rows of the campaign tables as SQLite returns them, and their mapping to the records of
// src/domain/trace/records.ts; the column codecs every repository writes with.

import type { EpisodeOutcome, ExecutionDomain } from '../../domain/backend/backend';
import { canonicalJson } from '../../domain/trace/canonicalJson';
import type {
  CampaignRecord,
  EpisodeRecord,
  EpisodeStatus,
  MetricScalars,
  ParentTraceRecord,
  TraceEvent,
  TraceEventKind,
} from '../../domain/trace/records';

export const nowIso = (ms = Date.now()) => new Date(ms).toISOString();
export const json = (v: unknown) => canonicalJson(v ?? {});
export const parse = <T>(s: string | null): T => (s === null ? (null as T) : (JSON.parse(s) as T));

export interface CampaignRow {
  id: string;
  name: string;
  created_at: string;
  created_by: string;
  meta_json: string;
}
export interface EpisodeRow {
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
export interface ParentRow {
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
export interface EventRow {
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
export interface MetricsRow {
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

export const campaignOf = (r: CampaignRow): CampaignRecord => ({
  id: r.id,
  name: r.name,
  createdAt: r.created_at,
  createdBy: r.created_by,
  meta: parse(r.meta_json),
});

export const episodeOf = (r: EpisodeRow): EpisodeRecord => ({
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

export const parentOf = (r: ParentRow): ParentTraceRecord => ({
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

export const eventOf = (r: EventRow): TraceEvent => ({
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

export const scalarsOf = (r: MetricsRow): MetricScalars => ({
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

export const EPISODE_SELECT = `SELECT e.*, b.parent_trace_id, b.execution_domain FROM episodes e JOIN branches b ON b.id = e.branch_id`;
