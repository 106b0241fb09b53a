// The open-tracker table (docs/POLICIES.md "The open-tracker table"): every policy of a folder
// run on its own motion (or its clip library), one episode per clip, summarized per capability
// group in the shape of the MotionBench report's simulation tables — SR, progress-soft and
// MPJPE-l (macro over clips, mb-metrics/1) — with the family and physics profile each ran on.
// A policy the console does not run is a row too, with its reason. Pure: the service runs the
// episodes and hands their readings in; this file aggregates and formats.

import type { CapabilityGroup } from '../motion/motionClip';
import { summarizePair, type TrialMetrics } from './aggregate';
import type { Reading } from './readings';

/** What happened to a policy of the folder. */
export type PolicyTableStatus =
  /** Its episodes ran. */
  | 'run'
  /** The console refuses to read it (the loader's located reason). */
  | 'refused'
  /** It reads, but it is not a motion tracker (a velocity policy): nothing to track. */
  | 'not_a_tracker'
  /** It reads as a tracker, but no motion for it is declared (baked, configured or in its folder). */
  | 'no_motion';

/**
 * The group a table row is about: a capability group measured from the motion, or, when the
 * motion shows none, "own motion" (a single-motion policy's) or "unclassified" (a library clip).
 */
export type PolicyTableGroup = CapabilityGroup | 'own motion' | 'unclassified';

/** One episode of a policy on one clip. */
export interface PolicyTableEpisode {
  clip: string;
  clipId: string;
  group: PolicyTableGroup;
  /** Clip seconds simulated (the clip's duration, or the --seconds window). */
  seconds: number;
  outcome: string;
  /** "<condition> of <body> at t = … s" for a hard failure, else null. */
  failure: string | null;
  /** The reference lift the run was judged with (m). */
  referenceLiftM: number | null;
  metrics: TrialMetrics;
  wallSeconds: number;
}

/** SR, progress-soft and MPJPE-l over the episodes of one group (or all of them). */
export interface PolicyTableGroupRow {
  /** A group, or "all" over every clip of the policy. */
  group: PolicyTableGroup | 'all';
  clips: number;
  successRate: Reading<number>;
  progressSoft: Reading<number>;
  mpjpeLMm: Reading<number>;
}

export interface PolicyTableEntry {
  /** The policy as found in the folder (relative path). */
  policy: string;
  status: PolicyTableStatus;
  family: string | null;
  adapter: string | null;
  /** The physics profile the family runs on (src/domain/robot/physicsProfile.ts), null when not read. */
  physics: string | null;
  /** FAMILY_MOTION_SCOPE: own motion or a clip library. */
  motions: 'own motion' | 'clip library' | null;
  /** Why it was not run (refusal, not a tracker, no motion); null when it ran. */
  why: string | null;
  episodes: PolicyTableEpisode[];
  groups: PolicyTableGroupRow[];
  wallSeconds: number;
}

/** Per-group rows (groups in first-seen order), then "all" when there is more than one group. */
export function groupRows(episodes: readonly PolicyTableEpisode[]): PolicyTableGroupRow[] {
  const by = new Map<PolicyTableGroup, PolicyTableEpisode[]>();
  for (const e of episodes) {
    const list = by.get(e.group);
    if (list) list.push(e);
    else by.set(e.group, [e]);
  }
  const row = (group: PolicyTableGroup | 'all', eps: readonly PolicyTableEpisode[]): PolicyTableGroupRow => {
    const s = summarizePair(eps.map((e) => e.metrics));
    return {
      group,
      clips: eps.length,
      successRate: s.readings.successRate,
      progressSoft: s.readings.progressSoft,
      mpjpeLMm: s.readings.mpjpeLMm,
    };
  };
  const rows = [...by].map(([g, eps]) => row(g, eps));
  if (rows.length > 1) rows.push(row('all', episodes));
  return rows;
}

const fmt = (r: Reading<number>, digits: number, scale = 1): string =>
  r.available ? (r.value * scale).toFixed(digits) : 'n/a';

const TABLE_HEAD = ['policy', 'family', 'physics', 'group', 'clips', 'SR', 'progress-soft', 'MPJPE-l (cm)'] as const;

/** The table's cells: one row per policy × group; a policy not run is one row with its status and reason. */
export function tableCells(entries: readonly PolicyTableEntry[]): { rows: string[][]; notes: string[] } {
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const e of entries) {
    if (e.status !== 'run') {
      rows.push([e.policy, e.family ?? '—', e.physics ?? '—', e.status.replace(/_/g, ' '), '0', '—', '—', '—']);
      notes.push(`${e.policy}: ${e.status.replace(/_/g, ' ')} — ${e.why ?? ''}`);
      continue;
    }
    for (const g of e.groups)
      rows.push([
        e.policy,
        e.family ?? '—',
        e.physics ?? '—',
        g.group === 'all' || g.group === 'own motion' || e.motions !== 'own motion'
          ? g.group
          : `${g.group} (own motion)`,
        String(g.clips),
        fmt(g.successRate, 2),
        fmt(g.progressSoft, 2),
        fmt(g.mpjpeLMm, 1, 0.1),
      ]);
    for (const ep of e.episodes) if (ep.failure) notes.push(`${e.policy} × ${ep.clip}: ${ep.outcome} — ${ep.failure}`);
  }
  return { rows, notes };
}

/** Plain-text table (columns padded), then one note per policy not run and per failed episode. */
export function formatPolicyTableText(entries: readonly PolicyTableEntry[]): string {
  const { rows, notes } = tableCells(entries);
  const all = [[...TABLE_HEAD], ...rows];
  const widths = TABLE_HEAD.map((_, c) => Math.max(...all.map((r) => r[c].length)));
  const line = (r: readonly string[]) =>
    r
      .map((v, c) => (c >= 4 ? v.padStart(widths[c]) : v.padEnd(widths[c])))
      .join('  ')
      .trimEnd();
  return [line(all[0]), ...rows.map(line), ...(notes.length ? ['', ...notes] : [])].join('\n') + '\n';
}

/** The same as a Markdown table with the notes as a list. */
export function formatPolicyTableMarkdown(entries: readonly PolicyTableEntry[]): string {
  const { rows, notes } = tableCells(entries);
  const md = (r: readonly string[]) => `| ${r.map((v) => v.replace(/\|/g, '\\|')).join(' | ')} |`;
  return (
    [
      md(TABLE_HEAD),
      `|${TABLE_HEAD.map((_, c) => (c >= 4 ? '---:' : '---')).join('|')}|`,
      ...rows.map(md),
      ...(notes.length ? ['', ...notes.map((n) => `- ${n}`)] : []),
    ].join('\n') + '\n'
  );
}
