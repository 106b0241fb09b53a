import { buildCampaignReport, formatReport, type ReportFormat } from '../../services/qualification';
import { DEFAULT_GAP_SORT, GAP_SORT_NAMES, parseGapSortKey, type GapSortKey } from '../../services/report/gapSection';
import { openCampaign } from '../../services/trace';
import { parse, UsageError, type Command } from '../cliSupport';

const usage = `usage: motionbench report --campaign <dir> [--format md|csv|json] [--json] [--policy <id/version>] [--sort <reading|clip>]
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
                  (${GAP_SORT_NAMES.join(', ')}; default mpjpe_l_mm), or clip (by name)`;

const FORMATS: readonly ReportFormat[] = ['md', 'csv', 'json'];

export const reportCommand: Command = {
  name: 'report',
  summary: 'print the qualification matrix and the sim-to-real gap of a campaign (md, csv or json)',
  usage,
  async run(argv, io) {
    const { values } = parse(
      argv,
      {
        campaign: { type: 'string' },
        format: { type: 'string' },
        json: { type: 'boolean' },
        policy: { type: 'string' },
        sort: { type: 'string' },
      },
      usage,
    );
    if (values.campaign === undefined || values.campaign === '')
      throw new UsageError(`--campaign is required\n${usage}`);
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
    const store = await openCampaign(values.campaign, { readOnly: true });
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
      io.stdout(formatReport(report, format));
      return 0;
    } finally {
      store.close();
    }
  },
};
