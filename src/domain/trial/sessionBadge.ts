import type { EpisodeOutcome } from '../backend/backend';

// What a matched-pair session's badge says. The job's state says how the session
// ended (the runner ran every trial asked for, was stopped, or failed); it does not say how the
// robot's trials went. The badge says both: "completed" (ok tone) only when every real trial of the
// pair ran to completion, otherwise the word for how the session ended and what happened to its
// trials ("ended · 2 link lost, 1 estop"), with a warning or alarm tone. One function, shown by the
// Trial runner (renderer/src/trial/) and printed by `motionbench trial`.

/** How a session ended, as the job status says it (src/api/trialContract.ts TrialJobStatus.state). */
export type SessionState = 'running' | 'completed' | 'stopped' | 'failed';

/** ok: every trial completed; warn: a trial did not complete; alarm: a trip or a failure; live: running. */
export type SessionBadgeTone = 'ok' | 'warn' | 'alarm' | 'live';

export interface SessionBadge {
  text: string;
  tone: SessionBadgeTone;
}

export interface SessionBadgeInput {
  state: SessionState;
  /** Real trials the pair is to have. */
  trials: number;
  /** Every real trial episode of the pair, earlier sessions included, in any order. */
  real: readonly { trialIndex: number | null; outcome: EpisodeOutcome }[];
}

/** Outcomes in the order the badge lists them: what stopped the robot first, completed last. */
const ORDER: readonly EpisodeOutcome[] = [
  'estop',
  'link_lost',
  'infrastructure_error',
  'intervention',
  'aborted_by_operator',
  'hard_failure',
  'completed',
];

/** Outcomes that are a trip of the safety chain or a broken run: the badge is an alarm. */
const ALARM: ReadonlySet<EpisodeOutcome> = new Set(['estop', 'link_lost', 'infrastructure_error']);

const WORD: Record<Exclude<SessionState, 'running'>, string> = {
  completed: 'ended',
  stopped: 'stopped',
  failed: 'failed',
};

/** Which of two outcomes of one trial is its result: any outcome over an infrastructure error (the trial was owed and ran again), then the first in ORDER. */
function isWorse(a: EpisodeOutcome, b: EpisodeOutcome): boolean {
  const infraA = a === 'infrastructure_error';
  const infraB = b === 'infrastructure_error';
  if (infraA !== infraB) return infraB;
  return ORDER.indexOf(a) < ORDER.indexOf(b);
}

/**
 * The badge of a session (see the file header). Its counts are of trials and add up to the trials
 * asked for (or to the trials recorded, when more were): each trial counts once, by its result; a
 * trial whose only record is an infrastructure error counts as one (it is still owed); an
 * infrastructure error followed by a run of the same trial is told apart as "retried".
 */
export function sessionBadge(s: SessionBadgeInput): SessionBadge {
  if (s.state === 'running') return { text: 'running', tone: 'live' };
  const result = new Map<number | null, EpisodeOutcome>();
  let infraErrors = 0;
  for (const e of s.real) {
    if (e.outcome === 'infrastructure_error') infraErrors++;
    const prev = result.get(e.trialIndex);
    if (prev === undefined || isWorse(e.outcome, prev)) result.set(e.trialIndex, e.outcome);
  }
  const counts = new Map<EpisodeOutcome, number>();
  for (const o of result.values()) counts.set(o, (counts.get(o) ?? 0) + 1);
  const retried = infraErrors - (counts.get('infrastructure_error') ?? 0);
  const notRun = Math.max(0, s.trials - result.size);
  const allCompleted = result.size > 0 && notRun === 0 && [...result.values()].every((o) => o === 'completed');
  if (s.state === 'completed' && allCompleted && retried === 0) return { text: 'completed', tone: 'ok' };
  const parts = ORDER.filter((o) => counts.has(o)).map((o) => `${counts.get(o)} ${o.replace(/_/g, ' ')}`);
  if (notRun > 0) parts.push(`${notRun} not run`);
  const alarm = s.state === 'failed' || infraErrors > 0 || ORDER.some((o) => ALARM.has(o) && counts.has(o));
  const retriedText = retried > 0 ? ` (${retried} infrastructure error${retried === 1 ? '' : 's'} retried)` : '';
  return {
    text: `${parts.length > 0 ? `${WORD[s.state]} · ${parts.join(', ')}` : WORD[s.state]}${retriedText}`,
    tone: alarm ? 'alarm' : 'warn',
  };
}
