import { useMemo } from 'react';
import type { AnalysisDocument, SensitivityDocument } from '../../../src/api/contract';
import { fromRows } from '../../../src/domain/analysis/linearAlgebra';
import { sensitivityEllipses } from '../../../src/domain/analysis/sensitivity';
import { runColorHex } from '../overlay/runColors';
import { FieldError } from '../ui/FieldError';
import { LabelledInput } from '../ui/LabelledInput';
import { runSensitivity } from './analysisActions';
import { CategoryPlot } from './CategoryPlot';
import type { CategoryChartSpec } from './categoryChart';
import { useSensitivityStore, type SensitivityResponse } from './sensitivityStore';
import type { XyChartSpec } from './xyChart';
import { XyPlot } from './XyPlot';

// The Analysis panel's start-state sensitivity (docs/ANALYSIS.md §6): one matched
// pair's calibrated start perturbed in the embedded simulator (analysis.sensitivity), shown as
//   - the dominant direction of each scale's Gram by axis (bars: the smallest scale, the local
//     linear geometry; dots: the larger scales), signed, in joint names;
//   - the response ellipses in the plane of the smallest scale's two dominant directions, trace-
//     normalised, beside the isotropic reference circle (sensitivityEllipses): a long thin ellipse
//     is a start-pose error that matters in one direction only; a turning one, a geometry that
//     changes with the size of the error;
//   - per scale: condition number, dominant share, held-out WAPE against the isotropic reference,
//     and the replay audit.

const RESPONSES: { key: SensitivityResponse; label: string }[] = [
  { key: 'body_position_mm', label: 'body positions (MPJPE-l)' },
  { key: 'joint_position_rad', label: 'joint angles (joint RMSE)' },
];

/** "left_hip_pitch_joint" → "L hip pitch", "root_roll" → "root roll". */
export function axisShortName(axis: string): string {
  return axis
    .replace(/_joint$/, '')
    .replace(/^left_/, 'L ')
    .replace(/^right_/, 'R ')
    .replace(/_/g, ' ');
}

function responseOf(doc: SensitivityDocument, key: SensitivityResponse) {
  return doc.responses.find((r) => r.response === key) ?? doc.responses[0];
}

function dominantSpec(doc: SensitivityDocument, key: SensitivityResponse): CategoryChartSpec {
  const resp = responseOf(doc, key);
  const axes = doc.axes.map((a) => a.axis);
  const weights = (s: (typeof resp.scales)[number]) =>
    axes.map((a) => s.dominant_direction.find((w) => w.axis === a)?.weight ?? null);
  return {
    id: 'sensitivity-dominant',
    heightPx: 220,
    categories: axes.map(axisShortName),
    series: resp.scales.map((s, i) => ({
      label: `${s.scale_sigma} σ`,
      color: runColorHex(i),
      kind: i === 0 ? ('bars' as const) : ('points' as const),
      scale: 'w',
      digits: 3,
      values: weights(s),
    })),
    axes: [{ scale: 'w', label: 'dominant direction', side: 'left', range: [-1, 1] }],
    xLabel: 'axis',
    zeroOn: 'w',
    slantLabels: true,
  };
}

function ellipseSpec(doc: SensitivityDocument, key: SensitivityResponse): XyChartSpec | null {
  const resp = responseOf(doc, key);
  try {
    const e = sensitivityEllipses(resp.scales.map((s) => fromRows(s.gram)));
    const top = (v: Float64Array) => {
      const i = v.reduce((best, x, k) => (Math.abs(x) > Math.abs(v[best]) ? k : best), 0);
      return `${axisShortName(doc.axes[i].axis)} ${v[i].toFixed(2)}`;
    };
    const circle = Array.from({ length: 97 }, (_, k) => (2 * Math.PI * k) / 96);
    return {
      id: 'sensitivity-ellipses',
      sizePx: 300,
      xLabel: `v₁ (${top(e.basis[0])}, …)`,
      yLabel: `v₂ (${top(e.basis[1])}, …)`,
      curves: [
        ...resp.scales.map((s, i) => ({
          label: `${s.scale_sigma} σ`,
          color: runColorHex(i),
          x: e.curves[i].x,
          y: e.curves[i].y,
        })),
        {
          label: 'isotropic',
          color: '#8590a0',
          dashed: true,
          x: circle.map((t) => e.isotropicRadius * Math.cos(t)),
          y: circle.map((t) => e.isotropicRadius * Math.sin(t)),
        },
      ],
    };
  } catch {
    // A Gram with zero trace (no measurable response) has no plane to draw; the table says so.
    return null;
  }
}

function ScaleTable({ doc, responseKey }: { doc: SensitivityDocument; responseKey: SensitivityResponse }) {
  const resp = responseOf(doc, responseKey);
  return (
    <table className="analysis-table" data-testid="sensitivity-scales">
      <thead>
        <tr>
          <th>scale</th>
          <th>trace ({resp.unit})</th>
          <th>condition</th>
          <th>dominant share</th>
          <th>dominant direction (top 3)</th>
          <th>held-out WAPE</th>
          <th>isotropic WAPE</th>
        </tr>
      </thead>
      <tbody>
        {resp.scales.map((s) => (
          <tr key={s.scale_sigma}>
            <td className="mono">{s.scale_sigma} σ</td>
            <td className="mono">{s.trace.toPrecision(3)}</td>
            <td className="mono">{s.condition_number === null ? '∞' : s.condition_number.toPrecision(3)}</td>
            <td className="mono">{(100 * s.dominant_share).toFixed(1)} %</td>
            <td className="small">
              {s.dominant_direction
                .slice(0, 3)
                .map((w) => `${axisShortName(w.axis)} ${w.weight.toFixed(2)}`)
                .join(', ')}
            </td>
            <td className="mono">{(100 * s.held_out.wape).toFixed(1)} %</td>
            <td className="mono">{(100 * s.held_out.wape_isotropic).toFixed(1)} %</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function SensitivitySection({ analysis }: { analysis: AnalysisDocument }) {
  const pairId = useSensitivityStore((s) => s.pairId);
  const scales = useSensitivityStore((s) => s.scales);
  const seconds = useSensitivityStore((s) => s.seconds);
  const responseKey = useSensitivityStore((s) => s.response);
  const doc = useSensitivityStore((s) => s.doc);
  const running = useSensitivityStore((s) => s.running);
  const error = useSensitivityStore((s) => s.error);
  // The campaign's pairs with a calibrated start (what analysis.sensitivity accepts).
  const pairs = analysis.sensitivity_pairs;
  const dominant = useMemo(() => (doc ? dominantSpec(doc, responseKey) : null), [doc, responseKey]);
  const ellipses = useMemo(() => (doc ? ellipseSpec(doc, responseKey) : null), [doc, responseKey]);
  if (pairs.length === 0)
    return (
      <p className="muted small" data-testid="sensitivity-none">
        No pair of this campaign has a calibrated start (capture one in the Trial runner): nothing to perturb.
      </p>
    );
  const across = doc ? responseOf(doc, responseKey).across_scales : [];
  return (
    <div className="small" data-testid="sensitivity-section">
      <div className="qual-controls">
        <label className="qual-dir">
          <span>Pair</span>
          <select
            value={pairId}
            onChange={(e) => useSensitivityStore.setState({ pairId: e.target.value })}
            data-testid="sensitivity-pair"
          >
            <option value="">choose a calibrated pair…</option>
            {pairs.map((p) => (
              <option key={p.pair_id} value={p.pair_id} title={`calibration ${p.calibration_id}, ${p.captured_at}`}>
                {p.clip_name} × {p.binding_name}
              </option>
            ))}
          </select>
        </label>
        <label className="sensitivity-scales">
          <span>Scales (σ)</span>
          <input
            value={scales}
            onChange={(e) => useSensitivityStore.setState({ scales: e.target.value })}
            data-testid="sensitivity-scales-input"
          />
        </label>
        <LabelledInput
          className="qual-small"
          label="Seconds"
          type="number"
          min={0.5}
          max={10}
          step={0.5}
          value={seconds}
          onText={(text) => useSensitivityStore.setState({ seconds: Number(text) })}
          testId="sensitivity-seconds"
        />
        <button
          type="button"
          disabled={running || !pairId}
          onClick={() => void runSensitivity()}
          data-testid="sensitivity-run"
          title="perturb the pair's calibrated start along each leg and waist joint and the root's roll and pitch, ± at each scale, in the embedded simulator"
        >
          {running ? 'Running…' : 'Run in simulation'}
        </button>
      </div>
      {error && <FieldError testId="sensitivity-error">{error}</FieldError>}
      {doc && (
        <>
          <p className="muted" data-testid="sensitivity-summary">
            {doc.pair.clipName} × {doc.pair.bindingName}: calibration {doc.calibration.id} ({doc.calibration.robotUnit}
            ); first {doc.seconds.toFixed(2)} s; {doc.axes.length} axes; {doc.runs} runs
            {doc.short_runs ? ` (${doc.short_runs} ended early)` : ''}. Replay audit: {doc.replay.repeats} repeats{' '}
            {doc.replay.bit_identical ? 'bit-identical' : `differ (${doc.replay.first_difference})`}, ICC(A,1){' '}
            {doc.replay.icc === null ? '—' : doc.replay.icc.toFixed(3)}.
          </p>
          <div className="sensitivity-responses">
            {RESPONSES.map((r) => (
              <label key={r.key}>
                <input
                  type="radio"
                  name="sensitivity-response"
                  checked={responseKey === r.key}
                  onChange={() => useSensitivityStore.setState({ response: r.key })}
                  data-testid={`sensitivity-response-${r.key}`}
                />{' '}
                {r.label}
              </label>
            ))}
          </div>
          <div className="sensitivity-plots">
            {dominant && <CategoryPlot spec={dominant} />}
            {ellipses ? (
              <XyPlot spec={ellipses} />
            ) : (
              <p className="muted">A Gram with zero trace: no response to draw.</p>
            )}
          </div>
          <ScaleTable doc={doc} responseKey={responseKey} />
          {across.length > 0 && (
            <p className="muted" data-testid="sensitivity-across">
              Across scales:{' '}
              {across
                .map(
                  (a) =>
                    `${a.from} σ → ${a.to} σ: D_G ${a.d_g.toFixed(3)}, dominant directions ${a.angle_deg.toFixed(1)}° apart`,
                )
                .join('; ')}
              .
            </p>
          )}
        </>
      )}
    </div>
  );
}
