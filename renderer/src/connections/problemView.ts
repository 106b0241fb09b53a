import type { ConnectionInfo } from '../../../src/api/contract';

// How the Connections panel shows an endpoint's latest problem. The registry keeps problems as a
// history (newest first), so the newest one may be over: a link that was silent for 80 ms and
// has streamed at 500 Hz since must not read as a current warning. A silence problem is shown as
// past while the link is present again; every problem carries its age so the operator can tell
// "now" from "during calibration, five minutes ago".

type Problem = ConnectionInfo['problems'][number];

/** Problems that describe a silent link: over as soon as the link is present again. */
const SILENCE_CODES = new Set(['link_stale', 'link_lost', 'connect_failed']);

export interface ProblemView {
  /** The CSS severity class: `past` for a problem that no longer holds. */
  tone: Problem['severity'] | 'past';
  /** "12 s ago" (from the problem's wall-clock stamp); null without a stamp. */
  age: string | null;
}

export function formatAgo(ms: number): string {
  if (ms < 1000) return 'just now';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  return `${Math.floor(m / 60)} h ${m % 60} min ago`;
}

export function problemView(problem: Problem, presence: ConnectionInfo['presence'], nowMs: number): ProblemView {
  const over = presence === 'present' && SILENCE_CODES.has(problem.code);
  return {
    tone: over ? 'past' : problem.severity,
    age: problem.atMs > 0 ? formatAgo(Math.max(0, nowMs - problem.atMs)) : null,
  };
}
