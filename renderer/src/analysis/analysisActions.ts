import { errorMessage } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import { clickDockTab, useDockStore } from '../app/dockStore';
import { openGapCampaign, replayGapPair } from '../gap/gapActions';
import { setGapCampaignDir, useGapReviewStore } from '../gap/gapStore';
import { NO_CAMPAIGN_DIR } from '../ui/format';
import { useAnalysisStore } from './analysisStore';

// The Analysis panel's actions: run the analysis of the campaign in the field (analysis.run, in the
// services' file worker), and open a clip's matched pair in Gap review at its worst frame.

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
