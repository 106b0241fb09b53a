import { CAPABILITY_GROUP_IDS, type QualificationReportDto } from '../../../src/api/contract';
import { useConnectionStore } from '../api/connectionStore';
import { usePolicyStore, type PolicyInfo } from '../policies/policyStore';
import { CampaignDirField } from '../ui/CampaignDirField';
import { FieldError } from '../ui/FieldError';
import { mmAsCm } from '../ui/format';
import { ProgressBar } from '../ui/ProgressBar';
import {
  cancelQualification,
  openCampaign,
  policyStartRequestFromForm,
  replayPair,
  startPolicyQualification,
  startQualification,
  startRequestFromForm,
} from './qualificationActions';
import { cellTitle, GROUP_TEXT, minutesSeconds, pct, reportBindingName } from './qualificationFormat';
import { patchBoardForm, setGroupFilter, useQualificationStore, type GroupFilter } from './qualificationStore';

// The Qualification board (DESIGN §8): rows = clips (filter by capability group),
// columns = WBC bindings, cells coloured by admission (green admitted, red rejected, grey pending,
// blue running); hover shows the reasons; a click replays the pair's worst rollout in the viewport.
// With a policy open (Policy panel), a second start qualifies that policy on its own motions.

function Matrix({ report }: { report: QualificationReportDto }) {
  const groupFilter = useQualificationStore((s) => s.groupFilter);
  const selected = useQualificationStore((s) => s.selected);
  const job = useQualificationStore((s) => s.job);
  const jobHere =
    job && job.state === 'running' && job.campaignDir.replace(/\/+$/, '') === report.campaignDir.replace(/\/+$/, '')
      ? job
      : null;
  const running = new Set((jobHere?.running ?? []).map((r) => `${r.bindingKey}|${r.clipId}`));
  const cells = new Map(report.cells.map((c) => [`${c.bindingKey}|${c.clipId}`, c]));
  const rows = report.clips.filter((c) => groupFilter === 'all' || c.group === groupFilter);
  return (
    <div className="qual-matrix-wrap">
      <table className="qual-matrix" data-testid="qual-matrix">
        <thead>
          <tr>
            <th className="qual-clip-col">clip</th>
            <th className="qual-group-col">group</th>
            {report.bindings.map((b) => (
              <th
                key={b.key}
                data-testid={`qual-col-${b.key}`}
                title={`${b.key} (${b.kind})${b.note ? `: ${b.note}` : ''}`}
              >
                <div className="qual-binding" data-testid={`qual-name-${b.key}`}>
                  {b.name}
                </div>
                <div className="qual-note" data-testid={`qual-label-${b.key}`}>
                  {b.label}
                </div>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((clip) => (
            <tr key={clip.id} data-testid={`qual-row-${clip.name}`} data-group={clip.group ?? ''}>
              <td
                className="qual-clip-col mono"
                title={`${clip.name} (${clip.id})${clip.durationS ? `, ${clip.durationS.toFixed(1)} s` : ''}`}
              >
                {clip.name}
              </td>
              <td className="qual-group-col muted">{clip.group ? GROUP_TEXT[clip.group] : '—'}</td>
              {report.bindings.map((b) => {
                const key = `${b.key}|${clip.id}`;
                const c = cells.get(key);
                const isRunning = running.has(key);
                const state = isRunning ? 'running' : (c?.state ?? 'pending');
                const isSel = selected?.bindingKey === b.key && selected.clipId === clip.id;
                const canReplay = !!c && c.rollouts > 0;
                return (
                  <td key={b.key} className="qual-cell-td">
                    <button
                      type="button"
                      className={`qual-cell qual-${state}${isSel ? ' qual-selected' : ''}`}
                      title={cellTitle(c, isRunning, clip.name, b.name)}
                      disabled={!canReplay}
                      onClick={() => void replayPair(b.key, clip.id)}
                      data-testid={`qual-cell-${b.key}-${clip.name}`}
                      data-state={state}
                      data-reasons={c?.reasons.length ?? 0}
                    >
                      {state === 'admitted'
                        ? '✓'
                        : state === 'rejected'
                          ? `✗ ${c!.reasons
                              .map((r) => r.split(':')[0])
                              .slice(0, 2)
                              .join(', ')}${c!.reasons.length > 2 ? '…' : ''}`
                          : state === 'running'
                            ? '▶ running'
                            : '·'}
                      {c && c.mpjpeLMm !== null && state !== 'running' && (
                        <span className="qual-cell-fig">{mmAsCm(c.mpjpeLMm)} cm</span>
                      )}
                    </button>
                  </td>
                );
              })}
            </tr>
          ))}
          {rows.length === 0 && (
            <tr>
              <td colSpan={2 + report.bindings.length} className="muted">
                no clip {groupFilter === 'all' ? 'in this campaign yet' : `of group ${GROUP_TEXT[groupFilter]}`}
              </td>
            </tr>
          )}
        </tbody>
        <tfoot>
          <tr>
            <th
              className="qual-clip-col"
              colSpan={2}
              title="per binding, over the decided pairs: admitted/pairs, SR (pooled over rollouts), MPJPE-l (macro-average over clips)"
            >
              summary
            </th>
            {report.bindings.map((b) => (
              <td key={b.key} className="qual-summary" data-testid={`qual-summary-${b.key}`}>
                <div>
                  <b
                    className={
                      b.summary.admitted === b.summary.pairs && b.summary.pairs > 0
                        ? 'ok-text'
                        : b.summary.rejected > 0
                          ? 'bad-text'
                          : ''
                    }
                  >
                    {b.summary.admitted}/{b.summary.pairs}
                  </b>{' '}
                  admitted
                </div>
                <div className="muted small">
                  SR {pct(b.summary.sr)} · MPJPE-l {mmAsCm(b.summary.mpjpeLMm)} cm
                </div>
              </td>
            ))}
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

function Progress() {
  const job = useQualificationStore((s) => s.job);
  const report = useQualificationStore((s) => s.report);
  if (!job) return null;
  const frac = Math.max(0, Math.min(1, job.fraction));
  const stateClass =
    job.state === 'running'
      ? 'badge-live'
      : job.state === 'completed'
        ? 'ok-text'
        : job.state === 'cancelled'
          ? 'warn-text'
          : 'bad-text';
  return (
    <div className="qual-progress" data-testid="qual-progress" data-state={job.state}>
      <div className="row small">
        <span className={`badge ${stateClass}`} data-testid="qual-job-state">
          {job.state}
        </span>
        <span className="mono" data-testid="qual-pairs">
          {job.pairsDone}/{job.pairsTotal} pairs
        </span>
        <span className="mono" data-testid="qual-rollouts-done">
          {job.rolloutsDone}/{job.rolloutsTotal} rollouts
        </span>
        <span className="ok-text">{job.admitted} admitted</span>
        <span className="bad-text">{job.rejected} rejected</span>
        <span className="mono" data-testid="qual-rate" title="clip-seconds simulated per wall second">
          {job.clipSecondsPerS === null ? '—' : job.clipSecondsPerS.toFixed(1)} clip-s/s
        </span>
        <span className="muted mono" data-testid="qual-time">
          {minutesSeconds(job.elapsedS)} elapsed
          {job.state === 'running' ? ` · ${minutesSeconds(job.etaS)} left` : ''}
        </span>
        {job.running.length > 0 && (
          <span className="muted qual-current">
            now: {job.running.map((r) => `${reportBindingName(report, r.bindingKey)} × ${r.clipName}`).join(', ')}
          </span>
        )}
      </div>
      <ProgressBar
        fraction={frac}
        title={`${(frac * 100).toFixed(0)}% of the planned clip-seconds`}
        barTestId="qual-progress-bar"
      />
      {job.error && <div className="field-error">{job.error}</div>}
    </div>
  );
}

/** The policy open in the Policy panel, and the start that qualifies it on its own motions. */
function PolicyStart({ policy, disabled }: { policy: PolicyInfo; disabled: boolean }) {
  const form = useQualificationStore((s) => s.form);
  const starting = useQualificationStore((s) => s.starting);
  const req = policyStartRequestFromForm(form);
  const motions = policy.motion ? 'its baked motion' : 'the motions that came with it';
  return (
    <div className="row qual-policy-start small" data-testid="qual-policy-start">
      <span className="muted">Policy</span>
      <span
        className="mono strong qual-policy-name"
        title={`${policy.bindingId}@${policy.bindingVersion} (${policy.policyId})`}
      >
        {policy.bindingId}
      </span>
      <span className="muted">on {motions} (workload policies; rollouts and limit as above)</span>
      <button
        type="button"
        className="primary small"
        disabled={disabled || starting || !req.ok || !form.campaignDir.trim()}
        title={req.ok ? `qualify ${policy.bindingId} on ${motions} in the embedded simulator` : req.reason}
        onClick={() => void startPolicyQualification()}
        data-testid="qual-start-policy"
      >
        {starting ? 'Starting…' : 'Qualify this policy'}
      </button>
    </div>
  );
}

function ReplayInfo() {
  const replay = useQualificationStore((s) => s.replay);
  const report = useQualificationStore((s) => s.report);
  const replaying = useQualificationStore((s) => s.replaying);
  if (replaying) return <div className="small muted">loading the rollout…</div>;
  if (!replay) return null;
  return (
    <div
      className="qual-replay small"
      data-testid="qual-replay"
      data-run-id={replay.runId}
      data-worst-frame={replay.worst.frame}
      data-worst-time={replay.worst.timeS}
    >
      <span className="strong">replay</span> {reportBindingName(report, replay.bindingKey)} ×{' '}
      {replay.clipId.slice(0, 18)} · rollout {replay.rolloutIndex ?? '?'} ({replay.outcome ?? '—'}) ·{' '}
      {replay.worst.kind === 'first_failure' ? 'first failure' : 'max body error'} at frame{' '}
      <b className="mono">{replay.worst.frame}</b> (t = {replay.worst.timeS.toFixed(2)} s): {replay.worst.detail}
    </div>
  );
}

export function QualificationBoard() {
  const form = useQualificationStore((s) => s.form);
  const report = useQualificationStore((s) => s.report);
  const error = useQualificationStore((s) => s.error);
  const loading = useQualificationStore((s) => s.loading);
  const starting = useQualificationStore((s) => s.starting);
  const job = useQualificationStore((s) => s.job);
  const groupFilter = useQualificationStore((s) => s.groupFilter);
  const connected = useConnectionStore((s) => s.status === 'connected');
  const policy = usePolicyStore((s) => s.info);
  const req = startRequestFromForm(form);
  const running = job?.state === 'running';
  return (
    <section className="panel qual-board" data-testid="qual-board" aria-label="Qualification board">
      {report && (
        <div className="muted small board-summary" data-testid="qual-policy">
          {report.policy} · {report.contract ?? '—'} · {report.snapshots.map((s) => `${s.id}@${s.version}`).join(', ')}
        </div>
      )}
      <div className="qual-controls">
        <CampaignDirField
          value={form.campaignDir}
          onChange={(campaignDir) => patchBoardForm({ campaignDir })}
          onEnter={() => void openCampaign()}
          testId="qual-dir"
        />
        <button type="button" disabled={!connected} onClick={() => void openCampaign(false)} data-testid="qual-open">
          {loading ? 'Reading…' : 'Open'}
        </button>
        <button
          type="button"
          disabled={!connected}
          onClick={() => void openCampaign(true)}
          title="create the campaign folder if it does not exist"
          data-testid="qual-create"
        >
          New
        </button>
        <label>
          <span>Bindings</span>
          <input
            type="text"
            value={form.bindingsText}
            onChange={(e) => patchBoardForm({ bindingsText: e.target.value })}
            title="builtin = reference tracker, not a policy; builtin:assist=<N/m> adds the root assist"
            data-testid="qual-bindings"
          />
        </label>
        <label className="qual-small">
          <span>Rollouts</span>
          <input
            type="text"
            inputMode="numeric"
            value={form.rolloutsText}
            onChange={(e) => patchBoardForm({ rolloutsText: e.target.value })}
            title="rollouts per pair (3 = mb-admission/1; another value is a custom policy version)"
            data-testid="qual-rollouts"
          />
        </label>
        <label className="qual-small">
          <span>Limit</span>
          <input
            type="text"
            inputMode="numeric"
            placeholder="all"
            value={form.limitText}
            onChange={(e) => patchBoardForm({ limitText: e.target.value })}
            data-testid="qual-limit"
          />
        </label>
        <label>
          <span>Clips</span>
          <input
            type="text"
            placeholder="all (or names, comma-separated)"
            value={form.clipsText}
            onChange={(e) => patchBoardForm({ clipsText: e.target.value })}
            data-testid="qual-clips"
          />
        </label>
        <button
          type="button"
          className="primary"
          disabled={!connected || running || starting || !req.ok || !form.campaignDir.trim()}
          title={
            req.ok
              ? `qualify core-v1${groupFilter !== 'all' ? ` (${GROUP_TEXT[groupFilter]} clips)` : ''} in the embedded simulator`
              : req.reason
          }
          onClick={() => void startQualification()}
          data-testid="qual-start"
        >
          {starting ? 'Starting…' : 'Start qualification'}
        </button>
        <button
          type="button"
          disabled={!running}
          onClick={() => void cancelQualification()}
          title="cancel: running rollouts finish, decisions are kept (STOP, Esc or Space, cancels too)"
          data-testid="qual-cancel"
        >
          Cancel
        </button>
      </div>
      {policy && <PolicyStart policy={policy} disabled={!connected || running} />}
      <div className="row qual-filter" role="group" aria-label="capability group">
        {(['all', ...CAPABILITY_GROUP_IDS] as GroupFilter[]).map((g) => (
          <button
            key={g}
            type="button"
            className={`chip${groupFilter === g ? ' chip-on' : ''}`}
            aria-pressed={groupFilter === g}
            onClick={() => setGroupFilter(g)}
            data-testid={`qual-filter-${g}`}
          >
            {g === 'all' ? 'all groups' : GROUP_TEXT[g]}
          </button>
        ))}
        <span className="qual-legend small">
          <i className="qual-swatch qual-admitted" /> admitted <i className="qual-swatch qual-rejected" /> rejected{' '}
          <i className="qual-swatch qual-pending" /> pending <i className="qual-swatch qual-running" /> running
        </span>
      </div>
      <Progress />
      {error && <FieldError testId="qual-error">{error}</FieldError>}
      {report ? (
        <Matrix report={report} />
      ) : (
        <div className="muted small">Open a campaign folder (or create one) to see its WBC × clip matrix.</div>
      )}
      <ReplayInfo />
    </section>
  );
}
