import { formatErrorLocation, unstatedReasons } from '../api/formatApiError';
import { dismissClipError, reloadClip } from './clipActions';
import { useClipStore } from '../playback/clipStore';

/** The last clip error: where in the file, what is wrong, and that the previous clip stays. */
export function ErrorBanner() {
  const error = useClipStore((s) => s.error);
  const hasPrevious = useClipStore((s) => s.loaded !== null);
  const canReload = useClipStore((s) => s.lastSource !== null);
  if (!error) return null;
  const where = formatErrorLocation(error);
  const reasons = unstatedReasons(error);
  return (
    <div className="error-banner" role="alert" data-testid="error-banner">
      <div className="error-body">
        <div className="error-title">
          Clip not loaded{hasPrevious ? ' — the previous clip is still shown' : ''}
          <span className="error-code">{error.code}</span>
        </div>
        {where && (
          <div className="error-where" data-testid="error-location">
            {where}
          </div>
        )}
        <div className="error-reason">{error.reason ?? error.message}</div>
        {reasons.length > 0 && (
          <ul className="error-reasons" data-testid="error-reasons">
            {reasons.map((r, i) => (
              <li key={i}>{r}</li>
            ))}
          </ul>
        )}
        {error.location?.key === 'fps' && (
          <div className="error-hint">Type the clip’s frame rate in the FPS field (left) and press Retry.</div>
        )}
      </div>
      <div className="error-actions">
        {canReload && (
          <button
            type="button"
            onClick={() => void reloadClip()}
            title="Load the same file again with the fps field as it is now"
          >
            Retry
          </button>
        )}
        <button type="button" onClick={dismissClipError} aria-label="Dismiss">
          Dismiss
        </button>
      </div>
    </div>
  );
}
