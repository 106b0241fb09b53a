import type { ApiParams, CalibrationAcceptResult, CalibrationCaptureDto, StillnessDto } from '../../api/contract';
import type { StartResiduals } from '../../domain/calibration/residuals';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { CalibrationRecord } from '../../domain/trace/records';
import { openCampaign } from '../trace';
import type { StillnessProgress } from '../trial/trialTypes';
import { ApiFailure } from './apiFailure';
import type { ConnectionRegistry } from './connectionRegistry';
import type { EventHub } from './eventHub';
import { nextId, registryTrialRobot, requireRobot, requireWritableCampaign, type TrialServices } from './trialServices';

// calibration.capture / accept / cancel: captureRobotCalibration (src/services/trial) on a robot
// connection of the registry; stillness progress → `calibration.stillness` pushes (≤ 5 Hz); the
// record waits here until calibration.accept stores it (putCalibration). One capture at a time.

/** Stillness pushes per second during a capture. */
const STILLNESS_PUSH_HZ = 5;
/** Captures kept waiting for calibration.accept; the oldest is dropped beyond this. */
const MAX_PENDING_CAPTURES = 8;

export interface CalibrationCapturesOptions {
  hub: EventHub;
  registry: ConnectionRegistry;
  profile: () => RobotProfile;
  services: () => Promise<TrialServices>;
  /** A clip by core-v1 id or name, or one this console loaded; null when unknown. */
  findClip: (ref: string) => MotionClip | null;
  /** Throws when something else holds the robot or the cores (a running trial, batch work). */
  refuseWhileBusy: () => void;
  now: () => number;
  log: (line: string) => void;
}

interface PendingCapture {
  captureId: string;
  campaignDir: string;
  record: CalibrationRecord;
}

export function stillnessDto(p: StillnessProgress): StillnessDto {
  return {
    still: p.still,
    windowFilledS: p.windowFilledS,
    windowNeededS: p.windowNeededS,
    reasons: p.reasons.map((r) => ({
      code: r.code,
      message: r.message,
      ...(r.joint !== undefined && { joint: r.joint }),
    })),
    stats: p.stats ? numericRecord(p.stats) : null,
  };
}

function numericRecord(o: object): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(o)) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  return out;
}

function residualsDto(r: StartResiduals | null) {
  if (!r) return null;
  return {
    jointRad: [...r.jointRad],
    maxAbsJointRad: r.maxAbsJointRad,
    maxAbsJoint: r.maxAbsJoint,
    rmsJointRad: r.rmsJointRad,
    rollRad: r.rollRad,
    pitchRad: r.pitchRad,
    headingRad: r.headingRad,
    rootPosM: r.rootPosM ? ([r.rootPosM[0], r.rootPosM[1], r.rootPosM[2]] as [number, number, number]) : null,
  };
}

export class CalibrationCaptures {
  private running: { captureId: string; connectionId: string; controller: AbortController } | null = null;
  private readonly pending = new Map<string, PendingCapture>();

  constructor(private readonly o: CalibrationCapturesOptions) {}

  /** The connection a capture runs on now, or null. */
  runningOn(): string | null {
    return this.running?.connectionId ?? null;
  }

  async capture(p: ApiParams<'calibration.capture'>): Promise<CalibrationCaptureDto> {
    if (this.running)
      throw new ApiFailure(
        'conflict',
        `a capture is running on ${this.running.connectionId}: wait for it or cancel it`,
      );
    this.o.refuseWhileBusy();
    const campaignDir = requireWritableCampaign(p.campaignDir);
    let clip: MotionClip | null = null;
    if (p.clipId !== undefined) {
      clip = this.o.findClip(p.clipId);
      if (!clip)
        throw new ApiFailure(
          'not_found',
          `clip "${p.clipId}" is neither in core-v1 nor loaded in this console`,
          'params.clipId',
        );
    }
    const backend = await requireRobot(this.o.registry, p.connectionId);
    const link = registryTrialRobot(this.o.registry, p.connectionId, backend, this.o.log);
    const captureId = nextId('capture', this.o.now());
    const controller = new AbortController();
    this.running = { captureId, connectionId: p.connectionId, controller };
    let lastPush = 0;
    const push = (progress: StillnessProgress, force: boolean): void => {
      const t = this.o.now();
      if (!force && t - lastPush < 1000 / STILLNESS_PUSH_HZ) return;
      lastPush = t;
      this.o.hub.broadcast({
        type: 'calibration.stillness',
        captureId,
        connectionId: p.connectionId,
        progress: stillnessDto(progress),
      });
    };
    try {
      const s = await this.o.services();
      const r = await s.captureRobotCalibration({
        link,
        profile: this.o.profile(),
        clip,
        ...(p.timeoutS !== undefined && { timeoutMs: p.timeoutS * 1000 }),
        onProgress: (progress) => push(progress, progress.still),
        signal: controller.signal,
      });
      if (!r.ok) {
        return {
          ok: false,
          captureId,
          message: r.message,
          reasons: r.reasons.map((x) => ({
            code: x.code,
            message: x.message,
            ...(x.joint !== undefined && { joint: x.joint }),
          })),
          stats: r.stats ? numericRecord(r.stats) : null,
        };
      }
      this.pending.set(captureId, { captureId, campaignDir, record: r.record });
      while (this.pending.size > MAX_PENDING_CAPTURES) this.pending.delete(this.pending.keys().next().value as string);
      return {
        ok: true,
        captureId,
        connectionId: p.connectionId,
        campaignDir,
        robotUnit: r.record.robotUnit,
        capturedAt: r.record.capturedAt,
        clip: clip ? { id: clip.id, name: clip.name } : null,
        record: JSON.parse(JSON.stringify(r.record)) as Record<string, unknown>,
        residualsVsClip: residualsDto(r.residualsVsClip),
        clipStartJointRad: clip
          ? Array.from(clip.jointPosRad.subarray(0, clip.jointPosRad.length / clip.frameCount))
          : null,
        measuredJointRad: [...r.record.measured.jointPosRad],
        stats: numericRecord(r.stats),
      };
    } finally {
      this.running = null;
    }
  }

  async accept(p: ApiParams<'calibration.accept'>): Promise<CalibrationAcceptResult> {
    const c = this.pending.get(p.captureId);
    if (!c)
      throw new ApiFailure(
        'not_found',
        `no capture "${p.captureId}" waiting to be accepted (captures are kept until the services restart; capture again)`,
        'params.captureId',
      );
    const store = await openCampaign(c.campaignDir);
    try {
      const stored = store.putCalibration(c.record);
      this.pending.delete(p.captureId);
      return { calibrationId: stored.id, campaignDir: c.campaignDir, captureId: p.captureId };
    } finally {
      store.close();
    }
  }

  cancel(reason = 'cancelled by the operator'): { cancelled: string[] } {
    const c = this.running;
    if (!c || c.controller.signal.aborted) return { cancelled: [] };
    c.controller.abort(reason);
    return { cancelled: [c.captureId] };
  }
}
