import { useConnectionStore } from '../api/connectionStore';
import { operatorStop } from './operatorStop';
import { useOperatorStore } from '../safety/operatorStore';
import { EmulatorResetButton, RobotAlertBanner, RobotStateChips } from './RobotStatus';
import { SafetyLights } from './SafetyLights';
import { STOP_KEYS_TITLE } from '../safety/stopKeys';

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
  const text = `Operator stop · ${new Date(last.atMs).toLocaleTimeString()} (${last.source.replace('key:', '')}) · ${events.length} total`;
  return (
    <span className="last-stop" data-testid="last-stop" title={text}>
      {text}
    </span>
  );
}

/**
 * Two groups on one row. The status group (app name, services status, the robot's state chips,
 * the emulator's reset, the last stop) gives way as the window narrows: its less urgent words are
 * dropped by width (styles.css, "top bar condenses") and what still does not fit scrolls sideways.
 * The pinned group — the safety lights (interlock, robot link) and STOP (Esc anywhere; Space
 * outside text fields) — never shrinks and sits at the bar's right end at every window width from
 * 800 px. Under the bar, the banner while the robot is fallen, damped or in fault.
 */
export function TopBar() {
  return (
    <>
      <header className="topbar">
        <div className="topbar-status" data-testid="topbar-status">
          <div className="brand">
            <span className="brand-mark">MB</span>
            <span className="brand-name">MotionBench Console</span>
          </div>
          <ConnectionPill />
          <RobotStateChips />
          <EmulatorResetButton />
          <div className="spacer" />
          <LastStop />
        </div>
        <div className="topbar-pinned" data-testid="topbar-pinned">
          <SafetyLights />
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
        </div>
      </header>
      <RobotAlertBanner />
    </>
  );
}
