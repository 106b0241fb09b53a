// Aggregation of episode readings into the gap report (DESIGN §1 Table 11, §4 "Gap %"):
//   trials → WBC–motion pair: the mean over the pair's episodes of one domain (sim or real);
//   pairs → over clips: the macro-average over the matched motions of one WBC (every clip
//   weighs the same), overall and per capability group;
//   Gap % = (Real − Sim)/Sim × 100 of the macro-averages, and per clip of the pair means.
//
// Availability is carried through, never replaced by 0:
//   - a pair mean is unavailable when the reading is unavailable in any of its episodes (a mean
//     over some repeats of a trial is a different quantity from the mean over all of them);
//   - a clip enters a row's macro-average only when the reading is available for both Sim and
//     Real (the matched motions of that row); the excluded clips are listed with their reasons,
//     and the row is unavailable when no clip remains;
//   - Gap % is unavailable when either side is, or when Sim is 0.
// Results of different contracts are never mixed: aggregation throws instead.

import type { CapabilityGroup } from '../motion/motionClip';
import {
  availableReading,
  episodeFailed,
  NUMERIC_READINGS,
  unavailableReading,
  type EpisodeMetrics,
  type NumericReadingKey,
  type Reading,
} from './readings';

export type AggregateKey = 'successRate' | NumericReadingKey;
/** Rows of the gap report, in order. */
export const AGGREGATE_KEYS: readonly AggregateKey[] = ['successRate', ...NUMERIC_READINGS];

/** (Real − Sim)/Sim × 100. */
export function gapPercent(sim: Reading<number>, real: Reading<number>): Reading<number> {
  if (!sim.available) return unavailableReading(`Sim is unavailable: ${sim.reason}`);
  if (!real.available) return unavailableReading(`Real is unavailable: ${real.reason}`);
  if (sim.value === 0) return unavailableReading('Sim is 0: the relative gap (Real − Sim)/Sim is undefined');
  return availableReading(((real.value - sim.value) / sim.value) * 100);
}

/** Mean of readings; unavailable (with the first reason) when any is unavailable or there are none. */
export function meanOfReadings(readings: readonly Reading<number>[], what = 'reading'): Reading<number> {
  if (readings.length === 0) return unavailableReading(`no ${what} values to average`);
  let s = 0;
  for (let i = 0; i < readings.length; i++) {
    const r = readings[i];
    if (!r.available)
      return unavailableReading(
        readings.length === 1 ? r.reason : `unavailable in episode ${i + 1} of ${readings.length}: ${r.reason}`,
      );
    s += r.value;
  }
  return availableReading(s / readings.length);
}

/**
 * A trial's readings. `stoppedBy` names the outcome (e.g. `estop`, `intervention`) of a trial
 * stopped before its end: it is a failed trial for SR whatever its readings show.
 */
export type TrialMetrics = EpisodeMetrics & { readonly stoppedBy?: string };

/** SR: the share of episodes with no hard failure (0..1); a stopped trial counts as failed. */
export function successRate(episodes: readonly TrialMetrics[]): Reading<number> {
  if (episodes.length === 0) return unavailableReading('no episodes');
  let ok = 0;
  for (let i = 0; i < episodes.length; i++) {
    if (episodes[i].stoppedBy) continue;
    const f = episodeFailed(episodes[i]);
    if (!f.available)
      return unavailableReading(
        episodes.length === 1
          ? f.reason
          : `failure detection unavailable in episode ${i + 1} of ${episodes.length}: ${f.reason}`,
      );
    if (!f.value) ok++;
  }
  return availableReading(ok / episodes.length);
}

/** One contract id for all results, or throws. Returns it (null for no results). */
export function commonContract(episodes: readonly EpisodeMetrics[]): string | null {
  let id: string | null = null;
  for (const e of episodes) {
    if (id === null) id = e.contract;
    else if (e.contract !== id)
      throw new Error(`cannot aggregate results of different metric contracts ("${id}" and "${e.contract}")`);
  }
  return id;
}

export interface PairSummary {
  contract: string | null;
  episodes: number;
  readings: Record<AggregateKey, Reading<number>>;
}

/** Trials → pair: SR over the episodes and the mean of every numeric reading. */
export function summarizePair(episodes: readonly TrialMetrics[]): PairSummary {
  const contract = commonContract(episodes);
  const readings = { successRate: successRate(episodes) } as Record<AggregateKey, Reading<number>>;
  for (const key of NUMERIC_READINGS) {
    readings[key] = meanOfReadings(
      episodes.map((e) => e[key]),
      key,
    );
  }
  return { contract, episodes: episodes.length, readings };
}

/** The episodes of one WBC × clip matched pair: the simulation branch and the hardware trials. */
export interface MatchedPair {
  wbc: string;
  clipId: string;
  /** Capability group of the clip; 'unassigned' when the clip has none. */
  group?: CapabilityGroup;
  sim: readonly TrialMetrics[];
  real: readonly TrialMetrics[];
}

export interface GapRow {
  key: AggregateKey;
  /** Macro-average over the clips used. */
  sim: Reading<number>;
  real: Reading<number>;
  gapPercent: Reading<number>;
  /** Clips in the average. */
  clips: number;
  /** Clips left out of this row, with why. */
  excluded: { clipId: string; reason: string }[];
}

export interface ClipGap {
  clipId: string;
  group: CapabilityGroup | 'unassigned';
  sim: PairSummary;
  real: PairSummary;
  gapPercent: Record<AggregateKey, Reading<number>>;
}

export interface WbcGapReport {
  wbc: string;
  rows: GapRow[];
  byGroup: { group: CapabilityGroup | 'unassigned'; clips: number; rows: GapRow[] }[];
  clips: ClipGap[];
}

export interface GapReport {
  contract: string | null;
  wbcs: WbcGapReport[];
}

function macroRows(clips: readonly ClipGap[]): GapRow[] {
  return AGGREGATE_KEYS.map((key) => {
    const sims: number[] = [];
    const reals: number[] = [];
    const excluded: { clipId: string; reason: string }[] = [];
    for (const c of clips) {
      const s = c.sim.readings[key];
      const r = c.real.readings[key];
      if (!s.available) excluded.push({ clipId: c.clipId, reason: `Sim: ${s.reason}` });
      else if (!r.available) excluded.push({ clipId: c.clipId, reason: `Real: ${r.reason}` });
      else {
        sims.push(s.value);
        reals.push(r.value);
      }
    }
    const mean = (xs: number[]): Reading<number> => {
      if (xs.length === 0) {
        return unavailableReading(
          clips.length === 0 ? 'no clips' : `unavailable on every clip (${excluded[0].clipId}: ${excluded[0].reason})`,
        );
      }
      let s = 0;
      for (const x of xs) s += x;
      return availableReading(s / xs.length);
    };
    const sim = mean(sims);
    const real = mean(reals);
    return { key, sim, real, gapPercent: gapPercent(sim, real), clips: sims.length, excluded };
  });
}

/**
 * Table 11 per WBC: pairs → per-clip summaries and gaps → macro-averages over matched clips,
 * overall and by capability group. Pairs of the same WBC and clip must not repeat.
 */
export function gapReport(pairs: readonly MatchedPair[]): GapReport {
  const contract = commonContract(pairs.flatMap((p) => [...p.sim, ...p.real]));
  const byWbc = new Map<string, ClipGap[]>();
  for (const p of pairs) {
    const list = byWbc.get(p.wbc) ?? [];
    if (list.some((c) => c.clipId === p.clipId)) throw new Error(`pair ${p.wbc} × ${p.clipId} appears twice`);
    const sim = summarizePair(p.sim);
    const real = summarizePair(p.real);
    const gap = {} as Record<AggregateKey, Reading<number>>;
    for (const key of AGGREGATE_KEYS) gap[key] = gapPercent(sim.readings[key], real.readings[key]);
    list.push({ clipId: p.clipId, group: p.group ?? 'unassigned', sim, real, gapPercent: gap });
    byWbc.set(p.wbc, list);
  }
  const wbcs: WbcGapReport[] = [];
  for (const [wbc, clips] of byWbc) {
    const groups = [...new Set(clips.map((c) => c.group))].sort();
    wbcs.push({
      wbc,
      rows: macroRows(clips),
      byGroup: groups.map((group) => {
        const members = clips.filter((c) => c.group === group);
        return { group, clips: members.length, rows: macroRows(members) };
      }),
      clips,
    });
  }
  return { contract, wbcs };
}
