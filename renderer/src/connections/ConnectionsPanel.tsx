import type { ConnectionInfo } from '../../../src/api/contract';
import { useConnectionStore } from '../api/connectionStore';
import { FieldError } from '../ui/FieldError';
import { formatMs } from '../ui/format';
import {
  addEndpoint,
  addG1Dds,
  connectEndpoint,
  disconnectEndpoint,
  g1DdsProblem,
  removeEndpoint,
  urlProblem,
} from './endpointsActions';
import { DdsAfterClipOptions } from './DdsAfterClipOptions';
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
        {e.dds && (
          <span
            className="endpoint-url mono muted"
            title="the runner the console started (motionbench g1-runner), on this PC's loopback"
            data-testid={`endpoint-runner-${e.id}`}
          >
            {e.dds.runnerUrl ? `runner ${e.dds.runnerUrl.replace(/^ws:\/\/|\/$/g, '')}` : 'runner not running'}
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
  const { ddsInterfaceText, ddsDomainText, ddsOnGantry, ddsStanding, ddsStandingPolicyText } = useEndpointsStore();
  const connected = useConnectionStore((s) => s.status === 'connected');
  const dds = addKind === 'g1_dds';
  const problem = dds ? null : urlProblem(urlText);
  const ddsCheck = g1DdsProblem(ddsInterfaceText, ddsDomainText, ddsOnGantry, {
    on: ddsStanding,
    folder: ddsStandingPolicyText,
  });
  // The gantry reminder is shown only once an interface is typed (it is what Start waits for).
  const shownProblem = dds ? ddsCheck.problem : problem;
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
          void (dds ? addG1Dds() : addEndpoint());
        }}
      >
        <select
          value={addKind}
          aria-label="What to add"
          title="sim: a remote simulator; runner at URL: a g1-bridge/1 robot server (motionbench g1-runner on the robot's PC, emulate-robot) or a ROS 2 robot's foxglove_bridge (watch-only); G1 over DDS: a G1 on this PC's network interface (the console starts the runner)"
          data-testid="endpoint-kind"
          onChange={(e) => useEndpointsStore.setState({ addKind: e.target.value as typeof addKind, actionError: null })}
        >
          <option value="remote_simulator">sim</option>
          <option value="robot">runner at URL</option>
          <option value="g1_dds">G1 over DDS</option>
        </select>
        {dds ? (
          <>
            <input
              type="text"
              className="dds-interface"
              placeholder="eth0, lo"
              value={ddsInterfaceText}
              spellCheck={false}
              aria-label="Network interface of the robot's wired link"
              title="the network interface on the G1's wired link (192.168.123.0/24), e.g. eth0 or enp3s0; lo for the emulated G1"
              aria-invalid={ddsCheck.field === 'interface'}
              data-testid="endpoint-dds-interface"
              onChange={(e) => useEndpointsStore.setState({ ddsInterfaceText: e.target.value, actionError: null })}
            />
            <input
              type="text"
              inputMode="numeric"
              className="dds-domain"
              value={ddsDomainText}
              aria-label="DDS domain id"
              aria-invalid={ddsCheck.field === 'domain'}
              title="DDS domain id (0 on a G1)"
              data-testid="endpoint-dds-domain"
              onChange={(e) => useEndpointsStore.setState({ ddsDomainText: e.target.value, actionError: null })}
            />
          </>
        ) : (
          <input
            type="text"
            placeholder={addKind === 'robot' ? 'ws://robot-pc:port (g1-runner)' : 'ws://host:port (remote simulator)'}
            value={urlText}
            spellCheck={false}
            aria-label={addKind === 'robot' ? 'Runner URL' : 'Remote simulator URL'}
            aria-invalid={problem !== null}
            data-testid="endpoint-url"
            onChange={(e) => useEndpointsStore.setState({ urlText: e.target.value, actionError: null })}
          />
        )}
        <button
          type="submit"
          disabled={!connected || adding || (dds ? ddsCheck.spec === null : urlText.trim() === '' || problem !== null)}
          data-testid="endpoint-add"
        >
          {adding ? (dds ? 'Starting…' : 'Adding…') : dds ? 'Start' : 'Add'}
        </button>
      </form>
      {dds && <DdsAfterClipOptions standingProblem={ddsCheck.field === 'standing'} />}
      {(shownProblem ?? actionError) && (
        <FieldError testId="endpoint-error">
          {shownProblem ?? `${actionError!.action}: ${actionError!.message}`}
        </FieldError>
      )}
    </section>
  );
}
