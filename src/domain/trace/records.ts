// Record types of the trace store (DESIGN §3 Trace, CalibrationRecord; §7 Storage): what the
// campaign index (campaign.sqlite) holds, as the repository API returns it. Pure types and the
// pure mappings the store needs (metric scalars, calibration ids); no I/O.

import type { EpisodeOutcome, ExecutionDomain } from '../backend/backend';
import { sha256HexOfString } from '../hash/sha256';
import { episodeFailed, type EpisodeMetrics } from '../metrics/readings';
import type { WbcBinding, WbcBindingKind } from '../wbc/wbcBinding';
import { canonicalJson } from './canonicalJson';
import type { ParentTraceIdentity } from './parentTrace';

// The trace stores the episodes' outcomes: the list is declared once, in domain/episode.
export { EPISODE_OUTCOMES } from '../episode/episodeOutcome';
export const EXECUTION_DOMAINS: readonly ExecutionDomain[] = ['simulation', 'real_robot'];

/** running: the recorder is writing; finished: closed and committed; interrupted: the recorder stopped (crash, I/O failure) and recovery marked it infrastructure_error. */
export type EpisodeStatus = 'running' | 'finished' | 'interrupted';
export const EPISODE_STATUSES: readonly EpisodeStatus[] = ['running', 'finished', 'interrupted'];

/**
 * Kinds of trace events. `refusal` (something was not started or not sent, e.g. an interlock not
 * armed) and `human_reset` (an operator put the robot back) must carry a reason (DESIGN §6);
 * `recovery` is written when an interrupted episode is found and marked.
 */
export const TRACE_EVENT_KINDS = [
  'episode_start',
  'episode_end',
  'hard_failure',
  'stop_requested',
  'problem',
  'refusal',
  'human_reset',
  'intervention',
  'calibration',
  'admission',
  'recovery',
  'note',
] as const;
export type TraceEventKind = (typeof TRACE_EVENT_KINDS)[number];
export const EVENT_KINDS_NEEDING_REASON: readonly TraceEventKind[] = ['refusal', 'human_reset'];

export interface CampaignRecord {
  id: string;
  name: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** Program that created the folder (e.g. `motionbench-console 0.1.0`). */
  createdBy: string;
  meta: Record<string, unknown>;
}

export interface BindingRecord {
  id: string;
  version: string;
  kind: WbcBindingKind;
  checkpointHash: string | null;
  label: string;
  controlRateHz: number;
  /** The full binding as stored (canonical JSON round trip). */
  binding: WbcBinding;
  createdAt: string;
}

/**
 * The robot's measured start state before a matched pair (DESIGN §3 CalibrationRecord). The
 * calibration procedure owns the details of `stillness` and `residuals`; the store keeps the
 * whole record and indexes robot unit, time and clip.
 */
export interface CalibrationRecord {
  robotUnit: string;
  /** ISO 8601 UTC, when the still window ended. */
  capturedAt: string;
  /** The clip whose first reference frame the measurement is compared with, if any. */
  clipId: string | null;
  measured: {
    /** 29 joint angles averaged over the still window, rad, canonical order. */
    jointPosRad: number[];
    /** IMU attitude, wxyz. */
    imuQuatWxyz: number[];
    /** Root pose with motion capture, else null. */
    rootPosM: number[] | null;
    rootQuatWxyz: number[] | null;
  };
  /** Stillness statistics of the window (e.g. duration, samples, joint std, gyro RMS). */
  stillness: Record<string, number>;
  /** The simulator initial state derived from the measurement (InitialState, JSON). */
  simulatorInitialState: {
    rootPosM: number[];
    rootQuatWxyz: number[];
    jointPosRad: number[];
    jointVelRadS?: number[];
    placeOnFloor: boolean;
  } | null;
  /** Covariates of the pair: (a) settled simulator vs measurement, (b) measurement vs clip start. */
  residuals: {
    settledVsMeasured: Record<string, number> | null;
    measuredVsClipStart: Record<string, number> | null;
  };
  /** Anything else the procedure wants kept. */
  extra?: Record<string, unknown>;
}

export interface StoredCalibration {
  id: string;
  record: CalibrationRecord;
  createdAt: string;
}

/** `cal-` + 24 hex of sha256 over the record's canonical JSON: the same measurement stores once. */
export function calibrationIdOf(record: CalibrationRecord): string {
  return 'cal-' + sha256HexOfString(canonicalJson(record)).slice(0, 24);
}

export interface ParentTraceRecord {
  id: string;
  campaignId: string;
  scheme: string;
  identity: ParentTraceIdentity;
  /** The exact text the id hashes. */
  identityText: string;
  createdAt: string;
}

export interface BranchRecord {
  id: string;
  parentTraceId: string;
  executionDomain: ExecutionDomain;
  createdAt: string;
}

export interface WriterIdentity {
  host: string;
  pid: number;
  /** Start time of the writing process as the OS reports it (Linux: /proc/<pid>/stat field 22), to tell a reused pid apart. */
  start: string | null;
}

export interface EpisodeRecord {
  runId: string;
  branchId: string;
  parentTraceId: string;
  executionDomain: ExecutionDomain;
  /** The workload snapshot the episode ran for, if any. */
  snapshotHash: string | null;
  /** Which planned rollout (qualification) or trial (matched pair) this episode fills; retries reuse it. */
  rolloutIndex: number | null;
  backendId: string;
  robotUnit: string | null;
  seed: number;
  status: EpisodeStatus;
  /** null while running. */
  outcome: EpisodeOutcome | null;
  reason: string | null;
  startedAt: string;
  endedAt: string | null;
  /** Executed frames in the episode file (recovered frames for an interrupted episode). */
  frameCount: number;
  simSeconds: number | null;
  wallSeconds: number | null;
  /** Relative to the campaign folder: `episodes/<run_id>.mcap`. */
  mcapPath: string;
  /** Size and sha256 of the closed file (null until finished). */
  mcapBytes: number | null;
  mcapSha256: string | null;
  /** An indexed copy of an interrupted episode's readable part, when recovery wrote one. */
  recoveredMcapPath: string | null;
  trajectorySha256: string | null;
  writer: WriterIdentity;
  meta: Record<string, unknown>;
}

export interface TraceEvent {
  id: number;
  campaignId: string;
  parentTraceId: string | null;
  runId: string | null;
  /** Wall clock, ISO 8601 UTC. */
  at: string;
  /** Episode clock, seconds (null outside an episode). */
  tS: number | null;
  kind: TraceEventKind;
  reason: string | null;
  detail: Record<string, unknown>;
}

export interface NewTraceEvent {
  kind: TraceEventKind;
  /** Required for refusal and human_reset. */
  reason?: string | null;
  runId?: string | null;
  parentTraceId?: string | null;
  tS?: number | null;
  detail?: Record<string, unknown>;
  /** Default: now. */
  atMs?: number;
}

/** The indexed scalar columns of a metrics row: numbers, or null where the reading is unavailable. */
export interface MetricScalars {
  K: number;
  failed: boolean | null;
  failureFrame: number | null;
  failureCondition: string | null;
  failureBody: string | null;
  progressSoft: number | null;
  mpjpeLMm: number | null;
  jointPosRmse: number | null;
  jointVelRmse: number | null;
  jointAccRms: number | null;
  jointAccP95: number | null;
  jointJerkRms: number | null;
  jointJerkP95: number | null;
}

export interface MetricsRecord extends MetricScalars {
  runId: string;
  contractId: string;
  /** The full result, readings with their reasons, exactly as computed. */
  result: EpisodeMetrics;
  createdAt: string;
}

export function metricScalars(m: EpisodeMetrics): MetricScalars {
  const v = (r: { available: boolean; value?: number }) => (r.available ? (r as { value: number }).value : null);
  const failed = episodeFailed(m);
  const f = m.failure.available ? m.failure.value : null;
  return {
    K: m.K,
    failed: failed.available ? failed.value : null,
    failureFrame: f ? f.frame : null,
    failureCondition: f ? f.condition : null,
    failureBody: f ? f.body : null,
    progressSoft: v(m.progressSoft),
    mpjpeLMm: v(m.mpjpeLMm),
    jointPosRmse: v(m.jointPosRmseRad),
    jointVelRmse: v(m.jointVelRmseRadS),
    jointAccRms: v(m.jointAccRmsRadS2),
    jointAccP95: v(m.jointAccP95RadS2),
    jointJerkRms: v(m.jointJerkRmsRadS3),
    jointJerkP95: v(m.jointJerkP95RadS3),
  };
}

/** An admission decision for a pair under a versioned policy, with its reasons. */
export interface AdmissionRecord {
  parentTraceId: string;
  policyId: string;
  policyVersion: string;
  admitted: boolean;
  /** Every reason for a rejection (empty when admitted), in the policy's words. */
  reasons: string[];
  /** What the decision was made from (episode run ids, aggregated readings, thresholds). */
  evidence: Record<string, unknown>;
  decidedAt: string;
}

/** One row of a report query: an episode, its parent identity and its scalar metrics under one contract. */
export interface EpisodeResultRow {
  runId: string;
  parentTraceId: string;
  executionDomain: ExecutionDomain;
  bindingId: string;
  bindingVersion: string;
  clipId: string;
  contractId: string;
  calibrationId: string | null;
  snapshotHash: string | null;
  rolloutIndex: number | null;
  seed: number;
  status: EpisodeStatus;
  outcome: EpisodeOutcome | null;
  reason: string | null;
  frameCount: number;
  /** When the episode ended (ISO 8601), null while running; orders the repeats of one rollout. */
  endedAt?: string | null;
  /** Scalars under the parent's contract; null when no metrics row exists. */
  metrics: MetricScalars | null;
}
