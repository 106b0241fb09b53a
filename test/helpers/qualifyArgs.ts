/** A `motionbench qualify` run as the CLI tests start one. */
export interface QualifyRun {
  /** Default core-v1. */
  workload?: string;
  bindings: readonly string[];
  clips?: readonly string[];
  rollouts: number;
  /** Default 2. */
  workers?: number;
  campaign: string;
  /** Ask for the JSON document on stdout. */
  json?: boolean;
}

/** The `motionbench qualify` command line for `q`, every option spelled as a user types it. */
export function qualifyArgs(q: QualifyRun): string[] {
  return [
    'qualify',
    ...['--workload', q.workload ?? 'core-v1'],
    ...q.bindings.flatMap((b) => ['--binding', b]),
    ...(q.clips ?? []).flatMap((c) => ['--clip', c]),
    ...['--rollouts', String(q.rollouts), '--workers', String(q.workers ?? 2), '--campaign', q.campaign],
    ...(q.json ? ['--json'] : []),
  ];
}
