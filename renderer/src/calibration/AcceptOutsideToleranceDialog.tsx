import type { StartPoseVerdict } from '../../../src/domain/trial/startPoseVerdict';

// The confirmation the Calibration panel asks before it accepts a start pose outside tolerance:
// every trial of the pair would start from it.

export function AcceptOutsideToleranceDialog({
  verdict,
  onAccept,
  onCancel,
}: {
  verdict: StartPoseVerdict;
  onAccept: () => void;
  onCancel: () => void;
}) {
  return (
    <div
      className="timing-warning"
      role="alertdialog"
      aria-label="Accept a start pose outside tolerance?"
      data-testid="cal-accept-confirm"
    >
      <div className="strong bad-text">{verdict.summary}</div>
      <div className="small">
        Every trial of the pair, and its simulation branch, would start from this pose, away from the clip's first
        frame. Put the robot back and Redo, or accept it anyway.
      </div>
      <div className="row">
        <button type="button" className="danger" onClick={onAccept} data-testid="cal-accept-anyway">
          Accept anyway
        </button>
        <button type="button" onClick={onCancel} data-testid="cal-accept-cancel">
          Cancel
        </button>
      </div>
    </div>
  );
}
