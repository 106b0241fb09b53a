import { useConnectionStore } from '../api/connectionStore';
import { formatApiError } from '../api/formatApiError';
import { POLICY_PRESETS } from '../../../src/domain/wbc/policyPresets';
import { dismissPolicyError, openPolicy, patchPolicyPath, patchPolicyPreset } from './policyActions';
import { PolicyCheck } from './PolicyCheck';
import { PolicyFacts } from './PolicyFacts';
import { usePolicyStore } from './policyStore';

// The Policy panel: open a released tracking policy by its path on the machine
// running the services and see what an operator needs to judge it before running it (PolicyFacts)
// and check it (PolicyCheck).

/** Open a released policy (file or folder) by path and see its family, interface, needs and baked motion. */
export function PolicyPanel() {
  const connected = useConnectionStore((s) => s.status === 'connected');
  const { pathText, preset, opening, info, error } = usePolicyStore();
  return (
    <section className="panel policy-panel" data-testid="policy-panel">
      <h2>Policy</h2>
      <div className="row">
        <input
          type="text"
          className="policy-path"
          placeholder="/path/to/policy.onnx or folder"
          value={pathText}
          title={pathText || undefined}
          spellCheck={false}
          aria-label="Policy file or folder"
          aria-invalid={error !== null}
          onChange={(e) => patchPolicyPath(e.target.value)}
          onKeyDown={(e) => e.key === 'Enter' && void openPolicy()}
          data-testid="policy-path"
        />
        <button
          type="button"
          className="primary"
          disabled={!connected || opening}
          onClick={() => void openPolicy()}
          data-testid="policy-open"
        >
          {opening ? 'Opening…' : 'Open policy'}
        </button>
      </div>
      <div className="row small">
        <label className="muted" htmlFor="policy-preset-select">
          Preset
        </label>
        <select
          id="policy-preset-select"
          value={preset}
          onChange={(e) => patchPolicyPreset(e.target.value)}
          title={
            POLICY_PRESETS.find((p) => p.id === preset)?.summary ??
            'for an .onnx export that does not carry its own interface: the interface its project names, checked against the file'
          }
          data-testid="policy-preset-select"
        >
          <option value="">none: the file states its interface</option>
          {POLICY_PRESETS.map((p) => (
            <option key={p.id} value={p.id} title={p.summary}>
              {p.id}
            </option>
          ))}
        </select>
      </div>
      {error && (
        <div className="field-error policy-error" role="alert" data-testid="policy-error" data-code={error.code}>
          <span>{formatApiError(error)}</span>
          <button type="button" className="link small" onClick={dismissPolicyError} aria-label="Dismiss">
            dismiss
          </button>
        </div>
      )}
      {info ? (
        <>
          <PolicyFacts info={info} />
          <PolicyCheck info={info} />
        </>
      ) : (
        <div className="hint small muted">
          A released tracking policy (.onnx, or its folder) on the machine running the services.
        </div>
      )}
    </section>
  );
}
