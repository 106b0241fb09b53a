import { termJudgement } from '../../../src/domain/wbc/policyCheck';
import { useConnectionStore } from '../api/connectionStore';
import { formatApiError } from '../api/formatApiError';
import { checkPolicy, usePolicyCheckStore } from './policyCheckActions';
import type { PolicyInfo } from './policyStore';

// The Policy panel's Check: what a harness bug looks like against a policy limit (docs/POLICIES.md,
// "When a policy falls") — the first action against the reference pose at t = 0, each observation
// term's range against what the files imply, the normal reading beside each negative control, and
// the verdict line, as `motionbench policy check` prints them.

const f = (v: number | null, d: number) => (v === null || !Number.isFinite(v) ? '—' : v.toFixed(d));

export function PolicyCheck({ info }: { info: PolicyInfo }) {
  const connected = useConnectionStore((s) => s.status === 'connected');
  const { checking, policyId, report, error } = usePolicyCheckStore();
  const mine = policyId === info.policyId;
  return (
    <div className="policy-check" data-testid="policy-check">
      <div className="row">
        <button
          type="button"
          disabled={!connected || checking}
          onClick={() => void checkPolicy()}
          data-testid="policy-check-run"
          title="Runs the first 5 s of the policy's motion with the normal reading and with each negative control"
        >
          {checking ? 'Checking…' : 'Check'}
        </button>
        {mine && report && (
          <span className="small muted" data-testid="policy-check-clip" title={report.clip.file}>
            {report.clip.name}: first {report.seconds.toFixed(2)} s per reading, {report.wallSeconds.toFixed(1)} s wall
          </span>
        )}
      </div>
      {mine && error && (
        <div className="field-error" role="alert" data-testid="policy-check-error" data-code={error.code}>
          {formatApiError(error)}
        </div>
      )}
      {mine && report && (
        <>
          <div className="small" data-testid="policy-check-verdict" data-kind={report.verdict.kind}>
            <b>{report.verdict.line}</b>
          </div>
          <div className="small" data-testid="policy-check-first-action">
            First action − reference pose at t = 0: max{' '}
            <span className="mono">{f(report.firstAction.maxAbsRad, 3)}</span> rad, mean{' '}
            <span className="mono">{f(report.firstAction.meanAbsRad, 3)}</span> rad; worst{' '}
            {report.firstAction.worst.map((w) => `${w.joint} ${f(w.deltaRad, 3)}`).join(', ')}
          </div>
          <div className="policy-check-scroll">
            <table className="small policy-check-runs" data-testid="policy-check-runs">
              <thead>
                <tr>
                  <th>reading</th>
                  <th>first hard failure</th>
                  <th>progress-soft</th>
                  <th>MPJPE-l</th>
                </tr>
              </thead>
              <tbody>
                {report.runs.map((r) => (
                  <tr
                    key={r.reading}
                    data-reading={r.reading}
                    title={
                      report.controls.find((c) => c.name === r.reading)?.description ??
                      'the console as it reads the policy'
                    }
                  >
                    <td className="mono">{r.reading}</td>
                    <td>
                      {r.failure
                        ? `${r.failure.timeS.toFixed(2)} s, ${r.failure.condition} of ${r.failure.body}`
                        : 'none'}
                    </td>
                    <td className="mono">{f(r.progressSoft, 3)}</td>
                    <td className="mono">{r.mpjpeLMm === null ? '—' : `${r.mpjpeLMm.toFixed(1)} mm`}</td>
                  </tr>
                ))}
                {report.controls
                  .filter((c) => !c.applicable)
                  .map((c) => (
                    <tr key={c.name} data-reading={c.name} className="muted">
                      <td className="mono">{c.name}</td>
                      <td colSpan={3}>not applicable: {c.why}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
          <div className="policy-check-scroll">
            <table className="small policy-check-terms" data-testid="policy-check-terms">
              <thead>
                <tr>
                  <th>term</th>
                  <th>min … max (mean)</th>
                  <th>implied range</th>
                </tr>
              </thead>
              <tbody>
                {report.terms.map((t) => (
                  <tr
                    key={t.term}
                    data-status={t.status}
                    className={t.status === 'out_of_range' ? 'warn-text' : undefined}
                  >
                    <td className="mono">
                      {t.term} ({t.width})
                    </td>
                    <td className="mono">
                      {f(t.min, 3)} … {f(t.max, 3)} ({f(t.mean, 3)})
                    </td>
                    <td>{termJudgement(t)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}
