import type { BackendEvent } from '../../domain/backend/backend';
import {
  captureFromDetector,
  measuredVsClipStart,
  StillnessDetector,
  withClip,
  type StillnessStatus,
} from '../../domain/calibration';
import type { CalibrationCaptureRequest, CalibrationCaptureResult, StillnessProgress } from './trialTypes';

// Calibration capture from the live robot: watch the robot's state stream,
// judge stillness over the detector's window as frames arrive, and capture the start state the
// moment the window is still — or give up after the timeout with the reasons the robot was not
// still. The pure parts (stillness, averaging, simulator start, residuals) are
// src/domain/calibration; this file only connects them to a TrialRobot and a clock.

/** How often the window is judged and progress reported, ms. */
const EVALUATE_EVERY_MS = 100;
const DEFAULT_TIMEOUT_MS = 20_000;

export async function captureRobotCalibration(req: CalibrationCaptureRequest): Promise<CalibrationCaptureResult> {
  const { link, profile } = req;
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let detector = new StillnessDetector();
  let lastTimeS = -Infinity;
  let lastStatus: StillnessStatus | null = null;
  let received = 0;

  const progressOf = (s: StillnessStatus): StillnessProgress => ({
    still: s.still,
    windowFilledS: Math.min(s.stats.spanS, detector.thresholds.windowS),
    windowNeededS: detector.thresholds.windowS,
    reasons: s.reasons,
    stats: s.stats,
  });

  return new Promise<CalibrationCaptureResult>((resolve) => {
    let settled = false;
    const finish = (r: CalibrationCaptureResult): void => {
      if (settled) return;
      settled = true;
      unsubscribe();
      clearInterval(timer);
      clearTimeout(deadline);
      req.signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const notStill = (message: string): CalibrationCaptureResult => ({
      ok: false,
      message,
      reasons: lastStatus?.reasons ?? [],
      stats: lastStatus?.stats ?? null,
    });
    const unsubscribe = link.subscribe(async (events: BackendEvent[]) => {
      for (const e of events) {
        if (e.type !== 'frames') continue;
        for (const f of e.frames) {
          // The backend clock restarts at 0 when an episode starts: a new window then.
          if (f.timeS <= lastTimeS) detector = new StillnessDetector();
          lastTimeS = f.timeS;
          detector.push(f);
          received++;
        }
      }
    });
    const evaluate = (): void => {
      if (settled) return;
      const status = detector.evaluate();
      lastStatus = status;
      req.onProgress?.(progressOf(status));
      if (!status.still) return;
      const atMs = Date.now();
      const captured = captureFromDetector(detector, { robotUnit: link.robotUnit, atMs });
      if (!captured.ok) return; // cannot happen right after a still evaluate; judge again next time
      let record = captured.record;
      let residualsVsClip = null;
      if (req.clip) {
        record = withClip(record, req.clip, profile);
        residualsVsClip = measuredVsClipStart(record, req.clip);
      }
      finish({ ok: true, record, residualsVsClip, stats: captured.measurement.stats });
    };
    const timer = setInterval(evaluate, EVALUATE_EVERY_MS);
    const deadline = setTimeout(() => {
      evaluate();
      const why =
        received === 0
          ? `no state from the robot (${link.backend.name}, ${link.backend.presence}) in ${timeoutMs} ms`
          : `the robot was not still for ${detector.thresholds.windowS} s within ${timeoutMs} ms: ${(lastStatus?.reasons ?? []).map((r) => r.message).join('; ') || 'no reason recorded'}`;
      finish(notStill(`calibration refused: ${why}`));
    }, timeoutMs);
    const onAbort = (): void => finish(notStill('calibration cancelled by the operator'));
    if (req.signal?.aborted) onAbort();
    else req.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
