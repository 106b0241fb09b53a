import type { StartPoseVerdict } from '../../../src/domain/trial/startPoseVerdict';
import type { StillnessMeter } from './calibrationFormat';

// The "hold still" block of the Calibration panel: what the capture waits for, the start-pose
// verdict once captured, the still window collected and the live stillness meters (joint velocity
// and gyro, each against its limit).

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

/** The hold-still block: `m` is the live meter, `verdict` the captured start pose against the clip. */
export function StillnessHold({
  running,
  captured,
  m,
  verdict,
}: {
  running: boolean;
  captured: boolean;
  m: StillnessMeter;
  verdict: StartPoseVerdict | null;
}) {
  return (
    <div
      className={`cal-hold${running ? ' cal-hold-on' : ''}`}
      data-testid="cal-hold"
      data-still={m.still ? 'true' : 'false'}
    >
      <div className="strong">
        {running
          ? m.still
            ? 'Still — capturing…'
            : 'Hold still'
          : captured
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
      {running && m.why && <div className="small warn-text">{m.why}</div>}
    </div>
  );
}
