import { RunPlots } from './RunPlots';
import { useRobotStore } from '../robot/robotStore';
import { useThrottledStore } from '../ui/useThrottledStore';
import { errorColorHex } from '../overlay/errorScale';
import { runTrajectory } from '../overlay/overlayEngine';
import { overlayStore, type OverlayState } from '../overlay/overlayStore';
import { removeRun, setFollowLive, setRunVisible } from '../overlay/runActions';
import { runColor } from '../overlay/runColors';
import { useRunStore } from '../overlay/runStore';

// Executed runs overlaid on the reference: visibility per run and, at the shown frame, the
// largest body error (and which body), MPJPE-l and the root offset. Numbers refresh at ~8 Hz
// from the transient overlay store.

interface RunFigures {
  valid: boolean;
  maxErrM: number;
  maxBody: number;
  mpjpeM: number;
  rootErrM: number;
  rootFromReference: boolean;
  clamped: 'before' | 'after' | null;
  samples: number;
  lastTimeS: number;
}

function figures(s: OverlayState, errorMode: 'local' | 'global'): Record<string, RunFigures> {
  const out: Record<string, RunFigures> = {};
  for (const [id, f] of s.frames) {
    const world = errorMode === 'global' && !f.rootFromReference;
    const traj = runTrajectory(id);
    out[id] = {
      valid: f.valid,
      maxErrM: world ? f.maxErrGlobalM : f.maxErrLocalM,
      maxBody: world ? f.maxErrGlobalBody : f.maxErrLocalBody,
      mpjpeM: f.mpjpeLocalM,
      rootErrM: f.rootErrM,
      rootFromReference: f.rootFromReference,
      clamped: f.clamped,
      samples: traj?.count ?? 0,
      lastTimeS: traj?.lastTimeS ?? Number.NaN,
    };
  }
  return out;
}

const cm = (m: number): string => (Number.isFinite(m) ? (m * 100).toFixed(1) : '—');

export function RunsPanel() {
  const runs = useRunStore((s) => s.runs);
  const followLive = useRunStore((s) => s.followLive);
  const errorMode = useRunStore((s) => s.errorMode);
  const byRun = useRunStore((s) => s.colorMode === 'run');
  const bodies = useRobotStore((s) => s.profile?.bodies);
  const figs = useThrottledStore(overlayStore, (s) => figures(s, errorMode), 8);
  const anyLive = runs.some((r) => r.live);

  return (
    <section className="panel runs-panel" data-testid="runs-panel">
      <div className="panel-head">
        <h2>Overlay · {runs.length === 0 ? 'no runs' : `${runs.length} run${runs.length === 1 ? '' : 's'}`}</h2>
        <label className="check small" title="Live runs move the playhead to their newest frame">
          <input
            type="checkbox"
            checked={followLive}
            onChange={(e) => setFollowLive(e.target.checked)}
            data-testid="follow-live"
          />
          follow live
        </label>
      </div>
      {runs.length === 0 ? (
        <p className="muted small">
          Executed runs of the loaded clip appear here, drawn as solids over the reference ghost and coloured by body
          error (or, “by run” in the viewport legend, each in its own colour).
        </p>
      ) : (
        <ul className="run-list">
          {runs.map((r) => {
            const f = figs[r.id];
            const status = r.live ? 'live' : (r.outcome?.replace(/_/g, ' ') ?? 'replay');
            const bodyName = f && f.maxBody >= 0 ? (bodies?.[f.maxBody]?.name ?? `#${f.maxBody}`) : '—';
            return (
              <li key={r.id} className={r.visible ? 'run' : 'run hidden-run'} data-testid={`run-${r.id}`}>
                <div className="run-line">
                  <label className="check" title="Show / hide this run">
                    <input
                      type="checkbox"
                      checked={r.visible}
                      onChange={(e) => setRunVisible(r.id, e.target.checked)}
                      data-testid={`run-visible-${r.id}`}
                    />
                    {byRun && (
                      <i
                        className="run-swatch"
                        style={{ background: runColor(r.colorSlot).hex }}
                        title={`drawn in ${runColor(r.colorSlot).name}`}
                        data-testid={`run-swatch-${r.id}`}
                        data-color={runColor(r.colorSlot).hex}
                      />
                    )}
                    <span className="run-label" title={`${r.label} · ${r.id} · ${r.source} · ${r.domain}`}>
                      {r.label}
                    </span>
                  </label>
                  <span className={`badge badge-${r.live ? 'live' : 'done'}`} data-testid={`run-status-${r.id}`}>
                    {status}
                  </span>
                  <span className="badge badge-domain">{r.domain === 'real_robot' ? 'real' : 'sim'}</span>
                  {!r.live && (
                    <button
                      type="button"
                      className="icon-button"
                      title="Remove this run from the overlay"
                      aria-label={`Remove ${r.label}`}
                      onClick={() => removeRun(r.id)}
                      data-testid={`run-remove-${r.id}`}
                    >
                      ×
                    </button>
                  )}
                </div>
                {r.note && (
                  <div className="run-note" data-testid={`run-note-${r.id}`}>
                    {r.note}
                  </div>
                )}
                {f?.valid ? (
                  <div className="run-figures" data-testid={`run-figures-${r.id}`}>
                    <span
                      className="muted"
                      title="The figures on this line are this frame's, under the playhead; the run's readings over the whole episode are in Sim trial"
                    >
                      at playhead:
                    </span>
                    <span className="err-chip" style={{ background: errorColorHex(f.maxErrM) }} />
                    <span
                      title={`largest ${errorMode === 'global' ? 'world-frame' : 'root-relative'} body error at this frame`}
                    >
                      max{' '}
                      <b className="mono" data-testid={`run-max-${r.id}`}>
                        {cm(f.maxErrM)}
                      </b>{' '}
                      cm
                    </span>
                    <span className="muted body-name" title={bodyName}>
                      {bodyName.replace(/_link$/, '')}
                    </span>
                    <span title="MPJPE-l at this frame: mean root-relative body error">
                      MPJPE-l{' '}
                      <b className="mono" data-testid={`run-mpjpe-${r.id}`}>
                        {cm(f.mpjpeM)}
                      </b>{' '}
                      cm
                    </span>
                    <span
                      title={
                        f.rootFromReference
                          ? 'no global root position: placed at the reference root'
                          : 'root position offset from the reference'
                      }
                    >
                      root <b className="mono">{f.rootFromReference ? 'n/a' : cm(f.rootErrM)}</b>
                      {!f.rootFromReference && ' cm'}
                    </span>
                  </div>
                ) : (
                  <div className="run-figures muted">no frames yet</div>
                )}
                {f?.valid && (
                  <div className="run-meta muted">
                    {f.samples} frames · {Number.isFinite(f.lastTimeS) ? `${f.lastTimeS.toFixed(2)} s` : '—'}
                    {f.clamped === 'after' && (
                      <span className="warn-text"> · playhead past the run's end (last frame shown)</span>
                    )}
                    {f.clamped === 'before' && (
                      <span className="warn-text"> · playhead before the run's first frame</span>
                    )}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <RunPlots />
      {anyLive && !followLive && (
        <p className="muted small">Live: frames are arriving; the playhead stays where you put it.</p>
      )}
    </section>
  );
}
