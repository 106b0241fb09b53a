import type { TrialJobStatus } from '../../../src/api/contract';
import { sessionBadge, type SessionBadge } from '../../../src/domain/trial/sessionBadge';
import { trialNumber } from '../../../src/domain/trial/trialNumber';

// Pure view logic of the Trial runner: the job's phase line, the real trials' outcomes and
// progress, the trials field. No React, no stores: unit-tested in test/unit/rendererTrialFormat.test.ts.

/** What the runner is doing, in one line for the panel (an ended session: why it stopped; its badge says what happened). */
export function phaseLine(s: TrialJobStatus): string {
  if (s.state !== 'running') {
    const tail = s.error ?? s.result?.stoppedEarly ?? s.stopRequested?.reason ?? null;
    return `${jobBadge(s).text}${tail ? `: ${tail}` : ''}`;
  }
  const idx = s.trialIndex !== null ? ` · trial ${trialNumber(s.trialIndex)}/${s.trials}` : '';
  return `${(s.phase ?? 'starting').replace(/_/g, ' ')}${idx} — ${s.phaseMessage}`;
}

/** The job's badge (src/domain/trial/sessionBadge.ts) from its real trials' episodes, earlier sessions included. */
export const jobBadge = (s: TrialJobStatus): SessionBadge =>
  sessionBadge({ state: s.state, trials: s.trials, real: s.episodes.filter((e) => e.domain === 'real_robot') });

/** Real trials done / owed, from the episodes the job saw (an infrastructure error does not count). */
export function realProgress(s: TrialJobStatus): { done: number; total: number } {
  const done = new Set(
    s.episodes
      .filter((e) => e.domain === 'real_robot' && e.outcome !== 'infrastructure_error')
      .map((e) => e.trialIndex),
  ).size;
  return { done, total: s.trials };
}

/**
 * The job's real-trial count for the badge row: "real 2/3" while within the trials asked for; a
 * pair with more trials recorded (earlier sessions asked for more) says so instead of "real 5/3".
 */
export function realProgressText(s: TrialJobStatus): string {
  const { done, total } = realProgress(s);
  return done > total ? `real ${done} (${total} asked)` : `real ${done}/${total}`;
}

/** Parses the trials field: an integer 1..10, or the reason it is not. */
export function parseTrials(text: string): { ok: true; trials: number } | { ok: false; reason: string } {
  const v = Number(text.trim());
  return Number.isInteger(v) && v >= 1 && v <= 10
    ? { ok: true, trials: v }
    : { ok: false, reason: `trials "${text}": a whole number from 1 to 10` };
}
