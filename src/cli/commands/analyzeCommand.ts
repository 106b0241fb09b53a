import { DEFAULT_SHARE } from '../../domain/analysis/clipSelection';
import { NUMERIC_READINGS, READING_INFO } from '../../domain/metrics/readings';
import { analysisJson, analysisMarkdown } from '../../services/analysis/analysisFormat';
import { runCampaignAnalysis, type AnalysisDomain } from '../../services/analysis/campaignAnalysisReader';
import { openCampaign } from '../../services/trace';
import { defineCommand, integerOption, nonNegativeIntegerOption, readingOption, shareOption } from '../cliOptions';
import { printJson, UsageError } from '../cliSupport';

const READING_NAMES = NUMERIC_READINGS.map((k) => READING_INFO[k].json);

const usage = `usage: motionbench analyze --campaign <dir> [--reading <name>] [--share S] [--domain sim|real]
                         [--seed N] [--replicates B] [--json]
  The campaign's statistics (docs/ANALYSIS.md), read without changing it:
  - the sim-to-real gap of Table 11 with 95 % pair-cluster bootstrap CIs, the Hodges–Lehmann median
    of per-pair gaps with its exact CI, "not distinguishable from zero" where the CI spans 0, and
    ICC(A,1) of the repeated hardware trials (and simulation rollouts) per reading, flagged below 0.5;
  - redundancy of the seven error readings (Spearman ρ with CIs, leave-one-out ridge R²) and of the
    clips across bindings;
  - the minimal hardware clip set: greedy U(c|S) = Gini(c)·(1 − R²(c ~ S)) on one reading, the path
    and the smallest set reaching the share, with its robustness;
  - Bradley–Terry ranking of the bindings with clips as judges, on all clips and the minimal set.
  Lower is better for every error reading; higher for progress_soft.
  --reading     the reading of the score matrix (${READING_NAMES.join(', ')}; default mpjpe_l_mm)
  --share       share of the full set's utility the minimal set must reach, in (0, 1] (default ${DEFAULT_SHARE})
  --domain      episodes of the score matrix: sim (every simulation episode, default) or real (hardware trials)
  --seed        bootstrap seed (default 1); every interval names it
  --replicates  bootstrap replicates of the gap and ρ intervals (default 2000; Bradley–Terry uses half)
  --json        one document (format motionbench-analysis/1) with the inputs it used
  Progress goes to stderr.`;

export const analyzeCommand = defineCommand({
  name: 'analyze',
  summary: 'gap CIs, reliability, redundancy, the minimal clip set and a Bradley–Terry ranking of a campaign',
  usage,
  strings: ['campaign', 'reading', 'share', 'domain', 'seed', 'replicates'],
  flags: ['json'],
  async run(values, io, { required }) {
    const campaign = required('campaign');
    const reading = readingOption(values.reading);
    const share = shareOption(values.share);
    const domain = (values.domain ?? 'sim') as AnalysisDomain;
    if (domain !== 'sim' && domain !== 'real')
      throw new UsageError(`--domain must be sim or real, got "${values.domain}"`);
    const seed = nonNegativeIntegerOption(values.seed, 'seed') ?? 1;
    const B = integerOption(values.replicates, 'replicates', 100, 100_000) ?? 2000;
    const store = await openCampaign(campaign, { readOnly: true });
    try {
      const t0 = Date.now();
      const result = runCampaignAnalysis(store, {
        reading,
        share,
        seed,
        domain,
        B,
        btB: Math.max(100, Math.round(B / 2)),
        progress: (line) => io.stderr(`analyze: ${line}\n`),
      });
      io.stderr(`analyze: done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
      if (values.json) printJson(io, analysisJson(result));
      else io.stdout(`${analysisMarkdown(result)}\n`);
      return 0;
    } finally {
      store.close();
    }
  },
});
