import { z } from 'zod';
import { connectionIdSchema, idSchema, runIdSchema } from './idSchemas';
import type { ClipDto, ExecutedTrajectoryDto } from './clipDto';
import { EPISODE_OUTCOMES } from '../domain/episode/episodeOutcome';
import type { AdmittedPair } from '../domain/trial/admittedPair';
import {
  MOTION_SWITCHER_ANSWER_KINDS,
  RUNNER_MOTOR_MODES,
  WBC_STATES,
  type MotionSwitcherAnswerKind,
  type RunnerMotorMode,
  type WbcState,
} from '../domain/bridge/g1BridgeContract';
import { campaignDirSchema } from './qualificationContract';

// The real-robot part of the console API (DESIGN §6, §8): the serial interlock
// (interlock.*), the initial-state calibration (calibration.*) and the matched sim/real trials
// (trial.*) of the Trial runner and Calibration panels.
//
// Pushes (server → client, validated in the renderer like every ApiEvent):
//   safety.status          5 Hz while an interlock is open or a robot is connected: interlock
//                          state and age of its last status, each robot link's age — the lights
//   calibration.stillness  a few Hz during a capture: the hold-still meter
//   trial.progress         every phase change, refusal, trip, episode end and prompt answer, with
//                          the job's whole status (the panel replaces what it shows)
//   trial.prompt           the runner asks the operator (confirm a trial, confirm a reset)
//
// The running real trial's 50 Hz readings and the robot's measured pose, and the live robot
// outside trials, stream as `live.frames` (liveContract.ts, sources trial_job and robot_idle).
//
// (No import from simContract.ts: it imports the event schemas from here.)

const finite = z.number().finite();
const trialJobIdSchema = idSchema(/^trial-[a-z0-9-]+$/, 'not a trial job id');
const captureIdSchema = idSchema(/^capture-[a-z0-9-]+$/, 'not a capture id');
const promptIdSchema = idSchema(/^prompt-[a-z0-9-]+$/, 'not a prompt id');
/** A pair id is a parent trace id or a unique prefix of one (as `motionbench trial --pair`). */
const pairIdSchema = z
  .string()
  .min(4)
  .max(128)
  .regex(/^[\w.:-]+$/, 'not a pair id');
const calibrationIdSchema = z
  .string()
  .min(4)
  .max(64)
  .regex(/^cal-[0-9a-f]+$/, 'not a calibration id');
const clipRefSchema = idSchema(/^[\w.:-]+$/, 'not a clip id or name', 128);

/** A serial device on the services' machine: an absolute path (/dev/ttyUSB0, a pty link) or COMn. */
export const serialDevicePathSchema = z
  .string()
  .min(1)
  .max(1024)
  .refine((v) => !v.includes('\0'), 'contains a NUL character')
  .refine(
    (v) => v.startsWith('/') || /^COM[0-9]{1,3}$/i.test(v),
    'must be an absolute device path (e.g. /dev/ttyUSB0) or COMn',
  );

/** Real trials per pair the console may ask for (3 = DESIGN §1). */
export const MAX_TRIALS_PER_PAIR = 10;
/** Longest a capture waits for a still window, s. */
export const MAX_CAPTURE_WAIT_S = 120;
/** An operator's note on a reset or a confirmation. */
export const MAX_NOTE_CHARS = 500;

export const trialRequestSchemas = {
  /** Serial ports on the services' machine (guarded: never SerialPort.list() without udev). */
  'interlock.list': z.strictObject({}),
  /** Opens the interlock box on `path` (one per console; a second open is refused until interlock.close). */
  'interlock.open': z.strictObject({ path: serialDevicePathSchema }),
  /** Closes the box (DISARM first; a trip if it was armed). */
  'interlock.close': z.strictObject({}),
  /** Sends ARM; answers once the box reports ARMED, or with the refusal reason. */
  'interlock.arm': z.strictObject({}),
  'interlock.disarm': z.strictObject({}),
  /** The interlock's status now (the same figures as the safety.status push); null when none is open. */
  'interlock.status': z.strictObject({}),
  /**
   * Waits for the robot on `connectionId` to hold still, averages its start configuration and
   * answers with the record and its residuals vs the clip's first frame (`clipId`, core-v1 id or
   * name, or a clip the console loaded). Nothing is stored until calibration.accept.
   */
  'calibration.capture': z.strictObject({
    connectionId: connectionIdSchema,
    campaignDir: campaignDirSchema,
    clipId: clipRefSchema.optional(),
    /** Give up after this long without a still window, s (default 20). */
    timeoutS: z.number().finite().gt(0).max(MAX_CAPTURE_WAIT_S).optional(),
  }),
  /** Stores a captured record in its campaign (putCalibration) → the calibration id for trial.start. */
  'calibration.accept': z.strictObject({ captureId: captureIdSchema }),
  /** Abandons a capture that is waiting for stillness (the STOP does it too). */
  'calibration.cancel': z.strictObject({}),
  /** Qualification pairs admitted under the current contract, with how far their matched pair has got. */
  'trial.queue': z.strictObject({
    campaignDir: campaignDirSchema,
    trials: z.number().int().min(1).max(MAX_TRIALS_PER_PAIR).optional(),
  }),
  /**
   * Starts the matched pair `pairId` (simulation branch + `trials` real trials) on the robot
   * `connectionId`, with the interlock this console has open. Returns at once; progress,
   * prompts and live readings follow as pushes.
   */
  'trial.start': z.strictObject({
    campaignDir: campaignDirSchema,
    pairId: pairIdSchema,
    connectionId: connectionIdSchema,
    calibrationId: calibrationIdSchema.optional(),
    trials: z.number().int().min(1).max(MAX_TRIALS_PER_PAIR).optional(),
  }),
  /** The operator's answer to a prompt (confirm a trial: ok; confirm a reset: ok + who/what in note). */
  'trial.confirm': z.strictObject({
    jobId: trialJobIdSchema,
    promptId: promptIdSchema,
    ok: z.boolean(),
    note: z.string().max(MAX_NOTE_CHARS).optional(),
  }),
  /**
   * Operator stop of one job or of all (STOP, Space, Escape): the running trial ends as
   * aborted_by_operator (`intervention: true`: the operator intervened physically), stop + damp go out at once.
   */
  'trial.stop': z
    .strictObject({
      jobId: trialJobIdSchema.optional(),
      all: z.literal(true).optional(),
      intervention: z.boolean().optional(),
      reason: z.string().max(200).optional(),
    })
    .refine((p) => (p.jobId === undefined) !== (p.all === undefined), {
      message: 'give either jobId or all: true',
      path: ['jobId'],
    }),
  /** A job's status; without jobId the most recent job. */
  'trial.status': z.strictObject({ jobId: trialJobIdSchema.optional() }),
  /** One recorded episode of a campaign (the sim branch for the overlay, a real trial for replay). */
  'trial.episode': z.strictObject({ campaignDir: campaignDirSchema, runId: runIdSchema }),
  /**
   * The robot emulator's human reset (`/emulator/control` human_reset): stands the robot up at its
   * start pose. Refused unless the connection declares the emulator's control channel
   * (robot.emulatorControl); a real robot is put back by a person.
   */
  'robot.emulatorReset': z.strictObject({ connectionId: connectionIdSchema }),
} as const;

// ---- results -------------------------------------------------------------------------------

/** The interlock as the lights show it: SAFE / ARMED / ESTOP / LOST, or CLOSED without a box. */
export type InterlockLight = 'SAFE' | 'ARMED' | 'ESTOP' | 'LOST' | 'CLOSED';

export interface SerialPortDto {
  path: string;
  manufacturer?: string;
  serialNumber?: string;
  vendorId?: string;
  productId?: string;
  pnpId?: string;
}

export interface InterlockListDto {
  ports: SerialPortDto[];
  method: 'serialport' | 'dev-scan';
  note: string | null;
}

export interface TrialStartResult {
  status: TrialJobStatus;
  /** The pair's reference clip (the viewport shows it as the clip on display); null when not in core-v1. */
  reference: ClipDto | null;
}

export interface TrialEpisodeDto {
  runId: string;
  executionDomain: 'simulation' | 'real_robot';
  outcome: string | null;
  /** The executed trajectory at 50 Hz (frame-major); rootPosM null without a global root. */
  executed: ExecutedTrajectoryDto;
}

/** One decided qualification pair of the queue, as the services list it. */
export type AdmittedPairDto = AdmittedPair;

export interface TrialQueueDto {
  campaignDir: string;
  trials: number;
  pairs: AdmittedPairDto[];
}

// ---- events and the shapes they share (zod: the renderer validates every push) -------------

const nullableFinite = finite.nullable();

export const interlockStatusSchema = z.strictObject({
  path: z.string(),
  open: z.boolean(),
  /** The console's view (InterlockMonitor): disconnected | safe | armed | estop | lost. */
  state: z.enum(['disconnected', 'safe', 'armed', 'estop', 'lost']),
  light: z.enum(['SAFE', 'ARMED', 'ESTOP', 'LOST', 'CLOSED']),
  /** What the box last said in a counted status. */
  deviceState: z.enum(['SAFE', 'ARMED', 'ESTOP']).nullable(),
  /** Armed by this console and the last ARMED status fresh: what the safety gate asks. */
  armedAndFresh: z.boolean(),
  armPending: z.boolean(),
  disarmPending: z.boolean(),
  /** ms since the last counted status; null before the first. */
  lastStatusAgeMs: nullableFinite,
  rttMs: nullableFinite,
  /** The largest gap between counted statuses over the last TIMING_WINDOW_MS (5 s), ms; null before one. */
  statusGapMaxMs: nullableFinite,
  lastTrip: z.strictObject({ reason: z.string(), detail: z.string(), agoMs: finite }).nullable(),
  lastEvent: z.strictObject({ event: z.string(), agoMs: finite }).nullable(),
  garbageLines: z.number().int().min(0),
  trips: z.number().int().min(0),
});
export type InterlockStatusDto = z.infer<typeof interlockStatusSchema>;

export const robotLinkStatusSchema = z.strictObject({
  connectionId: z.string(),
  name: z.string(),
  presence: z.enum(['disconnected', 'connecting', 'present', 'stale', 'lost']),
  lastFrameAgeMs: nullableFinite,
  rateHz: nullableFinite,
  latencyMs: nullableFinite,
  /** Last frame younger than the robot-link limit (50 ms): the only state the link light shows green. */
  fresh: z.boolean(),
  freshLimitMs: finite,
  /** A global root is measured (motion capture); otherwise the live robot is drawn at the reference root. */
  globalRoot: z.boolean(),
  /** The robot controller's last /g1/wbc_status; null before the first. */
  wbc: z
    .strictObject({
      state: z.enum(WBC_STATES as [WbcState, ...WbcState[]]),
      reason: z.string().max(500).nullable(),
    })
    .nullable(),
  /**
   * The robot-side runner's own state (wbc_status.runner, `motionbench g1-runner`): its motor mode,
   * measured LowCmd rate, CRC errors, the remote's stop, the age of its last DDS lowstate. Null
   * when the link's server is not a runner (a simulator, the robot emulator) or before its first status.
   */
  runner: z
    .strictObject({
      mode: z.enum(RUNNER_MOTOR_MODES as [RunnerMotorMode, ...RunnerMotorMode[]]),
      lowcmdHz: nullableFinite,
      lowcmdPeriodP99Ms: nullableFinite,
      crcErrors: z.number().int().min(0),
      remoteStopHeld: z.boolean(),
      lowstateAgeMs: nullableFinite,
      interface: z.string().max(64),
      domain: z.number().int().min(0),
      /** The motion switcher's last answer to the runner's CheckMode (asked at prepare); null before one. */
      motionSwitcher: z
        .strictObject({
          answer: z.enum(MOTION_SWITCHER_ANSWER_KINDS as [MotionSwitcherAnswerKind, ...MotionSwitcherAnswerKind[]]),
          mode: z.string().max(64).nullable(),
          allowed: z.boolean(),
          detail: z.string().max(500),
        })
        .nullable()
        .optional(),
    })
    .nullable()
    .optional(),
  /** Angle of the IMU's up axis from the world's, rad (from lowstate imu.quat_wxyz); null before a frame. */
  tiltRad: nullableFinite,
  /** The largest gap between lowstate deliveries over the last TIMING_WINDOW_MS (5 s), ms. */
  frameGapMaxMs: nullableFinite,
  /** The link declares the robot emulator's control channel: robot.emulatorReset is offered. */
  emulatorControl: z.boolean(),
});
export type RobotLinkStatusDto = z.infer<typeof robotLinkStatusSchema>;

export const safetyStatusEventSchema = z.strictObject({
  type: z.literal('safety.status'),
  seq: z.number().int().min(0),
  atMs: finite,
  interlock: interlockStatusSchema.nullable(),
  robots: z.array(robotLinkStatusSchema),
  /** The services' host scheduler (src/domain/timing/timingHealth.ts SchedulerFacts). */
  host: z.strictObject({ kernelAutogroups: z.boolean().nullable() }),
});
export type SafetyStatusEvent = z.infer<typeof safetyStatusEventSchema>;

const notStillReasonSchema = z.object({ code: z.string(), message: z.string(), joint: z.string().optional() });
/** StillnessStats (src/domain/calibration/stillness.ts): all numbers. */
const stillnessStatsSchema = z.record(z.string(), z.number());

export const stillnessSchema = z.strictObject({
  still: z.boolean(),
  windowFilledS: finite,
  windowNeededS: finite,
  reasons: z.array(notStillReasonSchema),
  stats: stillnessStatsSchema.nullable(),
});
export type StillnessDto = z.infer<typeof stillnessSchema>;

export const calibrationStillnessEventSchema = z.strictObject({
  type: z.literal('calibration.stillness'),
  seq: z.number().int().min(0),
  captureId: z.string(),
  connectionId: z.string(),
  progress: stillnessSchema,
});
export type CalibrationStillnessEvent = z.infer<typeof calibrationStillnessEventSchema>;

/** StartResiduals (src/domain/calibration/residuals.ts). */
export const startResidualsSchema = z.strictObject({
  jointRad: z.array(finite),
  maxAbsJointRad: finite,
  maxAbsJoint: z.string(),
  rmsJointRad: finite,
  rollRad: finite,
  pitchRad: finite,
  headingRad: nullableFinite,
  rootPosM: z.tuple([finite, finite, finite]).nullable(),
});
export type StartResidualsDto = z.infer<typeof startResidualsSchema>;

export type CalibrationCaptureDto =
  | {
      ok: true;
      captureId: string;
      connectionId: string;
      campaignDir: string;
      robotUnit: string;
      capturedAt: string;
      clip: { id: string; name: string } | null;
      /** The record calibration.accept stores (CalibrationRecord, JSON). */
      record: Record<string, unknown>;
      /** Measurement vs the clip's first frame; null without a clip. */
      residualsVsClip: StartResidualsDto | null;
      /** The clip's first-frame joint angles, rad (for the table); null without a clip. */
      clipStartJointRad: number[] | null;
      /** The measured start joint angles, rad. */
      measuredJointRad: number[];
      stats: Record<string, number>;
    }
  | {
      ok: false;
      captureId: string;
      message: string;
      reasons: { code: string; message: string; joint?: string }[];
      stats: Record<string, number> | null;
    };

export interface CalibrationAcceptResult {
  calibrationId: string;
  campaignDir: string;
  captureId: string;
}

export const TRIAL_PHASES = [
  'calibrating',
  'simulating',
  'waiting_reset',
  'checking_calibration',
  'waiting_confirmation',
  'running',
  'done',
  'stopped',
] as const;

export const trialPromptSchema = z.strictObject({
  promptId: z.string(),
  kind: z.enum(['confirm_trial', 'confirm_reset']),
  askedAtMs: finite,
  /** confirm_trial: what the operator confirms. */
  trial: z
    .strictObject({
      pairId: z.string(),
      runId: z.string(),
      trialIndex: z.number().int(),
      trials: z.number().int(),
      clipName: z.string(),
      binding: z.string(),
      bindingName: z.string(),
      calibrationCheck: z.strictObject({ maxJointDiffRad: finite, attitudeDiffRad: finite }),
    })
    .nullable(),
  /** confirm_reset: which trial follows the reset, and why one is needed. */
  reset: z
    .strictObject({
      trialIndex: z.number().int(),
      afterOutcome: z.enum(EPISODE_OUTCOMES).nullable(),
      tripped: z.boolean(),
    })
    .nullable(),
});
export type TrialPromptDto = z.infer<typeof trialPromptSchema>;

const refusalSchema = z.strictObject({ code: z.string(), condition: z.string(), message: z.string() });

export const trialEpisodeEndSchema = z.strictObject({
  runId: z.string(),
  domain: z.enum(['simulation', 'real_robot']),
  trialIndex: z.number().int().nullable(),
  outcome: z.enum(EPISODE_OUTCOMES),
  reason: z.string(),
  frames: z.number().int().min(0),
  /** Ended in an earlier session of this matched pair (listed again when the session resumes). */
  resumed: z.boolean(),
});

export const trialJobStatusSchema = z.strictObject({
  jobId: z.string(),
  campaignDir: z.string(),
  pairId: z.string(),
  connectionId: z.string(),
  calibrationId: z.string().nullable(),
  trials: z.number().int(),
  state: z.enum(['running', 'completed', 'stopped', 'failed']),
  phase: z.enum(TRIAL_PHASES).nullable(),
  phaseMessage: z.string(),
  trialIndex: z.number().int().nullable(),
  clip: z.strictObject({ id: z.string(), name: z.string() }).nullable(),
  binding: z.string().nullable(),
  /** The binding's name (as AdmittedPairDto.bindingName). */
  bindingName: z.string().nullable(),
  prompt: trialPromptSchema.nullable(),
  /** The last refusal of the safety gate, reasons verbatim. */
  refusals: z.array(refusalSchema),
  lastTrip: z.strictObject({ cause: z.string(), reason: z.string(), outcome: z.enum(EPISODE_OUTCOMES) }).nullable(),
  episodes: z.array(trialEpisodeEndSchema),
  /** The real trial running now (its live readings arrive as live.frames of source trial_job). */
  liveRunId: z.string().nullable(),
  stopRequested: z.strictObject({ atMs: finite, intervention: z.boolean(), reason: z.string() }).nullable(),
  result: z
    .strictObject({
      parentTraceId: z.string(),
      calibrationId: z.string(),
      sim: z.strictObject({ runId: z.string(), outcome: z.string(), resumed: z.boolean(), mpjpeLMm: nullableFinite }),
      real: z.array(
        z.strictObject({
          runId: z.string(),
          trialIndex: z.number().int(),
          outcome: z.string(),
          reason: z.string(),
          frames: z.number().int(),
          resumed: z.boolean(),
          mpjpeLMm: nullableFinite,
        }),
      ),
      remaining: z.number().int(),
      stoppedEarly: z.string().nullable(),
    })
    .nullable(),
  error: z.string().nullable(),
  startedAtMs: finite,
  endedAtMs: nullableFinite,
});
export type TrialJobStatus = z.infer<typeof trialJobStatusSchema>;
export type TrialJobState = TrialJobStatus['state'];
export type TrialPhaseDto = (typeof TRIAL_PHASES)[number];

/** What happened (the runner's TrialProgressEvent without the 50 Hz `live` and the `stillness` ones). */
export const trialProgressDetailSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('phase'),
    phase: z.enum(TRIAL_PHASES),
    trialIndex: z.number().int().nullable(),
    message: z.string(),
  }),
  z.strictObject({ type: z.literal('refusal'), runId: z.string().nullable(), reasons: z.array(refusalSchema) }),
  z.strictObject({
    type: z.literal('trip'),
    cause: z.string(),
    reason: z.string(),
    outcome: z.enum(EPISODE_OUTCOMES),
    runId: z.string().nullable(),
  }),
  trialEpisodeEndSchema.extend({ type: z.literal('episode_end') }).strict(),
  z.strictObject({ type: z.literal('prompt_answered'), promptId: z.string(), ok: z.boolean() }),
  z.strictObject({ type: z.literal('ended'), state: z.enum(['completed', 'stopped', 'failed']), message: z.string() }),
]);
export type TrialProgressDetail = z.infer<typeof trialProgressDetailSchema>;

export const trialProgressEventSchema = z.strictObject({
  type: z.literal('trial.progress'),
  seq: z.number().int().min(0),
  jobId: z.string(),
  status: trialJobStatusSchema,
  detail: trialProgressDetailSchema.nullable(),
});
export type TrialProgressPush = z.infer<typeof trialProgressEventSchema>;

export const trialPromptEventSchema = z.strictObject({
  type: z.literal('trial.prompt'),
  seq: z.number().int().min(0),
  jobId: z.string(),
  prompt: trialPromptSchema,
});
export type TrialPromptEvent = z.infer<typeof trialPromptEventSchema>;

/** Every push this file defines (simContract.ts joins them into apiEventSchema). */
export const trialEventSchemas = [
  safetyStatusEventSchema,
  calibrationStillnessEventSchema,
  trialProgressEventSchema,
  trialPromptEventSchema,
] as const;
export type TrialApiEvent = SafetyStatusEvent | CalibrationStillnessEvent | TrialProgressPush | TrialPromptEvent;

export interface TrialResults {
  'interlock.list': InterlockListDto;
  'interlock.open': InterlockStatusDto;
  'interlock.close': { closed: string | null };
  'interlock.arm': { ok: boolean; reason: string | null; detail: string | null; status: InterlockStatusDto };
  'interlock.disarm': { ok: boolean; reason: string | null; detail: string | null; status: InterlockStatusDto };
  'interlock.status': InterlockStatusDto | null;
  'calibration.capture': CalibrationCaptureDto;
  'calibration.accept': CalibrationAcceptResult;
  'calibration.cancel': { cancelled: string[] };
  'trial.queue': TrialQueueDto;
  'trial.start': TrialStartResult;
  'trial.confirm': { answered: string };
  'trial.stop': { stopped: string[] };
  'trial.status': TrialJobStatus | null;
  'trial.episode': TrialEpisodeDto;
  'robot.emulatorReset': { ok: boolean; message: string };
}

/** Robot-link freshness limit for the lights, ms (DESIGN §6: last lowstate < 50 ms old). */
export const ROBOT_LINK_FRESH_MS = 50;
/** safety.status push rate, Hz. */
export const SAFETY_STATUS_HZ = 5;
