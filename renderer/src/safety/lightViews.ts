import type { InterlockStatusDto, RobotLinkStatusDto } from '../../../src/api/contract';
import { formatMs } from '../ui/format';

// Pure view logic of the interlock and robot-link lights (DESIGN §6; docs/CONSOLE.md "Lights"):
// green only when armed-and-fresh / fresh, grey when the services stopped sending status. No
// React, no stores: unit-tested in test/unit/rendererTrialFormat.test.ts.

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

function notUpdating(receivedAtMs: number | null, nowMs: number): LightView | null {
  if (receivedAtMs === null) return { colour: 'grey', label: '—', detail: 'no status from the services yet' };
  const age = nowMs - receivedAtMs;
  return age > SAFETY_STATUS_STALE_MS
    ? { colour: 'grey', label: '?', detail: `status not updating (last ${formatMs(age)} ago)` }
    : null;
}

/**
 * The interlock light: green only when ARMED by this console with a fresh status; amber SAFE (box
 * answering, not armed); red ESTOP or LOST; grey without a box or without fresh pushes.
 */
export function interlockLightView(
  s: InterlockStatusDto | null,
  receivedAtMs: number | null,
  nowMs: number,
): LightView {
  const stale = notUpdating(receivedAtMs, nowMs);
  if (stale) return stale;
  if (!s || s.light === 'CLOSED') return { colour: 'grey', label: 'CLOSED', detail: 'no interlock box open' };
  const age = `last status ${formatMs(s.lastStatusAgeMs)} ago`;
  switch (s.light) {
    case 'ARMED':
      return s.armedAndFresh
        ? { colour: 'green', label: 'ARMED', detail: `armed, ${age}` }
        : { colour: 'amber', label: 'ARMED', detail: `armed but the status is not fresh (${age})` };
    case 'SAFE':
      return { colour: 'amber', label: 'SAFE', detail: `safe (not armed), ${age}${s.armPending ? ', arming…' : ''}` };
    case 'ESTOP':
      return {
        colour: 'red',
        label: 'ESTOP',
        detail: `e-stop pressed${s.lastTrip ? `: ${s.lastTrip.detail}` : ''}, ${age}`,
      };
    case 'LOST':
      return {
        colour: 'red',
        label: 'LOST',
        detail: `interlock lost${s.lastTrip ? `: ${s.lastTrip.reason} (${s.lastTrip.detail})` : ''}, ${age}`,
      };
  }
}

/** The robot link light: green only when the last frame is younger than the limit (50 ms). */
export function linkLightView(r: RobotLinkStatusDto | null, receivedAtMs: number | null, nowMs: number): LightView {
  const stale = notUpdating(receivedAtMs, nowMs);
  if (stale) return stale;
  if (!r) return { colour: 'grey', label: 'NONE', detail: 'no robot connection' };
  const figures = `last frame ${formatMs(r.lastFrameAgeMs)} ago${r.rateHz !== null ? `, ${r.rateHz.toFixed(0)} Hz` : ''}${r.latencyMs !== null ? `, rtt ${formatMs(r.latencyMs)}` : ''}`;
  if (r.fresh) return { colour: 'green', label: 'FRESH', detail: `${r.name}: ${figures}` };
  if (r.presence === 'disconnected') return { colour: 'grey', label: 'OFF', detail: `${r.name}: disconnected` };
  if (r.presence === 'lost') return { colour: 'red', label: 'LOST', detail: `${r.name}: link lost (${figures})` };
  if (r.presence === 'connecting') return { colour: 'amber', label: 'CONN', detail: `${r.name}: connecting` };
  return { colour: 'amber', label: 'STALE', detail: `${r.name}: not fresh (limit ${r.freshLimitMs} ms; ${figures})` };
}
