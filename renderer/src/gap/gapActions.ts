import { errorMessage } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import {
  addRun,
  endRun,
  setColorMode,
  setRunTrajectory,
  setRunVisible,
  showReferenceForRuns,
} from '../overlay/runActions';
import { useRunStore } from '../overlay/runStore';
import { seekTimeS } from '../playback/playback';
import { BUILTIN_NOTE, NO_CAMPAIGN_DIR } from '../ui/format';
import { replayRunLabel } from './gapFormat';
import { useGapReviewStore, type GapReplayRunInfo, type GapSortColumn } from './gapStore';

// The Gap review panel's actions (DESIGN §8 "Gap review"): a campaign's Table 11 per binding
// (gap.report, the numbers of `motionbench report`), the per-clip table sorted by a column the
// operator clicks (the report's rule: |Gap %| largest first, unavailable last, ties by clip name),
// and a click on a clip (gap.replay) that puts the reference on display as the ghost, overlays the
// simulation branch and the real trials through the run store (the same overlay as the Runs panel
// and the Qualification board), colours them by run (each its own colour; the operator can switch
// back to error colours) and moves the playhead to the worst frame.

const client = () => useConnectionStore.getState().client;

/** A click on a column header: that column in the report's order, or reversed when it is already the sort column. */
export function clickSortColumn(column: GapSortColumn): void {
  useGapReviewStore.setState((s) => ({
    sort: s.sort.column === column ? { column, reversed: !s.sort.reversed } : { column, reversed: false },
  }));
}

/** Reads Table 11 of the campaign in the field. */
export async function openGapCampaign(): Promise<void> {
  const c = client();
  const dir = useGapReviewStore.getState().campaignDir.trim();
  if (!c) return;
  if (!dir) {
    useGapReviewStore.setState({ error: NO_CAMPAIGN_DIR });
    return;
  }
  useGapReviewStore.setState({ loading: true });
  try {
    const report = await c.call('gap.report', { campaignDir: dir });
    useGapReviewStore.setState({ report, campaignDir: report.campaignDir, error: null, selected: null, replay: null });
  } catch (err) {
    useGapReviewStore.setState({ error: errorMessage(err), report: null });
  } finally {
    useGapReviewStore.setState({ loading: false });
  }
}

/** Click on a clip: reference ghost + sim branch + real trials in the viewport, playhead at the worst frame. */
export async function replayGapPair(parentTraceId: string): Promise<void> {
  const c = client();
  const dir = useGapReviewStore.getState().campaignDir.trim();
  if (!c || !dir) return;
  useGapReviewStore.setState({ selected: parentTraceId, replaying: true, error: null });
  try {
    const r = await c.call('gap.replay', { campaignDir: dir, parentTraceId });
    const { reference, sim, real, ...info } = r;
    showReferenceForRuns(reference);
    const note = r.binding.startsWith('builtin') ? BUILTIN_NOTE : undefined;
    const runs: GapReplayRunInfo[] = [];
    // Sim branch first: it gets colour slot 0 (blue), the real trials the next ones.
    for (const run of [...(sim ? [sim] : []), ...real]) {
      const id = `gap:${run.runId}`;
      const label = replayRunLabel(run);
      addRun({ id, label, domain: run.domain, source: 'campaign', live: false, ...(note && { note }) });
      setRunTrajectory(id, run.trajectory);
      endRun(id, run.outcome);
      runs.push({
        id,
        label,
        domain: run.domain,
        rootMeasured: run.rootMeasured,
        resampling: run.resampling,
        sourceRateHz: run.sourceRateHz,
        outcome: run.outcome,
      });
    }
    setColorMode('run');
    if (r.worst) seekTimeS(r.worst.timeS);
    useGapReviewStore.setState({ replay: { ...info, runs } });
  } catch (err) {
    useGapReviewStore.setState({ error: `replay ${parentTraceId}: ${errorMessage(err)}` });
  } finally {
    useGapReviewStore.setState({ replaying: false });
  }
}

/** Shows one run of the replay alone (the others hidden), or all again when it is already alone. */
export function soloGapRun(id: string): void {
  const replay = useGapReviewStore.getState().replay;
  if (!replay) return;
  const runs = useRunStore.getState().runs.filter((r) => replay.runs.some((x) => x.id === r.id));
  const alone = runs.every((r) => r.visible === (r.id === id));
  for (const r of runs) setRunVisible(r.id, alone ? true : r.id === id);
}

/**
 * The campaign under mb-metrics/1 and the chosen peer contracts (gap.contracts); `score` first
 * scores the episodes not yet scored under them and stores the results.
 */
export async function compareContracts(score: boolean): Promise<void> {
  const c = client();
  const { campaignDir, peerContracts } = useGapReviewStore.getState();
  const dir = campaignDir.trim();
  if (!c || !dir || peerContracts.length === 0) return;
  useGapReviewStore.setState({ contractsBusy: true, error: null });
  try {
    const contracts = await c.call('gap.contracts', { campaignDir: dir, contracts: peerContracts, score });
    useGapReviewStore.setState({ contracts });
  } catch (err) {
    useGapReviewStore.setState({ error: `metric contracts: ${errorMessage(err)}`, contracts: null });
  } finally {
    useGapReviewStore.setState({ contractsBusy: false });
  }
}

/** Picks which peer contracts the comparison shows (the old comparison is dropped). */
export function setPeerContracts(peerContracts: ('sonic-eval/1' | 'holomotion-eval/1')[]): void {
  useGapReviewStore.setState({ peerContracts, contracts: null });
}
