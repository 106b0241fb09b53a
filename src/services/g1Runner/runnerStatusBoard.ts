import { performance } from 'node:perf_hooks';
import type { RunnerMotionSwitcherStatus, RunnerStatus } from '../../domain/bridge/g1BridgeContract';
import type { RunnerMode } from '../../domain/g1Runner/g1RunnerSafety';
import type { RunnerWorkerStats } from './g1RunnerProtocol';

/**
 * What the runner's main thread knows of its real-time thread, from the reports it sends: the
 * motor mode and every change of it, the last stats (and the LowCmd rate between two of them), the
 * motion switcher's answer, and when the last lowstate frame came. It answers `wbc_status.runner`.
 */
export class RunnerStatusBoard {
  /** The real-time thread starts damped and reports only changes. */
  mode: RunnerMode = 'damping';
  stats: RunnerWorkerStats | null = null;
  motionSwitcher: RunnerMotionSwitcherStatus | null = null;
  /** Every mode change with its cause, in order. */
  readonly modes: { mode: RunnerMode; cause: string; atMs: number }[] = [];
  private statsAtMs: number | null = null;
  private lowCmdHz: number | null = null;
  private lastFrameMs: number | null = null;

  frameArrived(): void {
    this.lastFrameMs = performance.now();
  }

  modeChanged(mode: RunnerMode, cause: string): void {
    this.mode = mode;
    this.modes.push({ mode, cause, atMs: performance.now() });
  }

  statsArrived(stats: RunnerWorkerStats): void {
    const now = performance.now();
    if (this.stats && this.statsAtMs !== null && now > this.statsAtMs) {
      this.lowCmdHz = ((stats.lowCmdSent - this.stats.lowCmdSent) * 1000) / (now - this.statsAtMs);
    }
    this.stats = stats;
    this.statsAtMs = now;
  }

  status(interfaceName: string, domainId: number): RunnerStatus {
    const stats = this.stats;
    return {
      mode: this.mode,
      lowcmd_hz: this.lowCmdHz,
      lowcmd_period_p99_ms: stats ? stats.periodP99Ms : null,
      crc_errors: stats?.crcErrors ?? 0,
      remote_stop_held: stats?.remoteStopHeld ?? false,
      lowstate_age_ms: this.lastFrameMs === null ? null : Math.max(0, performance.now() - this.lastFrameMs),
      interface: interfaceName,
      domain: domainId,
      motion_switcher: this.motionSwitcher,
    };
  }
}
