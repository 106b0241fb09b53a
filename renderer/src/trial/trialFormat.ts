import type { InterlockStatusDto, RobotLinkStatusDto, StartResidualsDto, StillnessDto, TrialJobStatus } from '../../../src/api/contract';
import { DEFAULT_STILLNESS_THRESHOLDS } from '../../../src/domain/calibration/stillness';
import { G1_JOINT_NAMES } from '../../../src/domain/robot/g1Joints';

// Pure view logic of the Trial runner and Calibration panels: the lights, the stillness meter, the
// residual table. No React, no stores: unit-tested in test/unit/rendererTrial*.test.ts.

export type LightColour = 'green' | 'amber' | 'red' | 'grey';

export interface LightView {
  colour: LightColour;
  /** Short word on the light (ARMED, SAFE, ESTOP, LOST, CLOSED, FRESH, STALE, …). */
  label: string;
  /** One line for the tooltip and the tests. */
  detail: string;
}

/** safety.status pushes older than this make every light grey: the console no longer knows. */
export const SAFETY_STATUS_STALE_MS = 1000;

const ms = (v: number | null): string => (v === null ? '—' : v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`);

function notUpdating(receivedAtMs: number | null, nowMs: number): LightView | null {
  if (receivedAtMs === null) return { colour: 'grey', label: '—', detail: 'no status from the services yet' };
  const age = nowMs - receivedAtMs;
  return age > SAFETY_STATUS_STALE_MS ? { colour: 'grey', label: '?', detail: `status not updating (last ${ms(age)} ago)` } : null;
}

/**
 * The interlock light: green only when ARMED by this console with a fresh status; amber SAFE (box
 * answering, not armed); red ESTOP or LOST; grey without a box or without fresh pushes.
 */
export function interlockLightView(s: InterlockStatusDto | null, receivedAtMs: number | null, nowMs: number): LightView {
  const stale = notUpdating(receivedAtMs, nowMs);
  if (stale) return stale;
  if (!s || s.light === 'CLOSED') return { colour: 'grey', label: 'CLOSED', detail: 'no interlock box open' };
  const age = `last status ${ms(s.lastStatusAgeMs)} ago`;
  switch (s.light) {
    case 'ARMED':
      return s.armedAndFresh ? { colour: 'green', label: 'ARMED', detail: `armed, ${age}` } : { colour: 'amber', label: 'ARMED', detail: `armed but the status is not fresh (${age})` };
    case 'SAFE':
      return { colour: 'amber', label: 'SAFE', detail: `safe (not armed), ${age}${s.armPending ? ', arming…' : ''}` };
    case 'ESTOP':
      return { colour: 'red', label: 'ESTOP', detail: `e-stop pressed${s.lastTrip ? `: ${s.lastTrip.detail}` : ''}, ${age}` };
    case 'LOST':
      return { colour: 'red', label: 'LOST', detail: `interlock lost${s.lastTrip ? `: ${s.lastTrip.reason} (${s.lastTrip.detail})` : ''}, ${age}` };
  }
}

/** The robot link light: green only when the last frame is younger than the limit (50 ms). */
export function linkLightView(r: RobotLinkStatusDto | null, receivedAtMs: number | null, nowMs: number): LightView {
  const stale = notUpdating(receivedAtMs, nowMs);
  if (stale) return stale;
  if (!r) return { colour: 'grey', label: 'NONE', detail: 'no robot connection' };
  const figures = `last frame ${ms(r.lastFrameAgeMs)} ago${r.rateHz !== null ? `, ${r.rateHz.toFixed(0)} Hz` : ''}${r.latencyMs !== null ? `, rtt ${ms(r.latencyMs)}` : ''}`;
  if (r.fresh) return { colour: 'green', label: 'FRESH', detail: `${r.name}: ${figures}` };
  if (r.presence === 'disconnected') return { colour: 'grey', label: 'OFF', detail: `${r.name}: disconnected` };
  if (r.presence === 'lost') return { colour: 'red', label: 'LOST', detail: `${r.name}: link lost (${figures})` };
  if (r.presence === 'connecting') return { colour: 'amber', label: 'CONN', detail: `${r.name}: connecting` };
  return { colour: 'amber', label: 'STALE', detail: `${r.name}: not fresh (limit ${r.freshLimitMs} ms; ${figures})` };
}

export interface StillnessMeter {
  /** 0..1 of the still window collected. */
  fill: number;
  still: boolean;
  /** Largest joint velocity in the window vs its limit, rad/s; null before any frame. */
  jointVelRadS: number | null;
  jointVelLimitRadS: number;
  gyroRadS: number | null;
  gyroLimitRadS: number;
  /** The first reason it is not still (verbatim), or null. */
  why: string | null;
}

export function stillnessMeter(p: StillnessDto | null): StillnessMeter {
  const t = DEFAULT_STILLNESS_THRESHOLDS;
  if (!p) return { fill: 0, still: false, jointVelRadS: null, jointVelLimitRadS: t.maxJointVelRadS, gyroRadS: null, gyroLimitRadS: t.maxGyroRadS, why: null };
  const fill = p.windowNeededS > 0 ? Math.max(0, Math.min(1, p.windowFilledS / p.windowNeededS)) : 0;
  const num = (v: number | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    fill: p.still ? 1 : fill,
    still: p.still,
    jointVelRadS: num(p.stats?.maxJointVelRmsRadS),
    jointVelLimitRadS: t.maxJointVelRadS,
    gyroRadS: num(p.stats?.maxGyroRadS),
    gyroLimitRadS: t.maxGyroRadS,
    why: p.still ? null : (p.reasons[0]?.message ?? null),
  };
}

export interface ResidualRow {
  joint: string;
  index: number;
  /** Measured − clip start, rad. */
  deltaRad: number;
  measuredRad: number | null;
  clipRad: number | null;
}

/** Per-joint residuals vs the clip start, largest |Δ| first (ties: canonical order). */
export function residualRows(r: StartResidualsDto, measuredRad: readonly number[] | null, clipRad: readonly number[] | null): ResidualRow[] {
  return r.jointRad
    .map((d, i) => ({ joint: G1_JOINT_NAMES[i] ?? `joint ${i}`, index: i, deltaRad: d, measuredRad: measuredRad?.[i] ?? null, clipRad: clipRad?.[i] ?? null }))
    .sort((a, b) => Math.abs(b.deltaRad) - Math.abs(a.deltaRad) || a.index - b.index);
}

export const deg = (rad: number): string => `${((rad * 180) / Math.PI).toFixed(1)}°`;

/** What the runner is doing, in one line for the panel. */
export function phaseLine(s: TrialJobStatus): string {
  if (s.state !== 'running') {
    const tail = s.error ?? s.result?.stoppedEarly ?? s.stopRequested?.reason ?? null;
    // "completed" says the session ran every trial asked for, not that the robot completed them:
    // the outcomes follow, so an e-stopped trial never hides behind a green word.
    const outcomes = s.state === 'completed' ? realOutcomeSummary(s) : '';
    return `${s.state}${tail ? `: ${tail}` : ''}${outcomes ? ` — real trials: ${outcomes}` : ''}`;
  }
  const idx = s.trialIndex !== null ? ` · trial ${s.trialIndex + 1}/${s.trials}` : '';
  return `${(s.phase ?? 'starting').replace(/_/g, ' ')}${idx} — ${s.phaseMessage}`;
}

/** "2 completed, 1 estop": the real trials' outcomes (earlier sessions included), in first-seen order. */
export function realOutcomeSummary(s: TrialJobStatus): string {
  const counts = new Map<string, number>();
  for (const e of s.episodes) if (e.domain === 'real_robot') counts.set(e.outcome, (counts.get(e.outcome) ?? 0) + 1);
  return [...counts].map(([o, n]) => `${n} ${o.replace(/_/g, ' ')}`).join(', ');
}

/** Real trials done / owed, from the episodes the job saw (an infrastructure error does not count). */
export function realProgress(s: TrialJobStatus): { done: number; total: number } {
  const done = new Set(s.episodes.filter((e) => e.domain === 'real_robot' && e.outcome !== 'infrastructure_error').map((e) => e.trialIndex)).size;
  return { done, total: s.trials };
}

/** Parses the trials field: an integer 1..10, or the reason it is not. */
export function parseTrials(text: string): { ok: true; trials: number } | { ok: false; reason: string } {
  const v = Number(text.trim());
  return Number.isInteger(v) && v >= 1 && v <= 10 ? { ok: true, trials: v } : { ok: false, reason: `trials "${text}": a whole number from 1 to 10` };
}
