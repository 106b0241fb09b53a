import { PUSH_RATE_HZ } from '../../api/contract';
import { robotBackendOf } from '../../domain/backend/backend';
import type { RunnerStatus, WbcState } from '../../domain/bridge/g1BridgeContract';
import type { RobotLinkStatusDto } from '../../api/trialContract';
import { tiltRadFromQuatWxyz } from '../../domain/robotLink/robotUpright';
import { TIMING_WINDOW_MS } from '../../domain/timing/timingHealth';
import { sendEmulatorControl } from '../robotEmulator/emulatorControlClient';
import { ApiFailure } from './apiFailure';
import type { ConnectionRegistry } from './connectionRegistry';
import type { EventHub, LiveBatch } from './eventHub';

// The live robot outside trials: every connected robot's newest measured joints and root go to
// the renderer as its connection's live stream (`live.frames`, source robot_idle, one row) at
// PUSH_RATE_HZ (transient: a client behind gets the next one), read from the registry's copy of
// the newest frame, so no trial has to run for the viewport to show the robot. Beside it, the figures the top bar shows for each robot link (the
// controller's wbc_status, the IMU tilt, the lowstate gaps), merged into safety.status by
// TrialJobs.robotLinks, and the emulator's human reset (robot.emulatorReset), offered only when
// the link declares the emulator's control channel (RobotLinkCapabilities.emulatorControl).

/** What the top bar shows of one robot link beyond its freshness (RobotLinkStatusDto). */
export interface RobotLinkFigures {
  wbc: { state: WbcState; reason: string | null } | null;
  runner: RunnerFiguresDto | null;
  tiltRad: number | null;
  frameGapMaxMs: number | null;
  emulatorControl: boolean;
}

type RunnerFiguresDto = NonNullable<RobotLinkStatusDto['runner']>;

/** wbc_status.runner (validated at intake) in the console's field names. */
export function runnerFigures(r: RunnerStatus): RunnerFiguresDto {
  return {
    mode: r.mode,
    lowcmdHz: r.lowcmd_hz,
    lowcmdPeriodP99Ms: r.lowcmd_period_p99_ms,
    crcErrors: r.crc_errors,
    remoteStopHeld: r.remote_stop_held,
    lowstateAgeMs: r.lowstate_age_ms,
    interface: r.interface.slice(0, 64),
    domain: r.domain,
    motionSwitcher: r.motion_switcher
      ? {
          answer: r.motion_switcher.answer,
          mode: r.motion_switcher.mode === null ? null : r.motion_switcher.mode.slice(0, 64),
          allowed: r.motion_switcher.allowed,
          detail: r.motion_switcher.detail.slice(0, 500),
        }
      : null,
  };
}

/** The figures of the registry entry `connectionId` now (its backend's declarations and the registry's copies). */
export function robotLinkFigures(registry: ConnectionRegistry, connectionId: string): RobotLinkFigures {
  const b = registry.existingBackend(connectionId);
  const robot = b ? robotBackendOf(b) : null;
  const latest = registry.latestState(connectionId);
  const status = robot?.wbcStatus ?? null;
  const tilt = latest ? tiltRadFromQuatWxyz(latest.imuQuatWxyz) : null;
  return {
    wbc: status ? { state: status.state, reason: status.reason ? status.reason.slice(0, 500) : null } : null,
    runner: status?.runner ? runnerFigures(status.runner) : null,
    tiltRad: tilt !== null && Number.isFinite(tilt) ? tilt : null,
    frameGapMaxMs: latest ? registry.frameGapMaxMs(connectionId, TIMING_WINDOW_MS) : null,
    emulatorControl: robot?.robotLink.emulatorControl ?? false,
  };
}

/** Unacknowledged push slots the idle robots' live.frames leave to the other pushes (the lights' safety.status first). */
const ROBOT_LIVE_RESERVED_SLOTS = 2;
/** Robots streamed at once outside trials. */
const MAX_IDLE_ROBOTS = 8;

export interface RobotLiveOptions {
  hub: EventHub;
  registry: ConnectionRegistry;
  /** Sends one emulator control action (default: sendEmulatorControl, a short-lived Foxglove client). */
  sendControl?: typeof sendEmulatorControl;
}

export class RobotLive {
  private readonly timer: ReturnType<typeof setInterval>;
  /** Connection id → the revision of the newest frame last sent. */
  private readonly sent = new Map<string, number>();
  /** Connection id → client id → pushes skipped for that client (it was behind). */
  private readonly skipped = new Map<string, Map<number, number>>();
  private closed = false;

  constructor(private readonly o: RobotLiveOptions) {
    this.timer = setInterval(() => this.push(), 1000 / PUSH_RATE_HZ);
    this.timer.unref?.();
  }

  /**
   * One live.frames push per connected robot not in a trial (the renderer draws exactly those)
   * that has a new frame, and a last one (`ended`) for a robot that left that set; none while
   * nothing changes.
   */
  private push(): void {
    if (this.closed) return;
    const present = new Set<string>();
    for (const c of this.o.registry.list()) {
      // A leased robot is running a trial: its trial_job stream draws it (and this push would only
      // add load on the loop that carries the trial); it comes back when the lease is released.
      if (c.kind !== 'robot' || c.presence === 'disconnected' || c.leasedRunId !== null) continue;
      if (present.size === MAX_IDLE_ROBOTS) break;
      const l = this.o.registry.latestState(c.id);
      if (!l) continue;
      present.add(c.id);
      if (this.sent.get(c.id) === l.revision) continue;
      this.sent.set(c.id, l.revision);
      this.send({
        ...this.idleBatch(c.id, false),
        count: 1,
        frame: [l.tick],
        timeS: [l.atMs / 1000],
        jointPosRad: Array.from(l.jointPosRad),
        rootPosM: l.rootPosM ? Array.from(l.rootPosM) : null,
        rootQuatWxyz: l.rootQuatWxyz ? Array.from(l.rootQuatWxyz) : null,
      });
    }
    for (const id of [...this.sent.keys()])
      if (!present.has(id)) {
        this.sent.delete(id);
        this.send(this.idleBatch(id, true));
        this.skipped.delete(id);
      }
  }

  /** An idle robot's batch without rows (the last one of its stream when `ended`). */
  private idleBatch(connectionId: string, ended: boolean): LiveBatch {
    return {
      type: 'live.frames',
      source: 'robot_idle',
      connectionId,
      runId: null,
      jobId: null,
      count: 0,
      firstFrame: null,
      frame: [],
      timeS: [],
      jointPosRad: [],
      rootPosM: null,
      rootQuatWxyz: null,
      readings: null,
      ended,
    };
  }

  private send(batch: LiveBatch): void {
    let skipped = this.skipped.get(batch.connectionId);
    if (!skipped) this.skipped.set(batch.connectionId, (skipped = new Map()));
    const counts = skipped;
    this.o.hub.broadcastTransient(
      (clientId) => ({ ...batch, droppedFrames: counts.get(clientId) ?? 0 }),
      (clientId) => counts.set(clientId, (counts.get(clientId) ?? 0) + batch.count),
      ROBOT_LIVE_RESERVED_SLOTS,
    );
  }

  /** robot.emulatorReset: the emulator's human_reset on a robot connection that declares it. */
  async emulatorReset(connectionId: string): Promise<{ ok: boolean; message: string }> {
    const kind = this.o.registry.kindOf(connectionId);
    if (kind === null) throw new ApiFailure('not_found', `no connection "${connectionId}"`, 'params.connectionId');
    const b = this.o.registry.existingBackend(connectionId);
    const robot = b ? robotBackendOf(b) : null;
    const url = this.o.registry.get(connectionId).url;
    if (kind !== 'robot' || !robot || !url)
      throw new ApiFailure('conflict', `connection "${connectionId}" is not a connected robot`, 'params.connectionId');
    if (!robot.robotLink.emulatorControl)
      throw new ApiFailure(
        'unsupported',
        `${url} does not declare the robot emulator's control channel: a real robot is put back by a person`,
        'params.connectionId',
      );
    // An EmulatorControlError (no answer, refused) is mapped by apiErrorMap like every other error.
    return await (this.o.sendControl ?? sendEmulatorControl)(url, { action: 'human_reset' });
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }
}
