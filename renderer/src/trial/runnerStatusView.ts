import type { RobotLinkStatusDto } from '../../../src/api/contract';

// Pure view of a robot-side runner's state (wbc_status.runner, `motionbench g1-runner`) for the
// Trial runner: what its LowCmd does to the motors now, the measured command rate, CRC errors,
// the wireless remote's stop, the age of its last DDS lowstate. No React, no stores: unit-tested
// in test/unit/runnerStatusView.test.ts. The figures arrive with safety.status (a few per second),
// never the 500 Hz stream itself.

export type Tone = 'ok' | 'warn' | 'bad' | 'muted';

export interface RunnerFigureView {
  key: 'mode' | 'lowcmd' | 'crc' | 'remote' | 'lowstate' | 'dds' | 'switcher';
  label: string;
  value: string;
  tone: Tone;
  title: string;
}

/** The runner writes LowCmd at 500 Hz; below this measured rate the figure is amber. */
export const LOWCMD_WARN_BELOW_HZ = 400;
/** The runner damps on a lowstate older than 100 ms; from half of it the age is amber. */
export const LOWSTATE_WARN_MS = 50;
export const LOWSTATE_LIMIT_MS = 100;

const MODE_VIEW: Record<NonNullable<RobotLinkStatusDto['runner']>['mode'], { tone: Tone; title: string }> = {
  damping: { tone: 'warn', title: 'kp 0, kd 3 on every joint: the motors only resist motion; the robot sinks slowly' },
  ramping: { tone: 'ok', title: 'moving the joints to the clip’s start pose at bounded speed under holding gains' },
  holding: { tone: 'ok', title: 'holding a pose under FixStand gains (a joint hold does not balance the robot)' },
  tracking: { tone: 'ok', title: 'following the binding’s targets at its control rate' },
  standing: {
    tone: 'ok',
    title: 'the declared standing controller (velocity policy at zero command) keeps the robot up after the clip',
  },
};

const ms = (v: number): string => (v < 10 ? `${v.toFixed(1)} ms` : `${Math.round(v)} ms`);

/** The figures of the runner behind `link`, or null when the link's server is not a runner (or said nothing yet). */
export function runnerStatusView(link: RobotLinkStatusDto | null | undefined): RunnerFigureView[] | null {
  const r = link?.runner;
  if (!r) return null;
  const mode = MODE_VIEW[r.mode];
  const hz = r.lowcmdHz;
  const age = r.lowstateAgeMs;
  const switcher = r.motionSwitcher;
  const figures: RunnerFigureView[] = [
    { key: 'mode', label: 'motors', value: r.mode.toUpperCase(), tone: mode.tone, title: mode.title },
    {
      key: 'lowcmd',
      label: 'LowCmd',
      value: hz === null ? '— Hz' : `${Math.round(hz)} Hz`,
      tone: hz === null ? 'muted' : hz < LOWCMD_WARN_BELOW_HZ ? 'warn' : 'ok',
      title:
        hz === null
          ? 'no rate measured yet'
          : `LowCmd written per second (500 Hz declared)${r.lowcmdPeriodP99Ms !== null ? `; period p99 ${ms(r.lowcmdPeriodP99Ms)}` : ''}`,
    },
    {
      key: 'crc',
      label: 'CRC errors',
      value: String(r.crcErrors),
      tone: r.crcErrors > 0 ? 'bad' : 'ok',
      title: 'LowState messages the runner dropped for a wrong CRC since it started',
    },
    {
      key: 'remote',
      label: 'remote',
      value: r.remoteStopHeld ? 'L2+B HELD' : 'released',
      tone: r.remoteStopHeld ? 'bad' : 'ok',
      title: 'the wireless remote’s stop (L2 + B) damps the robot; while held, hold and prepare are refused',
    },
    {
      key: 'lowstate',
      label: 'lowstate',
      value: age === null ? 'none' : ms(age),
      tone: age === null || age >= LOWSTATE_LIMIT_MS ? 'bad' : age >= LOWSTATE_WARN_MS ? 'warn' : 'ok',
      title: `age of the runner’s last DDS lowstate when it reported (it damps beyond ${LOWSTATE_LIMIT_MS} ms)`,
    },
    {
      key: 'dds',
      label: 'DDS',
      value: `${r.interface} · ${r.domain}`,
      tone: 'muted',
      title: `network interface ${r.interface}, domain ${r.domain}`,
    },
  ];
  // The motion switcher's last answer (asked at prepare): a mode owning the motors is red, silence amber.
  if (switcher)
    figures.push({
      key: 'switcher',
      label: 'motion switcher',
      value:
        switcher.answer === 'mode'
          ? `MODE ${switcher.mode ?? '?'}`
          : switcher.answer === 'free'
            ? 'no mode'
            : switcher.answer === 'no_answer'
              ? 'no answer'
              : switcher.answer,
      tone: !switcher.allowed ? 'bad' : switcher.answer === 'free' ? 'ok' : 'warn',
      title: switcher.detail,
    });
  return figures;
}
