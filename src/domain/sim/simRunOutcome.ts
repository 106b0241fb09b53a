import type { EpisodeEnd, EpisodeOutcome } from '../backend/backend';

// How a console simulation run ended, from what the backend and the run's own record say. The
// backend's end is taken as given, except that a run that recorded no frame cannot have tracked
// the clip: a `completed` end with 0 frames is an infrastructure_error (the frames never reached
// the console: another consumer held the backend, or its events were lost), never `completed`.

export interface SimRunEndFacts {
  /** The backend's end; null when the run never got one (it could not start, or was stopped first). */
  end: Pick<EpisodeEnd, 'outcome' | 'reason'> | null;
  /** The operator's stop, when one was requested. */
  stopReason: string | null;
  /** Why the run could not start (the error's message), when it threw. */
  failedReason: string | null;
  /** Frames the console recorded. */
  frames: number;
  /** Frames the clip should have given (50 Hz contract timeline). */
  plannedFrames: number;
  /** The connection's id, for the message. */
  connectionId: string;
}

export function simRunOutcome(f: SimRunEndFacts): { outcome: EpisodeOutcome; reason: string } {
  if (f.end) {
    if (f.end.outcome === 'completed' && f.frames === 0)
      return {
        outcome: 'infrastructure_error',
        reason: `the backend reported "${f.end.reason}" but the console recorded 0 of ${f.plannedFrames} frames on ${f.connectionId}: nothing was tracked`,
      };
    if (f.end.outcome === 'aborted_by_operator' && f.stopReason !== null)
      return { outcome: 'aborted_by_operator', reason: f.stopReason };
    return { outcome: f.end.outcome, reason: f.end.reason };
  }
  if (f.stopReason !== null)
    return { outcome: 'aborted_by_operator', reason: `${f.stopReason} (before the simulation began)` };
  return {
    outcome: 'infrastructure_error',
    reason: `the run could not start on ${f.connectionId}: ${f.failedReason ?? 'unknown error'}`,
  };
}
