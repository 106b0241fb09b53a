import { z } from 'zod';
import { G1_NUM_JOINTS } from '../domain/robot/g1Joints';

// The live pose stream of the console API: one push type, `live.frames`, for every pose the
// services stream to a client, one stream per connection and run:
//   sim_run     a simulation run this client started (sim.run): every executed frame, contiguous
//               from `firstFrame`, ~15 batches a second, with the streaming mb-metrics/1 readings;
//               its end arrives as `sim.end`
//   trial_job   the running real trial of a trial job: the runner's 50 Hz readings, each with the
//               robot's latest measured pose, ~15 batches a second; its phases arrive as
//               `trial.progress`
//   robot_idle  a connected robot outside trials: its newest measured pose, ~15 a second while new
//               frames arrive; `ended` once it stops (a trial leased it, it disconnected)
// Columns are frame-major: row i of a count×N column is values [N·i, N·i + N). Joint angles are in
// the canonical Unitree G1 order, the one list src/domain/robot/g1Joints.ts (G1_JOINT_NAMES)
// declares. A client that falls behind gets rows skipped for display (counted in droppedFrames),
// never queued: the recordings themselves are complete (sim.result, the trial's campaign).

/** What streams on a connection. */
export const LIVE_SOURCES = ['sim_run', 'trial_job', 'robot_idle'] as const;
export type LiveSource = (typeof LIVE_SOURCES)[number];

/** Joint angles per row of `jointPosRad`: G1_JOINT_NAMES, in that order. */
export const LIVE_JOINTS = G1_NUM_JOINTS;

const finite = z.number().finite();
const nullableFinite = finite.nullable();
const connectionIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9-]+$/, 'not a connection id');
const runIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\w.:-]+$/, 'not a run id');

/** The live readings of each row (streaming mb-metrics/1 for a simulation run, the trial runner's for a real trial). */
export const liveReadingsSchema = z.strictObject({
  /** MPJPE-l of the frame, mm; null where the source gives none. */
  mpjpeLMm: z.array(nullableFinite),
  /** RMS joint-angle error of the frame, rad; null where the source gives none. */
  jointRmseRad: z.array(nullableFinite),
  /** sim_run: the first hard-failure frame so far, −1 none, null unknown; null from a trial. */
  firstFailureFrame: z.array(z.number().int().nullable()).nullable(),
  /** trial_job: the runner flagged the frame failed; null from a simulation run. */
  failed: z.array(z.boolean()).nullable(),
  /** trial_job: the first failure, once one tripped ("root_height of pelvis at frame 123 …"). */
  failure: z.string().nullable(),
});
export type LiveReadings = z.infer<typeof liveReadingsSchema>;

/** Rows of one column of a count-row batch, by the width of its rows. */
function rows(values: readonly unknown[] | null, width: number, count: number): string | null {
  if (values === null || values.length === width * count) return null;
  return `has ${values.length} values, expected ${count}×${width}`;
}

/**
 * One batch of a connection's live stream: `count` rows of pose (and readings), the rows since the
 * stream's previous batch to this client.
 */
export const liveFramesEventSchema = z
  .strictObject({
    type: z.literal('live.frames'),
    seq: z.number().int().min(0),
    source: z.enum(LIVE_SOURCES),
    connectionId: connectionIdSchema,
    /** The run streaming (sim_run, trial_job); null for the robot's idle live pose. */
    runId: runIdSchema.nullable(),
    /** The trial job (trial_job); null otherwise. */
    jobId: z.string().min(1).max(64).nullable(),
    count: z.number().int().min(0).max(100_000),
    /** sim_run: the rows are the run's frames firstFrame, firstFrame + 1, …; null with a `frame` column. */
    firstFrame: z.number().int().min(0).nullable(),
    /**
     * Each row's index when not contiguous: trial_job, the frame on the 50 Hz contract timeline;
     * robot_idle, the robot's lowstate tick. Null with `firstFrame`.
     */
    frame: z.array(z.number().int().min(0)).nullable(),
    /** Each row's time, s: a run's clip time (frame / 50 Hz); robot_idle, the services' clock when the frame arrived. */
    timeS: z.array(finite),
    /** count×29, rad, the canonical Unitree G1 order (G1_JOINT_NAMES in src/domain/robot/g1Joints.ts). */
    jointPosRad: z.array(finite),
    /** count×3, world frame, m; null when the source measures no global root (drawn at the reference root). */
    rootPosM: z.array(finite).nullable(),
    /** count×4, w x y z; null when unknown. From a robot without motion capture: the IMU attitude. */
    rootQuatWxyz: z.array(finite).nullable(),
    /** Null for the robot's idle live pose (no reference to read against). */
    readings: liveReadingsSchema.nullable(),
    /** Rows of this stream not sent to this client for display so far (it fell behind). */
    droppedFrames: z.number().int().min(0),
    /** The stream ends with this batch (robot_idle: the robot left the idle set); count may then be 0. */
    ended: z.boolean(),
  })
  .superRefine((e, ctx) => {
    const issue = (path: string, message: string): void => {
      ctx.addIssue({ code: 'custom', path: [path], message });
    };
    const n = e.count;
    if (n === 0 && !e.ended) issue('count', 'a batch without rows must end the stream');
    if ((e.runId === null) !== (e.source === 'robot_idle'))
      issue('runId', e.source === 'robot_idle' ? 'the idle live pose has no run' : `a ${e.source} names its run`);
    if ((e.jobId !== null) !== (e.source === 'trial_job'))
      issue('jobId', e.source === 'trial_job' ? 'a trial_job names its job' : `a ${e.source} has no job`);
    if ((e.firstFrame === null) === (e.frame === null)) issue('firstFrame', 'give either firstFrame or a frame column');
    if ((e.source === 'sim_run') !== (e.firstFrame !== null))
      issue(
        'firstFrame',
        e.source === 'sim_run' ? 'a sim_run is contiguous from firstFrame' : 'rows carry a frame column',
      );
    if ((e.readings === null) !== (e.source === 'robot_idle'))
      issue(
        'readings',
        e.source === 'robot_idle' ? 'the idle live pose has no readings' : 'a run carries its readings',
      );
    const columns: [string, readonly unknown[] | null, number][] = [
      ['frame', e.frame, 1],
      ['timeS', e.timeS, 1],
      ['jointPosRad', e.jointPosRad, LIVE_JOINTS],
      ['rootPosM', e.rootPosM, 3],
      ['rootQuatWxyz', e.rootQuatWxyz, 4],
    ];
    const r = e.readings;
    if (r)
      columns.push(
        ['readings.mpjpeLMm', r.mpjpeLMm, 1],
        ['readings.jointRmseRad', r.jointRmseRad, 1],
        ['readings.firstFailureFrame', r.firstFailureFrame, 1],
        ['readings.failed', r.failed, 1],
      );
    for (const [name, values, width] of columns) {
      const wrong = rows(values, width, n);
      if (wrong) ctx.addIssue({ code: 'custom', path: name.split('.'), message: wrong });
    }
  });
export type LiveFramesEvent = z.infer<typeof liveFramesEventSchema>;
/** A batch of one source's stream. */
export type LiveFramesOf<S extends LiveSource> = LiveFramesEvent & { source: S };

/** How often the services send a batch of each live stream (sim_run, trial_job, robot_idle) to each client, Hz. */
export const PUSH_RATE_HZ = 15;
