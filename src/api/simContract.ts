import { z } from 'zod';
import { connectionIdSchema, runIdSchema } from './idSchemas';
import { EPISODE_OUTCOMES } from '../domain/episode/episodeOutcome';
import { liveFramesEventSchema } from './liveContract';
import { qualificationProgressEventSchema } from './qualificationContract';
import { trialEventSchemas } from './trialContract';
import { POLICY_ID_RE } from './policyContract';
import type { ExecutedTrajectoryDto } from './clipDto';

// The simulation-run part of the console API: `sim.run` starts the loaded clip
// on a connection under a builtin binding and returns at once; the executed frames then reach the
// caller as server→client push events (`live.frames` of source sim_run, liveContract.ts: ~15
// batches a second, each carrying the 50 Hz frames since the last one), and `sim.end` closes the run with its outcome, the batch
// mb-metrics/1 readings and the trajectory sha256. `sim.stop` stops one run or all of them
// (the operator's STOP). `sim.result` returns a run's full recording (replay after display frames
// were dropped, or after a reconnect). `events.ack` is the caller's flow control: the services
// keep at most a few unacknowledged pushes in flight per client and coalesce the rest — beyond a
// bound they drop frames *for display only* and count them (the recording is complete).
//
// Every push crosses the boundary as `{ event: ApiEvent }` on the loopback WebSocket (beside the
// `{ id, result | error }` responses) or on the Electron event channel, and the renderer validates
// it with `apiEventSchema` before using it.

/**
 * A binding spec the console may send: `builtin`, `builtin:assist=<N/m>`, or a policy opened with
 * policies.open, by its id (`policy-<16 hex>`). Never a file path.
 */
export const CONSOLE_BINDING_SPEC_RE = /^builtin(?::assist=(\d{1,7}(?:\.\d{1,6})?))?$/;
export const MAX_ASSIST_N_PER_M = 1e6;

export const bindingSpecSchema = z
  .string()
  .max(64)
  .superRefine((v, ctx) => {
    if (POLICY_ID_RE.test(v)) return;
    const m = CONSOLE_BINDING_SPEC_RE.exec(v);
    if (!m) {
      ctx.addIssue({
        code: 'custom',
        message: `expected "builtin", "builtin:assist=<N/m>" or an opened policy's id (policy-…), got ${JSON.stringify(v.slice(0, 40))}`,
      });
      return;
    }
    if (m[1] !== undefined && Number(m[1]) > MAX_ASSIST_N_PER_M) {
      ctx.addIssue({ code: 'custom', message: `assist must be at most ${MAX_ASSIST_N_PER_M} N/m, got ${m[1]}` });
    }
  });

/** Longest clip stretch a run may be limited to, s (and the smallest). */
export const MAX_RUN_SECONDS = 3600;

export const simRequestSchemas = {
  /**
   * Runs the clip `clipId` (one the services loaded or decoded for this console: clips.load,
   * clips.decode, clips.openDialog) on connection `connectionId` under `binding`. Returns once the
   * run is accepted; frames and the end follow as events to the caller.
   */
  'sim.run': z.strictObject({
    connectionId: connectionIdSchema,
    clipId: z
      .string()
      .min(1)
      .max(64)
      .regex(/^clip-[0-9a-f]+$/, 'not a clip id'),
    binding: bindingSpecSchema,
    seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    /** Run no faster than this multiple of real time (default 1: live); null = as fast as it goes. Embedded simulator only. */
    paceRealTime: z.number().finite().min(0.05).max(1000).nullable().optional(),
    /** Run only the clip's first seconds (default: all of it). */
    maxSeconds: z.number().finite().gt(0).max(MAX_RUN_SECONDS).optional(),
    /**
     * Run even while a real trial or a calibration capture runs in these services (refused
     * otherwise, with `conflict` on this field, when the simulator is on this machine).
     */
    allowDuringRealTrial: z.boolean().optional(),
  }),
  /** Stops one run, or with `all: true` every run in the services (the operator's STOP). */
  'sim.stop': z
    .strictObject({
      runId: runIdSchema.optional(),
      all: z.literal(true).optional(),
      /** Why, for the record (e.g. "operator stop (key:Space)"). */
      reason: z.string().max(200).optional(),
    })
    .refine((p) => (p.runId === undefined) !== (p.all === undefined), {
      message: 'give either runId or all: true',
      path: ['runId'],
    }),
  /** A run's state, its end (once ended) and its full recorded trajectory. */
  'sim.result': z.strictObject({ runId: runIdSchema }),
  /** The caller has processed every push up to and including `seq`. */
  'events.ack': z.strictObject({ seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }),
} as const;

// ---- results -------------------------------------------------------------------------------

export interface SimBindingInfo {
  /** The spec as sent, e.g. `builtin:assist=3000`. */
  spec: string;
  kind: 'builtin' | 'onnx' | 'remote';
  id: string;
  version: string;
  /** A builtin binding's label always says "reference tracker, not a policy". */
  label: string;
  /** Root-assist stiffness, N/m; null without assist. */
  assistNPerM: number | null;
}

export interface SimRunStarted {
  runId: string;
  connectionId: string;
  clipId: string;
  binding: SimBindingInfo;
  seed: number;
  paceRealTime: number | null;
  /** The clip stretch that runs, s (the whole clip's duration, or maxSeconds when shorter). */
  durationS: number;
  /** Frames on the 50 Hz timeline the run will record if it runs to the end. */
  plannedFrames: number;
}

export type SimRunState = 'starting' | 'running' | 'ended';

/** A run's recording. */
export type SimTrajectoryDto = ExecutedTrajectoryDto;

export interface SimRunResult {
  runId: string;
  state: SimRunState;
  started: SimRunStarted;
  end: SimEndEvent | null;
  trajectory: SimTrajectoryDto;
}

// ---- events (server → client) --------------------------------------------------------------

const finite = z.number().finite();
const num = finite;

export const readingSchema = <T extends z.ZodType>(value: T) =>
  z.union([
    z.strictObject({ available: z.literal(true), value }),
    z.strictObject({ available: z.literal(false), reason: z.string() }),
  ]);

export const hardFailureSchema = z.strictObject({
  frame: z.number().int().min(0),
  timeS: num,
  condition: z.enum(['root_height', 'root_orientation', 'end_effector_height']),
  body: z.string(),
  error: num,
  threshold: num,
});

export const episodeMetricsSchema = z.strictObject({
  contract: z.string(),
  K: z.number().int().min(0),
  failure: readingSchema(hardFailureSchema.nullable()),
  progressSoft: readingSchema(num),
  progressStop: readingSchema(
    z
      .strictObject({ frame: z.number().int(), cause: z.enum(['hard_failure', 'drift_xy', 'drift_heading']) })
      .nullable(),
  ),
  mpjpeLMm: readingSchema(num),
  jointPosRmseRad: readingSchema(num),
  jointVelRmseRadS: readingSchema(num),
  jointAccRmsRadS2: readingSchema(num),
  jointAccP95RadS2: readingSchema(num),
  jointJerkRmsRadS3: readingSchema(num),
  jointJerkP95RadS3: readingSchema(num),
});

export const simEndEventSchema = z.strictObject({
  type: z.literal('sim.end'),
  seq: z.number().int().min(0),
  runId: runIdSchema,
  outcome: z.enum(EPISODE_OUTCOMES),
  reason: z.string(),
  /** Frames recorded. */
  frames: z.number().int().min(0),
  plannedFrames: z.number().int().min(0),
  simSeconds: num,
  wallSeconds: num,
  /** sha256 of the recorded trajectory (embedded simulator); null where the backend gives none. */
  trajectorySha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  /** The streaming detector's first hard failure (frames 0..K−2), or null. */
  failure: hardFailureSchema.nullable(),
  /**
   * The reference's vertical lift for this run, m: the clip as placed on the floor (a simulator's
   * floor solve on its first frame; 0 from a robot). The readings are against the placed reference
   * (docs/METRICS.md), so `motionbench metrics --reference-lift` with this value reproduces them.
   */
  referenceLiftM: num,
  /** Batch mb-metrics/1 readings of the recording against the reference as placed (the `motionbench metrics` numbers). */
  metrics: episodeMetricsSchema,
  /** Frames of this run not sent to this client for display; when > 0, sim.result has them all. */
  droppedFrames: z.number().int().min(0),
  /** Wall-clock ms (services) when a stop was requested; null without one. */
  stopRequestedAtMs: z.number().nullable(),
});

export const apiEventSchema = z.discriminatedUnion('type', [
  liveFramesEventSchema,
  simEndEventSchema,
  qualificationProgressEventSchema,
  ...trialEventSchemas,
]);

export type SimEndEvent = z.infer<typeof simEndEventSchema>;
export type ApiEvent = z.infer<typeof apiEventSchema>;
export type SimEpisodeMetricsDto = z.infer<typeof episodeMetricsSchema>;

/** Validates one pushed event; the reason names the first offending field. */
export function parseApiEvent(value: unknown): { ok: true; event: ApiEvent } | { ok: false; reason: string } {
  const r = apiEventSchema.safeParse(value);
  if (r.success) return { ok: true, event: r.data };
  const issue = r.error.issues[0];
  return {
    ok: false,
    reason: `${(issue?.path ?? []).map(String).join('.') || '(event)'}: ${issue?.message ?? 'invalid'}`,
  };
}

/** Pushes a client may leave unacknowledged before the services hold back (coalesce) frames. */
export const MAX_UNACKED_PUSHES = 4;
/** Display frames the services hold per client and run while it is behind; older ones are dropped and counted. */
export const MAX_PENDING_DISPLAY_S = 5;
