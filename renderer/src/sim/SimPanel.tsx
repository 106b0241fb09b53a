import { useConnectionStore } from '../api/connectionStore';
import { useClipStore } from '../clips/clipStore';
import { useEndpointsStore } from '../connections/endpointsStore';
import { pause, seekTimeS } from '../playback/playback';
import { policyNote } from '../policies/policyFormat';
import { usePolicyStore } from '../policies/policyStore';
import { useCalibrationStore } from '../calibration/calibrationStore';
import { useTrialStore } from '../trial/trialStore';
import { FieldError } from '../ui/FieldError';
import { BUILTIN_NOTE, mmAsCm } from '../ui/format';
import { ProgressBar } from '../ui/ProgressBar';
import { useThrottledStore } from '../ui/useThrottledStore';
import { OUTCOME_TEXT, READING_ROWS, showFailure, showReading } from './readingsFormat';
import { simRequestFromForm, startSimRun, stopSimRun } from './simActions';
import { BindingField, RunLimitsFields, SimulatorField, type SimulatorOption } from './SimFormFields';
import { emptySimLive, patchSimForm, simLiveStore, useSimStore, type SimRunRecord } from './simStore';

// Sim trial: run the clip on display in a simulator (the embedded MuJoCo one by default) under
// the builtin reference tracker, with or without root assist, or under the released policy open
// in the Policy panel (its physics, no assist), watch it live in the viewport
// (executed solid over the reference ghost), stop it, and read its mb-metrics/1 readings when it
// ends — one column per run of this clip, so runs with and without assist compare side by side.

const STATE_TEXT = { starting: 'starting…', running: 'running', stopping: 'stopping…', ended: 'ended' } as const;

function outcomeClass(o: string | undefined): string {
  return o === 'completed' ? 'ok-text' : o === 'aborted_by_operator' ? 'warn-text' : 'bad-text';
}

function shortLabel(r: SimRunRecord): string {
  const b = r.binding;
  if (b.kind !== 'builtin') return b.id.split('/').at(-1) ?? b.id;
  return b.assistNPerM !== null ? `assist ${b.assistNPerM}` : 'no assist';
}

/** The run going on now (the newest that has not ended). */
function LiveStatus({ run }: { run: SimRunRecord }) {
  const live = useThrottledStore(simLiveStore, (s) => ({ ...(s.runs.get(run.runId) ?? emptySimLive()) }), 8);
  const t = Number.isFinite(live.lastTimeS) ? live.lastTimeS : 0;
  const frac = run.durationS > 0 ? Math.min(1, t / run.durationS) : 0;
  const failed = live.firstFailureFrame !== null && live.firstFailureFrame >= 0;
  return (
    <div className="sim-live" data-testid="sim-live">
      <div className="sim-live-line">
        <span className="badge badge-live">{STATE_TEXT[run.state]}</span>
        <span className="strong">#{run.ordinal}</span>
        <span className="muted">{shortLabel(run)}</span>
        <span className="mono" data-testid="sim-live-time">
          {t.toFixed(2)} / {run.durationS.toFixed(2)} s
        </span>
      </div>
      <ProgressBar fraction={frac} title={`${(frac * 100).toFixed(0)}% of the clip`}>
        {failed && (
          <div
            className="sim-progress-fail"
            style={{ left: `${Math.min(100, (live.firstFailureFrame! / 50 / Math.max(run.durationS, 1e-9)) * 100)}%` }}
          />
        )}
      </ProgressBar>
      <div className="sim-live-line small">
        <span title="MPJPE-l of the newest frame (live, streaming mb-metrics/1)">
          MPJPE-l <b className="mono">{mmAsCm(live.mpjpeLMm)}</b> cm
        </span>
        <span title="RMS joint-angle error of the newest frame">
          joints <b className="mono">{live.jointRmseRad === null ? '—' : live.jointRmseRad.toFixed(3)}</b> rad
        </span>
        {live.firstFailureFrame === null ? (
          <span className="muted">failure: —</span>
        ) : failed ? (
          <span className="bad-text" data-testid="sim-live-failure">
            hard failure at frame {live.firstFailureFrame}
          </span>
        ) : (
          <span className="ok-text">no failure</span>
        )}
      </div>
      {live.droppedFrames > 0 && (
        <div
          className="small warn-text"
          title="the console fell behind; the services skipped frames for display (the recording is complete and replaces them at the end)"
        >
          {live.droppedFrames} frames skipped for display
        </div>
      )}
    </div>
  );
}

function goToFrame(frame50: number): void {
  pause();
  seekTimeS(frame50 / 50);
}

/** One column per ended run of the clip on display, the newest first (next to the labels). */
function ReadingsTable({ runs }: { runs: SimRunRecord[] }) {
  const cols = [...runs].reverse();
  const failures = new Map(cols.map((r) => [r.runId, r.end ? showFailure(r.end.metrics) : null]));
  const failureRow = (label: string, key: 'condition' | 'body' | 'frame') => (
    <tr>
      <td className="sub">{label}</td>
      {cols.map((r) => {
        const f = failures.get(r.runId);
        const text = key === 'frame' ? f?.frameText : f?.[key];
        return (
          <td
            key={r.runId}
            data-testid={`sim-failure-${key}-${r.runId}`}
            className={text ? 'bad-text' : 'muted'}
            title={f && f.failed.value === null ? f.failed.title : undefined}
          >
            {text && key === 'frame' ? (
              <button
                type="button"
                className="link"
                title="show this frame in the viewport"
                onClick={() => goToFrame(f!.frame!)}
              >
                {text}
              </button>
            ) : (
              (text ?? '—')
            )}
          </td>
        );
      })}
    </tr>
  );
  return (
    <div className="sim-readings-wrap">
      <table className="sim-readings" data-testid="sim-readings">
        <thead>
          <tr>
            <th>mb-metrics/1</th>
            {cols.map((r) => (
              <th
                key={r.runId}
                title={`${r.runId} · ${r.binding.kind === 'builtin' ? '' : `${r.binding.id}@${r.binding.version} · `}${r.binding.label} · seed ${r.seed} · ${r.connectionName}`}
                data-testid={`sim-col-${r.runId}`}
              >
                #{r.ordinal}
                <span className="col-sub">{shortLabel(r)}</span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>outcome</td>
            {cols.map((r) => (
              <td
                key={r.runId}
                className={outcomeClass(r.end?.outcome)}
                title={r.end?.reason}
                data-testid={`sim-outcome-${r.runId}`}
                data-value={r.end?.outcome}
              >
                {r.end ? OUTCOME_TEXT[r.end.outcome] : STATE_TEXT[r.state]}
              </td>
            ))}
          </tr>
          <tr>
            <td>failed</td>
            {cols.map((r) => {
              const f = failures.get(r.runId);
              return (
                <td
                  key={r.runId}
                  title={f?.failed.title}
                  className={
                    f?.failed.text === 'yes' ? 'bad-text' : f?.failed.value === null ? 'muted unavailable' : undefined
                  }
                  data-testid={`sim-failed-${r.runId}`}
                >
                  {f?.failed.text ?? ''}
                </td>
              );
            })}
          </tr>
          {failureRow('condition', 'condition')}
          {failureRow('body', 'body')}
          {failureRow('frame', 'frame')}
          {READING_ROWS.map((row) => (
            <tr key={row.key}>
              <td title={row.hint}>
                {row.label}
                {row.unit && <span className="muted"> ({row.unit})</span>}
              </td>
              {cols.map((r) => {
                if (!r.end) return <td key={r.runId} />;
                const v = showReading(r.end.metrics, row);
                return (
                  <td
                    key={r.runId}
                    className={v.value === null ? 'mono muted unavailable' : 'mono'}
                    title={v.title}
                    data-testid={`sim-reading-${row.key}-${r.runId}`}
                    data-value={v.value ?? ''}
                  >
                    {v.text}
                  </td>
                );
              })}
            </tr>
          ))}
          <tr>
            <td>frames</td>
            {cols.map((r) => (
              <td
                key={r.runId}
                className="mono"
                title={
                  r.end ? `${r.end.simSeconds.toFixed(2)} s simulated in ${r.end.wallSeconds.toFixed(2)} s` : undefined
                }
              >
                {r.end ? `${r.end.frames}/${r.end.plannedFrames}` : ''}
              </td>
            ))}
          </tr>
          <tr>
            <td title="sha256 of the recorded trajectory: the same clip, binding and seed give the same hash (replay audit)">
              sha256
            </td>
            {cols.map((r) => (
              <td
                key={r.runId}
                className="mono sha"
                title={r.end?.trajectorySha256 ?? 'the backend gives no trajectory hash'}
                data-testid={`sim-sha-${r.runId}`}
              >
                {r.end?.trajectorySha256 ? `${r.end.trajectorySha256.slice(0, 8)}…` : '—'}
              </td>
            ))}
          </tr>
        </tbody>
      </table>
    </div>
  );
}

export function SimPanel() {
  const { form, runs, starting, error } = useSimStore();
  const entries = useEndpointsStore((s) => s.entries);
  const connected = useConnectionStore((s) => s.status === 'connected');
  const clip = useClipStore((s) => s.loaded?.clip ?? null);
  const policy = usePolicyStore((s) => s.info);
  const open = runs.filter((r) => r.state !== 'ended');
  const busyHere = open.some((r) => r.connectionId === form.connectionId);
  const request = simRequestFromForm();
  const formProblem = clip && !request.ok ? request.reason : null;
  const clipRuns = clip ? runs.filter((r) => r.clipId === clip.id && r.state === 'ended') : [];
  const current = open.at(-1);
  const last = runs.at(-1);
  // Real-robot work on this machine: the services refuse a simulation beside it unless overridden.
  const trialRunning = useTrialStore((s) => s.job?.state === 'running');
  const capturing = useCalibrationStore((s) => s.running);
  const realWork = trialRunning
    ? 'A real trial is running'
    : capturing
      ? 'A calibration capture is running'
      : error?.includes('tick "run anyway"')
        ? 'Real-robot work is running'
        : null;
  const options: SimulatorOption[] =
    entries.length > 0
      ? entries.filter((e) => e.executionDomain === 'simulation')
      : [{ id: 'embedded-sim', name: 'Embedded simulator (MuJoCo)', presence: 'disconnected' }];

  return (
    <section className="panel sim-panel" data-testid="sim-panel">
      <div className="panel-head">
        <h2>Sim trial</h2>
        {last && (
          <span
            className={`small ${last.end ? outcomeClass(last.end.outcome) : 'muted'}`}
            data-testid="sim-status"
            data-state={last.state}
            data-outcome={last.end?.outcome ?? ''}
          >
            #{last.ordinal} {last.end ? OUTCOME_TEXT[last.end.outcome] : STATE_TEXT[last.state]}
          </span>
        )}
      </div>
      <div className="sim-form">
        <SimulatorField form={form} options={options} />
        <BindingField form={form} policy={policy} formProblem={formProblem} />
        <RunLimitsFields form={form} formProblem={formProblem} />
        <div className="sim-note" data-testid="sim-note">
          {form.bindingChoice !== 'policy'
            ? BUILTIN_NOTE
            : policy
              ? policyNote(policy)
              : 'open a policy in the Policy panel'}
        </div>
        {realWork && (
          <label
            className="small warn-text sim-override"
            title="the services refuse a simulation on this machine while a real trial or a calibration capture runs: it takes the cores the robot's timing needs"
          >
            <input
              type="checkbox"
              checked={form.allowDuringRealTrial}
              onChange={(e) => patchSimForm({ allowDuringRealTrial: e.target.checked })}
              data-testid="sim-allow-during-trial"
            />{' '}
            {realWork} — run anyway (loads this machine)
          </label>
        )}
        <div className="row sim-actions">
          <button
            type="button"
            className="primary"
            disabled={!connected || !clip || starting || busyHere || !request.ok}
            title={
              !clip
                ? 'open a clip first'
                : busyHere
                  ? 'a run is going on on this simulator'
                  : (formProblem ?? `run ${clip.name} in simulation`)
            }
            onClick={() => void startSimRun()}
            data-testid="sim-run"
          >
            {starting ? 'Starting…' : 'Run in simulation'}
          </button>
          <button
            type="button"
            disabled={open.length === 0}
            onClick={() => open.forEach((r) => void stopSimRun(r.runId))}
            data-testid="sim-stop"
            title="stop the run (STOP, Esc or Space, stops everything)"
          >
            Stop
          </button>
        </div>
        {(formProblem ?? error) && <FieldError testId="sim-error">{formProblem ?? error}</FieldError>}
      </div>
      {current && <LiveStatus run={current} />}
      {clipRuns.length > 0 && (
        <>
          <ReadingsTable runs={clipRuns} />
          <div
            className="sim-note small"
            title="DESIGN §9: results of the builtin binding are labelled as what it is"
            data-testid="sim-readings-note"
          >
            {clipRuns.some((r) => r.binding.kind === 'builtin') && `${BUILTIN_NOTE} · `}readings: batch mb-metrics/1
            over the recorded run
          </div>
        </>
      )}
    </section>
  );
}
