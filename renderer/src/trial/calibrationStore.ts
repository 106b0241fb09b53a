import { create } from 'zustand';
import type { CalibrationCaptureDto, StillnessDto } from '../../../src/api/contract';

// The Calibration panel's state (low rate, React): the clip the start pose is compared with and
// the capture — waiting for stillness with its live meter (calibration.stillness pushes, ≤ 5 Hz),
// its result, and the id of the record once accepted into the campaign. The campaign, the robot
// connection and the selected pair are the Trial runner's (trial/trialStore.ts): a calibration is
// a step of the matched pair the runner starts next.

export interface CalibrationState {
  /** Reference clip for the residuals (id or core-v1 name); '' = the selected pair's clip. */
  clipRef: string;
  /** A capture is waiting for stillness. */
  running: boolean;
  /** The latest stillness meter (calibration.stillness). */
  stillness: StillnessDto | null;
  result: CalibrationCaptureDto | null;
  /** The id of the accepted record (calibration.accept). */
  acceptedId: string | null;
  accepting: boolean;
}

export const useCalibrationStore = create<CalibrationState>(() => ({
  clipRef: '',
  running: false,
  stillness: null,
  result: null,
  acceptedId: null,
  accepting: false,
}));

export const patchCapture = (patch: Partial<CalibrationState>): void => useCalibrationStore.setState(patch);
