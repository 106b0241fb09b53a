import { useMemo } from 'react';
import type { AnalysisDocument, GapCellDoc } from '../../../src/api/contract';
import { NUMERIC_READINGS, READING_INFO } from '../../../src/domain/metrics/readings';
import { useConnectionStore } from '../api/connectionStore';
import { runColorHex } from '../overlay/runColors';
import { CampaignDirField } from '../ui/CampaignDirField';
import { FieldError } from '../ui/FieldError';
import { LabelledInput } from '../ui/LabelledInput';
import { openClipInGapReview, runAnalysis } from './analysisActions';
import { bindingGapRows } from './bindingGapRows';
import { useAnalysisStore } from './analysisStore';
import { CategoryPlot } from './CategoryPlot';
import { SensitivitySection } from './SensitivitySection';
import type { CategoryChartSpec } from './categoryChart';
import './analysis.css';
import { READING_SHORT_NAMES } from '../ui/readingShortNames';

// The Analysis panel (docs/ANALYSIS.md): the campaign's statistics from analysis.run, as
// plots an analyst reads at a glance —
//   - a forest plot of every reading's Gap % with its 95 % pair-cluster bootstrap CI, one series
//     per binding, the zero line dashed (a CI across it: not distinguishable from zero); a binding
//     with one matched pair is drawn with that pair's episode-resampled CI, labelled so
//     (bindingGapRows.ts);
//   - the readings' Spearman ρ heat map with each reading's leave-one-out R²;
//   - the minimal clip set's selection path: bars of marginal utility, the cumulative share line;
//   - Bradley–Terry strengths with CIs on all clips and on the minimal set;
//   - one matched pair's start-state sensitivity (SensitivitySection.tsx).
// A matched pair (the per-clip gaps under the forest plot, or a clip of the path that has one) opens
// in Gap review at its worst frame.

const SHORT = READING_SHORT_NAMES;
const READINGS = NUMERIC_READINGS.map((k) => READING_INFO[k]);

function forestSpec(doc: AnalysisDocument): CategoryChartSpec {
  const readings = doc.gaps[0]?.readings.map((c) => c.reading) ?? [];
  const rows = doc.gaps.map(bindingGapRows);
  const cell = (i: number, r: string): GapCellDoc | undefined => rows[i].cells.find((c) => c.reading === r);
  return {
    id: 'gap-forest',
    heightPx: 200,
    categories: readings.map((r) => SHORT[r] ?? r),
    series: doc.gaps.map((_, i) => ({
      label: rows[i].label,
      color: runColorHex(i),
      kind: 'points' as const,
      scale: 'pct',
      digits: 1,
      values: readings.map((r) => cell(i, r)?.gap_pct ?? null),
      lo: readings.map((r) => cell(i, r)?.ci?.[0] ?? null),
      hi: readings.map((r) => cell(i, r)?.ci?.[1] ?? null),
    })),
    axes: [{ scale: 'pct', label: 'Gap % (Real − Sim)/Sim', side: 'left' }],
    xLabel: 'reading',
    zeroOn: 'pct',
  };
}

function pathSpec(doc: AnalysisDocument): CategoryChartSpec | null {
  if (!('path' in doc.selection)) return null;
  const path = doc.selection.path;
  return {
    id: 'selection-path',
    heightPx: 180,
    categories: path.map((_, i) => String(i + 1)),
    series: [
      {
        label: 'marginal utility',
        color: '#4c9aff',
        kind: 'bars',
        scale: 'u',
        digits: 3,
        values: path.map((p) => p.marginal_utility),
      },
      {
        label: 'cumulative %',
        color: '#d29922',
        kind: 'line',
        scale: 'pct',
        digits: 1,
        values: path.map((p) => 100 * p.cumulative_share),
      },
    ],
    axes: [
      { scale: 'u', label: 'U(c | S)', side: 'left' },
      { scale: 'pct', label: '% of the full set', side: 'right', range: [0, 100] },
    ],
    xLabel: 'step',
  };
}

function strengthSpec(doc: AnalysisDocument): CategoryChartSpec | null {
  const bt = doc.bradley_terry;
  if (!('strengths' in bt)) return null;
  const order = bt.strengths;
  const min = 'strengths' in bt.minimal_set_strengths ? bt.minimal_set_strengths.strengths : null;
  const onMin = (b: string) => min?.find((s) => s.binding === b);
  return {
    id: 'bt-strengths',
    heightPx: 190,
    // two lines per binding (family, then what tells it apart) so neighbours' names never overlap
    categories: order.map(
      (s) => `${s.rank}. ${s.binding_name.replace(/^builtin@pd1-\w+ · /, 'builtin\n').replace(/ policy /, '\n')}`,
    ),
    series: [
      {
        label: `all ${bt.judges} clips`,
        color: '#4c9aff',
        kind: 'points',
        scale: 'theta',
        values: order.map((s) => s.strength),
        lo: order.map((s) => s.ci?.[0] ?? null),
        hi: order.map((s) => s.ci?.[1] ?? null),
      },
      ...(min
        ? [
            {
              label: 'minimal set',
              color: '#3fb950',
              kind: 'points' as const,
              scale: 'theta',
              values: order.map((s) => onMin(s.binding)?.strength ?? null),
              lo: order.map((s) => onMin(s.binding)?.ci?.[0] ?? null),
              hi: order.map((s) => onMin(s.binding)?.ci?.[1] ?? null),
            },
          ]
        : []),
    ],
    axes: [{ scale: 'theta', label: 'log-strength θ', side: 'left' }],
    xLabel: 'binding',
    zeroOn: 'theta',
  };
}

/** ρ in −1..1 as a blue (−) … red (+) background. */
function rhoColor(rho: number | null): string {
  if (rho === null) return 'transparent';
  const a = Math.min(1, Math.abs(rho));
  return rho >= 0 ? `rgba(248, 81, 73, ${0.15 + 0.7 * a})` : `rgba(76, 154, 255, ${0.15 + 0.7 * a})`;
}

function HeatMap({ doc }: { doc: AnalysisDocument }) {
  const r = doc.redundancy.readings;
  if (!('variables' in r)) return <p className="muted small">{r.reason}</p>;
  return (
    <table className="analysis-heat" data-testid="analysis-heatmap">
      <thead>
        <tr>
          <th />
          {r.variables.map((v) => (
            <th key={v} title={v}>
              {SHORT[v] ?? v}
            </th>
          ))}
          <th title="leave-one-out ridge R² from the other readings">LOO R²</th>
        </tr>
      </thead>
      <tbody>
        {r.variables.map((v, i) => (
          <tr key={v}>
            <th title={v}>{SHORT[v] ?? v}</th>
            {r.spearman[i].map((c, j) => (
              <td
                key={j}
                style={{ background: rhoColor(c.rho) }}
                title={
                  c.rho === null
                    ? c.reason
                    : `ρ ${c.rho.toFixed(3)}${c.ci ? ` [${c.ci[0].toFixed(2)}, ${c.ci[1].toFixed(2)}]` : ''}`
                }
                data-testid={`analysis-rho-${i}-${j}`}
              >
                {c.rho === null ? '—' : c.rho.toFixed(2)}
              </td>
            ))}
            <td className={(r.loo_r2[i].r2 ?? 0) >= 0.9 ? 'analysis-substitute' : undefined}>
              {r.loo_r2[i].r2 === null ? '—' : r.loo_r2[i].r2!.toFixed(2)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Flags({ doc }: { doc: AnalysisDocument }) {
  const lines = doc.gaps
    .map(bindingGapRows)
    .flatMap((g) =>
      g.cells.flatMap((c) => [
        ...(c.distinguishable_from_zero === false
          ? [`${g.label} · ${SHORT[c.reading] ?? c.reading}: not distinguishable from zero`]
          : []),
        ...(c.icc?.real?.flag ? [`${g.label} · ${SHORT[c.reading] ?? c.reading}: ${c.icc.real.flag}`] : []),
      ]),
    );
  if (lines.length === 0) return null;
  return (
    <ul className="analysis-flags small" data-testid="analysis-flags">
      {lines.map((l) => (
        <li key={l}>{l}</li>
      ))}
    </ul>
  );
}

/**
 * Per binding, ICC(A,1) of its qualification pairs' seeded rollouts for every reading (a matched
 * pair has one simulation branch, so the simulator's repeats are judged here); a flagged one in amber.
 */
function RolloutReliability({ doc }: { doc: AnalysisDocument }) {
  const rows = doc.rollout_reliability.filter((x) => x.readings.some((r) => r.value !== null));
  if (rows.length === 0)
    return <p className="muted small">No binding has two or more qualification pairs with repeated rollouts.</p>;
  const readings = rows[0].readings.map((r) => r.reading);
  return (
    <table className="analysis-table" data-testid="analysis-rollout-reliability">
      <thead>
        <tr>
          <th>binding</th>
          <th>pairs × rollouts</th>
          {readings.map((r) => (
            <th key={r}>{SHORT[r] ?? r}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((x) => (
          <tr key={x.binding}>
            <td>{x.binding_name}</td>
            <td>
              {x.readings[0].pairs} × {x.readings[0].repeats}
            </td>
            {x.readings.map((r) => (
              <td
                key={r.reading}
                className={r.flag ? 'warn-text' : undefined}
                title={r.flag ?? (r.ci ? `95 % CI [${r.ci[0].toFixed(3)}, ${r.ci[1].toFixed(3)}]` : (r.reason ?? ''))}
              >
                {r.value === null ? '—' : r.value.toFixed(3)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Per matched pair, the chosen reading's Gap % with its CI, largest |Gap %| first; a click replays it in Gap review. */
function ClipGaps({ doc }: { doc: AnalysisDocument }) {
  const rows = doc.gaps
    .flatMap((g) =>
      g.clips.map((c) => ({
        binding: g.binding_name,
        clip: c,
        cell: c.readings.find((r) => r.reading === doc.reading),
      })),
    )
    .filter((r) => r.cell && r.clip.parent_trace_id)
    .sort((a, b) => Math.abs(b.cell!.gap_pct ?? -1) - Math.abs(a.cell!.gap_pct ?? -1));
  if (rows.length === 0) return null;
  return (
    <table className="analysis-table analysis-clips" data-testid="analysis-clip-gaps">
      <thead>
        <tr>
          <th>clip</th>
          <th>binding</th>
          <th>Gap % [95 % CI over its episodes]</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {rows.slice(0, 12).map(({ binding, clip, cell }) => (
          <tr key={clip.parent_trace_id!}>
            <td>
              <button
                type="button"
                className="link"
                title="open in Gap review at its worst frame"
                onClick={() => void openClipInGapReview(clip.parent_trace_id!)}
                data-testid={`analysis-open-${clip.parent_trace_id}`}
              >
                {clip.clip_name}
              </button>
            </td>
            <td className="small">{binding}</td>
            <td className="mono" title={cell!.reason}>
              {cell!.gap_pct === null
                ? '—'
                : `${cell!.gap_pct.toFixed(1)}${cell!.ci ? ` [${cell!.ci[0].toFixed(1)}, ${cell!.ci[1].toFixed(1)}]` : ''}`}
            </td>
            <td className="small muted">
              {cell!.distinguishable_from_zero === false ? 'not distinguishable from zero' : ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function MinimalSet({ doc }: { doc: AnalysisDocument }) {
  if (!('path' in doc.selection)) return <p className="muted small">{doc.selection.reason}</p>;
  const sel = doc.selection;
  const pairsOf = (clip: string) =>
    doc.gaps.flatMap((g) =>
      g.clips
        .filter((c) => c.clip === clip && c.parent_trace_id)
        .map((c) => ({ binding: g.binding_name, parent: c.parent_trace_id! })),
    );
  const survived = sel.robustness.filter((r) => r.survives).length;
  return (
    <div className="small">
      <p data-testid="analysis-minimal-set">
        <b>
          {sel.minimal_set.length} of {sel.path.length} clips
        </b>{' '}
        reach {(100 * sel.minimal_share).toFixed(1)} % of the full set&apos;s utility (target{' '}
        {(100 * sel.share).toFixed(0)} %); forced-first robustness: {survived} of {sel.robustness.length} starts give
        the same set.
      </p>
      <table className="analysis-table analysis-path" data-testid="analysis-path-table">
        <thead>
          <tr>
            <th>step</th>
            <th>clip</th>
            <th>Gini</th>
            <th>R²(c ~ S)</th>
            <th>marginal</th>
            <th>cumulative</th>
            <th>matched pairs</th>
          </tr>
        </thead>
        <tbody>
          {sel.path.slice(0, sel.minimal_set.length).map((p, i) => (
            <tr key={p.clip} data-testid={`analysis-path-${p.clip_name}`}>
              <td className="mono">{i + 1}</td>
              <td>{p.clip_name}</td>
              <td className="mono">{p.gini.toFixed(3)}</td>
              <td className="mono">{p.r2.toFixed(3)}</td>
              <td className="mono">{p.marginal_utility.toFixed(3)}</td>
              <td className="mono">{(100 * p.cumulative_share).toFixed(1)} %</td>
              <td>
                {pairsOf(p.clip).map((m) => (
                  <button
                    key={m.parent}
                    type="button"
                    className="link small"
                    title={`open ${p.clip_name} × ${m.binding} in Gap review at its worst frame`}
                    onClick={() => void openClipInGapReview(m.parent)}
                    data-testid={`analysis-path-open-${m.parent}`}
                  >
                    {m.binding.replace(/^builtin@pd1-\w+ · /, 'builtin · ')}
                  </button>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function AnalysisPanel() {
  const connected = useConnectionStore((s) => s.status === 'connected');
  const campaignDir = useAnalysisStore((s) => s.campaignDir);
  const reading = useAnalysisStore((s) => s.reading);
  const share = useAnalysisStore((s) => s.share);
  const doc = useAnalysisStore((s) => s.doc);
  const running = useAnalysisStore((s) => s.running);
  const error = useAnalysisStore((s) => s.error);
  const forest = useMemo(() => (doc && doc.gaps.length > 0 ? forestSpec(doc) : null), [doc]);
  const path = useMemo(() => (doc ? pathSpec(doc) : null), [doc]);
  const strengths = useMemo(() => (doc ? strengthSpec(doc) : null), [doc]);
  return (
    <div className="analysis-panel" data-testid="analysis-panel">
      <div className="qual-controls">
        <CampaignDirField
          value={campaignDir}
          onChange={(v) => useAnalysisStore.setState({ campaignDir: v })}
          onEnter={() => void runAnalysis()}
          testId="analysis-campaign-dir"
        />
        <label className="qual-dir">
          <span>Reading</span>
          <select
            value={reading}
            onChange={(e) => useAnalysisStore.setState({ reading: e.target.value })}
            data-testid="analysis-reading"
          >
            {READINGS.map((r) => (
              <option key={r.json} value={r.json}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        <LabelledInput
          className="qual-small"
          label="Share"
          type="number"
          min={0.05}
          max={1}
          step={0.05}
          value={share}
          onText={(text) => useAnalysisStore.setState({ share: Number(text) })}
          testId="analysis-share"
        />
        <button
          type="button"
          className="primary"
          disabled={!connected || running}
          onClick={() => void runAnalysis()}
          data-testid="analysis-run"
        >
          {running ? 'Analysing…' : 'Analyse'}
        </button>
      </div>
      {error && <FieldError testId="analysis-error">{error}</FieldError>}
      {doc && (
        <>
          <p className="small muted" data-testid="analysis-summary">
            {doc.matrix_used.bindings.length} bindings × {doc.matrix_used.clips.length} clips (
            {doc.domain === 'sim' ? 'simulation' : 'hardware'} episodes, {doc.contract}); {doc.gaps.length} bindings
            with matched pairs; seed {doc.seed}, {doc.bootstrap.gap_and_rho_replicates} bootstrap replicates, 95 %
            intervals. {doc.direction.charAt(0).toUpperCase() + doc.direction.slice(1)}.
          </p>
          <section>
            <h4>Sim-to-real gap with 95 % CIs (Table 11)</h4>
            {forest ? (
              <CategoryPlot spec={forest} />
            ) : (
              <p className="muted small">No matched pairs in this campaign: no gap to put a CI on.</p>
            )}
            <Flags doc={doc} />
            <ClipGaps doc={doc} />
          </section>
          <section>
            <h4>Reliability of repeated simulation rollouts (qualification, ICC(A,1))</h4>
            <RolloutReliability doc={doc} />
          </section>
          <section>
            <h4>Readings: Spearman ρ and leave-one-out R²</h4>
            <HeatMap doc={doc} />
          </section>
          <section>
            <h4>Minimal hardware clip set ({SHORT[doc.reading] ?? doc.reading})</h4>
            {path && <CategoryPlot spec={path} />}
            <MinimalSet doc={doc} />
          </section>
          <section>
            <h4>Bradley–Terry ranking ({SHORT[doc.reading] ?? doc.reading}, clips as judges)</h4>
            {strengths ? (
              <CategoryPlot spec={strengths} />
            ) : (
              <p className="muted small">{'reason' in doc.bradley_terry ? doc.bradley_terry.reason : ''}</p>
            )}
          </section>
          <section>
            <h4>Start-state sensitivity of a pair (simulation)</h4>
            <SensitivitySection analysis={doc} />
          </section>
        </>
      )}
    </div>
  );
}
