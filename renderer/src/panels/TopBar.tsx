import { operatorStop } from '../safety/operatorStop';
import { STOP_KEYS_TITLE } from '../safety/stopKeys';
import { useConnectionStore } from '../stores/connectionStore';
import { useOperatorStore } from '../stores/operatorStore';

const STATUS_TEXT = {
  connecting: 'Connecting…',
  connected: 'Connected',
  disconnected: 'Disconnected',
  unavailable: 'No services',
} as const;

function ConnectionPill() {
  const { status, detail, transport, appInfo } = useConnectionStore();
  const via = transport === 'electron' ? 'desktop IPC' : transport === 'host' ? 'loopback host' : null;
  const title = [via && `via ${via}`, detail, appInfo && `v${appInfo.version}`].filter(Boolean).join(' · ');
  return (
    <span className={`pill pill-${status}`} data-testid="connection-status" title={title}>
      <span className="dot" />
      {STATUS_TEXT[status]}
      {via && status === 'connected' && <span className="muted"> · {via}</span>}
    </span>
  );
}

function LastStop() {
  const events = useOperatorStore((s) => s.events);
  const last = events.at(-1);
  if (!last) return null;
  return (
    <span className="last-stop" data-testid="last-stop">
      Operator stop · {new Date(last.atMs).toLocaleTimeString()} ({last.source.replace('key:', '')}) · {events.length} total
    </span>
  );
}

/** App name, link status and the always-visible STOP (Esc anywhere; Space outside text fields). */
export function TopBar() {
  return (
    <header className="topbar">
      <div className="brand">
        <span className="brand-mark">MB</span>
        <span className="brand-name">MotionBench Console</span>
      </div>
      <ConnectionPill />
      <div className="spacer" />
      <LastStop />
      <button
        type="button"
        className="stop-button"
        data-testid="stop-button"
        title={STOP_KEYS_TITLE}
        aria-keyshortcuts="Escape Space"
        onClick={() => operatorStop('button')}
      >
        STOP
        <span className="stop-keys" data-testid="stop-keys">
          <kbd>Esc</kbd>
          {' / '}
          <kbd>Space</kbd>
        </span>
      </button>
    </header>
  );
}
