import { describe, expect, it } from 'vitest';
import type { EpisodeOutcome } from '../../src/domain/backend/backend';
import { sessionBadge } from '../../src/domain/trial/sessionBadge';

// A session's badge says "completed" only when every real trial completed; any
// other ending names what happened, with a warning or an alarm tone.

const real = (...outcomes: EpisodeOutcome[]) => outcomes.map((outcome, trialIndex) => ({ trialIndex, outcome }));

describe('session badge', () => {
  it('is completed (ok) when every asked-for real trial completed', () => {
    expect(sessionBadge({ state: 'completed', trials: 3, real: real('completed', 'completed', 'completed') })).toEqual({
      text: 'completed',
      tone: 'ok',
    });
  });

  it('negative control: a session that ran every trial but lost the link and an e-stop is not "completed"', () => {
    const b = sessionBadge({ state: 'completed', trials: 3, real: real('link_lost', 'estop', 'link_lost') });
    expect(b).toEqual({ text: 'ended · 1 estop, 2 link lost', tone: 'alarm' });
    expect(b.text).not.toMatch(/^completed/);
  });

  it('a fall or an operator stop is a warning, listed beside the completed trials', () => {
    expect(
      sessionBadge({ state: 'completed', trials: 3, real: real('completed', 'hard_failure', 'completed') }),
    ).toEqual({ text: 'ended · 1 hard failure, 2 completed', tone: 'warn' });
    expect(sessionBadge({ state: 'stopped', trials: 3, real: real('completed', 'aborted_by_operator') })).toEqual({
      text: 'stopped · 1 aborted by operator, 1 completed, 1 not run',
      tone: 'warn',
    });
  });

  it('counts trials not run, and an infrastructure error as a trial still owed', () => {
    expect(sessionBadge({ state: 'stopped', trials: 2, real: [] })).toEqual({
      text: 'stopped · 2 not run',
      tone: 'warn',
    });
    const retried = [
      { trialIndex: 0, outcome: 'infrastructure_error' as const },
      { trialIndex: 0, outcome: 'completed' as const },
    ];
    // The trial ran again after its infrastructure error: one trial, completed, the retry said apart.
    expect(sessionBadge({ state: 'completed', trials: 1, real: retried })).toEqual({
      text: 'ended · 1 completed (1 infrastructure error retried)',
      tone: 'alarm',
    });
    expect(sessionBadge({ state: 'stopped', trials: 1, real: retried.slice(0, 1) }).text).toBe(
      'stopped · 1 infrastructure error',
    );
  });

  it('the counts add up to the trials: 2 trials, one ended by an infrastructure error, one completed', () => {
    const b = sessionBadge({
      state: 'stopped',
      trials: 2,
      real: [
        { trialIndex: 0, outcome: 'infrastructure_error' },
        { trialIndex: 1, outcome: 'completed' },
      ],
    });
    expect(b).toEqual({ text: 'stopped · 1 infrastructure error, 1 completed', tone: 'alarm' });
    const sum = (text: string) => [...text.matchAll(/(\d+) [a-z ]+?(?:,|$)/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(sum(b.text)).toBe(2);
    // Negative control: the old count (an infrastructure error both counted and owed) read 3 for 2 trials.
    expect(sum('stopped · 1 infrastructure error, 1 completed, 1 not run')).toBe(3);
    for (const real of [
      [],
      [{ trialIndex: 0, outcome: 'estop' as const }],
      [
        { trialIndex: 0, outcome: 'link_lost' as const },
        { trialIndex: 1, outcome: 'infrastructure_error' as const },
        { trialIndex: 1, outcome: 'infrastructure_error' as const },
        { trialIndex: 2, outcome: 'hard_failure' as const },
      ],
    ])
      expect(sum(sessionBadge({ state: 'stopped', trials: 3, real }).text.replace(/ \(.*\)$/, ''))).toBe(3);
  });

  it('a failed session is an alarm; a running one is live', () => {
    expect(sessionBadge({ state: 'failed', trials: 3, real: real('completed') })).toEqual({
      text: 'failed · 1 completed, 2 not run',
      tone: 'alarm',
    });
    expect(sessionBadge({ state: 'running', trials: 3, real: real('estop') })).toEqual({
      text: 'running',
      tone: 'live',
    });
  });
});
