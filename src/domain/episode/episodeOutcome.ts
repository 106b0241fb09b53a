// How an episode ends: the one outcome type every layer reads (the backends, the g1-bridge/1 wire,
// the trace, the safety gate). Declared here, below src/domain/backend and src/domain/bridge, so
// neither has to import the other for it.

/**
 * The one list of outcomes: the trace's CHECK constraint, the g1-bridge/1 schemas and validators,
 * the safety gate's event check and the API's zod enums all read it.
 */
export const EPISODE_OUTCOMES = [
  'completed',
  'hard_failure',
  'intervention',
  'estop',
  'link_lost',
  'aborted_by_operator',
  'infrastructure_error',
] as const;
export type EpisodeOutcome = (typeof EPISODE_OUTCOMES)[number];

/** Only infrastructure errors may be retried automatically (DESIGN §3). */
export const isRetryableOutcome = (o: EpisodeOutcome): boolean => o === 'infrastructure_error';
