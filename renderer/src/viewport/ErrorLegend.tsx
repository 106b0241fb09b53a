import { useState } from 'react';
import { GHOST_COLOR } from './geomObjects';
import { ERROR_RED_M, ERROR_YELLOW_M, errorLegendGradient, LEGEND_MAX_M } from '../overlay/errorScale';
import type { ErrorMode } from '../overlay/overlayCompute';
import { setColorMode, setErrorMode, setShowReference } from '../overlay/runActions';
import { runColor } from '../overlay/runColors';
import { useRunStore, type OverlayColorMode } from '../overlay/runStore';

const TICKS_CM = [0, 5, 10, 15, 20, 25];
const GRADIENT = errorLegendGradient();

const MODES: { mode: OverlayColorMode; text: string; title: string }[] = [
  {
    mode: 'error',
    text: 'by error',
    title: 'Colour each body by its position error against the reference (green → yellow → red)',
  },
  { mode: 'run', text: 'by run', title: 'Colour each executed run in its own colour, to tell overlaid runs apart' },
];

/** The overlay's colour mode: two toggle buttons (by error / by run). */
function ColorModeSwitch({ mode }: { mode: OverlayColorMode }) {
  return (
    <span
      className="segmented"
      role="group"
      aria-label="Colour executed runs"
      data-testid="color-mode"
      data-mode={mode}
    >
      {MODES.map((m) => (
        <button
          key={m.mode}
          type="button"
          className={m.mode === mode ? 'seg-on' : undefined}
          aria-pressed={m.mode === mode}
          title={m.title}
          onClick={() => setColorMode(m.mode)}
          data-testid={`color-mode-${m.mode}`}
        >
          {m.text}
        </button>
      ))}
    </span>
  );
}

/** Key of "by run": each run's identity colour and label (hidden runs dimmed). */
function RunKey() {
  const runs = useRunStore((s) => s.runs);
  return (
    <div className="legend-runs" data-testid="run-color-key">
      {runs.map((r) => {
        const c = runColor(r.colorSlot);
        return (
          <span
            key={r.id}
            className={r.visible ? 'legend-run' : 'legend-run hidden-run'}
            title={`${r.label}: ${c.name}${r.visible ? '' : ' (hidden)'}`}
            data-testid={`run-color-${r.id}`}
            data-color={c.hex}
          >
            <i className="run-swatch" style={{ background: c.hex }} />
            {r.label}
          </span>
        );
      })}
    </div>
  );
}

/**
 * Colour key of the overlay: the reference ghost, and body error green → yellow → red or one colour
 * per run. A bar under the 3D canvas (Viewport.tsx), never over it; folds to one line.
 */
export function ErrorLegend() {
  const colorMode = useRunStore((s) => s.colorMode);
  const errorMode = useRunStore((s) => s.errorMode);
  const showReference = useRunStore((s) => s.showReference);
  const [open, setOpen] = useState(true);
  const fold = (
    <button
      type="button"
      className="legend-fold small"
      aria-expanded={open}
      title={open ? 'fold the colour legend to one line' : 'show the colour legend and its controls'}
      onClick={() => setOpen(!open)}
      data-testid="legend-fold"
    >
      {open ? '▾ legend' : '▸ legend'}
    </button>
  );
  if (!open)
    return (
      <div className="error-legend error-legend-folded" data-testid="error-legend" data-open="false">
        {fold}
        <span className="muted">
          {colorMode === 'error'
            ? `coloured by error (${errorMode === 'local' ? 'root-relative' : 'world frame'}): green 0 · yellow ${ERROR_YELLOW_M * 100} cm · red ≥ ${ERROR_RED_M * 100} cm`
            : 'coloured by run'}
          {showReference ? ' · reference ghost shown' : ' · reference ghost hidden'}
        </span>
      </div>
    );
  return (
    <div className="error-legend" data-testid="error-legend" data-open="true">
      <div className="legend-row">
        {fold}
        <label className="check">
          <input
            type="checkbox"
            checked={showReference}
            onChange={(e) => setShowReference(e.target.checked)}
            data-testid="show-reference"
          />
          <span className="ghost-swatch" style={{ background: GHOST_COLOR }} />
          reference (ghost)
        </label>
        <span className="muted">·</span>
        <span>solid: executed, coloured</span>
        <ColorModeSwitch mode={colorMode} />
      </div>
      {colorMode === 'error' ? (
        <>
          <div className="legend-row">
            <select
              value={errorMode}
              onChange={(e) => setErrorMode(e.target.value as ErrorMode)}
              data-testid="error-mode"
              aria-label="Error measure"
            >
              <option value="local">root-relative (MPJPE-l)</option>
              <option value="global">world frame</option>
            </select>
            <div
              className="legend-scale"
              title={`green 0 · yellow ${ERROR_YELLOW_M * 100} cm · red ≥ ${ERROR_RED_M * 100} cm (mb-metrics/1 failure threshold)`}
            >
              <div className="legend-bar" style={{ background: GRADIENT }} />
              <div className="legend-ticks">
                {TICKS_CM.map((cm) => (
                  <span key={cm} style={{ left: `${(cm / 100 / LEGEND_MAX_M) * 100}%` }}>
                    {cm === ERROR_RED_M * 100 ? `≥${cm}` : cm}
                  </span>
                ))}
                <span className="unit" style={{ left: '100%' }}>
                  cm
                </span>
              </div>
            </div>
            <span className="legend-note muted">red ≥ {ERROR_RED_M * 100} cm: the failure threshold</span>
          </div>
        </>
      ) : (
        <>
          <RunKey />
          <div className="legend-note muted">
            one colour per run (not an error scale) · “by error” shows per-body error
          </div>
        </>
      )}
    </div>
  );
}
