// Types of the safety gate (DESIGN §6). Pure: no I/O, no clocks — every input
// carries its own time. See docs/SAFETY_GATE.md for the rules these types serve.

import type { EpisodeOutcome, Problem } from '../backend/backend';
import type { TraceEventKind } from '../trace/records';

// ---------------------------------------------------------------------------------------------
// Configuration

export interface SafetyGateConfig {
  /** Interlock status is fresh when its age is ≤ this (ms). DESIGN §5.2/§6: at most 100. */
  interlockFreshMs: number;
  /** The robot link is fresh when the last lowstate is < this old (ms). DESIGN §6: at most 50. */
  linkFreshMs: number;
  /** While the robot moves, no interlock status for > this (ms) trips `interlock_lost`. At most 100. */
  interlockLostMs: number;
  /** While the robot moves, no lowstate for > this (ms) trips `link_lost`. At most 100. */
  linkLostMs: number;
  /** A calibration is fresh while now − capturedAtMs ≤ this (ms). */
  calibrationMaxAgeMs: number;
  /** An operator confirmation is valid while now − confirmedAtMs ≤ this (ms). */
  confirmationTtlMs: number;
}

/** The loosest values DESIGN allows; a config may only tighten them. */
export const SAFETY_LIMIT_MAXIMA: Readonly<
  Pick<SafetyGateConfig, 'interlockFreshMs' | 'linkFreshMs' | 'interlockLostMs' | 'linkLostMs'>
> = Object.freeze({
  interlockFreshMs: 100,
  linkFreshMs: 50,
  interlockLostMs: 100,
  linkLostMs: 100,
});

export const DEFAULT_SAFETY_GATE_CONFIG: Readonly<SafetyGateConfig> = Object.freeze({
  interlockFreshMs: 100,
  linkFreshMs: 50,
  interlockLostMs: 100,
  linkLostMs: 100,
  calibrationMaxAgeMs: 5 * 60_000,
  confirmationTtlMs: 30_000,
});

// ---------------------------------------------------------------------------------------------
// Commands

/**
 * Commands that make the real robot's actuators move or hold torque under the console's control:
 * `prepare` (a robot-side controller may walk the robot to the clip's start pose), `start`
 * (runs the clip) and `hold` (position control on the current pose). All are gated.
 */
export type MotionKind = 'prepare' | 'start' | 'hold';
export const MOTION_KINDS: readonly MotionKind[] = ['prepare', 'start', 'hold'];

/** Commands that stop the robot. Never gated, never refused. */
export type StopKind = 'stop' | 'damp';
export const STOP_KINDS: readonly StopKind[] = ['stop', 'damp'];

export type InterlockStatus = 'SAFE' | 'ARMED' | 'ESTOP';
/** `LOST` in an interlock_status event means the same as an interlock_lost event. */
export const INTERLOCK_STATUSES: readonly (InterlockStatus | 'LOST')[] = ['SAFE', 'ARMED', 'ESTOP', 'LOST'];

// ---------------------------------------------------------------------------------------------
// Events (everything the gate is told). `atMs` is the console's monotonic clock, ms; inputs
// must not go backwards (an input earlier than the last accepted one is rejected with a problem).

export type GateEvent =
  /** A status line from the interlock box (`ST <status> <seq>`), or `LOST`. */
  | { type: 'interlock_status'; atMs: number; status: InterlockStatus | 'LOST' }
  /** `EV ESTOP` from the interlock box. */
  | { type: 'estop'; atMs: number; reason?: string }
  /** The interlock serial link is gone (port closed, no status for 100 ms as seen by the service). */
  | { type: 'interlock_lost'; atMs: number; reason?: string }
  /** A `/g1/lowstate` frame was received (atMs = receive time). */
  | { type: 'lowstate'; atMs: number }
  /** The robot backend reports its link lost. */
  | { type: 'link_lost'; atMs: number; reason?: string }
  /** The operator's stop (button or key). `intervention`: the operator stopped because a human had to intervene. */
  | { type: 'operator_stop'; atMs: number; intervention?: boolean; reason?: string }
  /** The admission decision of a pair (latest wins), with the contract and binding it was made under. */
  | {
      type: 'admission';
      atMs: number;
      pairId: string;
      admitted: boolean;
      contractId: string;
      bindingKey: string;
      reasons?: string[];
    }
  /**
   * The orchestrator opens the real-robot episode `runId` (before any command for it): the pair it
   * runs and the contract id and binding key (`bindingKey(binding)` = id@version) it runs under now.
   */
  | { type: 'episode_start'; atMs: number; runId: string; pairId: string; contractId: string; bindingKey: string }
  /** The episode ended (backend's report or the orchestrator's decision). */
  | { type: 'episode_end'; atMs: number; runId: string; outcome: EpisodeOutcome; reason?: string }
  /** A calibration was captured for episode `runId`; capturedAtMs = end of its still window (≤ atMs). */
  | { type: 'calibration'; atMs: number; runId: string; capturedAtMs: number; calibrationId?: string }
  /** The operator explicitly confirmed motion for episode `runId` (one-shot; expires). */
  | { type: 'operator_confirm'; atMs: number; runId: string }
  /** The operator acknowledges a trip (human-gated reset): the robot is safe and back in place. */
  | { type: 'operator_reset'; atMs: number; note?: string; operator?: string }
  /** Time passes (drives the watchdogs). */
  | { type: 'tick'; atMs: number };

export type GateEventType = GateEvent['type'];
export const GATE_EVENT_TYPES: readonly GateEventType[] = [
  'interlock_status',
  'estop',
  'interlock_lost',
  'lowstate',
  'link_lost',
  'operator_stop',
  'admission',
  'episode_start',
  'episode_end',
  'calibration',
  'operator_confirm',
  'operator_reset',
  'tick',
];

// ---------------------------------------------------------------------------------------------
// Refusals

/** The condition a refusal is about (DESIGN §6 conditions, plus the trip latch, the episode and the clock). */
export type GateCondition =
  'clock' | 'command' | 'trip' | 'episode' | 'interlock' | 'link' | 'admission' | 'calibration' | 'confirmation';

export const REFUSAL_CODES = {
  // motion requests
  clock_backwards: 'clock',
  not_a_robot_command: 'command',
  tripped: 'trip',
  no_episode: 'episode',
  interlock_unknown: 'interlock',
  interlock_stale: 'interlock',
  interlock_not_armed: 'interlock',
  link_unknown: 'link',
  link_stale: 'link',
  not_admitted: 'admission',
  admission_contract_mismatch: 'admission',
  admission_binding_mismatch: 'admission',
  no_calibration: 'calibration',
  calibration_other_run: 'calibration',
  calibration_stale: 'calibration',
  no_confirmation: 'confirmation',
  confirmation_other_run: 'confirmation',
  confirmation_used: 'confirmation',
  confirmation_before_calibration: 'confirmation',
  confirmation_expired: 'confirmation',
  // human-gated resets
  not_tripped: 'trip',
  interlock_estop: 'interlock',
  /** A motion command is about to be written that the gate did not grant for this episode (or the episode changed since). */
  not_granted: 'episode',
} as const satisfies Record<string, GateCondition>;

export type RefusalCode = keyof typeof REFUSAL_CODES;

export interface Refusal {
  code: RefusalCode;
  condition: GateCondition;
  /** One sentence for the operator naming the failing condition and its values. */
  message: string;
  /** The values the message names (ages and limits in ms, ids), for the trace and the UI. */
  values: Record<string, string | number | boolean | null>;
}

// ---------------------------------------------------------------------------------------------
// Outputs

/** `interlock_disarmed`: the box left ARMED (went SAFE) while the robot was moving. */
export type TripCause =
  'estop' | 'interlock_lost' | 'interlock_disarmed' | 'link_lost' | 'operator_stop' | 'backend_stop';

export interface GateAction {
  /** Send this command to the robot now, in array order. */
  command: StopKind;
  reason: string;
  atMs: number;
}

export interface GateTrip {
  cause: TripCause;
  atMs: number;
  reason: string;
  /** The episode the trip ended, or null when none was open. */
  runId: string | null;
  /** The outcome the episode ends with (also set when no episode was open: what it would have been). */
  outcome: EpisodeOutcome;
}

/** Trace event kinds the gate writes; a subset of the trace store's kinds. */
export type SafetyTraceKind = Extract<TraceEventKind, 'refusal' | 'human_reset' | 'stop_requested'>;

/** A trace event for the trace store (maps onto NewTraceEvent: kind, reason, runId, atMs, detail). */
export interface SafetyTraceEvent {
  kind: SafetyTraceKind;
  reason: string;
  atMs: number;
  runId: string | null;
  detail: Record<string, unknown>;
}

export interface GateEffects {
  /** Commands to send at once (a trip: stop then damp). */
  actions: GateAction[];
  /** Set when this input tripped the gate. */
  trip: GateTrip | null;
  /** Set when this input ended the open episode because of a trip (runId + outcome + reason). */
  episodeOutcome: { runId: string; outcome: EpisodeOutcome; reason: string } | null;
  /** Set when this input was a human-gated reset: accepted, or refused with its reasons. */
  reset: { accepted: true } | { accepted: false; reasons: Refusal[] } | null;
  /** Refusals, resets and trips, for the trace store. */
  trace: SafetyTraceEvent[];
  /** Rejected or ignored inputs, for the operator's problem list. */
  problems: Problem[];
}

export type MotionDecision =
  | { allowed: true; command: MotionKind; runId: string; effects: GateEffects }
  | { allowed: false; command: MotionKind | 'reset'; reasons: Refusal[]; effects: GateEffects };

export type CommandDecision = MotionDecision | { allowed: true; command: StopKind; effects: GateEffects };

// ---------------------------------------------------------------------------------------------
// State (plain data; the reducer returns a new object, never mutates)

export interface GateState {
  /** Last accepted input time, or null before the first one. */
  clockMs: number | null;
  /** Sequence number of the last accepted input (orders events that share a timestamp). */
  seq: number;
  interlock: { status: InterlockStatus; atMs: number; seq: number } | null;
  lowstate: { atMs: number; seq: number } | null;
  admissions: Readonly<
    Record<
      string,
      { admitted: boolean; contractId: string; bindingKey: string; reasons: readonly string[]; atMs: number }
    >
  >;
  episode: {
    runId: string;
    pairId: string;
    contractId: string;
    bindingKey: string;
    openedAtMs: number;
    moving: boolean;
  } | null;
  /** Every run id an episode was opened with; a run id opens one episode only. */
  usedRunIds: readonly string[];
  calibration: { runId: string; capturedAtMs: number; atMs: number; seq: number; calibrationId: string | null } | null;
  confirmation: { runId: string; atMs: number; seq: number; usedAtMs: number | null } | null;
  tripped: {
    cause: TripCause;
    atMs: number;
    seq: number;
    reason: string;
    runId: string | null;
    outcome: EpisodeOutcome;
  } | null;
  /** Time of the last accepted human-gated reset; calibrations captured before it do not count. */
  lastResetAtMs: number | null;
}
