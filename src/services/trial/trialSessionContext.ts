import type { BackendCapabilities, BackendLease, EpisodeEnd } from '../../domain/backend/backend';
import type { EpisodeMetrics } from '../../domain/metrics';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { CalibrationRecord, ParentTraceRecord } from '../../domain/trace/records';
import type { RequestEffect, TrialSessionEvent } from '../../domain/trial';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { EpisodeRecorder } from '../trace/episodeRecorder';
import type { AdmittedPair } from './admittedPairs';
import type { GateDriver } from './gateDriver';
import type { LiveTrial } from './liveTrial';
import type { PoseWatch } from './poseWatch';
import type { MatchedPairRequest, TrialProgressEvent } from './trialTypes';

// What the matched-trial driver's effect handlers reach: the request, the resolved pair, what the
// session holds between effects (the gate, the clip, the lease, the running trial's recording…)
// and the driver's own entries into the reducer (the robot's start checks while a trial runs).
// The reducer decides the order; a handler that finds a part missing throws, naming it.

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The running real trial's recording, as the frame listener and the end of the trial see it. */
export interface TrialIo {
  runId: string;
  recording: { rec: EpisodeRecorder; live: LiveTrial } | null;
  /** A frame or event write of the open recording failed (the session re-throws it). */
  recordError: unknown;
  failureRecorded: boolean;
  /** How the robot's run ended (or the infrastructure error its rejection stands for). */
  end: EpisodeEnd | null;
}

export interface HeldLease {
  runId: string;
  lease: BackendLease;
  caps: BackendCapabilities;
}

function need<T>(v: T | null, what: string): T {
  if (v === null) throw new Error(`trial session: ${what} is not there (the reducer asked out of order)`);
  return v;
}

/** The parts a handler may require, with the names an out-of-order request reports. */
const PART_NAMES = {
  gate: 'the gate',
  binding: 'the binding',
  clip: 'the clip',
  pairCal: 'the pair calibration',
  lease: 'the lease',
  io: 'the trial',
} as const;

/** What one session holds between its effects; `need` throws when a part is not there yet. */
export class SessionHoldings {
  gate: GateDriver | null = null;
  binding: WbcBinding | null = null;
  clip: MotionClip | null = null;
  /** The pair's calibration: bound to the clip (before it is stored), then the stored one. */
  pairCal: CalibrationRecord | null = null;
  /** The last fresh capture of a trial, until the trial opens. */
  fresh: { runId: string; record: CalibrationRecord; capturedAtMs: number } | null = null;
  lease: HeldLease | null = null;
  io: TrialIo | null = null;
  /** Metrics of the pair's episodes by run id (this session's and the stored ones). */
  readonly metrics = new Map<string, EpisodeMetrics | null>();

  /** The part, which the reducer's order guarantees is there by now. */
  need<K extends keyof typeof PART_NAMES>(part: K): NonNullable<SessionHoldings[K]> {
    return need(this[part] as NonNullable<SessionHoldings[K]> | null, PART_NAMES[part]);
  }
  /** The running trial's open recording. */
  recording(): NonNullable<TrialIo['recording']> {
    return need(this.need('io').recording, 'the recording');
  }
  /** How the running trial's run ended. */
  runEnd(): EpisodeEnd {
    return need(this.need('io').end, 'the end of the run');
  }
  /** Takes the trial's fresh capture (it is stored once, when the trial opens). */
  takeFresh(): NonNullable<SessionHoldings['fresh']> {
    const fresh = need(this.fresh, 'the fresh calibration');
    this.fresh = null;
    return fresh;
  }
}

export interface TrialSessionContext {
  readonly req: MatchedPairRequest;
  readonly pair: AdmittedPair;
  /** The pair's qualification parent trace. */
  readonly qual: ParentTraceRecord;
  readonly held: SessionHoldings;
  /** The robot's newest measured pose, watched around a reset prompt and a start-pose capture. */
  readonly pose: PoseWatch;
  /** Progress to the caller; a throwing listener is logged, never propagated. */
  progress(e: TrialProgressEvent): void;
  /** The matched parent trace the reducer opened (simulating or trials). */
  matchedId(): string;
  /** The pair's calibration id as the reducer holds it (simulating or trials). */
  calibrationId(): string;
  /** RunRequest.beforeStart of the running trial: the gate and the reducer answer `start`. */
  beforeStart(runId: string): Promise<true | string>;
  /** RunRequest.mayTransmit of the running trial: synchronous, right before the write. */
  mayTransmit(runId: string): true | string;
}

/** One request effect's handler: resolves with the session's next event. */
export type RequestHandler<K extends RequestEffect['type']> = (
  ctx: TrialSessionContext,
  fx: Extract<RequestEffect, { type: K }>,
) => TrialSessionEvent | Promise<TrialSessionEvent>;

/** Handlers for the request effects named in K, one each. */
export type RequestHandlers<K extends RequestEffect['type']> = { readonly [T in K]: RequestHandler<T> };
