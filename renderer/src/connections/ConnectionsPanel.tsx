import type { ConnectionInfo } from '../../../src/api/contract';
import { useConnectionStore } from '../api/connectionStore';
import { FieldError } from '../ui/FieldError';
import { formatMs } from '../ui/format';
import { addEndpoint, connectEndpoint, disconnectEndpoint, removeEndpoint, urlProblem } from './endpointsActions';
import { useEndpointsStore } from './endpointsStore';
import { problemView } from './problemView';

// DESIGN §8 Connections: every endpoint with its presence, measured state rate, age of the last
// frame (and link latency where the backend measures it), and its latest problems. The embedded
// simulator is always first. Remote simulators and the robot are added by ws:// or wss:// URL
// (the robot's link is fresh only with a frame younger than 50 ms: its age is shown in red beyond).

const PRESENCE_TEXT: Record<ConnectionInfo['presence'], string> = {
  disconnected: 'disconnected',
  connecting: 'connecting…',
  present: 'present',
  stale: 'stale',
  lost: 'lost',
};

function Endpoint({ e, busy }: { e: ConnectionInfo; busy: boolean }) {
  const [first, ...rest] = e.problems;
  // Re-rendered with every connections push (the rates change), so the age stays current.
  const view = first ? problemView(first, e.presence, Date.now()) : null;
  return (
    <li className={`endpoint presence-${e.presence}`} data-testid={`endpoint-${e.id}`}>
      <div className="endpoint-line">
        <span className="dot" />
        <span className="endpoint-name" title={e.url ?? e.name}>
          {e.name}
        </span>
        <span className="badge badge-domain">
          {e.kind === 'robot' || e.executionDomain === 'real_robot' ? 'robot' : 'sim'}
        </span>
      </div>
      <div className="endpoint-stats mono">
        <span className="endpoint-presence" data-testid={`endpoint-presence-${e.id}`}>
          {PRESENCE_TEXT[e.presence]}
        </span>
        <span
          title={`measured state-frame rate over the last 2 s${e.declaredRateHz !== null ? ` (declared ${e.declaredRateHz} Hz)` : ''}`}
        >
          <span data-testid={`endpoint-rate-${e.id}`}>{e.rateHz === null ? '— Hz' : `${e.rateHz.toFixed(1)} Hz`}</span>
          {e.declaredRateHz !== null && <span className="muted">/{e.declaredRateHz}</span>}
        </span>
        <span
          title={
            e.kind === 'robot'
              ? 'age of the last state frame (the robot link is fresh below 50 ms)'
              : 'age of the last state frame'
          }
          className={e.kind === 'robot' && e.lastFrameAgeMs !== null && e.lastFrameAgeMs >= 50 ? 'bad-text' : undefined}
          data-testid={`endpoint-age-${e.id}`}
        >
          age {formatMs(e.lastFrameAgeMs)}
        </span>
        <span title="link round-trip latency, where the backend measures it">rtt {formatMs(e.latencyMs)}</span>
        {e.leasedRunId && (
          <span className="badge badge-live" title={`leased by run ${e.leasedRunId}`}>
            in use
          </span>
        )}
      </div>
      {first && view && (
        <div
          className={`endpoint-problem sev-${view.tone}`}
          data-testid={`endpoint-problem-${e.id}`}
          data-tone={view.tone}
          title={e.problems.map((p) => `${p.code}: ${p.message}`).join('\n')}
        >
          {view.tone === 'past' && 'earlier: '}
          {first.message}
          {view.age && <span className="muted"> · {view.age}</span>}
          {rest.length > 0 && <span className="muted"> · +{rest.length} more</span>}
        </div>
      )}
      <div className="endpoint-actions">
        {e.url && (
          <span className="endpoint-url mono muted" title={e.url}>
            {e.url}
          </span>
        )}
        <span className="spacer" />
        {e.active ? (
          <button
            type="button"
            className="small"
            disabled={busy || e.leasedRunId !== null}
            onClick={() => void disconnectEndpoint(e.id)}
            data-testid={`endpoint-disconnect-${e.id}`}
          >
            Disconnect
          </button>
        ) : (
          <button
            type="button"
            className="small"
            disabled={busy || !e.available || e.presence === 'connecting'}
            title={e.available ? undefined : 'no backend implementation for this endpoint in this build'}
            onClick={() => void connectEndpoint(e.id)}
            data-testid={`endpoint-connect-${e.id}`}
          >
            Connect
          </button>
        )}
        {e.removable && (
          <button
            type="button"
            className="small"
            disabled={busy || e.leasedRunId !== null}
            onClick={() => void removeEndpoint(e.id)}
            data-testid={`endpoint-remove-${e.id}`}
          >
            Remove
          </button>
        )}
      </div>
    </li>
  );
}

export function ConnectionsPanel() {
  const { entries, pollError, urlText, addKind, actionError, busy, polledAtMs } = useEndpointsStore();
  const connected = useConnectionStore((s) => s.status === 'connected');
  const problem = urlProblem(urlText);
  const adding = busy.includes('add');
  return (
    <section className="panel connections-panel" data-testid="connections-panel">
      <div className="panel-head">
        <h2>Connections</h2>
        {!connected || pollError ? (
          <span
            className="bad-text small"
            title={pollError ?? 'not connected to the console services'}
            data-testid="endpoints-stale"
          >
            status not updating
          </span>
        ) : (
          polledAtMs === null && <span className="muted small">…</span>
        )}
      </div>
      <ul className={!connected || pollError ? 'endpoint-list stale-list' : 'endpoint-list'}>
        {entries.map((e) => (
          <Endpoint key={e.id} e={e} busy={busy.includes(e.id)} />
        ))}
      </ul>
      <form
        className="add-endpoint"
        onSubmit={(ev) => {
          ev.preventDefault();
          void addEndpoint();
        }}
      >
        <select
          value={addKind}
          aria-label="What the URL is"
          title="a remote simulator, or the physical robot (its bridge or motionbench emulate-robot)"
          data-testid="endpoint-kind"
          onChange={(e) => useEndpointsStore.setState({ addKind: e.target.value as 'remote_simulator' | 'robot' })}
        >
          <option value="remote_simulator">sim</option>
          <option value="robot">robot</option>
        </select>
        <input
          type="text"
          placeholder={addKind === 'robot' ? 'ws://robot-pc:port (g1-bridge/1)' : 'ws://host:port (remote simulator)'}
          value={urlText}
          spellCheck={false}
          aria-label={addKind === 'robot' ? 'Robot URL' : 'Remote simulator URL'}
          aria-invalid={problem !== null}
          data-testid="endpoint-url"
          onChange={(e) => useEndpointsStore.setState({ urlText: e.target.value, actionError: null })}
        />
        <button
          type="submit"
          disabled={!connected || adding || urlText.trim() === '' || problem !== null}
          data-testid="endpoint-add"
        >
          {adding ? 'Adding…' : 'Add'}
        </button>
      </form>
      {(problem ?? actionError) && (
        <FieldError testId="endpoint-error">{problem ?? `${actionError!.action}: ${actionError!.message}`}</FieldError>
      )}
    </section>
  );
}
