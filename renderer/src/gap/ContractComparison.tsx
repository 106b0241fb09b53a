import type { ContractGroupDto } from '../../../src/api/contract';
import { compareContracts, setPeerContracts } from './gapActions';
import { useGapReviewStore } from './gapStore';

// The campaign under three metric contracts side by side (docs/METRICS.md "Peer
// contracts"): per binding and execution domain, mb-metrics/1's SR and MPJPE-l next to SONIC's
// (sonic-eval/1, frame-weighted) and HoloMotion's (holomotion-eval/1, mean over clips) own
// numbers. "Compare" shows what is stored; "Score and compare" first scores the episodes that
// have no result under the chosen contracts. Each contract keeps its own definitions: the
// columns are not the same quantity under three names.

const CHOICES: { label: string; value: ('sonic-eval/1' | 'holomotion-eval/1')[] }[] = [
  { label: 'mb-metrics/1 + sonic-eval/1 + holomotion-eval/1', value: ['sonic-eval/1', 'holomotion-eval/1'] },
  { label: 'mb-metrics/1 + sonic-eval/1', value: ['sonic-eval/1'] },
  { label: 'mb-metrics/1 + holomotion-eval/1', value: ['holomotion-eval/1'] },
];

const num = (v: number | null | undefined, d: number) => (v === null || v === undefined ? '—' : v.toFixed(d));

function Row({ r, sonic, holo }: { r: ContractGroupDto; sonic: boolean; holo: boolean }) {
  const id = `${r.binding}-${r.domain}`;
  return (
    <tr data-testid={`contracts-row-${id}`}>
      <td className="mono" title={r.binding}>
        {r.binding}
      </td>
      <td>{r.domain === 'real_robot' ? 'real' : 'sim'}</td>
      <td className="mono">{r.mb.episodes}</td>
      <td className="mono">{num(r.mb.successRate, 2)}</td>
      <td className="mono" data-testid={`contracts-${id}-mb-mpjpe-l`}>
        {num(r.mb.mpjpeLMm, 1)}
      </td>
      {sonic && (
        <>
          <td className="mono">{num(r.sonic?.successRate, 2)}</td>
          <td className="mono" data-testid={`contracts-${id}-sonic-mpjpe-l`}>
            {num(r.sonic?.mpjpeLMm, 1)}
          </td>
          <td className="mono">{num(r.sonic?.mpjpeGMm, 1)}</td>
          <td className="mono">{num(r.sonic?.mpjpePaMm, 1)}</td>
        </>
      )}
      {holo && (
        <>
          <td className="mono">{num(r.holomotion?.successRate, 2)}</td>
          <td className="mono" data-testid={`contracts-${id}-holo-mpjpe-l`}>
            {num(r.holomotion?.mpjpeLMm, 1)}
          </td>
          <td className="mono">{num(r.holomotion?.jointsDistRad, 4)}</td>
        </>
      )}
    </tr>
  );
}

export function ContractComparison() {
  const peers = useGapReviewStore((s) => s.peerContracts);
  const result = useGapReviewStore((s) => s.contracts);
  const busy = useGapReviewStore((s) => s.contractsBusy);
  const report = useGapReviewStore((s) => s.report);
  if (!report) return null;
  const sonic = result?.contracts.includes('sonic-eval/1') ?? false;
  const holo = result?.contracts.includes('holomotion-eval/1') ?? false;
  const choice = CHOICES.findIndex((c) => c.value.join() === peers.join());
  return (
    <div className="gap-binding" data-testid="gap-contracts">
      <h3>Metric contracts</h3>
      <div className="qual-controls">
        <select
          value={choice}
          onChange={(e) => setPeerContracts(CHOICES[Number(e.target.value)].value)}
          title="The peers' contracts to show beside mb-metrics/1 (docs/METRICS.md)"
          data-testid="gap-contracts-select"
        >
          {CHOICES.map((c, i) => (
            <option key={c.label} value={i}>
              {c.label}
            </option>
          ))}
        </select>
        <button
          type="button"
          disabled={busy}
          onClick={() => void compareContracts(false)}
          data-testid="gap-contracts-compare"
        >
          Compare
        </button>
        <button
          type="button"
          disabled={busy}
          onClick={() => void compareContracts(true)}
          data-testid="gap-contracts-score"
        >
          {busy ? 'Scoring…' : 'Score and compare'}
        </button>
      </div>
      {result && (
        <>
          <div className="contracts-wrap">
            <table className="qual-matrix gap-table contracts-table" data-testid="gap-contracts-table">
              <thead>
                <tr>
                  <th colSpan={3} />
                  <th colSpan={2} className="contracts-group">
                    mb-metrics/1, mm
                  </th>
                  {sonic && (
                    <th colSpan={4} className="contracts-group">
                      sonic-eval/1 mpjpe, mm (frame-weighted)
                    </th>
                  )}
                  {holo && (
                    <th colSpan={3} className="contracts-group">
                      holomotion-eval/1 (per clip)
                    </th>
                  )}
                </tr>
                <tr>
                  <th>binding</th>
                  <th>domain</th>
                  <th>episodes</th>
                  <th>SR</th>
                  <th>MPJPE-l</th>
                  {sonic && (
                    <>
                      <th>SR</th>
                      <th>_l</th>
                      <th>_g</th>
                      <th>_pa</th>
                    </>
                  )}
                  {holo && (
                    <>
                      <th>SR</th>
                      <th>mpjpe_l mm</th>
                      <th>|Δq| rad</th>
                    </>
                  )}
                </tr>
              </thead>
              <tbody>
                {result.rows.map((r) => (
                  <Row key={`${r.binding}-${r.domain}`} r={r} sonic={sonic} holo={holo} />
                ))}
              </tbody>
            </table>
          </div>
          <div className="muted small" data-testid="gap-contracts-note">
            Each contract by its own definitions: SR by its own success rule; sonic mpjpe_l removes the root translation
            only, holomotion mpjpe_l the root's whole rotation. Lower is better for every error.
            {result.scoredNow > 0 && ` ${result.scoredNow} episode results scored and stored now.`}
          </div>
          {result.unscored.map((u) => (
            <div className="muted small" key={u.contract} data-testid={`gap-contracts-unscored-${u.contract}`}>
              {u.episodes} episode(s) have no {u.contract} result: {u.reason}
            </div>
          ))}
        </>
      )}
    </div>
  );
}
