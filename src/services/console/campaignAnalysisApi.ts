// analysis.run (src/api/analysisContract.ts): the campaign's analysis, as `motionbench analyze
// --json` prints it. Runs in the file worker (fileWorker.ts); this module is what it calls.

import type { AnalysisDocument, ApiParams } from '../../api/contract';
import { DEFAULT_SHARE } from '../../domain/analysis/clipSelection';
import { numericReadingByJsonName } from '../../domain/metrics/readings';
import { analysisJson } from '../analysis/analysisFormat';
import { runCampaignAnalysis } from '../analysis/campaignAnalysisReader';
import { withReadOnlyCampaign } from './campaignOpen';

export function runAnalysisRequest(p: ApiParams<'analysis.run'>): Promise<AnalysisDocument> {
  const readingName = p.reading ?? 'mpjpe_l_mm';
  // The schema admits only reading names; the lookup cannot miss.
  const reading = numericReadingByJsonName(readingName)!;
  const B = p.replicates ?? 2000;
  return withReadOnlyCampaign(p.campaignDir, (store) =>
    analysisJson(
      runCampaignAnalysis(store, {
        reading,
        share: p.share ?? DEFAULT_SHARE,
        seed: p.seed ?? 1,
        B,
        btB: Math.max(100, Math.round(B / 2)),
      }),
    ),
  );
}
