import type { QualificationJobStatus, QualificationProgressEvent } from '../../../src/api/contract';
import { errorMessage } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import { ApiCallError, type ConsoleClient } from '../api/consoleClient';
import { addRun, endRun, setRunTrajectory, showReferenceForRuns } from '../overlay/runActions';
import { seekTimeS } from '../playback/playback';
import { reopenPolicy } from '../policies/policyActions';
import { usePolicyStore } from '../policies/policyStore';
import { BUILTIN_NOTE, NO_CAMPAIGN_DIR } from '../ui/format';
import { patchBoardForm, useQualificationStore, type BoardForm } from './qualificationStore';
import { qualificationReplayRunId, reportBindingName } from './qualificationFormat';

// The Qualification board: a campaign's WBC × clip matrix (qualification.report),
// a run started and cancelled from here (qualification.start / cancel; progress arrives as
// qualification.progress pushes), and a click on a cell replays that pair's worst rollout
// (qualification.replay): the reference clip becomes the clip on display (ghost), the executed
// run is overlaid (solid, per-body error colours) and the playhead goes to the worst frame.
// The policy open in the Policy panel can be qualified from here too, on its own motions
// (workload 'policies': its baked motion, or the clips that came with it).

const client = () => useConnectionStore.getState().client;

/** The rollouts and limit fields, or the reason they cannot be sent. */
function countsFromForm(
  form: BoardForm,
): { ok: true; rollouts?: number; limit?: number } | { ok: false; reason: string } {
  const int = (t: string, what: string, min: number, max: number): number | undefined | string => {
    if (t.trim() === '') return undefined;
    const v = Number(t);
    return Number.isInteger(v) && v >= min && v <= max ? v : `${what} must be an integer in ${min}..${max}`;
  };
  const rollouts = int(form.rolloutsText, 'rollouts', 1, 10);
  if (typeof rollouts === 'string') return { ok: false, reason: rollouts };
  const limit = int(form.limitText, 'limit', 1, 1000);
  if (typeof limit === 'string') return { ok: false, reason: limit };
  return { ok: true, ...(rollouts !== undefined && { rollouts }), ...(limit !== undefined && { limit }) };
}

/** The start request from the form, or the reason it cannot be sent. */
export function startRequestFromForm(
  form: BoardForm,
):
  | { ok: true; bindings: string[]; rollouts?: number; limit?: number; clips?: string[] }
  | { ok: false; reason: string } {
  const bindings = form.bindingsText.split(/[\s,]+/).filter(Boolean);
  if (bindings.length === 0) return { ok: false, reason: 'give at least one binding (builtin, builtin:assist=3000)' };
  const bad = bindings.find((b) => !/^builtin(?::assist=\d{1,7}(?:\.\d{1,6})?)?$/.test(b));
  if (bad) return { ok: false, reason: `binding "${bad}": expected builtin or builtin:assist=<N/m>` };
  const counts = countsFromForm(form);
  if (!counts.ok) return counts;
  const { ok: _ok, ...rest } = counts;
  const clips = form.clipsText.split(/[\s,]+/).filter(Boolean);
  return { ok: true, bindings, ...rest, ...(clips.length > 0 && { clips }) };
}

/**
 * The request that qualifies the open policy on its own motions, or the reason it cannot be
 * sent. The rollouts and limit fields apply; the bindings, clips and group filter belong to core-v1.
 */
export function policyStartRequestFromForm(
  form: BoardForm,
): { ok: true; policyId: string; rollouts?: number; limit?: number } | { ok: false; reason: string } {
  const info = usePolicyStore.getState().info;
  if (!info) return { ok: false, reason: 'open a policy first (Policy panel)' };
  const counts = countsFromForm(form);
  if (!counts.ok) return counts;
  const { ok: _ok, ...rest } = counts;
  return { ok: true, policyId: info.policyId, ...rest };
}

let refreshing = false;
let refreshAgain = false;
/** Reads the campaign's matrix again (one request in flight; a request meanwhile runs after it). */
export async function refreshReport(): Promise<void> {
  const c = client();
  const dir = useQualificationStore.getState().form.campaignDir.trim();
  if (!c || !dir) return;
  if (refreshing) {
    refreshAgain = true;
    return;
  }
  refreshing = true;
  useQualificationStore.setState({ loading: true });
  try {
    const report = await c.call('qualification.report', { campaignDir: dir });
    useQualificationStore.setState({ report, error: null });
  } catch (err) {
    useQualificationStore.setState({ error: errorMessage(err) });
  } finally {
    refreshing = false;
    useQualificationStore.setState({ loading: false });
    if (refreshAgain) {
      refreshAgain = false;
      void refreshReport();
    }
  }
}

/** Opens (or with create, creates) the campaign in the form and reads its matrix. */
export async function openCampaign(create = false): Promise<void> {
  const c = client();
  const dir = useQualificationStore.getState().form.campaignDir.trim();
  if (!c) return;
  if (!dir) {
    useQualificationStore.setState({ error: NO_CAMPAIGN_DIR });
    return;
  }
  try {
    const r = await c.call('qualification.open', { campaignDir: dir, ...(create && { create: true }) });
    patchBoardForm({ campaignDir: r.campaignDir });
    useQualificationStore.setState({ error: null, selected: null, replay: null });
    await refreshReport();
  } catch (err) {
    useQualificationStore.setState({ error: errorMessage(err), report: null });
  }
}

/**
 * Starts a job on the board's campaign folder: `req` is the form's request (or why it is not
 * one), `start` issues qualification.start with the folder.
 */
async function startJob<R extends { ok: true }>(
  req: R | { ok: false; reason: string },
  start: (c: ConsoleClient, campaignDir: string, req: R) => Promise<QualificationJobStatus>,
): Promise<void> {
  const c = client();
  if (!c) return;
  if (!req.ok) {
    useQualificationStore.setState({ error: req.reason });
    return;
  }
  const dir = useQualificationStore.getState().form.campaignDir.trim();
  if (!dir) {
    useQualificationStore.setState({ error: 'give the campaign folder first' });
    return;
  }
  useQualificationStore.setState({ starting: true, error: null });
  try {
    const job = await start(c, dir, req);
    useQualificationStore.setState({ job });
    await refreshReport();
  } catch (err) {
    useQualificationStore.setState({ error: errorMessage(err) });
  } finally {
    useQualificationStore.setState({ starting: false });
  }
}

export function startQualification(): Promise<void> {
  const { form, groupFilter } = useQualificationStore.getState();
  return startJob(startRequestFromForm(form), (c, campaignDir, { ok: _ok, ...rest }) =>
    c.call('qualification.start', {
      campaignDir,
      workload: 'core-v1',
      ...rest,
      ...(groupFilter !== 'all' && !rest.clips && { groups: [groupFilter] }),
    }),
  );
}

/** Starts qualifying the open policy on its own motions (workload 'policies') in the board's campaign. */
export function startPolicyQualification(): Promise<void> {
  const { form } = useQualificationStore.getState();
  return startJob(policyStartRequestFromForm(form), async (c, campaignDir, { ok: _ok, policyId, ...rest }) => {
    const params = { campaignDir, workload: 'policies' as const, bindings: [policyId], ...rest };
    try {
      return await c.call('qualification.start', params);
    } catch (err) {
      // The services forgot the policy (restarted): open it again and retry once.
      if (
        err instanceof ApiCallError &&
        err.error.code === 'not_found' &&
        err.error.field === 'params.bindings' &&
        (await reopenPolicy(c))
      )
        return c.call('qualification.start', params);
      throw err;
    }
  });
}

export async function cancelQualification(reason = 'cancelled from the Qualification board'): Promise<void> {
  const c = client();
  const job = useQualificationStore.getState().job;
  if (!c || !job || job.state !== 'running') return;
  try {
    await c.call('qualification.cancel', { jobId: job.jobId, reason });
  } catch (err) {
    useQualificationStore.setState({ error: errorMessage(err) });
  }
}

/** The operator's STOP: cancels every qualification run in the services. */
export function cancelAllQualifications(source: string): void {
  void client()
    ?.call('qualification.cancel', { all: true, reason: `operator stop (${source})` })
    .catch(() => undefined);
}

let lastDecided = -1;
let refreshTimer: ReturnType<typeof setTimeout> | null = null;
/** A qualification.progress push: the job's figures; the matrix is re-read when a pair was decided (at most 2 per second) and at the end. */
export function onQualificationProgress(e: QualificationProgressEvent): void {
  const { seq: _seq, type: _type, ...status } = e;
  const cur = useQualificationStore.getState().job;
  if (cur && cur.jobId !== status.jobId && cur.state === 'running' && status.state !== 'running') return;
  useQualificationStore.setState({ job: status });
  const dir = useQualificationStore.getState().form.campaignDir.trim();
  if (!dir || dir.replace(/\/+$/, '') !== status.campaignDir.replace(/\/+$/, '')) return;
  const ended = status.state !== 'running';
  if (ended || status.pairsDone !== lastDecided) {
    lastDecided = status.pairsDone;
    if (ended) void refreshReport();
    else if (!refreshTimer) {
      refreshTimer = setTimeout(() => {
        refreshTimer = null;
        void refreshReport();
      }, 500);
    }
  }
}

/** Click on a cell: loads the pair's reference clip and its worst rollout into the viewport, at the worst frame. */
export async function replayPair(bindingKey: string, clipId: string): Promise<void> {
  const c = client();
  const dir = useQualificationStore.getState().form.campaignDir.trim();
  if (!c || !dir) return;
  useQualificationStore.setState({ selected: { bindingKey, clipId }, replaying: true, error: null });
  try {
    const r = await c.call('qualification.replay', { campaignDir: dir, bindingKey, clipId });
    const { reference, executed, ...info } = r;
    showReferenceForRuns(reference);
    const id = qualificationReplayRunId(r.runId);
    addRun({
      id,
      label: `${reportBindingName(useQualificationStore.getState().report, bindingKey)} · rollout ${r.rolloutIndex ?? '?'}${r.outcome ? ` · ${r.outcome}` : ''}`,
      domain: 'simulation',
      source: 'campaign',
      live: false,
      ...(bindingKey.startsWith('builtin') && { note: BUILTIN_NOTE }),
    });
    setRunTrajectory(id, executed);
    endRun(id, r.outcome);
    seekTimeS(r.worst.timeS);
    useQualificationStore.setState({ replay: info });
  } catch (err) {
    useQualificationStore.setState({ error: `replay ${bindingKey} × ${clipId}: ${errorMessage(err)}` });
  } finally {
    useQualificationStore.setState({ replaying: false });
  }
}
