import { MB_METRICS_1_ID } from '../../domain/metrics/metricContract';
import {
  HOLOMOTION_EVAL_ID,
  SONIC_EVAL_ID,
  type HolomotionAggregateResult,
  type SonicAggregateResult,
} from '../../domain/metrics/peerContracts';
import { storedPeerRows, summarizePeerRows, type PeerContractId, type PeerGroupSummary } from './peerEvaluation';
import type { ContractGroupDto, GapContractsDto } from '../../api/contract';
import type { CampaignStore } from '../trace';

// One campaign under the three metric contracts side by side: per binding and
// execution domain, mb-metrics/1's SR and mean MPJPE-l over its episodes, and the peers' own
// aggregates of their stored results (sonic-eval/1 frame-weighted over all and over successful
// episodes; holomotion-eval/1 the mean over clips). Read from the store only; episodes not yet
// scored under a peer are counted and named, never filled in.

export interface ContractGroupRow {
  bindingId: string;
  bindingVersion: string;
  domain: string;
  mb: { episodes: number; sr: number | null; mpjpeLMm: number | null };
  sonic: PeerGroupSummary | null;
  holomotion: PeerGroupSummary | null;
}

export interface ContractComparison {
  contracts: string[];
  rows: ContractGroupRow[];
  /** Why some episodes have no peer result (the first reason per contract). */
  unscored: { contract: string; episodes: number; reason: string }[];
}

const key = (b: string, v: string, d: string) => `${b}\0${v}\0${d}`;

export function contractComparison(store: CampaignStore, peers: readonly PeerContractId[]): ContractComparison {
  const episodes = store.episodeResults({ status: 'finished' });
  const groups = new Map<string, ContractGroupRow>();
  for (const e of episodes) {
    const k = key(e.bindingId, e.bindingVersion, e.executionDomain);
    if (!groups.has(k))
      groups.set(k, {
        bindingId: e.bindingId,
        bindingVersion: e.bindingVersion,
        domain: e.executionDomain,
        mb: { episodes: 0, sr: null, mpjpeLMm: null },
        sonic: null,
        holomotion: null,
      });
  }
  for (const g of groups.values()) {
    const mine = episodes.filter(
      (e) => e.bindingId === g.bindingId && e.bindingVersion === g.bindingVersion && e.executionDomain === g.domain,
    );
    const withFailed = mine.filter((e) => e.metrics && e.metrics.failed !== null);
    const mp = mine.map((e) => e.metrics?.mpjpeLMm).filter((v): v is number => typeof v === 'number');
    g.mb = {
      episodes: mine.length,
      sr: withFailed.length ? withFailed.filter((e) => !e.metrics!.failed).length / withFailed.length : null,
      mpjpeLMm: mp.length ? mp.reduce((a, b) => a + b, 0) / mp.length : null,
    };
  }
  const unscored: ContractComparison['unscored'] = [];
  for (const c of peers) {
    const rows = storedPeerRows(store, c);
    const missing = rows.filter((r) => !r.outcome.available);
    if (missing.length && !missing[0].outcome.available)
      unscored.push({ contract: c, episodes: missing.length, reason: missing[0].outcome.reason });
    for (const s of summarizePeerRows(c, rows)) {
      const g = groups.get(key(s.bindingId, s.bindingVersion, s.domain));
      if (!g) continue;
      if (c === SONIC_EVAL_ID) g.sonic = s;
      else g.holomotion = s;
    }
  }
  return { contracts: [MB_METRICS_1_ID, ...peers], rows: [...groups.values()], unscored };
}

const n = (v: number | null | undefined, d: number) => (v === null || v === undefined ? '—' : v.toFixed(d));

function sonicCells(s: PeerGroupSummary | null): string[] {
  const a = s?.aggregate as SonicAggregateResult | null | undefined;
  if (!a) return ['—', '—', '—', '—', '—'];
  return [
    n(a.success_rate, 3),
    n(a.all?.mpjpe_l_mm, 1),
    n(a.all?.mpjpe_g_mm, 1),
    n(a.all?.mpjpe_pa_mm, 1),
    n(a.success?.mpjpe_l_mm ?? null, 1),
  ];
}

function holoCells(s: PeerGroupSummary | null): string[] {
  const a = s?.aggregate as HolomotionAggregateResult | null | undefined;
  if (!a) return ['—', '—', '—', '—'];
  const m = a.per_clip_mean;
  return [n(a.success_rate, 3), n(m.mpjpe_l_mm, 1), n(m.mpjpe_g_mm, 1), n(m.whole_body_joints_dist_rad, 4)];
}

export function comparisonMarkdown(c: ContractComparison): string {
  const sonic = c.contracts.includes(SONIC_EVAL_ID);
  const holo = c.contracts.includes(HOLOMOTION_EVAL_ID);
  const head = [
    'binding',
    'domain',
    'episodes',
    'mb SR',
    'mb MPJPE-l mm',
    ...(sonic
      ? ['sonic SR', 'sonic mpjpe_l mm', 'sonic mpjpe_g mm', 'sonic mpjpe_pa mm', 'sonic mpjpe_l (success) mm']
      : []),
    ...(holo ? ['holo SR', 'holo mpjpe_l mm', 'holo mpjpe_g mm', 'holo joint |Δq| rad'] : []),
  ];
  const lines = [
    '## The campaign under three metric contracts',
    '',
    `Contracts: ${c.contracts.join(', ')} (docs/METRICS.md). Lower is better for every error; SR is the contract's own success rule. mb: mean over episodes; sonic: frame-weighted over all (and successful) episodes; holo: mean over clips.`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...c.rows.map(
      (r) =>
        `| ${r.bindingId}@${r.bindingVersion} | ${r.domain} | ${r.mb.episodes} | ${n(r.mb.sr, 3)} | ${n(r.mb.mpjpeLMm, 1)} |${sonic ? ` ${sonicCells(r.sonic).join(' | ')} |` : ''}${holo ? ` ${holoCells(r.holomotion).join(' | ')} |` : ''}`,
    ),
  ];
  for (const u of c.unscored) lines.push('', `${u.episodes} episode(s) have no ${u.contract} result: ${u.reason}.`);
  return `${lines.join('\n')}\n`;
}

export function comparisonCsv(c: ContractComparison): string {
  const rows = ['section,binding,domain,contract,reading,value'];
  for (const r of c.rows) {
    const b = `${r.bindingId}@${r.bindingVersion}`;
    const push = (contract: string, reading: string, v: number | null | undefined) =>
      rows.push(`contracts,${b},${r.domain},${contract},${reading},${v === null || v === undefined ? '' : v}`);
    push(MB_METRICS_1_ID, 'episodes', r.mb.episodes);
    push(MB_METRICS_1_ID, 'success_rate', r.mb.sr);
    push(MB_METRICS_1_ID, 'mpjpe_l_mm', r.mb.mpjpeLMm);
    const s = r.sonic?.aggregate as SonicAggregateResult | null | undefined;
    if (s) {
      push(SONIC_EVAL_ID, 'success_rate', s.success_rate);
      for (const [k, v] of Object.entries(s.all ?? {})) push(SONIC_EVAL_ID, `all.${k}`, v);
      for (const [k, v] of Object.entries(s.success ?? {})) push(SONIC_EVAL_ID, `success.${k}`, v);
    }
    const h = r.holomotion?.aggregate as HolomotionAggregateResult | null | undefined;
    if (h) {
      push(HOLOMOTION_EVAL_ID, 'success_rate', h.success_rate);
      for (const [k, v] of Object.entries(h.per_clip_mean)) push(HOLOMOTION_EVAL_ID, `per_clip_mean.${k}`, v);
    }
  }
  return `${rows.join('\n')}\n`;
}

export function comparisonJson(c: ContractComparison): object {
  return {
    contracts: c.contracts,
    rows: c.rows.map((r) => ({
      binding: `${r.bindingId}@${r.bindingVersion}`,
      domain: r.domain,
      [MB_METRICS_1_ID]: { episodes: r.mb.episodes, success_rate: r.mb.sr, mpjpe_l_mm: r.mb.mpjpeLMm },
      ...(c.contracts.includes(SONIC_EVAL_ID)
        ? {
            [SONIC_EVAL_ID]: r.sonic
              ? { scored: r.sonic.episodes, unscored: r.sonic.unscored, ...r.sonic.aggregate }
              : null,
          }
        : {}),
      ...(c.contracts.includes(HOLOMOTION_EVAL_ID)
        ? {
            [HOLOMOTION_EVAL_ID]: r.holomotion
              ? { scored: r.holomotion.episodes, unscored: r.holomotion.unscored, ...r.holomotion.aggregate }
              : null,
          }
        : {}),
    })),
    unscored: c.unscored,
  };
}

/** The console's form (gap.contracts): the readings the panel shows, camelCase, null where absent. */
export function contractComparisonDto(c: ContractComparison): Omit<GapContractsDto, 'campaignDir' | 'scoredNow'> {
  const rows: ContractGroupDto[] = c.rows.map((r) => {
    const s = r.sonic?.aggregate as SonicAggregateResult | null | undefined;
    const h = r.holomotion?.aggregate as HolomotionAggregateResult | null | undefined;
    return {
      binding: `${r.bindingId}@${r.bindingVersion}`,
      domain: r.domain,
      mb: { episodes: r.mb.episodes, successRate: r.mb.sr, mpjpeLMm: r.mb.mpjpeLMm },
      sonic: r.sonic
        ? {
            scored: r.sonic.episodes,
            unscored: r.sonic.unscored,
            successRate: s?.success_rate ?? null,
            mpjpeLMm: s?.all?.mpjpe_l_mm ?? null,
            mpjpeGMm: s?.all?.mpjpe_g_mm ?? null,
            mpjpePaMm: s?.all?.mpjpe_pa_mm ?? null,
            successMpjpeLMm: s?.success?.mpjpe_l_mm ?? null,
          }
        : null,
      holomotion: r.holomotion
        ? {
            scored: r.holomotion.episodes,
            unscored: r.holomotion.unscored,
            successRate: h?.success_rate ?? null,
            mpjpeLMm: h?.per_clip_mean.mpjpe_l_mm ?? null,
            mpjpeGMm: h?.per_clip_mean.mpjpe_g_mm ?? null,
            jointsDistRad: h?.per_clip_mean.whole_body_joints_dist_rad ?? null,
          }
        : null,
    };
  });
  return { contracts: c.contracts, rows, unscored: c.unscored };
}
