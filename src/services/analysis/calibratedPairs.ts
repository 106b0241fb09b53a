import type { StoredCalibration } from '../../domain/trace/records';
import type { CampaignStore } from '../trace';
import { listAdmittedPairs, matchedTracesOf } from '../trial/admittedPairs';

// Which qualification pairs have a calibrated start (a calibration with a simulator initial
// state): what the start-state sensitivity perturbs (sensitivityRunner.ts), and what the analysis
// lists as its sensitivity pairs (campaignAnalysisReader.ts, in the file worker: store reads only).

/** The pair's latest calibration with a simulator initial state (the start sensitivity perturbs), or null. */
function latestCalibrationOf(store: CampaignStore, pairId: string): StoredCalibration | null {
  const parent = store.getParentTrace(pairId);
  if (!parent) return null;
  const cals = matchedTracesOf(store, parent)
    .map((p) => store.getCalibration(p.identity.calibrationId!))
    .filter((c): c is StoredCalibration => c !== null && c.record.simulatorInitialState !== null)
    .sort((a, b) => b.record.capturedAt.localeCompare(a.record.capturedAt));
  return cals[0] ?? null;
}

export function latestCalibration(store: CampaignStore, pairId: string): StoredCalibration {
  const cal = latestCalibrationOf(store, pairId);
  if (!cal)
    throw new RangeError(
      `pair ${pairId} has no calibration with a simulator initial state: capture one first (motionbench calibrate, or the Trial runner)`,
    );
  return cal;
}

/** A qualification pair whose start can be perturbed: it has a calibration with a simulator initial state. */
export interface CalibratedPair {
  pairId: string;
  clipName: string;
  bindingName: string;
  calibrationId: string;
  capturedAt: string;
}

/** The campaign's admitted pairs that runSensitivity accepts, in listAdmittedPairs' order. */
export function calibratedPairs(store: CampaignStore): CalibratedPair[] {
  return listAdmittedPairs(store).flatMap((p) => {
    if (!p.admitted) return [];
    const cal = latestCalibrationOf(store, p.pairId);
    return cal
      ? [
          {
            pairId: p.pairId,
            clipName: p.clipName,
            bindingName: p.bindingName,
            calibrationId: cal.id,
            capturedAt: cal.record.capturedAt,
          },
        ]
      : [];
  });
}
