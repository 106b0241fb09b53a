import { useState } from 'react';
import { G1_JOINT_NAMES } from '../../../src/domain/robot/g1Joints';
import { startPoseVerdict } from '../../../src/domain/trial/startPoseVerdict';
import { useConnectionStore } from '../api/connectionStore';
import { robotConnectionId } from '../trial/trialActions';
import { useTrialStore } from '../trial/trialStore';
import { FieldError } from '../ui/FieldError';
import { deg } from '../ui/format';
import { acceptCalibration, cancelCapture, captureCalibration } from './calibrationActions';
import { boundCalibrationId, residualRows, stillnessMeter } from './calibrationFormat';
import { useCalibrationStore } from './calibrationStore';

// The Calibration panel (DESIGN §3 CalibrationRecord, §8): "hold still" with a
// live stillness meter (window fill, joint velocity, gyro, each against its limit), Capture → the
// measured start configuration vs the clip's first frame (per joint, largest |Δ| first; roll and
// pitch), then Accept (stored in the campaign: the next matched pair uses it) or Redo.

function Meter({
  label,
  value,
  limit,
  unit,
  testId,
}: {
  label: string;
  value: number | null;
  limit: number;
  unit: string;
  testId: string;
}) {
  const frac = value === null ? 0 : Math.min(1, value / (2 * limit));
  const ok = value !== null && value <= limit;
  return (
    <div className="cal-meter" data-testid={testId} data-value={value ?? ''}>
      <span className="cal-meter-label">{label}</span>
      <span className="cal-meter-track" title={`limit ${limit} ${unit} (the mark)`}>
        <span
          className={`cal-meter-fill ${value === null ? '' : ok ? 'cal-ok' : 'cal-bad'}`}
          style={{ width: `${frac * 100}%` }}
        />
        <span className="cal-meter-limit" />
      </span>
      <span className="mono small">
        {value === null ? '—' : value.toFixed(3)} {unit}
      </span>
    </div>
  );
}

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
      <div
        className={`cal-hold${capture.running ? ' cal-hold-on' : ''}`}
        data-testid="cal-hold"
        data-still={m.still ? 'true' : 'false'}
      >
        <div className="strong">
          {capture.running
            ? m.still
              ? 'Still — capturing…'
              : 'Hold still'
            : r?.ok
              ? 'Captured'
              : 'Put the robot at its start pose, then Capture'}
        </div>
        {verdict && (
          <div
            className={`small ${verdict.within ? 'ok-text' : 'bad-text strong'}`}
            data-testid="cal-verdict"
            data-within={verdict.within ? 'true' : 'false'}
          >
            {verdict.summary}
          </div>
        )}
        <div className="cal-window" title="still window collected">
          <span
            className="cal-window-fill"
            style={{ width: `${m.fill * 100}%` }}
            data-testid="cal-window-fill"
            data-fill={m.fill.toFixed(3)}
          />
        </div>
        <Meter
          label="joint vel"
          value={m.jointVelRadS}
          limit={m.jointVelLimitRadS}
          unit="rad/s"
          testId="cal-meter-jointvel"
        />
        <Meter label="gyro" value={m.gyroRadS} limit={m.gyroLimitRadS} unit="rad/s" testId="cal-meter-gyro" />
        {capture.running && m.why && <div className="small warn-text">{m.why}</div>}
      </div>
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
            <button
              type="button"
              className="danger"
              onClick={() => {
                setConfirmFor(null);
                void acceptCalibration();
              }}
              data-testid="cal-accept-anyway"
            >
              Accept anyway
            </button>
            <button type="button" onClick={() => setConfirmFor(null)} data-testid="cal-accept-cancel">
              Cancel
            </button>
          </div>
        </div>
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
      {r?.ok && (
        <div className="cal-result" data-testid="cal-result">
          {r.residualsVsClip ? (
            <>
              <div className="small">
                vs <b>{r.clip?.name}</b> frame 0: max |Δ|{' '}
                <b className="mono" data-testid="cal-max">
                  {deg(r.residualsVsClip.maxAbsJointRad)}
                </b>{' '}
                ({r.residualsVsClip.maxAbsJoint.replace(/_joint$/, '')}) · rms {deg(r.residualsVsClip.rmsJointRad)} ·
                roll{' '}
                <b className="mono" data-testid="cal-roll">
                  {deg(r.residualsVsClip.rollRad)}
                </b>{' '}
                · pitch{' '}
                <b className="mono" data-testid="cal-pitch">
                  {deg(r.residualsVsClip.pitchRad)}
                </b>
                {r.residualsVsClip.headingRad === null ? (
                  <span className="muted"> · heading n/a (no mocap)</span>
                ) : (
                  <> · heading {deg(r.residualsVsClip.headingRad)}</>
                )}
              </div>
              <div className="cal-table-wrap">
                <table className="cal-table" data-testid="cal-table">
                  <thead>
                    <tr>
                      <th>joint</th>
                      <th>measured</th>
                      <th>clip</th>
                      <th>Δ</th>
                    </tr>
                  </thead>
                  <tbody>
                    {residualRows(r.residualsVsClip, r.measuredJointRad, r.clipStartJointRad).map((row) => (
                      <tr key={row.joint} data-testid={`cal-row-${row.joint}`}>
                        <td className="mono">{row.joint.replace(/_joint$/, '')}</td>
                        <td className="mono">{row.measuredRad === null ? '—' : deg(row.measuredRad)}</td>
                        <td className="mono">{row.clipRad === null ? '—' : deg(row.clipRad)}</td>
                        <td
                          className={`mono ${Math.abs(row.deltaRad) > 0.1 ? 'bad-text' : Math.abs(row.deltaRad) > 0.03 ? 'warn-text' : ''}`}
                        >
                          {deg(row.deltaRad)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          ) : (
            <div className="small muted">no clip given: nothing to compare the start pose with</div>
          )}
          <div className="small muted mono">
            {r.robotUnit} · {new Date(r.capturedAt).toLocaleTimeString()} · window {(r.stats.spanS ?? 0).toFixed(2)} s,{' '}
            {r.stats.frames ?? 0} frames at {(r.stats.rateHz ?? 0).toFixed(0)} Hz
          </div>
        </div>
      )}
    </section>
  );
}
