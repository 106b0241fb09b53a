import { robotConnectionId } from '../trial/trialActions';
import { trialCall } from '../trial/trialCall';
import { useTrialStore } from '../trial/trialStore';
import { patchCapture, useCalibrationStore } from './calibrationStore';

// The Calibration panel's actions (DESIGN §3 CalibrationRecord): capture the
// robot's start configuration once it holds still (calibration.capture; the stillness meter comes
// as calibration.stillness pushes, trial/trialPushes.ts), accept it into the campaign of the Trial
// runner's form (calibration.accept: the next matched pair uses it), or cancel a capture. Errors
// show in the Trial runner's error line, as its own calls' do.

/** The clip the calibration is compared with: the form's, else the selected pair's. */
function calibrationClipRef(): string | undefined {
  const { queue, selectedPairId } = useTrialStore.getState();
  const clipRef = useCalibrationStore.getState().clipRef.trim();
  if (clipRef) return clipRef;
  return queue?.pairs.find((p) => p.pairId === selectedPairId)?.clipId;
}

/** Capture (and Redo): waits for the robot to hold still, then shows the residuals vs the clip start. */
export async function captureCalibration(): Promise<void> {
  const { form } = useTrialStore.getState();
  const connectionId = robotConnectionId();
  if (!connectionId)
    return void useTrialStore.setState({
      error: 'connect the robot first (Connections: add its ws:// URL as a robot)',
    });
  if (!form.campaignDir.trim()) return void useTrialStore.setState({ error: 'give the campaign folder first' });
  patchCapture({ running: true, stillness: null, result: null, acceptedId: null });
  useTrialStore.setState({ error: null });
  const clipId = calibrationClipRef();
  const r = await trialCall('capture', (c) =>
    c.call('calibration.capture', { connectionId, campaignDir: form.campaignDir.trim(), ...(clipId && { clipId }) }),
  );
  patchCapture({ running: false, ...(r && { result: r }) });
}

export async function acceptCalibration(): Promise<void> {
  const r = useCalibrationStore.getState().result;
  if (!r || !r.ok) return;
  patchCapture({ accepting: true });
  const a = await trialCall('accept', (c) => c.call('calibration.accept', { captureId: r.captureId }));
  patchCapture({ accepting: false, ...(a && { acceptedId: a.calibrationId }) });
}

export async function cancelCapture(): Promise<void> {
  await trialCall('cancel', (c) => c.call('calibration.cancel', {}));
}
