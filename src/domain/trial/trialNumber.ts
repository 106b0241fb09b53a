// One trial numbering for people: trials are numbered from 1 in every text the
// console, the CLI and the reports show ("real trial 1" is the first), while stored indices
// (trialIndex, the episodes' rollout_index, data-testids such as trial-episode-real-0) stay 0-based
// as they are. Every text that names a trial by its index goes through here.

/** The number people read for a stored 0-based trial index; "?" when the index is unknown. */
export const trialNumber = (trialIndex: number | null): string =>
  trialIndex === null || trialIndex < 0 ? '?' : String(trialIndex + 1);
