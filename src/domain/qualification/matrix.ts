// The qualification matrix of a campaign (DESIGN §8 "Qualification board"):
// per WBC binding (and workload snapshot), overall and per capability group —
//   SR            share of the decided pairs' rollouts without a hard failure (episodes pooled)
//   progress-soft macro-average over clips of the pair's mean over its rollouts
//   MPJPE-l       macro-average over clips of the pair's mean over its rollouts (mm)
//   admitted / rejected / pending pair counts.
// Only decided pairs enter the numbers (a pair still being qualified is counted as pending), and
// each decided pair contributes exactly the rollouts its decision was made from. A reading that
// is unavailable in any rollout of a pair leaves that pair out of that average (the count of
// clips in each average is given) — never a 0 in its place.

import type { CapabilityGroup } from '../motion/motionClip';
import { CAPABILITY_GROUPS } from '../workload/snapshot';

export interface MatrixEpisode {
  runId: string;
  rolloutIndex: number | null;
  /** null: failure detection unavailable. */
  failed: boolean | null;
  progressSoft: number | null;
  mpjpeLMm: number | null;
}

export interface MatrixPair {
  snapshotHash: string;
  bindingKey: string;
  clipId: string;
  clipName: string;
  group: CapabilityGroup | null;
  parentTraceId: string;
  /** null while the pair has no decision under the reported policy. */
  decision: { admitted: boolean; reasons: string[] } | null;
  /** The rollouts the decision used (empty for a pending pair). */
  episodes: MatrixEpisode[];
}

export interface MatrixCell {
  pairs: number;
  admitted: number;
  rejected: number;
  pending: number;
  /** Rollouts of decided pairs. */
  episodes: number;
  /** 0..1; null when no episode of a decided pair has failure detection available. */
  sr: number | null;
  /** Episodes SR is computed over (failure detection available). */
  srEpisodes: number;
  progressSoft: number | null;
  progressSoftClips: number;
  mpjpeLMm: number | null;
  mpjpeLClips: number;
}

export interface BindingRow {
  snapshotHash: string;
  bindingKey: string;
  overall: MatrixCell;
  byGroup: Record<CapabilityGroup, MatrixCell>;
}

function pairMean(eps: readonly MatrixEpisode[], pick: (e: MatrixEpisode) => number | null): number | null {
  if (eps.length === 0) return null;
  let s = 0;
  for (const e of eps) {
    const v = pick(e);
    if (v === null || !Number.isFinite(v)) return null;
    s += v;
  }
  return s / eps.length;
}

export function matrixCell(pairs: readonly MatrixPair[]): MatrixCell {
  const decided = pairs.filter((p) => p.decision !== null);
  let episodes = 0;
  let srN = 0;
  let srOk = 0;
  const ps: number[] = [];
  const mp: number[] = [];
  for (const p of decided) {
    episodes += p.episodes.length;
    for (const e of p.episodes) {
      if (e.failed === null) continue;
      srN++;
      if (!e.failed) srOk++;
    }
    const a = pairMean(p.episodes, (e) => e.progressSoft);
    if (a !== null) ps.push(a);
    const b = pairMean(p.episodes, (e) => e.mpjpeLMm);
    if (b !== null) mp.push(b);
  }
  const mean = (xs: number[]) => (xs.length ? xs.reduce((x, y) => x + y, 0) / xs.length : null);
  return {
    pairs: pairs.length,
    admitted: decided.filter((p) => p.decision!.admitted).length,
    rejected: decided.filter((p) => !p.decision!.admitted).length,
    pending: pairs.length - decided.length,
    episodes,
    sr: srN > 0 ? srOk / srN : null,
    srEpisodes: srN,
    progressSoft: mean(ps),
    progressSoftClips: ps.length,
    mpjpeLMm: mean(mp),
    mpjpeLClips: mp.length,
  };
}

/** One row per (snapshot, binding), in order of first appearance. */
export function qualificationMatrix(pairs: readonly MatrixPair[]): BindingRow[] {
  const keys: string[] = [];
  const by = new Map<string, MatrixPair[]>();
  for (const p of pairs) {
    const k = `${p.snapshotHash}\n${p.bindingKey}`;
    let list = by.get(k);
    if (!list) {
      by.set(k, (list = []));
      keys.push(k);
    }
    list.push(p);
  }
  return keys.map((k) => {
    const list = by.get(k)!;
    const byGroup = Object.fromEntries(
      CAPABILITY_GROUPS.map((g) => [g, matrixCell(list.filter((p) => p.group === g))]),
    ) as Record<CapabilityGroup, MatrixCell>;
    return { snapshotHash: list[0].snapshotHash, bindingKey: list[0].bindingKey, overall: matrixCell(list), byGroup };
  });
}
