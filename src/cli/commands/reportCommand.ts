import { buildCampaignReport, formatReport, type ReportFormat } from '../../services/qualification';
import { DEFAULT_GAP_SORT, GAP_SORT_NAMES, parseGapSortKey, type GapSortKey } from '../../services/report/gapSection';
import { HOLOMOTION_EVAL_ID, SONIC_EVAL_ID } from '../../domain/metrics/peerContracts';
import { PEER_CONTRACT_IDS, type PeerContractId } from '../../services/analysis/peerEvaluation';
import {
  comparisonCsv,
  comparisonJson,
  comparisonMarkdown,
  contractComparison,
} from '../../services/analysis/contractComparison';
import { openCampaign } from '../../services/trace';
import { defineCommand } from '../cliOptions';
import { UsageError } from '../cliSupport';

const usage = `usage: motionbench report --campaign <dir> [--format md|csv|json] [--json] [--policy <id/version>] [--sort <reading|clip>]
                          [--contract sonic-eval|holomotion-eval|all]
  Prints the qualification matrix of a campaign: per binding (and workload snapshot) the pairs
  admitted, rejected and pending, SR, progress-soft and MPJPE-l overall and by capability group;
  the admitted pairs; and every rejection with its reasons. Names the metric contract, the
  admission policy and the snapshot; builtin bindings are labelled "reference tracker, not a
  policy". Then the sim-to-real gap section (Table 11) per binding: Sim, Real and Gap % of every
  reading over the matched clips, by capability group, and per clip (docs/GAP_REPORT.md). Reads
  the campaign without changing it.
  --format md     Markdown (default)
  --format csv    one table: binding rows, group rows, one row per pair (reasons joined with " | "),
                  then gap_binding, gap_group and gap_clip rows (one per reading)
  --format json   one document (format motionbench-qualification-report/2); --json is the same
  --policy        the admission policy to report (default mb-admission/1, else the one with most decisions)
  --sort          order of the gap section's per-clip rows: |Gap %| of a reading, largest first
                  (${GAP_SORT_NAMES.join(', ')}; default mpjpe_l_mm), or clip (by name)
  --contract      also the campaign under the peers' metric contracts, side by side with
                  mb-metrics/1 per binding and domain (docs/METRICS.md), from the results stored by
                  motionbench metrics --campaign <dir> --contract …; episodes not scored yet are counted`;

const FORMATS: readonly ReportFormat[] = ['md', 'csv', 'json'];

export const reportCommand = defineCommand({
  name: 'report',
  summary: 'print the qualification matrix and the sim-to-real gap of a campaign (md, csv or json)',
  usage,
  strings: ['campaign', 'format', 'policy', 'sort', 'contract'],
  flags: ['json'],
  async run(values, io, { required }) {
    const campaign = required('campaign');
    const format = (values.json ? 'json' : (values.format ?? 'md')) as ReportFormat;
    if (!FORMATS.includes(format)) throw new UsageError(`--format must be md, csv or json, got "${values.format}"`);
    if (values.json && values.format !== undefined && values.format !== 'json')
      throw new UsageError(`--json and --format ${values.format} disagree`);
    let gapSort: GapSortKey = DEFAULT_GAP_SORT;
    if (values.sort !== undefined) {
      try {
        gapSort = parseGapSortKey(values.sort);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
    }
    let peers: PeerContractId[] = [];
    if (values.contract !== undefined) {
      const c = values.contract;
      if (c === 'all') peers = [...PEER_CONTRACT_IDS];
      else if (c === 'sonic-eval' || c === SONIC_EVAL_ID) peers = [SONIC_EVAL_ID];
      else if (c === 'holomotion-eval' || c === HOLOMOTION_EVAL_ID) peers = [HOLOMOTION_EVAL_ID];
      else throw new UsageError(`--contract must be sonic-eval, holomotion-eval or all, got "${c}"`);
    }
    const store = await openCampaign(campaign, { readOnly: true });
    try {
      let report;
      try {
        report = buildCampaignReport(store, {
          ...(values.policy !== undefined ? { policy: values.policy } : {}),
          gapSort,
        });
      } catch (err) {
        if (err instanceof RangeError) throw new UsageError(err.message);
        throw err;
      }
      if (peers.length === 0) {
        io.stdout(formatReport(report, format));
        return 0;
      }
      const cmp = contractComparison(store, peers);
      if (format === 'json')
        io.stdout(
          `${JSON.stringify({ ...JSON.parse(formatReport(report, 'json')), contracts: comparisonJson(cmp) }, null, 2)}\n`,
        );
      else if (format === 'csv') io.stdout(`${formatReport(report, 'csv')}\n${comparisonCsv(cmp)}`);
      else io.stdout(`${formatReport(report, 'md')}\n${comparisonMarkdown(cmp)}`);
      return 0;
    } finally {
      store.close();
    }
  },
});
