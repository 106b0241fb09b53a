// `motionbench report`: the qualification matrix of a campaign from its index (read-only),
// as Markdown, CSV or JSON, followed by the sim-to-real gap section (Table 11;
// src/services/report/gapSection.ts, docs/GAP_REPORT.md). Every report names the
// metric contract, the admission policy and the workload snapshot, and labels builtin bindings as
// what they are: a reference tracker, not a policy.

import type { CapabilityGroup } from '../../domain/motion/motionClip';
import {
  ADMISSION_POLICY_ID,
  matrixCell,
  qualificationMatrix,
  type MatrixCell,
  type MatrixEpisode,
  type MatrixPair,
} from '../../domain/qualification';
import { BUILTIN_LABEL } from '../../domain/sim/builtinBinding';
import { bindingName } from '../../domain/wbc/bindingName';
import type { AdmissionRecord, EpisodeResultRow } from '../../domain/trace/records';
import { CAPABILITY_GROUPS, type WorkloadSnapshot } from '../../domain/workload/snapshot';
import {
  buildGapSection,
  DEFAULT_GAP_SORT,
  GAP_CSV_COLUMNS,
  gapCsvRows,
  gapJson,
  gapMarkdown,
  type GapSection,
  type GapSortKey,
} from '../report/gapSection';
import type { CampaignStore } from '../trace';

export type ReportFormat = 'md' | 'csv' | 'json';
/** /2 added the `gap` section (JSON), the gap rows and columns (CSV) and the gap section (Markdown). */
export const REPORT_FORMAT_ID = 'motionbench-qualification-report/2';

export interface ReportBinding {
  key: string;
  /** bindingName (src/domain/wbc/bindingName.ts): what the console shows. */
  name: string;
  id: string;
  version: string;
  kind: string;
  label: string;
  checkpointHash: string | null;
  /** "reference tracker, not a policy" for builtin bindings, else null. */
  note: string | null;
}

export interface ReportPair extends MatrixPair {
  decidedAt: string | null;
  rollouts: (MatrixEpisode & { outcome: string | null; seed: number })[];
}

export interface CampaignReport {
  campaign: { id: string; name: string; dir: string };
  contracts: string[];
  policy: { id: string; version: string; key: string; parameters: Record<string, unknown> | null };
  /** Other admission policies with decisions in this campaign (report them with --policy). */
  otherPolicies: string[];
  snapshots: { id: string; version: string; snapshotHash: string; clips: number }[];
  bindings: ReportBinding[];
  pairs: ReportPair[];
  /** The sim-to-real gap section (matched pairs: parent traces with a calibration). */
  gap: GapSection;
  /** Order of the gap section's per-clip rows. */
  gapSort: GapSortKey;
  generatedAt: string;
}

/**
 * Reads everything the report needs (one query per table, one per matched-pair episode for the
 * gap section). `policy` = `mb-admission/<version>`; default: the base policy if it has
 * decisions, else the one with most. `gapSort`: order of the gap section's per-clip rows
 * (default |Gap %| of MPJPE-l). `gapContract`: the contract of the gap section (default: the one
 * with most matched pairs).
 */
export function buildCampaignReport(
  store: CampaignStore,
  options: { policy?: string; gapSort?: GapSortKey; gapContract?: string } = {},
): CampaignReport {
  const admissions = store.listAdmissions();
  const byPolicy = new Map<string, AdmissionRecord[]>();
  for (const a of admissions) {
    const k = `${a.policyId}/${a.policyVersion}`;
    if (!byPolicy.has(k)) byPolicy.set(k, []);
    byPolicy.get(k)!.push(a);
  }
  let chosen = options.policy;
  if (chosen !== undefined && !byPolicy.has(chosen)) {
    throw new RangeError(
      `no decisions under admission policy ${chosen} in this campaign${byPolicy.size ? ` (it has ${[...byPolicy.keys()].join(', ')})` : ''}`,
    );
  }
  if (chosen === undefined) {
    const base = `${ADMISSION_POLICY_ID}/1`;
    chosen = byPolicy.has(base)
      ? base
      : ([...byPolicy.entries()].sort((a, b) => b[1].length - a[1].length)[0]?.[0] ?? base);
  }
  const slash = chosen.lastIndexOf('/');
  const policy = { id: chosen.slice(0, slash), version: chosen.slice(slash + 1), key: chosen };
  const decisions = new Map((byPolicy.get(chosen) ?? []).map((a) => [a.parentTraceId, a]));

  const snapshots = store.listWorkloadSnapshots();
  const snapRecords = new Map<string, WorkloadSnapshot>();
  for (const s of snapshots) {
    const r = store.getWorkloadSnapshot(s.snapshotHash);
    if (r) snapRecords.set(s.snapshotHash, r);
  }
  const groupOf = (snapshotHash: string, clipId: string): { name: string; group: CapabilityGroup } | null => {
    const c = snapRecords.get(snapshotHash)?.clips.find((x) => x.id === clipId);
    return c ? { name: c.name, group: c.group } : null;
  };
  const bindings: ReportBinding[] = store.listBindings().map((b) => ({
    key: `${b.id}@${b.version}`,
    name: bindingName(b.binding),
    id: b.id,
    version: b.version,
    kind: b.kind,
    label: b.label,
    checkpointHash: b.checkpointHash,
    note: b.kind === 'builtin' ? BUILTIN_LABEL : null,
  }));

  // Qualification episodes (simulation, no calibration), by run id and by parent.
  const rows = store.episodeResults({ executionDomain: 'simulation', calibrationId: null });
  const byRun = new Map(rows.map((r) => [r.runId, r]));
  const byParent = new Map<string, EpisodeResultRow[]>();
  for (const r of rows) {
    if (!byParent.has(r.parentTraceId)) byParent.set(r.parentTraceId, []);
    byParent.get(r.parentTraceId)!.push(r);
  }
  const parents = store.findParentTraces({ calibrationId: null });
  const contracts = new Set<string>();
  const pairs: ReportPair[] = [];
  for (const p of parents) {
    const adm = decisions.get(p.id);
    const ev = (adm?.evidence ?? {}) as {
      snapshot_hash?: string;
      clip?: { name?: string; group?: CapabilityGroup };
      rollouts?: { run_id: string; index: number }[];
    };
    const eps = byParent.get(p.id) ?? [];
    if (!adm && eps.length === 0) continue;
    contracts.add(p.identity.contractId);
    // A decided pair reports the rollouts of its decision; a pending one the snapshot(s) its episodes ran for.
    const snapshotHashes = adm ? [ev.snapshot_hash ?? ''] : [...new Set(eps.map((e) => e.snapshotHash ?? ''))];
    for (const snapshotHash of snapshotHashes) {
      const g = groupOf(snapshotHash, p.identity.clipId);
      const used = adm
        ? (ev.rollouts ?? []).map((r) => byRun.get(r.run_id)).filter((r): r is EpisodeResultRow => !!r)
        : [];
      const rollouts = used.map((r) => ({
        runId: r.runId,
        rolloutIndex: r.rolloutIndex,
        failed: r.metrics?.failed ?? null,
        progressSoft: r.metrics?.progressSoft ?? null,
        mpjpeLMm: r.metrics?.mpjpeLMm ?? null,
        outcome: r.outcome,
        seed: r.seed,
      }));
      pairs.push({
        snapshotHash,
        bindingKey: `${p.identity.bindingId}@${p.identity.bindingVersion}`,
        clipId: p.identity.clipId,
        clipName: g?.name ?? ev.clip?.name ?? p.identity.clipId,
        group: g?.group ?? ev.clip?.group ?? null,
        parentTraceId: p.id,
        decision: adm ? { admitted: adm.admitted, reasons: adm.reasons } : null,
        decidedAt: adm?.decidedAt ?? null,
        episodes: rollouts,
        rollouts,
      });
    }
  }
  // Order: binding (as stored), then the snapshot's clip order.
  const bindingOrder = new Map(bindings.map((b, i) => [b.key, i]));
  const clipOrder = (pr: ReportPair) =>
    snapRecords.get(pr.snapshotHash)?.clips.findIndex((c) => c.id === pr.clipId) ?? 1e9;
  pairs.sort(
    (a, b) =>
      a.snapshotHash.localeCompare(b.snapshotHash) ||
      (bindingOrder.get(a.bindingKey) ?? 0) - (bindingOrder.get(b.bindingKey) ?? 0) ||
      clipOrder(a) - clipOrder(b),
  );
  const params =
    (byPolicy.get(chosen)?.[0]?.evidence as { policy_parameters?: Record<string, unknown> } | undefined)
      ?.policy_parameters ?? null;
  return {
    campaign: { id: store.campaign.id, name: store.campaign.name, dir: store.dir },
    contracts: [...contracts].sort(),
    policy: { ...policy, parameters: params },
    otherPolicies: [...byPolicy.keys()].filter((k) => k !== chosen).sort(),
    snapshots: snapshots.filter((s) => pairs.some((p) => p.snapshotHash === s.snapshotHash)),
    bindings: bindings.filter((b) => pairs.some((p) => p.bindingKey === b.key)),
    pairs,
    gap: buildGapSection(store, options.gapContract !== undefined ? { contract: options.gapContract } : {}),
    gapSort: options.gapSort ?? DEFAULT_GAP_SORT,
    generatedAt: new Date().toISOString(),
  };
}

// ------------------------------------------------------------------ formatting

const snapName = (r: CampaignReport, hash: string) => {
  const s = r.snapshots.find((x) => x.snapshotHash === hash);
  return s ? `${s.id}@${s.version}` : hash ? `snapshot ${hash.slice(0, 12)}` : 'no snapshot';
};
const bindingTitle = (r: CampaignReport, key: string) => {
  const b = r.bindings.find((x) => x.key === key);
  if (!b) return key;
  const label = b.note && !b.label.includes(b.note) ? `${b.note}; ${b.label}` : b.label;
  return `${key} (${b.kind}: ${label})`;
};

function cellJson(c: MatrixCell): Record<string, unknown> {
  return {
    pairs: c.pairs,
    admitted: c.admitted,
    rejected: c.rejected,
    pending: c.pending,
    episodes: c.episodes,
    sr: c.sr,
    sr_episodes: c.srEpisodes,
    progress_soft: c.progressSoft,
    progress_soft_clips: c.progressSoftClips,
    mpjpe_l_mm: c.mpjpeLMm,
    mpjpe_l_clips: c.mpjpeLClips,
  };
}

export function reportJson(r: CampaignReport): Record<string, unknown> {
  const matrix = qualificationMatrix(r.pairs);
  const bindingOf = (k: string) => r.bindings.find((b) => b.key === k);
  return {
    format: REPORT_FORMAT_ID,
    campaign: r.campaign,
    contract: r.contracts.length === 1 ? r.contracts[0] : r.contracts,
    policy: { id: r.policy.id, version: r.policy.version, key: r.policy.key, parameters: r.policy.parameters },
    other_policies: r.otherPolicies,
    generated_at: r.generatedAt,
    snapshots: r.snapshots.map((s) => ({
      id: s.id,
      version: s.version,
      snapshot_hash: s.snapshotHash,
      clips: s.clips,
    })),
    bindings: r.bindings.map((b) => ({
      key: b.key,
      id: b.id,
      version: b.version,
      kind: b.kind,
      label: b.label,
      checkpoint_hash: b.checkpointHash,
      note: b.note,
    })),
    matrix: matrix.map((m) => ({
      snapshot: snapName(r, m.snapshotHash),
      snapshot_hash: m.snapshotHash,
      binding: m.bindingKey,
      binding_kind: bindingOf(m.bindingKey)?.kind ?? null,
      binding_note: bindingOf(m.bindingKey)?.note ?? null,
      overall: cellJson(m.overall),
      by_group: Object.fromEntries(CAPABILITY_GROUPS.map((g) => [g, cellJson(m.byGroup[g])])),
    })),
    pairs: r.pairs.map((p) => ({
      snapshot_hash: p.snapshotHash,
      binding: p.bindingKey,
      clip_id: p.clipId,
      clip: p.clipName,
      group: p.group,
      parent_trace_id: p.parentTraceId,
      decision: p.decision ? (p.decision.admitted ? 'admitted' : 'rejected') : 'pending',
      reasons: p.decision?.reasons ?? [],
      decided_at: p.decidedAt,
      rollouts: p.rollouts.map((e) => ({
        run_id: e.runId,
        rollout_index: e.rolloutIndex,
        seed: e.seed,
        outcome: e.outcome,
        failed: e.failed,
        progress_soft: e.progressSoft,
        mpjpe_l_mm: e.mpjpeLMm,
      })),
      summary: cellJson(matrixCell([p])),
    })),
    gap: gapJson(r.gap, r.gapSort),
  };
}

const pctS = (v: number | null) => (v === null ? 'n/a' : `${(100 * v).toFixed(1)}%`);
const numS = (v: number | null, d: number) => (v === null ? 'n/a' : v.toFixed(d));
const cmS = (mm: number | null) => (mm === null ? 'n/a' : (mm / 10).toFixed(2));

export function reportMarkdown(r: CampaignReport): string {
  const matrix = qualificationMatrix(r.pairs);
  const L: string[] = [];
  L.push(`# Qualification report — campaign ${r.campaign.name} (${r.campaign.id})`, '');
  L.push(`- Metric contract: **${r.contracts.join(', ') || 'n/a'}**`);
  L.push(
    `- Admission policy: **${r.policy.key}**${r.otherPolicies.length ? ` (also decided in this campaign: ${r.otherPolicies.join(', ')}; choose with --policy)` : ''}`,
  );
  L.push(
    `- Workload snapshot${r.snapshots.length === 1 ? '' : 's'}: ${r.snapshots.map((s) => `**${s.id}@${s.version}** (snapshot_hash ${s.snapshotHash}, ${s.clips} clips)`).join(', ') || 'none'}`,
  );
  L.push(`- Campaign folder: ${r.campaign.dir}`, `- Generated: ${r.generatedAt}`, '');
  L.push('## Bindings', '');
  for (const b of r.bindings) {
    const label = b.note
      ? b.label.includes(b.note)
        ? b.label.replace(b.note, `**${b.note}**`)
        : `**${b.note}**; ${b.label}`
      : b.label;
    L.push(
      `- \`${b.key}\` — ${b.kind}: ${label}${b.checkpointHash ? ` (checkpoint ${b.checkpointHash.slice(0, 16)}…)` : ''}`,
    );
  }
  if (r.bindings.length === 0) L.push('- none');
  L.push('');
  L.push('## Qualification matrix', '');
  L.push(
    "SR: share of the decided pairs' rollouts without a hard failure. progress-soft and MPJPE-l: macro-average over clips of each pair's mean over its rollouts (MPJPE-l shown in cm).",
    '',
  );
  if (matrix.length === 0) L.push('No qualification results in this campaign.', '');
  for (const m of matrix) {
    L.push(`### ${bindingTitle(r, m.bindingKey)} — ${snapName(r, m.snapshotHash)}`, '');
    L.push(
      '| group | pairs | admitted | rejected | pending | rollouts | SR | progress-soft | MPJPE-l (cm) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    const row = (name: string, c: MatrixCell) =>
      `| ${name} | ${c.pairs} | ${c.admitted} | ${c.rejected} | ${c.pending} | ${c.episodes} | ${pctS(c.sr)} | ${numS(c.progressSoft, 3)} | ${cmS(c.mpjpeLMm)} |`;
    L.push(row('**all**', m.overall));
    for (const g of CAPABILITY_GROUPS) if (m.byGroup[g].pairs > 0) L.push(row(g, m.byGroup[g]));
    L.push('');
  }
  const admitted = r.pairs.filter((p) => p.decision?.admitted);
  const rejected = r.pairs.filter((p) => p.decision && !p.decision.admitted);
  const pending = r.pairs.filter((p) => !p.decision);
  L.push(`## Admitted pairs (${admitted.length})`, '');
  if (admitted.length > 0) {
    L.push(
      '| binding | clip | group | rollouts | SR | progress-soft | MPJPE-l (cm) |',
      '|---|---|---|---:|---:|---:|---:|',
    );
    for (const p of admitted) {
      const c = matrixCell([p]);
      L.push(
        `| \`${p.bindingKey}\` | ${p.clipName} | ${p.group ?? 'n/a'} | ${c.episodes} | ${pctS(c.sr)} | ${numS(c.progressSoft, 3)} | ${cmS(c.mpjpeLMm)} |`,
      );
    }
  } else L.push('None.');
  L.push('');
  L.push(`## Rejections (${rejected.length})`, '');
  if (rejected.length === 0) L.push('None.', '');
  for (const p of rejected) {
    L.push(`### \`${p.bindingKey}\` × ${p.clipName} (${p.group ?? 'n/a'})`, '');
    for (const reason of p.decision!.reasons) L.push(`- ${reason}`);
    L.push('');
  }
  if (pending.length > 0) {
    L.push(
      `## Pending pairs (${pending.length})`,
      '',
      'Rollouts recorded but no decision under this policy yet (an interrupted run): run `motionbench qualify` again on this campaign to finish them.',
      '',
    );
    for (const p of pending) L.push(`- \`${p.bindingKey}\` × ${p.clipName} (${p.group ?? 'n/a'})`);
    L.push('');
  }
  L.push(...gapMarkdown(r.gap, r.gapSort));
  return L.join('\n');
}

const csvField = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'number' ? String(v) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export const REPORT_CSV_COLUMNS = [
  'level',
  'contract',
  'policy',
  'snapshot',
  'snapshot_hash',
  'binding',
  'binding_kind',
  'binding_note',
  'group',
  'clip',
  'clip_id',
  'pairs',
  'admitted',
  'rejected',
  'pending',
  'rollouts',
  'sr',
  'progress_soft',
  'mpjpe_l_mm',
  'decision',
  'reasons',
  ...GAP_CSV_COLUMNS,
] as const;

/**
 * One table: `binding` rows (all groups), `group` rows, then one `pair` row per pair (reasons
 * joined with " | "); then the gap section's `gap_binding`, `gap_group` and `gap_clip` rows (one
 * per reading), which fill the gap columns at the end (empty on qualification rows).
 */
export function reportCsv(r: CampaignReport): string {
  const matrix = qualificationMatrix(r.pairs);
  const contract = r.contracts.join(' ');
  const bind = (k: string) => r.bindings.find((b) => b.key === k);
  const lines = [REPORT_CSV_COLUMNS.join(',')];
  const push = (o: Partial<Record<(typeof REPORT_CSV_COLUMNS)[number], unknown>>) =>
    lines.push(REPORT_CSV_COLUMNS.map((c) => csvField(o[c])).join(','));
  const cellCols = (c: MatrixCell) => ({
    pairs: c.pairs,
    admitted: c.admitted,
    rejected: c.rejected,
    pending: c.pending,
    rollouts: c.episodes,
    sr: c.sr,
    progress_soft: c.progressSoft,
    mpjpe_l_mm: c.mpjpeLMm,
  });
  for (const m of matrix) {
    const common = {
      contract,
      policy: r.policy.key,
      snapshot: snapName(r, m.snapshotHash),
      snapshot_hash: m.snapshotHash,
      binding: m.bindingKey,
      binding_kind: bind(m.bindingKey)?.kind,
      binding_note: bind(m.bindingKey)?.note,
    };
    push({ level: 'binding', ...common, group: 'all', ...cellCols(m.overall) });
    for (const g of CAPABILITY_GROUPS)
      if (m.byGroup[g].pairs > 0) push({ level: 'group', ...common, group: g, ...cellCols(m.byGroup[g]) });
  }
  for (const p of r.pairs) {
    push({
      level: 'pair',
      contract,
      policy: r.policy.key,
      snapshot: snapName(r, p.snapshotHash),
      snapshot_hash: p.snapshotHash,
      binding: p.bindingKey,
      binding_kind: bind(p.bindingKey)?.kind,
      binding_note: bind(p.bindingKey)?.note,
      group: p.group,
      clip: p.clipName,
      clip_id: p.clipId,
      ...cellCols(matrixCell([p])),
      decision: p.decision ? (p.decision.admitted ? 'admitted' : 'rejected') : 'pending',
      reasons: (p.decision?.reasons ?? []).join(' | '),
    });
  }
  for (const g of gapCsvRows(r.gap, r.gapSort)) push(g);
  return `${lines.join('\n')}\n`;
}

export function formatReport(r: CampaignReport, format: ReportFormat): string {
  if (format === 'json') return `${JSON.stringify(reportJson(r), null, 2)}\n`;
  if (format === 'csv') return reportCsv(r);
  return `${reportMarkdown(r)}\n`;
}
