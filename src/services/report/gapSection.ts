// The sim-to-real gap section of `motionbench report` (DESIGN §4 "Gap %", Table 11): the matched pairs of a campaign read from its index, reduced by the pure aggregation
// (src/domain/metrics/aggregate.ts gapReport), and formatted as Markdown, JSON and CSV rows.
//
// Which episodes count, which calibration is used when a binding × clip has several, and how a
// stopped trial enters the readings are decided here and documented in docs/GAP_REPORT.md:
//   - a matched pair is a parent trace with a calibration (qualification pairs have none);
//   - counted: finished `completed` and `hard_failure` episodes, with their stored metrics under
//     the report's contract;
//   - counted as a failed trial (SR) whatever the readings show: `estop`, `intervention`; their
//     progress-soft is rescaled to the whole clip (the stop is where progress ended);
//   - excluded, with a count and the reason: `infrastructure_error` (retried), interrupted or
//     still-running episodes, `aborted_by_operator`, `link_lost`, finished episodes without metrics
//     under the contract, a second settled episode for the same trial index;
//   - one pair per binding × clip: the latest calibration (capturedAt) whose two branches both
//     have a counted episode; older complete pairs are listed as superseded, never pooled.
// Unavailable readings stay unavailable with their reason (never 0).

import type { EpisodeOutcome, ExecutionDomain } from '../../domain/backend/backend';
import {
  AGGREGATE_KEYS,
  gapReport,
  type AggregateKey,
  type ClipGap,
  type GapReport,
  type GapRow,
  type MatchedPair,
  type TrialMetrics,
} from '../../domain/metrics/aggregate';
import { MB_METRICS_1 } from '../../domain/metrics/metricContract';
import {
  availableReading,
  READING_INFO,
  unavailableReading,
  type EpisodeMetrics,
  type Reading,
} from '../../domain/metrics/readings';
import type { CapabilityGroup } from '../../domain/motion/motionClip';
import { BUILTIN_LABEL } from '../../domain/sim/builtinBinding';
import { bindingName } from '../../domain/wbc/bindingName';
import type { EpisodeRecord, ParentTraceRecord } from '../../domain/trace/records';
import type { WorkloadClipMeta, WorkloadSnapshot } from '../../domain/workload/snapshot';
import type { CampaignStore } from '../trace';
import { trialNumber } from '../../domain/trial/trialNumber';

export const GAP_SECTION_TITLE = 'Sim-to-real gap (Table 11)';
export const NO_MATCHED_PAIRS =
  'No matched sim/real pairs in this campaign (a parent trace with a calibration, a counted simulation episode and counted real-robot trials).';

/** Outcomes whose episodes enter the readings as they are. */
export const COUNTED_OUTCOMES: readonly EpisodeOutcome[] = ['completed', 'hard_failure'];
/** Outcomes of a trial stopped before its end: counted, and a failed trial for SR. */
export const STOPPED_OUTCOMES: readonly EpisodeOutcome[] = ['estop', 'intervention'];
/** Outcomes left out of the readings, with why. */
export const EXCLUDED_OUTCOMES: Readonly<Partial<Record<EpisodeOutcome, string>>> = {
  infrastructure_error: 'infrastructure error (the trial is retried)',
  aborted_by_operator: 'aborted by the operator (not a verdict on the controller)',
  link_lost: 'link lost (the stream ended without a verdict on the controller)',
};

export type TrialUse = 'counted' | 'stopped' | 'excluded';

export interface GapTrial {
  runId: string;
  domain: ExecutionDomain;
  rolloutIndex: number | null;
  status: EpisodeRecord['status'];
  outcome: EpisodeOutcome | null;
  use: TrialUse;
  /** Why the trial was excluded (null when it counts). */
  reason: string | null;
  /** A known failure: a hard failure in its readings, or a stop. */
  failed: boolean;
}

export interface TrialCounts {
  /** Trials in the readings (stopped ones included). */
  used: number;
  /** Used trials that failed (hard failure or stop); trials whose failure detection is unavailable are not counted here. */
  failed: number;
  /** Used trials stopped by an e-stop or intervention. */
  stopped: number;
  /** Trials left out, by reason. */
  excluded: { reason: string; count: number }[];
}

/** A matched pair in the report. */
export interface GapPair {
  wbc: string;
  clipId: string;
  clipName: string;
  group: CapabilityGroup | 'unassigned';
  parentTraceId: string;
  calibrationId: string;
  capturedAt: string | null;
  robotUnit: string | null;
  sim: TrialCounts;
  real: TrialCounts;
  trials: GapTrial[];
}

/** A calibrated parent trace that is not in the tables, with why. */
export interface SkippedPair {
  wbc: string;
  clipId: string;
  clipName: string;
  parentTraceId: string;
  calibrationId: string;
  capturedAt: string | null;
  why: 'superseded' | 'incomplete' | 'other_contract';
  reason: string;
}

export interface GapBinding {
  key: string;
  /** bindingName (src/domain/wbc/bindingName.ts); the key when the binding is not stored. */
  name: string;
  kind: string | null;
  label: string | null;
  /** "reference tracker, not a policy" for builtin bindings. */
  note: string | null;
}

export interface GapSection {
  /** The contract of the readings (null without matched pairs). */
  contract: string | null;
  report: GapReport;
  pairs: GapPair[];
  /** The episodes of each pair as aggregated (counted and stopped trials), in the order of `pairs`. */
  matched: MatchedPair[];
  skipped: SkippedPair[];
  bindings: GapBinding[];
}

// ------------------------------------------------------------------ reading the store

/** Snapshot clip metadata by clip id: the snapshot an episode ran for first, else any stored snapshot listing the clip. */
function clipMetaFinder(
  store: CampaignStore,
): (clipId: string, snapshotHashes: readonly (string | null)[]) => WorkloadClipMeta | null {
  const snaps = new Map<string, WorkloadSnapshot>();
  for (const s of store.listWorkloadSnapshots()) {
    const r = store.getWorkloadSnapshot(s.snapshotHash);
    if (r) snaps.set(s.snapshotHash, r);
  }
  return (clipId, hashes) => {
    for (const h of hashes) {
      const c = h ? snaps.get(h)?.clips.find((x) => x.id === clipId) : undefined;
      if (c) return c;
    }
    for (const s of snaps.values()) {
      const c = s.clips.find((x) => x.id === clipId);
      if (c) return c;
    }
    return null;
  };
}

/** Common-timeline frame count of the reference alone, when the contract's rate is known (mb-metrics/1) and the clip's duration is. */
function referenceFrameCount(contract: string, clip: WorkloadClipMeta | null): number | null {
  if (contract !== MB_METRICS_1.id || !clip || !Number.isFinite(clip.duration_s)) return null;
  const K = Math.floor(MB_METRICS_1.rateHz * clip.duration_s + 1e-9) + 1;
  return K >= 2 ? K : null;
}

/**
 * A stopped trial (e-stop, intervention): failed for SR, and progress-soft measured against the
 * whole clip — the stop (or an earlier failure or drift) is where progress ended, on the
 * timeline of the reference rather than of the truncated recording.
 */
export function stoppedTrialMetrics(
  m: EpisodeMetrics,
  outcome: EpisodeOutcome,
  referenceK: number | null,
): TrialMetrics {
  let progressSoft: Reading<number>;
  if (!m.progressStop.available) progressSoft = m.progressStop;
  else if (referenceK === null)
    progressSoft = unavailableReading(
      `trial stopped (${outcome}): progress-soft needs the clip's length on the contract timeline, which is not known here`,
    );
  else {
    const stop = m.progressStop.value ? m.progressStop.value.frame : m.K - 1;
    progressSoft = availableReading(Math.min(stop, referenceK - 1) / (referenceK - 1));
  }
  return { ...m, progressSoft, stoppedBy: outcome };
}

interface Candidate {
  parent: ParentTraceRecord;
  capturedAt: string | null;
  robotUnit: string | null;
  clip: WorkloadClipMeta | null;
  trials: GapTrial[];
  sim: TrialMetrics[];
  real: TrialMetrics[];
}

function readCandidate(
  store: CampaignStore,
  parent: ParentTraceRecord,
  findClip: ReturnType<typeof clipMetaFinder>,
): Candidate {
  const contract = parent.identity.contractId;
  const cal = parent.identity.calibrationId ? store.getCalibration(parent.identity.calibrationId) : null;
  const episodes = store.findEpisodes({ parentTraceId: parent.id });
  const clip = findClip(
    parent.identity.clipId,
    episodes.map((e) => e.snapshotHash),
  );
  const referenceK = referenceFrameCount(contract, clip);
  // Settled order: a trial index is filled by its first settled episode (as settledRollouts does).
  const ordered = [...episodes].sort(
    (a, b) => (a.endedAt ?? '\uffff').localeCompare(b.endedAt ?? '\uffff') || a.runId.localeCompare(b.runId),
  );
  const filled = new Map<string, string>();
  const trials: GapTrial[] = [];
  const sim: TrialMetrics[] = [];
  const real: TrialMetrics[] = [];
  for (const e of ordered) {
    const t: GapTrial = {
      runId: e.runId,
      domain: e.executionDomain,
      rolloutIndex: e.rolloutIndex,
      status: e.status,
      outcome: e.outcome,
      use: 'excluded',
      reason: null,
      failed: false,
    };
    trials.push(t);
    if (e.status === 'running') {
      t.reason = 'still running';
      continue;
    }
    if (e.status === 'interrupted' || e.outcome === null) {
      t.reason = EXCLUDED_OUTCOMES.infrastructure_error!;
      continue;
    }
    const excluded = EXCLUDED_OUTCOMES[e.outcome];
    if (excluded) {
      t.reason = excluded;
      continue;
    }
    const stopped = STOPPED_OUTCOMES.includes(e.outcome);
    if (!stopped && !COUNTED_OUTCOMES.includes(e.outcome)) {
      t.reason = `outcome ${e.outcome} is not used by this report`;
      continue;
    }
    const slot = e.rolloutIndex === null ? null : `${e.executionDomain}#${e.rolloutIndex}`;
    if (slot !== null && filled.has(slot)) {
      t.reason = `trial ${trialNumber(e.rolloutIndex)} is already filled by ${filled.get(slot)}`;
      continue;
    }
    const m = store.getMetrics(e.runId, contract)?.result ?? null;
    if (!m) {
      t.reason = `no metrics under ${contract}`;
      continue;
    }
    if (slot !== null) filled.set(slot, e.runId);
    const tm = stopped ? stoppedTrialMetrics(m, e.outcome, referenceK) : m;
    t.use = stopped ? 'stopped' : 'counted';
    t.failed = stopped || (m.failure.available && m.failure.value !== null);
    (e.executionDomain === 'simulation' ? sim : real).push(tm);
  }
  return {
    parent,
    capturedAt: cal?.record.capturedAt ?? null,
    robotUnit: cal?.record.robotUnit ?? null,
    clip,
    trials,
    sim,
    real,
  };
}

function counts(trials: readonly GapTrial[], domain: ExecutionDomain): TrialCounts {
  const mine = trials.filter((t) => t.domain === domain);
  const used = mine.filter((t) => t.use !== 'excluded');
  const byReason = new Map<string, number>();
  for (const t of mine) if (t.use === 'excluded') byReason.set(t.reason!, (byReason.get(t.reason!) ?? 0) + 1);
  return {
    used: used.length,
    failed: used.filter((t) => t.failed).length,
    stopped: used.filter((t) => t.use === 'stopped').length,
    excluded: [...byReason].map(([reason, count]) => ({ reason, count })),
  };
}

const wbcOf = (p: ParentTraceRecord) => `${p.identity.bindingId}@${p.identity.bindingVersion}`;

/**
 * Reads the matched pairs of a campaign and reduces them to Table 11. `contract`: the contract to
 * report (default: the one with most calibrated parent traces, mb-metrics/1 on a tie).
 */
export function buildGapSection(store: CampaignStore, options: { contract?: string } = {}): GapSection {
  const parents = store.findParentTraces().filter((p) => p.identity.calibrationId !== null);
  const perContract = new Map<string, number>();
  for (const p of parents) perContract.set(p.identity.contractId, (perContract.get(p.identity.contractId) ?? 0) + 1);
  if (options.contract !== undefined && parents.length > 0 && !perContract.has(options.contract)) {
    throw new RangeError(
      `no matched pairs under contract ${options.contract} in this campaign (it has ${[...perContract.keys()].join(', ')})`,
    );
  }
  const contract =
    options.contract ??
    [...perContract].sort(
      (a, b) =>
        b[1] - a[1] || Number(b[0] === MB_METRICS_1.id) - Number(a[0] === MB_METRICS_1.id) || a[0].localeCompare(b[0]),
    )[0]?.[0] ??
    null;
  const findClip = clipMetaFinder(store);
  const skipped: SkippedPair[] = [];
  const skip = (c: Candidate, why: SkippedPair['why'], reason: string) =>
    skipped.push({
      wbc: wbcOf(c.parent),
      clipId: c.parent.identity.clipId,
      clipName: c.clip?.name ?? c.parent.identity.clipId,
      parentTraceId: c.parent.id,
      calibrationId: c.parent.identity.calibrationId!,
      capturedAt: c.capturedAt,
      why,
      reason,
    });

  const byPair = new Map<string, Candidate[]>();
  for (const p of parents) {
    const c = readCandidate(store, p, findClip);
    if (p.identity.contractId !== contract) {
      skip(c, 'other_contract', `under contract ${p.identity.contractId}, the report is under ${contract}`);
      continue;
    }
    const key = `${wbcOf(p)}\u0000${p.identity.clipId}`;
    byPair.set(key, [...(byPair.get(key) ?? []), c]);
  }

  const chosen: Candidate[] = [];
  for (const list of byPair.values()) {
    // Latest calibration first (then the latest parent trace).
    list.sort(
      (a, b) =>
        (b.capturedAt ?? '').localeCompare(a.capturedAt ?? '') || b.parent.createdAt.localeCompare(a.parent.createdAt),
    );
    const pick = list.find((c) => c.sim.length > 0 && c.real.length > 0) ?? null;
    if (pick) chosen.push(pick);
    for (const c of list) {
      if (c === pick) continue;
      if (c.sim.length > 0 && c.real.length > 0)
        skip(
          c,
          'superseded',
          `superseded by the later calibration ${pick!.parent.identity.calibrationId}${pick!.capturedAt ? ` (${pick!.capturedAt})` : ''}`,
        );
      else
        skip(
          c,
          'incomplete',
          [
            c.sim.length === 0 ? 'no counted simulation episode' : null,
            c.real.length === 0 ? 'no counted real-robot trial' : null,
          ]
            .filter(Boolean)
            .join('; '),
        );
    }
  }

  const bindingRecords = new Map(store.listBindings().map((b) => [`${b.id}@${b.version}`, b]));
  const bindingOrder = [...bindingRecords.keys()];
  const order = (w: string) => {
    const i = bindingOrder.indexOf(w);
    return i < 0 ? 1e9 : i;
  };
  chosen.sort(
    (a, b) =>
      order(wbcOf(a.parent)) - order(wbcOf(b.parent)) ||
      wbcOf(a.parent).localeCompare(wbcOf(b.parent)) ||
      (a.clip?.name ?? a.parent.identity.clipId).localeCompare(b.clip?.name ?? b.parent.identity.clipId),
  );

  const matched: MatchedPair[] = chosen.map((c) => ({
    wbc: wbcOf(c.parent),
    clipId: c.parent.identity.clipId,
    ...(c.clip ? { group: c.clip.group } : {}),
    sim: c.sim,
    real: c.real,
  }));
  const report = gapReport(matched);
  const pairs: GapPair[] = chosen.map((c) => ({
    wbc: wbcOf(c.parent),
    clipId: c.parent.identity.clipId,
    clipName: c.clip?.name ?? c.parent.identity.clipId,
    group: c.clip?.group ?? 'unassigned',
    parentTraceId: c.parent.id,
    calibrationId: c.parent.identity.calibrationId!,
    capturedAt: c.capturedAt,
    robotUnit: c.robotUnit,
    sim: counts(c.trials, 'simulation'),
    real: counts(c.trials, 'real_robot'),
    trials: c.trials,
  }));
  const bindings: GapBinding[] = report.wbcs.map((w) => {
    const b = bindingRecords.get(w.wbc);
    return {
      key: w.wbc,
      name: b ? bindingName(b.binding) : w.wbc,
      kind: b?.kind ?? null,
      label: b?.label ?? null,
      note: b?.kind === 'builtin' ? BUILTIN_LABEL : null,
    };
  });
  skipped.sort(
    (a, b) =>
      a.wbc.localeCompare(b.wbc) ||
      a.clipName.localeCompare(b.clipName) ||
      (b.capturedAt ?? '').localeCompare(a.capturedAt ?? ''),
  );
  return { contract: matched.length > 0 ? report.contract : contract, report, pairs, matched, skipped, bindings };
}

// ------------------------------------------------------------------ sorting

export type GapSortKey = AggregateKey | 'clip';
/** `--sort` names: the JSON name of a reading (|Gap %| descending) or `clip` (by name). */
export const GAP_SORT_NAMES: readonly string[] = [...AGGREGATE_KEYS.map((k) => READING_INFO[k].json), 'clip'];
export const DEFAULT_GAP_SORT: GapSortKey = 'mpjpeLMm';

export function parseGapSortKey(name: string): GapSortKey {
  if (name === 'clip') return 'clip';
  const n = name === 'mpjpe_l' ? 'mpjpe_l_mm' : name;
  const key = AGGREGATE_KEYS.find((k) => READING_INFO[k].json === n);
  if (!key) throw new RangeError(`--sort must be one of ${GAP_SORT_NAMES.join(', ')}, got "${name}"`);
  return key;
}

/** Per-clip rows: by |Gap %| of `key`, largest first, unavailable gaps last; ties and `clip` by clip name. */
export function sortedClips(section: GapSection, wbc: string, key: GapSortKey): { clip: ClipGap; pair: GapPair }[] {
  const w = section.report.wbcs.find((x) => x.wbc === wbc);
  if (!w) return [];
  const rows = w.clips.map((clip) => ({
    clip,
    pair: section.pairs.find((p) => p.wbc === wbc && p.clipId === clip.clipId)!,
  }));
  const mag = (c: ClipGap) => {
    if (key === 'clip') return 0;
    const g = c.gapPercent[key];
    return g.available ? Math.abs(g.value) : -1;
  };
  return rows.sort((a, b) => mag(b.clip) - mag(a.clip) || a.pair.clipName.localeCompare(b.pair.clipName));
}

// ------------------------------------------------------------------ formatting

const KEY_LABEL: Record<AggregateKey, string> = {
  successRate: 'SR',
  progressSoft: 'progress-soft',
  mpjpeLMm: 'MPJPE-l (cm)',
  jointPosRmseRad: 'joint-position RMSE (rad)',
  jointVelRmseRadS: 'joint-velocity RMSE (rad/s)',
  jointAccRmsRadS2: 'joint-acceleration RMS (rad/s²)',
  jointAccP95RadS2: 'joint-acceleration P95 (rad/s²)',
  jointJerkRmsRadS3: 'joint-jerk RMS (rad/s³)',
  jointJerkP95RadS3: 'joint-jerk P95 (rad/s³)',
};
/** Four significant digits, never in exponent form (a joint-velocity RMSE can be 0.0004 rad/s). */
const sig4 = (v: number) => {
  if (v === 0 || !Number.isFinite(v)) return String(v);
  const d = Math.max(0, 3 - Math.floor(Math.log10(Math.abs(v))));
  return v.toFixed(Math.min(d, 12));
};

const mdEscape = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const na = (reason: string) => `n/a (${mdEscape(reason)})`;

/** A reading as shown in Markdown: SR in % (1 decimal), MPJPE-l in cm (2 decimals), progress-soft with 3 decimals, the rest with 4 significant digits in their stored units. */
export function displayValue(key: AggregateKey, r: Reading<number>): string {
  if (!r.available) return na(r.reason);
  if (key === 'successRate') return `${(100 * r.value).toFixed(1)}%`;
  if (key === 'mpjpeLMm') return (r.value / 10).toFixed(2);
  if (key === 'progressSoft') return r.value.toFixed(3);
  return sig4(r.value);
}

/** Gap % with its sign and 1 decimal. `brief`: plain "n/a" when a side is unavailable (its reason is shown beside it). */
export function displayGap(r: Reading<number>, brief = false): string {
  if (!r.available) return brief && /^(Sim|Real) is unavailable/.test(r.reason) ? 'n/a' : na(r.reason);
  return `${r.value >= 0 ? '+' : '-'}${Math.abs(r.value).toFixed(1)}%`;
}

const countsText = (c: TrialCounts) =>
  `${c.used}${c.failed ? ` (${c.failed} failed${c.stopped ? `, ${c.stopped} stopped` : ''})` : ''}`;
const excludedText = (c: TrialCounts) =>
  c.excluded.length === 0 ? '0' : c.excluded.map((e) => `${e.count} ${mdEscape(e.reason)}`).join('; ');

export function gapMarkdown(section: GapSection, sort: GapSortKey = DEFAULT_GAP_SORT): string[] {
  const L: string[] = [`## ${GAP_SECTION_TITLE}`, ''];
  if (section.pairs.length === 0) {
    L.push(NO_MATCHED_PAIRS, '');
    return L;
  }
  const nameOf = (clipId: string) => section.pairs.find((p) => p.clipId === clipId)?.clipName ?? clipId;
  L.push(
    `Metric contract **${section.contract}**, ${section.pairs.length} matched pair${section.pairs.length === 1 ? '' : 's'}. Gap % = (Real − Sim)/Sim × 100. Trials are averaged per pair, then macro-averaged over the matched clips (every clip weighs the same); a clip enters a row only when the reading is available for both Sim and Real. Counted: completed and hard_failure; estop and intervention count as failed trials; excluded: infrastructure_error, aborted_by_operator, link_lost. One pair per binding × clip: the latest calibration with both branches (docs/GAP_REPORT.md).`,
    '',
  );
  const rowsTable = (rows: GapRow[], group?: string) => {
    for (const r of rows) {
      const ex =
        r.excluded.length === 0
          ? '—'
          : r.excluded.map((e) => `${mdEscape(nameOf(e.clipId))}: ${mdEscape(e.reason)}`).join('; ');
      L.push(
        `| ${group !== undefined ? `${group} | ` : ''}${KEY_LABEL[r.key]} | ${displayValue(r.key, r.sim)} | ${displayValue(r.key, r.real)} | ${displayGap(r.gapPercent)} | ${r.clips} | ${ex} |`,
      );
    }
  };
  for (const w of section.report.wbcs) {
    const b = section.bindings.find((x) => x.key === w.wbc);
    const label = b?.kind
      ? ` (${b.kind}${b.note && !(b.label ?? '').includes(b.note) ? `: ${b.note}` : ''}${b.label ? `: ${b.label}` : ''})`
      : '';
    L.push(`### \`${w.wbc}\`${label} — ${w.clips.length} clip${w.clips.length === 1 ? '' : 's'}`, '');
    L.push('| reading | Sim | Real | Gap % | clips | excluded |', '|---|---:|---:|---:|---:|---|');
    rowsTable(w.rows);
    L.push('', '#### By capability group', '');
    L.push('| group | reading | Sim | Real | Gap % | clips | excluded |', '|---|---|---:|---:|---:|---:|---|');
    for (const g of w.byGroup) rowsTable(g.rows, `${g.group} (${g.clips})`);
    L.push(
      '',
      `#### Per clip (sorted by ${sort === 'clip' ? 'clip name' : `|Gap %| of ${READING_INFO[sort].label}`})`,
      '',
    );
    L.push('Each reading: Sim / Real (Gap %).', '');
    L.push(
      `| clip | group | calibration | sim trials | real trials | excluded trials | ${AGGREGATE_KEYS.map((k) => KEY_LABEL[k]).join(' | ')} |`,
      `|---|---|---|---:|---:|---|${AGGREGATE_KEYS.map(() => '---').join('|')}|`,
    );
    for (const { clip, pair } of sortedClips(section, w.wbc, sort)) {
      const excluded =
        [
          pair.sim.excluded.length ? `sim: ${excludedText(pair.sim)}` : '',
          pair.real.excluded.length ? `real: ${excludedText(pair.real)}` : '',
        ]
          .filter(Boolean)
          .join('; ') || '0';
      const cells = AGGREGATE_KEYS.map(
        (k) =>
          `${displayValue(k, clip.sim.readings[k])} / ${displayValue(k, clip.real.readings[k])} (${displayGap(clip.gapPercent[k], true)})`,
      );
      L.push(
        `| ${mdEscape(pair.clipName)} | ${pair.group} | ${pair.calibrationId}${pair.capturedAt ? ` (${pair.capturedAt})` : ''} | ${countsText(pair.sim)} | ${countsText(pair.real)} | ${excluded} | ${cells.join(' | ')} |`,
      );
    }
    L.push('');
  }
  if (section.skipped.length > 0) {
    L.push(`### Calibrated pairs not in the tables (${section.skipped.length})`, '');
    for (const s of section.skipped)
      L.push(
        `- \`${s.wbc}\` × ${mdEscape(s.clipName)}, calibration ${s.calibrationId}${s.capturedAt ? ` (${s.capturedAt})` : ''}: ${s.why} — ${mdEscape(s.reason)}`,
      );
    L.push('');
  }
  return L;
}

/** A reading in JSON: the stored value (SR 0..1, MPJPE-l in mm) or null, with the reason beside it. */
function readingJson(r: Reading<number>): { value: number | null; reason?: string } {
  return r.available ? { value: r.value } : { value: null, reason: r.reason };
}

function rowJson(r: GapRow, nameOf: (id: string) => string): Record<string, unknown> {
  const sim = readingJson(r.sim);
  const real = readingJson(r.real);
  const gap = readingJson(r.gapPercent);
  const unavailable: Record<string, string> = {};
  if (sim.reason) unavailable.sim = sim.reason;
  if (real.reason) unavailable.real = real.reason;
  if (gap.reason) unavailable.gap_percent = gap.reason;
  return {
    reading: READING_INFO[r.key].json,
    unit: READING_INFO[r.key].unit,
    sim: sim.value,
    real: real.value,
    gap_percent: gap.value,
    clips: r.clips,
    excluded: r.excluded.map((e) => ({ clip_id: e.clipId, clip: nameOf(e.clipId), reason: e.reason })),
    ...(Object.keys(unavailable).length ? { unavailable } : {}),
  };
}

const countsJson = (c: TrialCounts) => ({ used: c.used, failed: c.failed, stopped: c.stopped, excluded: c.excluded });

export function gapJson(section: GapSection, sort: GapSortKey = DEFAULT_GAP_SORT): Record<string, unknown> {
  const nameOf = (clipId: string) => section.pairs.find((p) => p.clipId === clipId)?.clipName ?? clipId;
  return {
    title: GAP_SECTION_TITLE,
    contract: section.contract,
    matched_pairs: section.pairs.length,
    ...(section.pairs.length === 0 ? { message: NO_MATCHED_PAIRS } : {}),
    rules: {
      counted_outcomes: COUNTED_OUTCOMES,
      failed_outcomes: STOPPED_OUTCOMES,
      excluded_outcomes: EXCLUDED_OUTCOMES,
      calibration:
        'latest complete pair per binding × clip (by calibration capturedAt); older complete pairs superseded, never pooled',
      gap_percent: '(Real − Sim)/Sim × 100',
    },
    sort: sort === 'clip' ? 'clip' : READING_INFO[sort].json,
    bindings: section.report.wbcs.map((w) => {
      const b = section.bindings.find((x) => x.key === w.wbc);
      return {
        binding: w.wbc,
        kind: b?.kind ?? null,
        label: b?.label ?? null,
        note: b?.note ?? null,
        rows: w.rows.map((r) => rowJson(r, nameOf)),
        by_group: w.byGroup.map((g) => ({
          group: g.group,
          clips: g.clips,
          rows: g.rows.map((r) => rowJson(r, nameOf)),
        })),
        clips: sortedClips(section, w.wbc, sort).map(({ clip, pair }) => ({
          clip_id: pair.clipId,
          clip: pair.clipName,
          group: pair.group,
          parent_trace_id: pair.parentTraceId,
          calibration_id: pair.calibrationId,
          captured_at: pair.capturedAt,
          robot_unit: pair.robotUnit,
          sim_trials: countsJson(pair.sim),
          real_trials: countsJson(pair.real),
          trials: pair.trials.map((t) => ({
            run_id: t.runId,
            domain: t.domain,
            trial_index: t.rolloutIndex,
            status: t.status,
            outcome: t.outcome,
            use: t.use,
            failed: t.failed,
            reason: t.reason,
          })),
          readings: Object.fromEntries(
            AGGREGATE_KEYS.map((k) => {
              const s = readingJson(clip.sim.readings[k]);
              const r = readingJson(clip.real.readings[k]);
              const g = readingJson(clip.gapPercent[k]);
              const unavailable: Record<string, string> = {};
              if (s.reason) unavailable.sim = s.reason;
              if (r.reason) unavailable.real = r.reason;
              if (g.reason) unavailable.gap_percent = g.reason;
              return [
                READING_INFO[k].json,
                {
                  sim: s.value,
                  real: r.value,
                  gap_percent: g.value,
                  ...(Object.keys(unavailable).length ? { unavailable } : {}),
                },
              ];
            }),
          ),
        })),
      };
    }),
    skipped: section.skipped.map((s) => ({
      binding: s.wbc,
      clip_id: s.clipId,
      clip: s.clipName,
      parent_trace_id: s.parentTraceId,
      calibration_id: s.calibrationId,
      captured_at: s.capturedAt,
      why: s.why,
      reason: s.reason,
    })),
  };
}

/** Columns the gap rows add to the report's CSV (after the qualification columns). */
export const GAP_CSV_COLUMNS = [
  'reading',
  'unit',
  'sim',
  'real',
  'gap_percent',
  'clips_used',
  'excluded',
  'calibration_id',
  'sim_trials',
  'real_trials',
  'sim_failed',
  'real_failed',
  'excluded_trials',
  'unavailable',
] as const;
export type GapCsvColumn =
  | (typeof GAP_CSV_COLUMNS)[number]
  | 'level'
  | 'contract'
  | 'binding'
  | 'binding_kind'
  | 'binding_note'
  | 'group'
  | 'clip'
  | 'clip_id';

/**
 * CSV rows of the gap section: `gap_binding` rows (one per reading), `gap_group` rows, then
 * `gap_clip` rows in the per-clip order. Values in stored units (SR 0..1, MPJPE-l mm); an
 * unavailable value is empty with its reason in `unavailable`.
 */
export function gapCsvRows(
  section: GapSection,
  sort: GapSortKey = DEFAULT_GAP_SORT,
): Partial<Record<GapCsvColumn, unknown>>[] {
  const out: Partial<Record<GapCsvColumn, unknown>>[] = [];
  const nameOf = (clipId: string) => section.pairs.find((p) => p.clipId === clipId)?.clipName ?? clipId;
  const why = (parts: [string, Reading<number>][]) =>
    parts
      .filter(([, r]) => !r.available)
      .map(([n, r]) => `${n}: ${(r as { reason: string }).reason}`)
      .join(' | ');
  for (const w of section.report.wbcs) {
    const b = section.bindings.find((x) => x.key === w.wbc);
    const common = { contract: section.contract, binding: w.wbc, binding_kind: b?.kind, binding_note: b?.note };
    const row = (level: string, group: string, r: GapRow) => ({
      level,
      ...common,
      group,
      reading: READING_INFO[r.key].json,
      unit: READING_INFO[r.key].unit,
      sim: r.sim.available ? r.sim.value : null,
      real: r.real.available ? r.real.value : null,
      gap_percent: r.gapPercent.available ? r.gapPercent.value : null,
      clips_used: r.clips,
      excluded: r.excluded.map((e) => `${nameOf(e.clipId)}: ${e.reason}`).join(' | '),
      unavailable: why([
        ['sim', r.sim],
        ['real', r.real],
        ['gap_percent', r.gapPercent],
      ]),
    });
    for (const r of w.rows) out.push(row('gap_binding', 'all', r));
    for (const g of w.byGroup) for (const r of g.rows) out.push(row('gap_group', g.group, r));
    for (const { clip, pair } of sortedClips(section, w.wbc, sort)) {
      for (const k of AGGREGATE_KEYS) {
        const s = clip.sim.readings[k];
        const r = clip.real.readings[k];
        const g = clip.gapPercent[k];
        out.push({
          level: 'gap_clip',
          ...common,
          group: pair.group,
          clip: pair.clipName,
          clip_id: pair.clipId,
          reading: READING_INFO[k].json,
          unit: READING_INFO[k].unit,
          sim: s.available ? s.value : null,
          real: r.available ? r.value : null,
          gap_percent: g.available ? g.value : null,
          calibration_id: pair.calibrationId,
          sim_trials: pair.sim.used,
          real_trials: pair.real.used,
          sim_failed: pair.sim.failed,
          real_failed: pair.real.failed,
          excluded_trials: [
            ...pair.sim.excluded.map((e) => `sim: ${e.count} ${e.reason}`),
            ...pair.real.excluded.map((e) => `real: ${e.count} ${e.reason}`),
          ].join(' | '),
          unavailable: why([
            ['sim', s],
            ['real', r],
            ['gap_percent', g],
          ]),
        });
      }
    }
  }
  return out;
}
