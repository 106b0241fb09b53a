import { useState } from 'react';
import { G1_JOINT_NAMES } from '../../../src/domain/robot/g1Joints';
import { startPoseVerdict } from '../../../src/domain/trial/startPoseVerdict';
import { useConnectionStore } from '../api/connectionStore';
import { robotConnectionId } from '../trial/trialActions';
import { useTrialStore } from '../trial/trialStore';
import { FieldError } from '../ui/FieldError';
import { acceptCalibration, cancelCapture, captureCalibration } from './calibrationActions';
import { AcceptOutsideToleranceDialog } from './AcceptOutsideToleranceDialog';
import { CalibrationResult } from './CalibrationResult';
import { boundCalibrationId, stillnessMeter } from './calibrationFormat';
import { useCalibrationStore } from './calibrationStore';
import { StillnessHold } from './StillnessHold';

// The Calibration panel (DESIGN §3 CalibrationRecord, §8): "hold still" with a
// live stillness meter (window fill, joint velocity, gyro, each against its limit), Capture → the
// measured start configuration vs the clip's first frame (per joint, largest |Δ| first; roll and
// pitch), then Accept (stored in the campaign: the next matched pair uses it) or Redo.

export function CalibrationPanel() {
  const capture = useCalibrationStore();
  const clipRef = capture.clipRef;
  const campaignDir = useTrialStore((s) => s.form.campaignDir);
  const busy = useTrialStore((s) => s.busy);
  const pair = useTrialStore((s) => s.queue?.pairs.find((p) => p.pairId === s.selectedPairId) ?? null);
  const connected = useConnectionStore((s) => s.status === 'connected');
  const robot = robotConnectionId();
  const m = stillnessMeter(capture.stillness);
  const r = capture.result;
  const canCapture = connected && !capture.running && robot !== null && campaignDir.trim() !== '';
  const verdict = r?.ok && r.residualsVsClip ? startPoseVerdict(r.residualsVsClip, G1_JOINT_NAMES) : null;
  // The capture whose Accept met a start pose outside tolerance: the confirmation shows until answered.
  const [confirmFor, setConfirmFor] = useState<string | null>(null);
  const confirming = r?.ok === true && confirmFor === r.captureId;
  const accept = () => {
    if (r?.ok && verdict && !verdict.within) setConfirmFor(r.captureId);
    else void acceptCalibration();
  };
  // The calibration the selected pair's trials continue from, when it is not the one accepted here.
  const pairCalibration = pair?.matched?.calibrationId ?? null;
  const job = useTrialStore((s) => s.job);
  const startedWith = useTrialStore((s) => s.jobStartedWithCalibrationId);
  const bound = boundCalibrationId(capture.acceptedId, pair?.pairId ?? null, job, startedWith);
  return (
    <section className="panel cal-panel" data-testid="cal-panel" aria-label="Calibration">
      <div className="panel-head">
        <h2>Calibration</h2>
        {capture.acceptedId && (
          <span
            className="badge ok-text cal-id"
            title="stored in the campaign; the next matched pair starts from it"
            data-testid="cal-accepted"
          >
            {capture.acceptedId}
          </span>
        )}
      </div>
      {bound && (
        <div className="small muted" data-testid="cal-bound">
          bound to {pair?.clipName ?? 'the clip'} as <span className="mono cal-id">{bound}</span>: the id of this pair's
          matched trials in the Trial runner and the Gap review
        </div>
      )}
      {pairCalibration && pairCalibration !== capture.acceptedId && pairCalibration !== bound && (
        <div className="small muted" data-testid="cal-pair-calibration">
          {capture.acceptedId ? (
            <>
              the selected pair's earlier matched trials used calibration{' '}
              <span className="mono cal-id">{pairCalibration}</span>; Start matched pair begins a new matched pair from
              the one accepted here
            </>
          ) : (
            <>
              Start matched pair resumes the selected pair's matched trials from calibration{' '}
              <span className="mono cal-id">{pairCalibration}</span>
            </>
          )}
        </div>
      )}
      <div className="row small">
        <label className="row">
          clip
          <input
            type="text"
            placeholder={pair ? `${pair.clipName} (selected pair)` : 'clip name or id (residuals vs its first frame)'}
            value={clipRef}
            spellCheck={false}
            onChange={(e) => useCalibrationStore.setState({ clipRef: e.target.value })}
            data-testid="cal-clip"
          />
        </label>
      </div>
      <StillnessHold running={capture.running} captured={r?.ok === true} m={m} verdict={verdict} />
      <div className="row">
        <button
          type="button"
          className="primary"
          disabled={!canCapture}
          title={robot ? undefined : 'connect the robot first'}
          onClick={() => void captureCalibration()}
          data-testid="cal-capture"
        >
          {capture.running ? 'Capturing…' : r ? 'Redo' : 'Capture'}
        </button>
        {capture.running && (
          <button type="button" onClick={() => void cancelCapture()} data-testid="cal-cancel">
            Cancel
          </button>
        )}
        {r?.ok && !capture.acceptedId && (
          <button
            type="button"
            disabled={capture.accepting || busy.includes('accept') || confirming}
            onClick={accept}
            data-testid="cal-accept"
          >
            {capture.accepting ? 'Storing…' : 'Accept'}
          </button>
        )}
      </div>
      {confirming && verdict && !capture.acceptedId && (
        <AcceptOutsideToleranceDialog
          verdict={verdict}
          onAccept={() => {
            setConfirmFor(null);
            void acceptCalibration();
          }}
          onCancel={() => setConfirmFor(null)}
        />
      )}
      {r && !r.ok && (
        <FieldError testId="cal-refused">
          {r.message}
          <ul>
            {r.reasons.map((x, i) => (
              <li key={i}>{x.message}</li>
            ))}
          </ul>
        </FieldError>
      )}
      {r?.ok && <CalibrationResult r={r} />}
    </section>
  );
}
