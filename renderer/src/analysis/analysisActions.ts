import { errorMessage } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import { clickDockTab, useDockStore } from '../ui/dockStore';
import { openGapCampaign, replayGapPair } from '../gap/gapActions';
import { setGapCampaignDir, useGapReviewStore } from '../gap/gapStore';
import { NO_CAMPAIGN_DIR } from '../ui/format';
import { useAnalysisStore } from './analysisStore';
import { useSensitivityStore } from './sensitivityStore';

// The Analysis panel's actions: run the analysis of the campaign in the field (analysis.run, in the
// services' file worker), run one pair's start-state sensitivity (analysis.sensitivity, in the
// services' own simulator), and open a clip's matched pair in Gap review at its worst frame.

const client = () => useConnectionStore.getState().client;

export async function runAnalysis(): Promise<void> {
  const c = client();
  const { campaignDir, reading, share } = useAnalysisStore.getState();
  const dir = campaignDir.trim();
  if (!c) return;
  if (!dir) {
    useAnalysisStore.setState({ error: NO_CAMPAIGN_DIR });
    return;
  }
  useAnalysisStore.setState({ running: true, error: null });
  try {
    const doc = await c.call('analysis.run', { campaignDir: dir, reading, share });
    // A sensitivity result belongs to its campaign: another campaign's analysis clears it.
    if (useAnalysisStore.getState().doc?.campaign.dir !== doc.campaign.dir)
      useSensitivityStore.setState({ doc: null, pairId: '', error: null });
    useAnalysisStore.setState({ doc, campaignDir: doc.campaign.dir });
  } catch (err) {
    useAnalysisStore.setState({ error: errorMessage(err), doc: null });
  } finally {
    useAnalysisStore.setState({ running: false });
  }
}

/** A clip with a matched pair: Gap review on this campaign, the pair replayed at its worst frame. */
export async function openClipInGapReview(parentTraceId: string): Promise<void> {
  const dir = useAnalysisStore.getState().doc?.campaign.dir;
  if (!dir) return;
  if (useGapReviewStore.getState().campaignDir !== dir || !useGapReviewStore.getState().report) {
    setGapCampaignDir(dir);
    await openGapCampaign();
  }
  if (useDockStore.getState().tab !== 'gap' || !useDockStore.getState().open) clickDockTab('gap');
  await replayGapPair(parentTraceId);
}

/** Scales typed as "1, 3, 10": positive numbers, or the reason they are not. */
export function parseScales(text: string): number[] | string {
  const parts = text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const values = parts.map(Number);
  if (values.length === 0) return 'scales: give at least one, e.g. 1, 3, 10';
  const bad = parts.find((_, i) => !(Number.isFinite(values[i]) && values[i] > 0 && values[i] <= 100));
  if (bad !== undefined) return `scales: "${bad}" is not a number in (0, 100]`;
  if (values.length > 5) return `scales: at most 5, got ${values.length}`;
  return values;
}

/** The chosen pair's start-state sensitivity, on the campaign of the analysis shown. */
export async function runSensitivity(): Promise<void> {
  const c = client();
  const campaignDir = useAnalysisStore.getState().doc?.campaign.dir;
  const { pairId, scales: text, seconds } = useSensitivityStore.getState();
  if (!c || !campaignDir) return;
  const scales = parseScales(text);
  if (typeof scales === 'string') {
    useSensitivityStore.setState({ error: scales });
    return;
  }
  if (!pairId) {
    useSensitivityStore.setState({ error: 'choose a calibrated pair' });
    return;
  }
  useSensitivityStore.setState({ running: true, error: null });
  try {
    const doc = await c.call('analysis.sensitivity', { campaignDir, pairId, scales, seconds });
    useSensitivityStore.setState({ doc });
  } catch (err) {
    useSensitivityStore.setState({ error: errorMessage(err), doc: null });
  } finally {
    useSensitivityStore.setState({ running: false });
  }
}
