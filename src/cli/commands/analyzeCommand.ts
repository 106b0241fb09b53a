import { DEFAULT_SHARE } from '../../domain/analysis/clipSelection';
import { numericReadingByJsonName, NUMERIC_READINGS, READING_INFO } from '../../domain/metrics/readings';
import { analysisJson, analysisMarkdown } from '../../services/analysis/analysisFormat';
import { runCampaignAnalysis, type AnalysisDomain } from '../../services/analysis/campaignAnalysisReader';
import { openCampaign } from '../../services/trace';
import { numberOption, parse, printJson, UsageError, type Command } from '../cliSupport';

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

export const analyzeCommand: Command = {
  name: 'analyze',
  summary: 'gap CIs, reliability, redundancy, the minimal clip set and a Bradley–Terry ranking of a campaign',
  usage,
  async run(argv, io) {
    const { values } = parse(
      argv,
      {
        campaign: { type: 'string' },
        reading: { type: 'string' },
        share: { type: 'string' },
        domain: { type: 'string' },
        seed: { type: 'string' },
        replicates: { type: 'string' },
        json: { type: 'boolean' },
      },
      usage,
    );
    if (values.campaign === undefined || values.campaign === '')
      throw new UsageError(`--campaign is required\n${usage}`);
    const readingName = values.reading ?? 'mpjpe_l_mm';
    const reading = numericReadingByJsonName(readingName);
    if (!reading) throw new UsageError(`--reading must be one of ${READING_NAMES.join(', ')}, got "${readingName}"`);
    const share = numberOption(values.share, 'share', (v) => v > 0 && v <= 1, 'a number in (0, 1]') ?? DEFAULT_SHARE;
    const domain = (values.domain ?? 'sim') as AnalysisDomain;
    if (domain !== 'sim' && domain !== 'real')
      throw new UsageError(`--domain must be sim or real, got "${values.domain}"`);
    const seed = numberOption(values.seed, 'seed', (v) => Number.isSafeInteger(v) && v >= 0, 'an integer ≥ 0') ?? 1;
    const B =
      numberOption(
        values.replicates,
        'replicates',
        (v) => Number.isInteger(v) && v >= 100 && v <= 100_000,
        'an integer in 100..100000',
      ) ?? 2000;
    const store = await openCampaign(values.campaign, { readOnly: true });
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
};
