import { TIMING_TRIP_LIMIT_MS, TIMING_WINDOW_MS, type TimingHealth } from './timingHealth';

// Whether an action that moves the robot (a matched pair's Start, a real trial's Confirm) may go
// ahead on the timing the console measured (timingHealth.ts). While TIMING reads BAD a measured gap
// already reached the trip limit: the action is not refused (the operator knows the machine) but
// needs a second, explicit confirmation that names the measured figure. Any other level proceeds.

/** The measured figure that made TIMING BAD, for the warning. */
export interface TimingGateFigure {
  /** What was measured: 'interlock status', 'robot lowstate' or 'kernel scheduler'. */
  source: string;
  /** Largest gap over the window, ms; null for a setting (no gap). */
  maxGapMs: number | null;
}

export type TimingGateDecision =
  | { kind: 'proceed' }
  | {
      kind: 'confirm';
      /** The gaps at or above the trip limit, worst first. */
      figures: TimingGateFigure[];
      /** One line for the operator with the measured figures. */
      message: string;
    };

const SOURCE_NAMES = { interlock: 'interlock status', lowstate: 'robot lowstate', scheduler: 'kernel scheduler' };

/**
 * The decision for one press: `acknowledged` is the operator's explicit second confirmation of a
 * BAD timing (the first press only warns). Proceeds at once when TIMING is not BAD.
 */
export function timingGate(health: TimingHealth, acknowledged: boolean): TimingGateDecision {
  if (health.level !== 'bad' || acknowledged) return { kind: 'proceed' };
  const figures = health.items
    .filter((i) => i.level === 'bad')
    .map((i) => ({ source: SOURCE_NAMES[i.source], maxGapMs: i.maxGapMs }))
    .sort((a, b) => (b.maxGapMs ?? 0) - (a.maxGapMs ?? 0));
  const measured = figures
    .map((f) => (f.maxGapMs === null ? f.source : `${f.source} max gap ${f.maxGapMs.toFixed(0)} ms`))
    .join(', ');
  return {
    kind: 'confirm',
    figures,
    message: `TIMING BAD: ${measured} over the last ${TIMING_WINDOW_MS / 1000} s (the link and the interlock trip at ${TIMING_TRIP_LIMIT_MS} ms of silence)`,
  };
}
