import { ERROR_RED_M, ERROR_YELLOW_M, errorLegendGradient, LEGEND_MAX_M } from '../overlay/errorScale';
import type { ErrorMode } from '../overlay/overlayCompute';
import { setErrorMode, setShowReference, useRunStore } from '../stores/runStore';
import { GHOST_COLOR } from './geomObjects';

const TICKS_CM = [0, 5, 10, 15, 20, 25];
const GRADIENT = errorLegendGradient();

/** Colour key of the overlay: the reference ghost, and body error green → yellow → red. */
export function ErrorLegend() {
  const errorMode = useRunStore((s) => s.errorMode);
  const showReference = useRunStore((s) => s.showReference);
  return (
    <div className="error-legend" data-testid="error-legend">
      <div className="legend-row">
        <label className="check">
          <input type="checkbox" checked={showReference} onChange={(e) => setShowReference(e.target.checked)} data-testid="show-reference" />
          <span className="ghost-swatch" style={{ background: GHOST_COLOR }} />
          reference (ghost)
        </label>
        <span className="muted">·</span>
        <span>solid: executed, coloured by body position error</span>
      </div>
      <div className="legend-row">
        <select value={errorMode} onChange={(e) => setErrorMode(e.target.value as ErrorMode)} data-testid="error-mode" aria-label="Error measure">
          <option value="local">root-relative (MPJPE-l)</option>
          <option value="global">world frame</option>
        </select>
        <div className="legend-scale">
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
      </div>
      <div className="legend-note muted">
        green 0 · yellow {ERROR_YELLOW_M * 100} cm · red ≥ {ERROR_RED_M * 100} cm (mb-metrics/1 failure threshold)
      </div>
    </div>
  );
}
