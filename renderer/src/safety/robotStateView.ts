import type { InterlockStatusDto, RobotLinkStatusDto } from '../../../src/api/contract';
import { robotAlerts, type RobotAlert } from '../../../src/domain/robotLink/robotUpright';
import { timingHealth, type SchedulerFacts, type TimingHealth } from '../../../src/domain/timing/timingHealth';
import type { LightColour } from './lightViews';

// Pure view logic of the top bar's robot state: the controller's state from
// /g1/wbc_status, the IMU tilt, the fallen/damped banner (src/domain/robotLink/robotUpright.ts)
// and the timing health before arming (src/domain/timing/timingHealth.ts). No React, no stores.

export interface ChipView {
  colour: LightColour;
  label: string;
  detail: string;
}

const WBC_COLOUR = {
  idle: 'amber',
  ready: 'amber',
  tracking: 'green',
  done: 'amber',
  standing: 'green',
  damping: 'red',
  fault: 'red',
} as const;

/** The WBC chip: the state word as the robot reports it; grey before the first wbc_status. */
export function wbcChipView(r: RobotLinkStatusDto | null): ChipView {
  if (!r || r.presence === 'disconnected') return { colour: 'grey', label: '—', detail: 'no robot connected' };
  if (!r.wbc) return { colour: 'grey', label: '?', detail: `${r.name}: no /g1/wbc_status received yet` };
  const why = r.wbc.reason ? `: ${r.wbc.reason}` : '';
  return {
    colour: WBC_COLOUR[r.wbc.state],
    label: r.wbc.state.toUpperCase(),
    detail: `${r.name}: ${r.wbc.state}${why}`,
  };
}

const deg = (rad: number): number => (rad * 180) / Math.PI;

/** The tilt chip: degrees from upright, red past the fallen limit. */
export function tiltChipView(r: RobotLinkStatusDto | null): ChipView {
  if (!r || r.tiltRad === null || r.presence === 'disconnected')
    return { colour: 'grey', label: '—', detail: 'no IMU attitude received' };
  const fallen = robotAlerts({ tiltRad: r.tiltRad, wbcState: null }).length > 0;
  return {
    colour: fallen ? 'red' : 'green',
    label: `${deg(r.tiltRad).toFixed(0)}°`,
    detail: `IMU tilt ${deg(r.tiltRad).toFixed(1)}° from upright (lowstate imu.quat_wxyz)`,
  };
}

/** The banner's alerts for the robot shown (empty: no banner). */
export function robotBannerAlerts(r: RobotLinkStatusDto | null): RobotAlert[] {
  if (!r || r.presence === 'disconnected') return [];
  return robotAlerts({ tiltRad: r.tiltRad, wbcState: r.wbc?.state ?? null, wbcReason: r.wbc?.reason ?? null });
}

/** The timing verdict over the interlock's and the robot link's recent gaps and the host's scheduler. */
export function timingView(
  interlock: InterlockStatusDto | null,
  r: RobotLinkStatusDto | null,
  host: SchedulerFacts | null = null,
): TimingHealth {
  return timingHealth({
    interlock: interlock && interlock.open ? { maxGapMs: interlock.statusGapMaxMs } : null,
    lowstate: r && r.presence !== 'disconnected' ? { maxGapMs: r.frameGapMaxMs } : null,
    scheduler: host,
  });
}

const TIMING_COLOUR = { ok: 'green', warn: 'amber', bad: 'red', unknown: 'grey' } as const;

export function timingChipView(h: TimingHealth): ChipView {
  const label = { ok: 'OK', warn: 'WARN', bad: 'BAD', unknown: '—' }[h.level];
  return { colour: TIMING_COLOUR[h.level], label, detail: h.items.map((i) => i.message).join('\n') || h.summary };
}
