import { GAP_READINGS, type GapBindingDto, type GapRowDto } from '../../../src/api/contract';
import { useConnectionStore } from '../api/connectionStore';
import { errorLegendGradient } from '../overlay/errorScale';
import { runColor } from '../overlay/runColors';
import { useRunStore } from '../overlay/runStore';
import { GapRunsPlot } from './GapRunsPlot';
import { CampaignDirField } from '../ui/CampaignDirField';
import { FieldError } from '../ui/FieldError';
import { GHOST_COLOR } from '../viewport/geomObjects';
import { ContractComparison } from './ContractComparison';
import { clickSortColumn, openGapCampaign, replayGapPair, soloGapRun } from './gapActions';
import {
  displayUnit,
  formatGapPercent,
  formatGapValue,
  sortGapClips,
  trialCountsText,
  unavailableReason,
} from './gapFormat';
import { setGapCampaignDir, useGapReviewStore } from './gapStore';
import { trialNumber } from '../../../src/domain/trial/trialNumber';
import { READING_SHORT_NAMES } from '../ui/readingShortNames';

// The Gap review panel (DESIGN §8): per binding, Table 11 (Sim, Real, Gap % of every reading with
// the clips used and the excluded clips with reasons), the same by capability group, and the
// per-clip table sortable by clicking a column header. A click on a clip replays the matched pair
// in the viewport (reference ghost, sim branch, real trials) at the worst frame, each run in its
// own colour (overlay colour mode "by run"); the legend says what is drawn how, and whether the
// real root is measured or placed at the reference root.

const SHORT = READING_SHORT_NAMES;

const ERROR_GRADIENT = errorLegendGradient();

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
    <span
      className={v.value === null ? 'muted' : 'mono'}
      title={v.reason}
      data-testid={testId}
      data-value={v.value ?? ''}
    >
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
          const why = [
            unavailableReason(r.sim) && `Sim: ${r.sim.reason}`,
            unavailableReason(r.real) && `Real: ${r.real.reason}`,
            r.sim.value !== null && r.real.value !== null && r.gapPercent.value === null ? r.gapPercent.reason : null,
            ...r.excluded.map((e) => `${e.clip}: ${e.reason}`),
          ].filter(Boolean);
          return (
            <tr key={r.reading} data-testid={`${testPrefix}-row-${r.reading}`}>
              <td>{readingName(r.reading)}</td>
              <td>
                <Value reading={r.reading} v={r.sim} testId={`${testPrefix}-${r.reading}-sim`} />
              </td>
              <td>
                <Value reading={r.reading} v={r.real} testId={`${testPrefix}-${r.reading}-real`} />
              </td>
              <td
                className={r.gapPercent.value === null ? 'muted' : 'mono'}
                title={r.gapPercent.reason}
                data-testid={`${testPrefix}-${r.reading}-gap`}
                data-value={r.gapPercent.value ?? ''}
              >
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

/**
 * "sim → real" of one reading. In a narrow column it wraps before the arrow (a no-break space
 * keeps the arrow with the Real value), so right-aligned Sim and Real stack with their digits
 * aligned: "0.68" over "→ 0.94".
 */
const simToReal = (reading: string, v: { sim: GapRowDto['sim']; real: GapRowDto['real'] }) =>
  `${formatGapValue(reading, v.sim)} →\u00a0${formatGapValue(reading, v.real)}`;

/**
 * The per-clip table, sized to the centre column: per reading one cell with the Gap % on top and
 * "sim → real" below it, short headers (full name, unit and sort rule in their tooltip), the clip's
 * group under its name and the trial counts in one column.
 */
function ClipTable({ b }: { b: GapBindingDto }) {
  const sort = useGapReviewStore((s) => s.sort);
  const selected = useGapReviewStore((s) => s.selected);
  const replaying = useGapReviewStore((s) => s.replaying);
  const clips = sortGapClips(b.clips, sort);
  const head = (column: string, text: string, title: string, numeric: boolean) => (
    <th
      key={column}
      style={NARROW}
      className={numeric ? 'gap-num' : undefined}
      title={title}
      aria-sort={sort.column === column ? (sort.reversed ? 'ascending' : 'descending') : 'none'}
    >
      <button
        type="button"
        className="link gap-sort"
        onClick={() => clickSortColumn(column)}
        data-testid={`gap-sort-${column}`}
      >
        {text}
        {sort.column === column ? (sort.reversed ? ' ▲' : ' ▼') : ''}
      </button>
    </th>
  );
  return (
    <table className="qual-matrix gap-table gap-clip-table" data-testid={`gap-clips-${b.binding}`}>
      <thead>
        <tr>
          {head('clip', 'clip', 'Clip and its capability group. Click: sort by clip name; again: reversed', false)}
          <th
            style={NARROW}
            title="Trials used: simulation episodes / real trials, with (failed, stopped); below: trials excluded from the readings"
          >
            sim / real
          </th>
          {GAP_READINGS.map((r) =>
            head(
              r.json,
              SHORT[r.json] ?? r.label,
              `${readingName(r.json)}\nGap % = (Real − Sim)/Sim, below: Sim → Real\nClick: sort by |Gap %| (largest first, n/a last); again: reversed`,
              true,
            ),
          )}
        </tr>
      </thead>
      <tbody>
        {clips.map((c) => {
          const excluded = [
            ...c.simTrials.excluded.map((e) => `sim: ${e.count} ${e.reason}`),
            ...c.realTrials.excluded.map((e) => `real: ${e.count} ${e.reason}`),
          ];
          const excludedCount = [...c.simTrials.excluded, ...c.realTrials.excluded].reduce((n, e) => n + e.count, 0);
          return (
            <tr
              key={c.parentTraceId}
              className={selected === c.parentTraceId ? 'gap-selected' : undefined}
              data-testid={`gap-clip-${c.clip}`}
            >
              <td className="qual-clip-col">
                <button
                  type="button"
                  className="link mono"
                  disabled={replaying}
                  title={`replay ${c.clip}: reference, sim branch and real trials at the worst frame\ncalibration ${c.calibrationId}${c.capturedAt ? ` (${c.capturedAt})` : ''}`}
                  onClick={() => void replayGapPair(c.parentTraceId)}
                  data-testid={`gap-replay-${c.clip}`}
                >
                  {c.clip}
                </button>
                <span className="gap-sub" data-testid={`gap-clip-${c.clip}-group`}>
                  {c.group.replace(/_/g, ' ')}
                </span>
              </td>
              <td
                className="mono"
                title={excluded.length ? `excluded trials: ${excluded.join('; ')}` : 'no excluded trials'}
              >
                <span data-testid={`gap-clip-${c.clip}-sim-trials`}>{trialCountsText(c.simTrials)}</span>
                {' / '}
                <span data-testid={`gap-clip-${c.clip}-real-trials`}>{trialCountsText(c.realTrials)}</span>
                {excludedCount > 0 && (
                  <span className="gap-sub gap-excl" data-testid={`gap-clip-${c.clip}-excluded`}>
                    {excludedCount} excluded
                  </span>
                )}
              </td>
              {GAP_READINGS.map((r) => {
                const v = c.readings[r.json];
                const why = [
                  v.sim.reason && `Sim: ${v.sim.reason}`,
                  v.real.reason && `Real: ${v.real.reason}`,
                  v.gapPercent.value === null && v.sim.value !== null && v.real.value !== null
                    ? v.gapPercent.reason
                    : null,
                ]
                  .filter(Boolean)
                  .join('\n');
                return (
                  <td
                    key={r.json}
                    className="gap-cell mono"
                    title={`${readingName(r.json)}: Sim ${formatGapValue(r.json, v.sim)} → Real ${formatGapValue(r.json, v.real)}, Gap ${formatGapPercent(v.gapPercent)}${why ? `\n${why}` : ''}`}
                    data-testid={`gap-clip-${c.clip}-${r.json}`}
                    data-gap={v.gapPercent.value ?? ''}
                  >
                    <span className={v.gapPercent.value === null ? 'gap-pct muted' : 'gap-pct'}>
                      {formatGapPercent(v.gapPercent)}
                    </span>
                    <span className="gap-sub gap-sim-real">{simToReal(r.json, v)}</span>
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
        <span className="mono" title={b.binding} data-testid={`gap-name-${b.binding}`}>
          {b.name}
        </span>
        {b.kind && <span className="muted"> · {b.kind}</span>}
        {b.note && <span className="qual-note"> · {b.note}</span>} · {b.clips.length} clip
        {b.clips.length === 1 ? '' : 's'}
      </h3>
      <RowsTable rows={b.rows} testPrefix={`gap-t11-${b.binding}`} />
      <details className="small">
        <summary>
          by capability group ({b.byGroup.map((g) => `${g.group.replace(/_/g, ' ')} ${g.clips}`).join(', ')})
        </summary>
        {b.byGroup.map((g) => (
          <div key={g.group}>
            <div className="muted">
              {g.group.replace(/_/g, ' ')} · {g.clips} clip{g.clips === 1 ? '' : 's'}
            </div>
            <RowsTable rows={g.rows} testPrefix={`gap-group-${b.binding}-${g.group}`} />
          </div>
        ))}
      </details>
      <div className="small muted">
        Per clip: Gap % and, below it, Sim → Real (units in the header tooltips). Click a header to sort, a clip to
        replay it.
      </div>
      <ClipTable b={b} />
    </div>
  );
}

function ReplayLegend() {
  const replay = useGapReviewStore((s) => s.replay);
  const replaying = useGapReviewStore((s) => s.replaying);
  const runs = useRunStore((s) => s.runs);
  const byRun = useRunStore((s) => s.colorMode === 'run');
  if (replaying) return <div className="small muted">loading the pair…</div>;
  if (!replay) return null;
  const w = replay.worst;
  return (
    <div
      className="qual-replay small"
      data-testid="gap-replay"
      data-worst-frame={w?.frame ?? ''}
      data-worst-time={w?.timeS ?? ''}
      data-runs={replay.runs.length}
    >
      <div>
        <span className="strong">replay</span> {replay.bindingName} × {replay.clip} · calibration {replay.calibrationId}
        {w ? (
          <>
            {' '}
            · worst frame{' '}
            <b className="mono" data-testid="gap-worst-frame">
              {w.frame}
            </b>{' '}
            (t = {w.timeS.toFixed(2)} s): real trial {trialNumber(w.trialIndex)},{' '}
            {w.measure === 'mpjpe_l'
              ? `MPJPE-l ${(w.value / 10).toFixed(2)} cm`
              : `joint RMSE ${w.value.toFixed(4)} rad`}{' '}
            — <span className="muted">{w.why}</span>
          </>
        ) : (
          <span className="muted"> · no real trial to find a worst frame in</span>
        )}
      </div>
      <ul className="gap-legend" data-testid="gap-legend">
        <li>
          <i className="run-swatch" style={{ background: GHOST_COLOR, opacity: 0.7 }} /> reference — translucent
          light-blue ghost (50 Hz, as recorded with the sim episode)
        </li>
        {replay.runs.map((r) => {
          const meta = runs.find((x) => x.id === r.id);
          const color = meta ? runColor(meta.colorSlot) : null;
          return (
            <li
              key={r.id}
              data-testid={`gap-legend-${r.id}`}
              data-root={r.domain === 'simulation' ? 'simulated' : r.rootMeasured ? 'measured' : 'reference'}
            >
              {byRun && color ? (
                <i
                  className="run-swatch"
                  style={{ background: color.hex }}
                  title={color.name}
                  data-testid={`gap-swatch-${r.id}`}
                  data-color={color.hex}
                />
              ) : (
                <i
                  className="run-swatch"
                  style={{ background: ERROR_GRADIENT }}
                  title="body error, green → yellow → red"
                  data-testid={`gap-swatch-${r.id}`}
                  data-color=""
                />
              )}{' '}
              <b>{r.label}</b> — solid,{' '}
              {byRun && color ? `drawn in ${color.name}` : 'bodies coloured by error (green→red)'};{' '}
              {r.domain === 'simulation'
                ? 'root simulated'
                : r.rootMeasured
                  ? 'root measured (motion capture)'
                  : 'no motion capture: root drawn at the reference root'}{' '}
              · {r.sourceRateHz.toFixed(0)} Hz → 50 Hz ({r.resampling.replace(/_/g, ' ')}){' '}
              <button
                type="button"
                className="link"
                onClick={() => soloGapRun(r.id)}
                title="show this run alone (click again: all)"
                data-testid={`gap-solo-${r.id}`}
              >
                {meta && !meta.visible ? 'hidden · show' : 'solo'}
              </button>
            </li>
          );
        })}
      </ul>
      <GapRunsPlot />
      <div className="muted">
        {byRun
          ? 'Each executed run in its own colour (not an error scale); “by error” in the viewport legend colours every body by its error instead.'
          : 'Every executed run is drawn in the error colours; “by run” in the viewport legend gives each run its own colour.'}
        {replay.notShown.length > 0 &&
          ` Not shown (excluded from the readings): ${replay.notShown.map((t) => `${t.domain === 'simulation' ? 'sim' : `real trial ${trialNumber(t.trialIndex)}`}: ${t.reason}`).join('; ')}.`}
      </div>
    </div>
  );
}

export function GapReviewPanel() {
  const dir = useGapReviewStore((s) => s.campaignDir);
  const report = useGapReviewStore((s) => s.report);
  const error = useGapReviewStore((s) => s.error);
  const loading = useGapReviewStore((s) => s.loading);
  const connected = useConnectionStore((s) => s.status === 'connected');
  return (
    <section className="panel qual-board gap-review" data-testid="gap-review" aria-label="Gap review">
      {report && (
        <div className="muted small board-summary" data-testid="gap-summary">
          {report.contract ?? '—'} · {report.matchedPairs} matched pair{report.matchedPairs === 1 ? '' : 's'} · Gap % =
          (Real − Sim)/Sim
        </div>
      )}
      <div className="gap-body">
        <div className="qual-controls">
          <CampaignDirField
            value={dir}
            onChange={setGapCampaignDir}
            onEnter={() => void openGapCampaign()}
            testId="gap-dir"
          />
          <button type="button" disabled={!connected} onClick={() => void openGapCampaign()} data-testid="gap-open">
            {loading ? 'Reading…' : report ? 'Reload' : 'Open'}
          </button>
        </div>
        {error && <FieldError testId="gap-error">{error}</FieldError>}
        <ReplayLegend />
        {!report && (
          <div className="muted small">
            Open a campaign folder to see the sim-to-real gaps of its matched pairs (docs/GAP_REPORT.md).
          </div>
        )}
        {report?.message && (
          <div className="muted small" data-testid="gap-message">
            {report.message}
          </div>
        )}
        {report?.bindings.map((b) => (
          <Binding key={b.binding} b={b} />
        ))}
        <ContractComparison />
        {report && report.skipped.length > 0 && (
          <details className="small" data-testid="gap-skipped">
            <summary>calibrated pairs not in the tables ({report.skipped.length})</summary>
            <ul>
              {report.skipped.map((s) => (
                <li key={s.parentTraceId}>
                  {report.bindings.find((b) => b.binding === s.binding)?.name ?? s.binding} × {s.clip}, calibration{' '}
                  {s.calibrationId}: {s.why} — {s.reason}
                </li>
              ))}
            </ul>
          </details>
        )}
      </div>
    </section>
  );
}
