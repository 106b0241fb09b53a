import { GAP_READINGS, type GapBindingDto, type GapRowDto } from '../../../src/api/contract';
import {
  clickSortColumn,
  displayUnit,
  formatGapPercent,
  formatGapValue,
  openGapCampaign,
  replayGapPair,
  setGapCampaignDir,
  soloGapRun,
  sortGapClips,
  toggleGapReview,
  trialCountsText,
  unavailableReason,
  useGapReviewStore,
} from '../gap/gapReview';
import { useConnectionStore } from '../stores/connectionStore';
import { useRunStore } from '../stores/runStore';
import { GHOST_COLOR } from '../viewport/geomObjects';

// The Gap review panel (DESIGN §8): per binding, Table 11 (Sim, Real, Gap % of every reading with
// the clips used and the excluded clips with reasons), the same by capability group, and the
// per-clip table sortable by clicking a column header. A click on a clip replays the matched pair
// in the viewport (reference ghost, sim branch, real trials) at the worst frame; the legend says
// what is drawn how, and whether the real root is measured or placed at the reference root.

const SHORT: Record<string, string> = {
  sr: 'SR',
  progress_soft: 'progress',
  mpjpe_l_mm: 'MPJPE-l',
  joint_pos_rmse: 'q RMSE',
  joint_vel_rmse: 'q̇ RMSE',
  joint_acc_rms: 'q̈ RMS',
  joint_acc_p95: 'q̈ P95',
  joint_jerk_rms: 'jerk RMS',
  joint_jerk_p95: 'jerk P95',
};

/** Table columns as wide as their content (the board's matrix columns are 150 px). */
const NARROW = { minWidth: 0, whiteSpace: 'nowrap' } as const;

const readingName = (json: string) => {
  const r = GAP_READINGS.find((x) => x.json === json);
  if (!r) return json;
  const u = displayUnit(r.json, r.unit);
  return `${r.label}${u ? ` (${u})` : ''}`;
};

function Value({ reading, v, testId }: { reading: string; v: GapRowDto['sim']; testId?: string }) {
  return (
    <span className={v.value === null ? 'muted' : 'mono'} title={v.reason} data-testid={testId} data-value={v.value ?? ''}>
      {formatGapValue(reading, v)}
    </span>
  );
}

function RowsTable({ rows, testPrefix }: { rows: GapRowDto[]; testPrefix: string }) {
  return (
    <table className="qual-matrix gap-table" data-testid={`${testPrefix}-table`}>
      <thead>
        <tr>
          <th style={NARROW}>reading</th>
          <th style={NARROW}>Sim</th>
          <th style={NARROW}>Real</th>
          <th style={NARROW}>Gap %</th>
          <th style={NARROW}>clips</th>
          <th style={NARROW}>unavailable / excluded clips</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => {
          const why = [unavailableReason(r.sim) && `Sim: ${r.sim.reason}`, unavailableReason(r.real) && `Real: ${r.real.reason}`, r.sim.value !== null && r.real.value !== null && r.gapPercent.value === null ? r.gapPercent.reason : null, ...r.excluded.map((e) => `${e.clip}: ${e.reason}`)].filter(Boolean);
          return (
            <tr key={r.reading} data-testid={`${testPrefix}-row-${r.reading}`}>
              <td>{readingName(r.reading)}</td>
              <td>
                <Value reading={r.reading} v={r.sim} testId={`${testPrefix}-${r.reading}-sim`} />
              </td>
              <td>
                <Value reading={r.reading} v={r.real} testId={`${testPrefix}-${r.reading}-real`} />
              </td>
              <td className={r.gapPercent.value === null ? 'muted' : 'mono'} title={r.gapPercent.reason} data-testid={`${testPrefix}-${r.reading}-gap`} data-value={r.gapPercent.value ?? ''}>
                {formatGapPercent(r.gapPercent)}
              </td>
              <td className="mono" data-testid={`${testPrefix}-${r.reading}-clips`}>
                {r.clips}
              </td>
              <td className="small gap-why" data-testid={`${testPrefix}-${r.reading}-why`}>
                {why.length === 0 ? <span className="muted">—</span> : why.join('; ')}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function ClipTable({ b }: { b: GapBindingDto }) {
  const sort = useGapReviewStore((s) => s.sort);
  const selected = useGapReviewStore((s) => s.selected);
  const replaying = useGapReviewStore((s) => s.replaying);
  const clips = sortGapClips(b.clips, sort);
  const head = (column: string, text: string, title: string) => (
    <th key={column} style={NARROW} aria-sort={sort.column === column ? (sort.reversed ? 'ascending' : 'descending') : 'none'}>
      <button type="button" className="link gap-sort" title={title} onClick={() => clickSortColumn(column)} data-testid={`gap-sort-${column}`}>
        {text}
        {sort.column === column ? (sort.reversed ? ' ▲' : ' ▼') : ''}
      </button>
    </th>
  );
  return (
    <table className="qual-matrix gap-table" data-testid={`gap-clips-${b.binding}`}>
      <thead>
        <tr>
          {head('clip', 'clip', 'sort by clip name')}
          <th style={NARROW}>group</th>
          <th style={NARROW} title="simulation episodes used (failed, stopped)">sim</th>
          <th style={NARROW} title="real trials used (failed, stopped)">real</th>
          <th style={NARROW}>excluded trials</th>
          {GAP_READINGS.map((r) => head(r.json, SHORT[r.json] ?? r.label, `${readingName(r.json)}: Sim / Real (Gap %). Click: sort by |Gap %| (largest first, n/a last); again: reversed`))}
        </tr>
      </thead>
      <tbody>
        {clips.map((c) => {
          const excluded = [...c.simTrials.excluded.map((e) => `sim: ${e.count} ${e.reason}`), ...c.realTrials.excluded.map((e) => `real: ${e.count} ${e.reason}`)];
          return (
            <tr key={c.parentTraceId} className={selected === c.parentTraceId ? 'gap-selected' : undefined} data-testid={`gap-clip-${c.clip}`}>
              <td className="qual-clip-col">
                <button type="button" className="link mono" disabled={replaying} title={`replay ${c.clip}: reference, sim branch and real trials at the worst frame\ncalibration ${c.calibrationId}${c.capturedAt ? ` (${c.capturedAt})` : ''}`} onClick={() => void replayGapPair(c.parentTraceId)} data-testid={`gap-replay-${c.clip}`}>
                  {c.clip}
                </button>
              </td>
              <td className="qual-group-col muted">{c.group.replace(/_/g, ' ')}</td>
              <td className="mono" data-testid={`gap-clip-${c.clip}-sim-trials`}>
                {trialCountsText(c.simTrials)}
              </td>
              <td className="mono" data-testid={`gap-clip-${c.clip}-real-trials`}>
                {trialCountsText(c.realTrials)}
              </td>
              <td className="small">{excluded.length ? excluded.join('; ') : <span className="muted">0</span>}</td>
              {GAP_READINGS.map((r) => {
                const v = c.readings[r.json];
                const why = [v.sim.reason && `Sim: ${v.sim.reason}`, v.real.reason && `Real: ${v.real.reason}`, v.gapPercent.value === null && v.sim.value !== null && v.real.value !== null ? v.gapPercent.reason : null].filter(Boolean).join('\n');
                return (
                  <td key={r.json} className="gap-cell mono" title={why || undefined} data-testid={`gap-clip-${c.clip}-${r.json}`} data-gap={v.gapPercent.value ?? ''}>
                    {formatGapValue(r.json, v.sim)} / {formatGapValue(r.json, v.real)} <b>({formatGapPercent(v.gapPercent)})</b>
                  </td>
                );
              })}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Binding({ b }: { b: GapBindingDto }) {
  return (
    <div className="gap-binding" data-testid={`gap-binding-${b.binding}`}>
      <h3 className="small">
        <span className="mono">{b.binding}</span>
        {b.kind && <span className="muted"> · {b.kind}</span>}
        {b.note && <span className="qual-note"> · {b.note}</span>} · {b.clips.length} clip{b.clips.length === 1 ? '' : 's'}
      </h3>
      <RowsTable rows={b.rows} testPrefix={`gap-t11-${b.binding}`} />
      <details className="small">
        <summary>by capability group ({b.byGroup.map((g) => `${g.group.replace(/_/g, ' ')} ${g.clips}`).join(', ')})</summary>
        {b.byGroup.map((g) => (
          <div key={g.group}>
            <div className="muted">{g.group.replace(/_/g, ' ')} · {g.clips} clip{g.clips === 1 ? '' : 's'}</div>
            <RowsTable rows={g.rows} testPrefix={`gap-group-${b.binding}-${g.group}`} />
          </div>
        ))}
      </details>
      <div className="small muted">Per clip: Sim / Real (Gap %). Click a header to sort, a clip to replay it.</div>
      <ClipTable b={b} />
    </div>
  );
}

function ReplayLegend() {
  const replay = useGapReviewStore((s) => s.replay);
  const replaying = useGapReviewStore((s) => s.replaying);
  const runs = useRunStore((s) => s.runs);
  if (replaying) return <div className="small muted">loading the pair…</div>;
  if (!replay) return null;
  const w = replay.worst;
  return (
    <div className="qual-replay small" data-testid="gap-replay" data-worst-frame={w?.frame ?? ''} data-worst-time={w?.timeS ?? ''} data-runs={replay.runs.length}>
      <div>
        <span className="strong">replay</span> {replay.binding} × {replay.clip} · calibration {replay.calibrationId}
        {w ? (
          <>
            {' '}
            · worst frame <b className="mono" data-testid="gap-worst-frame">{w.frame}</b> (t = {w.timeS.toFixed(2)} s): real trial {w.trialIndex ?? '?'}, {w.measure === 'mpjpe_l' ? `MPJPE-l ${(w.value / 10).toFixed(2)} cm` : `joint RMSE ${w.value.toFixed(4)} rad`} — <span className="muted">{w.why}</span>
          </>
        ) : (
          <span className="muted"> · no real trial to find a worst frame in</span>
        )}
      </div>
      <ul className="gap-legend" data-testid="gap-legend">
        <li>
          <i className="qual-swatch" style={{ background: GHOST_COLOR, opacity: 0.7, marginLeft: 0 }} /> reference — translucent light-blue ghost (50 Hz, as recorded with the sim episode)
        </li>
        {replay.runs.map((r) => {
          const meta = runs.find((x) => x.id === r.id);
          return (
            <li key={r.id} data-testid={`gap-legend-${r.id}`} data-root={r.domain === 'simulation' ? 'simulated' : r.rootMeasured ? 'measured' : 'reference'}>
              <i className="qual-swatch" style={{ background: 'linear-gradient(90deg,#2fbf4f,#e8c33a,#e0453a)', marginLeft: 0 }} /> <b>{r.label}</b> — solid, bodies coloured by error (green→red);{' '}
              {r.domain === 'simulation' ? 'root simulated' : r.rootMeasured ? 'root measured (motion capture)' : 'no motion capture: root drawn at the reference root'} · {r.sourceRateHz.toFixed(0)} Hz → 50 Hz ({r.resampling.replace(/_/g, ' ')}){' '}
              <button type="button" className="link" onClick={() => soloGapRun(r.id)} title="show this run alone (click again: all)" data-testid={`gap-solo-${r.id}`}>
                {meta && !meta.visible ? 'hidden · show' : 'solo'}
              </button>
            </li>
          );
        })}
      </ul>
      <div className="muted">
        Every executed run is drawn in the error colours, so runs are told apart by position and with “solo”.
        {replay.notShown.length > 0 && ` Not shown (excluded from the readings): ${replay.notShown.map((t) => `${t.domain === 'simulation' ? 'sim' : `real trial ${t.trialIndex ?? '?'}`}: ${t.reason}`).join('; ')}.`}
      </div>
    </div>
  );
}

export function GapReviewPanel() {
  const open = useGapReviewStore((s) => s.open);
  const dir = useGapReviewStore((s) => s.campaignDir);
  const report = useGapReviewStore((s) => s.report);
  const error = useGapReviewStore((s) => s.error);
  const loading = useGapReviewStore((s) => s.loading);
  const connected = useConnectionStore((s) => s.status === 'connected');
  return (
    <section className={`panel qual-board gap-review${open ? '' : ' qual-closed'}`} data-testid="gap-review" aria-label="Gap review">
      <div className="panel-head">
        <h2>
          <button type="button" className="link qual-toggle" onClick={toggleGapReview} aria-expanded={open} data-testid="gap-toggle">
            {open ? '▾' : '▸'} Gap review (Table 11)
          </button>
        </h2>
        {report && (
          <span className="muted small" data-testid="gap-summary">
            {report.contract ?? '—'} · {report.matchedPairs} matched pair{report.matchedPairs === 1 ? '' : 's'} · Gap % = (Real − Sim)/Sim
          </span>
        )}
      </div>
      {open && (
        <div className="gap-body" style={{ overflow: 'auto', minHeight: 0 }}>
          <div className="qual-controls">
            <label className="qual-dir">
              <span>Campaign</span>
              <input type="text" placeholder="/path/to/campaign" value={dir} onChange={(e) => setGapCampaignDir(e.target.value)} onKeyDown={(e) => e.key === 'Enter' && void openGapCampaign()} data-testid="gap-dir" />
            </label>
            <button type="button" disabled={!connected} onClick={() => void openGapCampaign()} data-testid="gap-open">
              {loading ? 'Reading…' : report ? 'Reload' : 'Open'}
            </button>
          </div>
          {error && (
            <div className="field-error" role="alert" data-testid="gap-error">
              {error}
            </div>
          )}
          <ReplayLegend />
          {!report && <div className="muted small">Open a campaign folder to see the sim-to-real gaps of its matched pairs (docs/GAP_REPORT.md).</div>}
          {report?.message && (
            <div className="muted small" data-testid="gap-message">
              {report.message}
            </div>
          )}
          {report?.bindings.map((b) => <Binding key={b.binding} b={b} />)}
          {report && report.skipped.length > 0 && (
            <details className="small" data-testid="gap-skipped">
              <summary>calibrated pairs not in the tables ({report.skipped.length})</summary>
              <ul>
                {report.skipped.map((s) => (
                  <li key={s.parentTraceId}>
                    {s.binding} × {s.clip}, calibration {s.calibrationId}: {s.why} — {s.reason}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </div>
      )}
    </section>
  );
}
