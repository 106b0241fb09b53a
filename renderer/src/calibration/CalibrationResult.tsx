import type { CalibrationCaptureDto } from '../../../src/api/contract';
import { deg } from '../ui/format';
import { residualRows } from './calibrationFormat';

// A successful capture as the Calibration panel shows it: the measured start configuration
// against the clip's first frame (max |Δ|, rms, roll, pitch, heading; per joint, largest |Δ|
// first) and where and when it was captured.

type Captured = Extract<CalibrationCaptureDto, { ok: true }>;

export function CalibrationResult({ r }: { r: Captured }) {
  return (
    <div className="cal-result" data-testid="cal-result">
      {r.residualsVsClip ? (
        <>
          <div className="small">
            vs <b>{r.clip?.name}</b> frame 0: max |Δ|{' '}
            <b className="mono" data-testid="cal-max">
              {deg(r.residualsVsClip.maxAbsJointRad)}
            </b>{' '}
            ({r.residualsVsClip.maxAbsJoint.replace(/_joint$/, '')}) · rms {deg(r.residualsVsClip.rmsJointRad)} · roll{' '}
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
  );
}
