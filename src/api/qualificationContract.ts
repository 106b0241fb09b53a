import { z } from 'zod';
import { idSchema } from './idSchemas';
import type { ClipDto, ExecutedTrajectoryDto } from './clipDto';
import { POLICY_ID_RE } from './policyContract';

// (No import from simContract.ts: it imports the progress event schema from here.)
const bindingSpecSchema = z
  .string()
  .max(64)
  .refine(
    (v) => POLICY_ID_RE.test(v) || /^builtin(?::assist=(\d{1,7}(?:\.\d{1,6})?))?$/.test(v),
    'expected "builtin", "builtin:assist=<N/m>" or an opened policy\'s id (policy-…)',
  );

// The qualification part of the console API: the Qualification board opens a
// campaign folder on the machine running the services, reads its matrix (bindings × clips with
// the admission decision and its reasons), starts and cancels a qualification run in the
// embedded simulator (progress arrives as `qualification.progress` pushes), and fetches the
// rollout of one pair for replay in the viewport (reference + executed at 50 Hz, worst frame).

export const CAPABILITY_GROUP_IDS = ['upper_body', 'locomotion', 'in_place', 'dynamic', 'low_posture'] as const;
export type CapabilityGroupId = (typeof CAPABILITY_GROUP_IDS)[number];

/** An absolute folder path on the services' machine (no NUL, no relative paths). */
export const campaignDirSchema = z
  .string()
  .min(1)
  .max(4096)
  .refine((v) => !v.includes('\0'), 'contains a NUL character')
  .refine((v) => v.startsWith('/') || /^[A-Za-z]:[\\/]/.test(v), 'must be an absolute path');

const jobIdSchema = idSchema(/^qual-[a-z0-9-]+$/, 'not a qualification job id');
/** `<id>@<version>`: a released policy's is e.g. `beyondmimic/Violin@beyondmimic/1+4265e949255c@mjlab-g1/1@5ms×4`. */
const bindingKeySchema = idSchema(/^[\w.:=+@/×-]+$/u, 'not a binding key', 200);
const clipIdSchema = idSchema(/^[\w.:-]+$/, 'not a clip id', 128);

export const MAX_QUALIFICATION_BINDINGS = 8;

export const qualificationRequestSchemas = {
  /** Opens a campaign folder; `create: true` creates it (and its database) when missing. */
  'qualification.open': z.strictObject({ campaignDir: campaignDirSchema, create: z.boolean().optional() }),
  /** The matrix of an existing campaign (read-only). */
  'qualification.report': z.strictObject({ campaignDir: campaignDirSchema }),
  /** Starts a qualification run in the embedded simulator; returns its job id at once. */
  'qualification.start': z.strictObject({
    campaignDir: campaignDirSchema,
    /** core-v1, or `policies`: the motions of the opened policies named in bindings (all bindings must be policies). */
    workload: z.enum(['core-v1', 'policies']),
    bindings: z.array(bindingSpecSchema).min(1).max(MAX_QUALIFICATION_BINDINGS),
    /** Rollouts per pair (default 3 = mb-admission/1; any other value is a custom policy version). */
    rollouts: z.number().int().min(1).max(10).optional(),
    /** Only the first N clips (after `groups` and `clips`). */
    limit: z.number().int().min(1).max(1000).optional(),
    /** Only clips of these capability groups. */
    groups: z.array(z.enum(CAPABILITY_GROUP_IDS)).min(1).max(5).optional(),
    /** Only these clips (names or ids). */
    clips: z.array(z.string().min(1).max(128)).min(1).max(500).optional(),
    workers: z.number().int().min(1).max(64).optional(),
  }),
  /** Cancels a job (or every job with all: true — the operator's STOP). */
  'qualification.cancel': z
    .strictObject({
      jobId: jobIdSchema.optional(),
      all: z.literal(true).optional(),
      reason: z.string().max(200).optional(),
    })
    .refine((p) => (p.jobId === undefined) !== (p.all === undefined), {
      message: 'give either jobId or all: true',
      path: ['jobId'],
    }),
  /** A job's state (the same figures the progress pushes carry); without jobId the most recent job. */
  'qualification.status': z.strictObject({ jobId: jobIdSchema.optional() }),
  /** The worst rollout of one pair, for replay: reference and executed trajectories at 50 Hz and the worst frame. */
  'qualification.replay': z.strictObject({
    campaignDir: campaignDirSchema,
    bindingKey: bindingKeySchema,
    clipId: clipIdSchema,
  }),
} as const;

// ---- results -------------------------------------------------------------------------------

export type AdmissionState = 'admitted' | 'rejected' | 'pending';

export interface QualificationCellDto {
  bindingKey: string;
  clipId: string;
  state: AdmissionState;
  reasons: string[];
  rollouts: number;
  /** Share of rollouts without a hard failure; null without rollouts. */
  sr: number | null;
  progressSoft: number | null;
  mpjpeLMm: number | null;
  decidedAt: string | null;
}

export interface QualificationClipDto {
  id: string;
  name: string;
  group: CapabilityGroupId | null;
  durationS: number | null;
}

export interface QualificationBindingDto {
  key: string;
  /** What people read (src/domain/wbc/bindingName.ts): "builtin@pd1-… · assist 3000 N/m". */
  name: string;
  kind: string;
  label: string;
  /** "reference tracker, not a policy" for builtin bindings. */
  note: string | null;
  /** Summary over the decided pairs (docs/QUALIFICATION.md, "Matrix numbers"). */
  summary: {
    pairs: number;
    admitted: number;
    rejected: number;
    pending: number;
    sr: number | null;
    progressSoft: number | null;
    mpjpeLMm: number | null;
  };
}

export interface QualificationReportDto {
  campaignDir: string;
  campaignId: string;
  policy: string;
  contract: string | null;
  snapshots: { id: string; version: string; snapshotHash: string }[];
  bindings: QualificationBindingDto[];
  /** Rows of the board, in snapshot order. */
  clips: QualificationClipDto[];
  cells: QualificationCellDto[];
  generatedAt: string;
}

export interface QualificationOpenResult {
  campaignDir: string;
  campaignId: string;
  name: string;
  created: boolean;
}

export type QualificationJobState = 'running' | 'completed' | 'cancelled' | 'failed';

export interface QualificationJobStatus {
  jobId: string;
  campaignDir: string;
  state: QualificationJobState;
  bindings: string[];
  pairsTotal: number;
  pairsDone: number;
  admitted: number;
  rejected: number;
  /** 0..1 of the clip-seconds planned. */
  fraction: number;
  /** Rollouts settled and to run in this job (pairs decided before are not counted). */
  rolloutsDone: number;
  rolloutsTotal: number;
  /** Clip-seconds simulated (partial rollouts included) and planned. */
  clipSecondsDone: number;
  clipSecondsPlanned: number;
  /** Clip-seconds simulated per wall second so far; null until something was simulated. */
  clipSecondsPerS: number | null;
  elapsedS: number;
  etaS: number | null;
  /** Pairs with a rollout running now (binding key, clip id). */
  running: { bindingKey: string; clipId: string; clipName: string }[];
  lastPair: {
    bindingKey: string;
    clipId: string;
    clipName: string;
    admitted: boolean | null;
    reasons: string[];
  } | null;
  error: string | null;
  startedAtMs: number;
  endedAtMs: number | null;
}

export interface QualificationReplayDto {
  bindingKey: string;
  clipId: string;
  runId: string;
  rolloutIndex: number | null;
  outcome: string | null;
  admitted: boolean | null;
  reasons: string[];
  /** The reference clip (as clips.load returns it, so the viewport shows it as the clip on display). */
  reference: ClipDto;
  /** The executed trajectory at 50 Hz (frame-major). */
  executed: ExecutedTrajectoryDto;
  worst: { frame: number; timeS: number; kind: 'first_failure' | 'max_error'; detail: string };
}

export interface QualificationResults {
  'qualification.open': QualificationOpenResult;
  'qualification.report': QualificationReportDto;
  'qualification.start': QualificationJobStatus;
  'qualification.cancel': { cancelled: string[] };
  'qualification.status': QualificationJobStatus | null;
  'qualification.replay': QualificationReplayDto;
}

// ---- events --------------------------------------------------------------------------------

const num = z.number().finite();
const pairRef = z.strictObject({ bindingKey: z.string(), clipId: z.string(), clipName: z.string() });

export const qualificationProgressEventSchema = z.strictObject({
  type: z.literal('qualification.progress'),
  seq: z.number().int().min(0),
  jobId: jobIdSchema,
  campaignDir: z.string(),
  state: z.enum(['running', 'completed', 'cancelled', 'failed']),
  bindings: z.array(z.string()),
  pairsTotal: z.number().int().min(0),
  pairsDone: z.number().int().min(0),
  admitted: z.number().int().min(0),
  rejected: z.number().int().min(0),
  fraction: num,
  rolloutsDone: z.number().int().min(0),
  rolloutsTotal: z.number().int().min(0),
  clipSecondsDone: num,
  clipSecondsPlanned: num,
  clipSecondsPerS: num.nullable(),
  elapsedS: num,
  etaS: num.nullable(),
  running: z.array(pairRef),
  lastPair: pairRef
    .extend({ admitted: z.boolean().nullable(), reasons: z.array(z.string()) })
    .strict()
    .nullable(),
  error: z.string().nullable(),
  startedAtMs: num,
  endedAtMs: num.nullable(),
});

export type QualificationProgressEvent = z.infer<typeof qualificationProgressEventSchema>;
