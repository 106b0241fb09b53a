// The codes under which a backend — or the console on a backend's behalf — reports a problem, and
// what kind of problem each is. The kind decides how long a problem is current:
//
//   condition — a state that holds until it ends (the link is stale, lost, watch-only; the build
//               has no implementation). Reported once when it begins; withdrawn by a
//               `problem_cleared` event when it ends (src/domain/backend/backend.ts).
//   incident  — something that happened (a malformed frame, frames dropped behind a slow
//               listener): counted and reported, rate-limited per code. It has no end to wait
//               for, so a reader treats it as current for a while after it last happened.
//
// Codes stay stable: the trace, the logs and the console's Connections panel show them.

export type ProblemKind = 'condition' | 'incident';

export const BACKEND_PROBLEM_KINDS = {
  // The link (g1-bridge/1 client): withdrawn when frames are fresh again / the server answers.
  link_stale: 'condition',
  link_lost: 'condition',
  connect_failed: 'condition',
  /** The client stopped reconnecting (its attempt budget ran out); ends only with the backend. */
  reconnect_gave_up: 'condition',
  /** The URL cannot even be opened; ends only with the backend. */
  bad_url: 'condition',
  // What the server is (per connection): withdrawn when a later connection is fine.
  unsupported_contract: 'condition',
  unsupported_encoding: 'condition',
  watch_only: 'condition',
  bad_metadata: 'condition',
  // The console's connection registry, on an entry's behalf.
  backend_unavailable: 'condition',
  backend_create_failed: 'condition',

  // Incidents of the link.
  malformed_frame: 'incident',
  oversized_frame: 'incident',
  duplicate_frame: 'incident',
  out_of_order_frame: 'incident',
  tick_gap: 'incident',
  malformed_root_state: 'incident',
  malformed_wbc_status: 'incident',
  malformed_server_message: 'incident',
  /** A status message of the server (its own words, at its own level). */
  server_status: 'incident',
  frames_dropped: 'incident',
  listener_failed: 'incident',
  // Incidents of the embedded simulator.
  sim_model_failed: 'incident',
  sim_worker_fault: 'incident',
  sim_worker_crashed: 'incident',
  sim_worker_lost: 'incident',
  // Incidents the console records on an entry (registry, simulation runs, display pushes).
  subscriber_error: 'incident',
  close_failed: 'incident',
  frames_refused: 'incident',
  display_frames_dropped: 'incident',
} as const satisfies Record<string, ProblemKind>;

export type BackendProblemCode = keyof typeof BACKEND_PROBLEM_KINDS;

/** The kind of a code; a code this build does not know (a newer backend's) is an incident. */
export function problemKindOf(code: string): ProblemKind {
  return Object.prototype.hasOwnProperty.call(BACKEND_PROBLEM_KINDS, code)
    ? BACKEND_PROBLEM_KINDS[code as BackendProblemCode]
    : 'incident';
}
