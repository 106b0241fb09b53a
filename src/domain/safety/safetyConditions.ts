// The conditions of DESIGN §6, evaluated on a gate state at an instant, each failing check
// returned as a Refusal whose message names the condition and its values. Pure and read-only:
// the reducer (safetyGate.ts) decides what happens with the result.

import type { EpisodeOutcome } from '../backend/backend';
import {
  REFUSAL_CODES,
  type GateState,
  type Refusal,
  type RefusalCode,
  type SafetyGateConfig,
  type TripCause,
} from './safetyTypes';

/** "73 ms", "12.5 ms", "412.3 s": ages and limits as an operator reads them. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (Math.abs(ms) < 10_000) {
    const r = Math.round(ms * 10) / 10;
    return `${Number.isInteger(r) ? r.toFixed(0) : r.toFixed(1)} ms`;
  }
  return `${(ms / 1000).toFixed(1)} s`;
}

export function refusal(code: RefusalCode, message: string, values: Refusal['values'] = {}): Refusal {
  return { code, condition: REFUSAL_CODES[code], message, values };
}

const CAUSE_TEXT: Record<TripCause, string> = {
  estop: 'e-stop',
  interlock_lost: 'interlock lost',
  interlock_disarmed: 'interlock disarmed while moving',
  link_lost: 'robot link lost',
  operator_stop: 'operator stop',
  backend_stop: 'robot-side stop',
};

export function tripCauseText(cause: TripCause): string {
  return CAUSE_TEXT[cause];
}

/** The episode outcome a trip ends an episode with. Interlock loss is a lost safety link: `link_lost`. */
export function tripOutcome(cause: Exclude<TripCause, 'backend_stop'>, intervention = false): EpisodeOutcome {
  switch (cause) {
    case 'estop':
    case 'interlock_disarmed':
      // The box took the robot out of ARMED: the same as the e-stop from the trial's point of view.
      return 'estop';
    case 'interlock_lost':
    case 'link_lost':
      return 'link_lost';
    case 'operator_stop':
      return intervention ? 'intervention' : 'aborted_by_operator';
  }
}

/** Outcomes that mean the robot was stopped by a safety path: reported at an episode end, they latch a trip. */
export const TRIP_OUTCOMES: readonly EpisodeOutcome[] = ['estop', 'link_lost', 'intervention', 'aborted_by_operator'];

/** The interlock's last status is older than the freshness limit (strictly). */
function interlockStaleCheck(
  il: NonNullable<GateState['interlock']>,
  nowMs: number,
  cfg: SafetyGateConfig,
  out: Refusal[],
): void {
  const age = nowMs - il.atMs;
  if (age > cfg.interlockFreshMs) {
    out.push(
      refusal(
        'interlock_stale',
        `interlock status stale: last status ${il.status} ${formatDuration(age)} ago (limit ${formatDuration(cfg.interlockFreshMs)})`,
        {
          status: il.status,
          ageMs: age,
          limitMs: cfg.interlockFreshMs,
        },
      ),
    );
  }
}

/** The robot's last lowstate is as old as the freshness limit or older. */
function linkStaleCheck(
  ls: NonNullable<GateState['lowstate']>,
  nowMs: number,
  cfg: SafetyGateConfig,
  out: Refusal[],
): void {
  const age = nowMs - ls.atMs;
  if (age >= cfg.linkFreshMs) {
    out.push(
      refusal(
        'link_stale',
        `robot link stale: last lowstate ${formatDuration(age)} ago (limit ${formatDuration(cfg.linkFreshMs)})`,
        { ageMs: age, limitMs: cfg.linkFreshMs },
      ),
    );
  }
}

function interlockChecks(s: GateState, nowMs: number, cfg: SafetyGateConfig, out: Refusal[]): void {
  const il = s.interlock;
  if (il === null) {
    out.push(
      refusal('interlock_unknown', 'interlock status unknown: no status received from the interlock box', {
        limitMs: cfg.interlockFreshMs,
      }),
    );
    return;
  }
  interlockStaleCheck(il, nowMs, cfg, out);
  if (il.status !== 'ARMED') {
    out.push(
      refusal('interlock_not_armed', `interlock not armed: status is ${il.status} (motion needs ARMED)`, {
        status: il.status,
      }),
    );
  }
}

function linkChecks(s: GateState, nowMs: number, cfg: SafetyGateConfig, out: Refusal[]): void {
  const ls = s.lowstate;
  if (ls === null) {
    out.push(refusal('link_unknown', 'robot link down: no lowstate received', { limitMs: cfg.linkFreshMs }));
    return;
  }
  linkStaleCheck(ls, nowMs, cfg, out);
}

/** The interlock (ARMED, fresh) and robot-link (fresh lowstate) conditions at `nowMs`: what may not have changed between a grant and its write. */
export function freshnessRefusals(s: GateState, nowMs: number, cfg: SafetyGateConfig): Refusal[] {
  const out: Refusal[] = [];
  interlockChecks(s, nowMs, cfg, out);
  linkChecks(s, nowMs, cfg, out);
  return out;
}

/**
 * Every failing condition for a motion command at `nowMs` (empty: motion may be sent).
 * `nowMs` must not be earlier than the state's clock (the reducer checks that first).
 */
export function motionRefusals(s: GateState, nowMs: number, cfg: SafetyGateConfig): Refusal[] {
  const out: Refusal[] = [];
  const t = s.tripped;
  if (t !== null) {
    out.push(
      refusal(
        'tripped',
        `tripped ${formatDuration(nowMs - t.atMs)} ago by ${tripCauseText(t.cause)} (${t.reason}); the operator must acknowledge the trip (human-gated reset) before any motion`,
        { cause: t.cause, trippedAtMs: t.atMs, runId: t.runId },
      ),
    );
  }
  out.push(...freshnessRefusals(s, nowMs, cfg));

  const ep = s.episode;
  if (ep === null) {
    out.push(
      refusal(
        'no_episode',
        'no real-robot episode is open (admission, calibration and confirmation are checked per episode)',
        {},
      ),
    );
    return out;
  }

  // Admission of the pair under the contract and binding this episode runs with.
  const adm = s.admissions[ep.pairId];
  if (adm === undefined) {
    out.push(refusal('not_admitted', `pair ${ep.pairId} has no admission decision`, { pairId: ep.pairId }));
  } else if (!adm.admitted) {
    const why = adm.reasons.length > 0 ? `: ${adm.reasons.join('; ')}` : '';
    out.push(
      refusal('not_admitted', `pair ${ep.pairId} is not admitted for hardware${why}`, {
        pairId: ep.pairId,
        contractId: adm.contractId,
        bindingKey: adm.bindingKey,
      }),
    );
  } else {
    if (adm.contractId !== ep.contractId) {
      out.push(
        refusal(
          'admission_contract_mismatch',
          `pair ${ep.pairId} was admitted under contract ${adm.contractId}, but the current contract is ${ep.contractId}`,
          {
            pairId: ep.pairId,
            admittedContractId: adm.contractId,
            currentContractId: ep.contractId,
          },
        ),
      );
    }
    if (adm.bindingKey !== ep.bindingKey) {
      out.push(
        refusal(
          'admission_binding_mismatch',
          `pair ${ep.pairId} was admitted with binding ${adm.bindingKey}, but the current binding is ${ep.bindingKey}`,
          {
            pairId: ep.pairId,
            admittedBindingKey: adm.bindingKey,
            currentBindingKey: ep.bindingKey,
          },
        ),
      );
    }
  }

  // Calibration captured for this episode, fresh.
  const cal = s.calibration;
  if (cal === null) {
    out.push(refusal('no_calibration', `no calibration captured for run ${ep.runId}`, { runId: ep.runId }));
  } else if (cal.runId !== ep.runId) {
    out.push(
      refusal(
        'calibration_other_run',
        `the latest calibration was captured for run ${cal.runId}, not for this episode (run ${ep.runId})`,
        { runId: ep.runId, calibrationRunId: cal.runId },
      ),
    );
  } else {
    const age = nowMs - cal.capturedAtMs;
    if (age > cfg.calibrationMaxAgeMs) {
      out.push(
        refusal(
          'calibration_stale',
          `calibration for run ${ep.runId} is stale: captured ${formatDuration(age)} ago (limit ${formatDuration(cfg.calibrationMaxAgeMs)})`,
          {
            runId: ep.runId,
            ageMs: age,
            limitMs: cfg.calibrationMaxAgeMs,
          },
        ),
      );
    }
  }

  // Operator confirmation: this run, after the latest calibration, unused, not expired.
  const conf = s.confirmation;
  if (conf === null) {
    out.push(refusal('no_confirmation', `the operator has not confirmed run ${ep.runId}`, { runId: ep.runId }));
  } else if (conf.runId !== ep.runId) {
    out.push(
      refusal(
        'confirmation_other_run',
        `the operator's confirmation is for run ${conf.runId}, not for this episode (run ${ep.runId})`,
        { runId: ep.runId, confirmationRunId: conf.runId },
      ),
    );
  } else {
    if (conf.usedAtMs !== null) {
      out.push(
        refusal(
          'confirmation_used',
          `the operator's confirmation for run ${ep.runId} was used by start ${formatDuration(nowMs - conf.usedAtMs)} ago (one-shot): confirm again`,
          {
            runId: ep.runId,
            usedAtMs: conf.usedAtMs,
          },
        ),
      );
    }
    if (cal !== null && conf.seq < cal.seq) {
      out.push(
        refusal(
          'confirmation_before_calibration',
          `the operator confirmed run ${ep.runId} before the latest calibration: confirm again after the calibration`,
          {
            runId: ep.runId,
            confirmedAtMs: conf.atMs,
            calibrationAtMs: cal.atMs,
          },
        ),
      );
    }
    const age = nowMs - conf.atMs;
    if (age > cfg.confirmationTtlMs) {
      out.push(
        refusal(
          'confirmation_expired',
          `the operator's confirmation for run ${ep.runId} expired: given ${formatDuration(age)} ago (limit ${formatDuration(cfg.confirmationTtlMs)})`,
          {
            runId: ep.runId,
            ageMs: age,
            limitMs: cfg.confirmationTtlMs,
          },
        ),
      );
    }
  }
  return out;
}

/**
 * Why a human-gated reset cannot be accepted at `nowMs` (empty: it can). The trip's cause must
 * have cleared, as observed after the trip: an interlock status received after it, fresh and not
 * ESTOP (SAFE or ARMED), and a lowstate received after it, fresh.
 */
export function resetRefusals(s: GateState, nowMs: number, cfg: SafetyGateConfig): Refusal[] {
  const out: Refusal[] = [];
  const t = s.tripped;
  if (t === null) {
    out.push(refusal('not_tripped', 'nothing to reset: the gate is not tripped', {}));
    return out;
  }
  const il = s.interlock;
  if (il === null || il.seq <= t.seq) {
    out.push(refusal('interlock_unknown', 'no interlock status received since the trip', { trippedAtMs: t.atMs }));
  } else {
    interlockStaleCheck(il, nowMs, cfg, out);
    if (il.status === 'ESTOP') {
      out.push(
        refusal('interlock_estop', 'the interlock still reports ESTOP: release the e-stop first', {
          status: il.status,
        }),
      );
    }
  }
  const ls = s.lowstate;
  if (ls === null || ls.seq <= t.seq) {
    out.push(refusal('link_unknown', 'no lowstate received from the robot since the trip', { trippedAtMs: t.atMs }));
  } else {
    linkStaleCheck(ls, nowMs, cfg, out);
  }
  return out;
}
