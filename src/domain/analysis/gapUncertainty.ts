// Uncertainty on the sim-to-real gap (Table 11, src/domain/metrics/aggregate.ts) and reliability of
// each reading across repeated trials.
//
// A binding's (or capability group's) row is a macro-average over its matched pairs (every clip
// weighs the same), so its uncertainty comes from which clips were run: a pair-cluster bootstrap
// draws the matched pairs with replacement (each pair keeps all its episodes, summarised by its
// pair means as in Table 11) and recomputes Sim, Real and Gap % = (Real − Sim)/Sim × 100 on the same
// draw. Beside it, the Hodges–Lehmann median of the per-pair gaps with its exact CI (a robust
// centre that one extreme clip cannot move). A single clip's cell has one pair: its CI resamples
// that pair's simulation rollouts and hardware trials independently (say 3 trials: a coarse CI,
// stated with its counts), and its HL is over the per-trial gaps against the simulation mean.
//
// A gap whose CI contains 0 is "not distinguishable from zero".
//
// Reliability: ICC(A,1) (two-way random, absolute agreement, single measure) of the table
// pairs × repeated trials of one domain, per reading. Trial order is the order the trials ran. A
// reading whose ICC is below 0.5 ("poor", Koo & Li 2016) is flagged: the trials disagree with each
// other more than the clips differ, so that many trials cannot resolve a per-clip gap in it.

import type { CapabilityGroup } from '../motion/motionClip';
import { AGGREGATE_KEYS, meanOfReadings, successRate, type AggregateKey, type MatchedPair } from '../metrics/aggregate';
import { NUMERIC_READINGS, type NumericReadingKey } from '../metrics/readings';
import { percentileInterval, resolveBootstrapOptions } from '../stats/bootstrap';
import { icc } from '../stats/icc';
import { hodgesLehmann, type HodgesLehmannResult } from '../stats/paired';
import { Xoshiro128StarStar } from '../stats/prng';
import { bootstrapReplicates } from '../stats/resampling';
import { unavailable, type Unavailable } from '../stats/result';

export const DEFAULT_GAP_BOOTSTRAP_REPLICATES = 2000;
/** ICC(A,1) below this flags a reading (Koo & Li 2016: < 0.5 is poor reliability). */
export const POOR_RELIABILITY = 0.5;

export interface Interval {
  readonly available: true;
  readonly estimate: number;
  readonly lo: number;
  readonly hi: number;
  /** What was resampled, and how many units of it. */
  readonly resampled: 'matched pairs' | 'episodes';
  readonly units: number;
  readonly degenerateReplicates: number;
}

export interface GapCell {
  readonly key: AggregateKey;
  readonly sim: Interval | Unavailable;
  readonly real: Interval | Unavailable;
  readonly gapPct: Interval | Unavailable;
  /** HL median of per-pair (or per-trial) gaps, %. */
  readonly hlMedian: HodgesLehmannResult | Unavailable;
  /** The gap CI excludes 0 (null when there is no CI). */
  readonly distinguishable: boolean | null;
  /** Pairs (row) or episodes (clip) the cell used. */
  readonly n: number;
}

export interface Reliability {
  readonly key: NumericReadingKey;
  readonly domain: 'real' | 'sim';
  /** Repeats per pair in the table (the most common count among the pairs). */
  readonly repeats: number;
  /** Pairs in the table; pairs with fewer repeats, or without the reading, are left out. */
  readonly pairs: number;
  readonly leftOut: number;
  readonly icc:
    | { readonly available: true; readonly estimate: number; readonly lo: number | null; readonly hi: number | null }
    | Unavailable;
  /** "3 trials cannot resolve this reading" when ICC < POOR_RELIABILITY, else null. */
  readonly flag: string | null;
}

export interface GapUncertaintyOptions {
  seed: number;
  B?: number;
  level?: number;
}

type Side = 'sim' | 'real';

/** A pair's value of `key` on one side: SR over its episodes, or the mean of a numeric reading. */
function pairValue(p: MatchedPair, side: Side, key: AggregateKey): number | null {
  const eps = p[side];
  const r = key === 'successRate' ? successRate(eps) : meanOfReadings(eps.map((e) => e[key]));
  return r.available ? r.value : null;
}

const gapOf = (sim: number, real: number) => (sim === 0 ? NaN : ((real - sim) / sim) * 100);

function interval(
  estimate: number,
  reps: Float64Array,
  level: number,
  resampled: Interval['resampled'],
  units: number,
  what: string,
): Interval | Unavailable {
  if (!Number.isFinite(estimate)) return unavailable('degenerate', `${what} is undefined (Sim is 0)`);
  const ci = percentileInterval(reps, level);
  if (ci === null) return unavailable('degenerate', `${what}: undefined on every bootstrap replicate`);
  return { available: true, estimate, lo: ci.lo, hi: ci.hi, resampled, units, degenerateReplicates: ci.degenerate };
}

const distinguishable = (gap: Interval | Unavailable): boolean | null =>
  gap.available ? gap.lo > 0 || gap.hi < 0 : null;

/** One row (binding or group): pair-cluster bootstrap over the pairs where both sides have the reading. */
export function rowCell(pairs: readonly MatchedPair[], key: AggregateKey, options: GapUncertaintyOptions): GapCell {
  const opts = resolveBootstrapOptions({ B: DEFAULT_GAP_BOOTSTRAP_REPLICATES, ...options });
  const sims: number[] = [];
  const reals: number[] = [];
  for (const p of pairs) {
    const s = pairValue(p, 'sim', key);
    const r = pairValue(p, 'real', key);
    if (s !== null && r !== null) {
      sims.push(s);
      reals.push(r);
    }
  }
  const m = sims.length;
  const none = (why: string): GapCell => ({
    key,
    sim: unavailable('too-few', why),
    real: unavailable('too-few', why),
    gapPct: unavailable('too-few', why),
    hlMedian: unavailable('too-few', why),
    distinguishable: null,
    n: m,
  });
  if (m === 0) return none('no matched pair has this reading on both sides');
  if (m === 1) return none('one matched pair: a pair-cluster bootstrap needs at least 2 (see the clip row)');
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const simReps = new Float64Array(opts.B);
  const realReps = new Float64Array(opts.B);
  let b = 0;
  const gapReps = bootstrapReplicates(m, opts.B, opts.seed, (idx) => {
    let s = 0;
    let r = 0;
    for (let j = 0; j < m; j++) {
      s += sims[idx[j]];
      r += reals[idx[j]];
    }
    simReps[b] = s / m;
    realReps[b] = r / m;
    b++;
    return gapOf(s / m, r / m);
  });
  const simMean = mean(sims);
  const realMean = mean(reals);
  const gap = interval(gapOf(simMean, realMean), gapReps, opts.level, 'matched pairs', m, 'Gap %');
  const perPair = sims.map((s, i) => gapOf(s, reals[i])).filter((g) => Number.isFinite(g));
  return {
    key,
    sim: interval(simMean, simReps, opts.level, 'matched pairs', m, 'Sim'),
    real: interval(realMean, realReps, opts.level, 'matched pairs', m, 'Real'),
    gapPct: gap,
    hlMedian:
      perPair.length === m
        ? hodgesLehmann(perPair, { level: opts.level })
        : unavailable('degenerate', 'a pair has Sim 0: its gap % is undefined'),
    distinguishable: distinguishable(gap),
    n: m,
  };
}

function episodeValues(p: MatchedPair, side: Side, key: AggregateKey): number[] | null {
  const out: number[] = [];
  for (const e of p[side]) {
    if (key === 'successRate') {
      const sr = successRate([e]);
      if (!sr.available) return null;
      out.push(sr.value);
    } else {
      const r = e[key];
      if (!r.available) return null;
      out.push(r.value);
    }
  }
  return out;
}

/** One clip's cell: its simulation rollouts and hardware trials resampled independently. */
export function clipCell(pair: MatchedPair, key: AggregateKey, options: GapUncertaintyOptions): GapCell {
  const opts = resolveBootstrapOptions({ B: DEFAULT_GAP_BOOTSTRAP_REPLICATES, ...options });
  const s = episodeValues(pair, 'sim', key);
  const r = episodeValues(pair, 'real', key);
  const n = (s?.length ?? 0) + (r?.length ?? 0);
  if (s === null || r === null || s.length === 0 || r.length === 0) {
    const why = `${s === null || s.length === 0 ? 'Sim' : 'Real'} has no value of this reading in some episode`;
    const u = unavailable('empty', why);
    return { key, sim: u, real: u, gapPct: u, hlMedian: u, distinguishable: null, n };
  }
  const rng = new Xoshiro128StarStar(opts.seed);
  const si = new Uint32Array(s.length);
  const ri = new Uint32Array(r.length);
  const simReps = new Float64Array(opts.B);
  const realReps = new Float64Array(opts.B);
  const gapReps = new Float64Array(opts.B);
  for (let b = 0; b < opts.B; b++) {
    rng.fillBelow(s.length, si);
    rng.fillBelow(r.length, ri);
    let a = 0;
    for (const i of si) a += s[i];
    let c = 0;
    for (const i of ri) c += r[i];
    simReps[b] = a / s.length;
    realReps[b] = c / r.length;
    gapReps[b] = gapOf(simReps[b], realReps[b]);
  }
  const simMean = s.reduce((x, y) => x + y, 0) / s.length;
  const realMean = r.reduce((x, y) => x + y, 0) / r.length;
  const gap = interval(gapOf(simMean, realMean), gapReps, opts.level, 'episodes', n, 'Gap %');
  return {
    key,
    sim: interval(simMean, simReps, opts.level, 'episodes', s.length, 'Sim'),
    real: interval(realMean, realReps, opts.level, 'episodes', r.length, 'Real'),
    gapPct: gap,
    hlMedian:
      simMean === 0
        ? unavailable('degenerate', 'Sim is 0: gap % is undefined')
        : hodgesLehmann(
            r.map((v) => gapOf(simMean, v)),
            { level: opts.level },
          ),
    distinguishable: distinguishable(gap),
    n,
  };
}

/** ICC(A,1) of one reading over the pairs' repeated episodes of one domain. */
export function reliability(
  pairs: readonly MatchedPair[],
  key: NumericReadingKey,
  domain: Side,
  level?: number,
): Reliability {
  const rows = pairs.map((p) => episodeValues(p, domain, key)).filter((r): r is number[] => r !== null && r.length > 0);
  return repeatReliability(rows, pairs.length, key, domain, level);
}

/**
 * ICC(A,1) of one reading over rows of repeats (one row per pair, its repeats in the order they
 * ran): the core of `reliability`, also for repeats that are not a matched pair's, such as a
 * qualification pair's seeded simulation rollouts. `total` counts the pairs asked about, rows
 * without the reading included, so that what was left out is stated.
 */
export function repeatReliability(
  rows: readonly (readonly number[])[],
  total: number,
  key: NumericReadingKey,
  domain: Side,
  level?: number,
): Reliability {
  const counts = new Map<number, number>();
  for (const r of rows) counts.set(r.length, (counts.get(r.length) ?? 0) + 1);
  // The most common repeat count (ties: the larger); pairs with more repeats use their first ones.
  const repeats = [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]?.[0] ?? 0;
  const table = rows.filter((r) => r.length >= repeats && r.length > 0).map((r) => r.slice(0, repeats));
  const leftOut = total - table.length;
  const noun = domain === 'real' ? 'trials' : 'rollouts';
  if (repeats < 2) {
    return {
      key,
      domain,
      repeats,
      pairs: table.length,
      leftOut,
      icc: unavailable(
        'too-few',
        `${repeats} ${repeats === 1 ? noun.slice(0, -1) : noun} per pair: reliability needs at least 2`,
      ),
      flag: null,
    };
  }
  const res = icc(table, level !== undefined ? { level } : {});
  const est = res.available ? res.iccA1 : res;
  const out = est.available ? { available: true as const, estimate: est.estimate, lo: est.lo, hi: est.hi } : est;
  return {
    key,
    domain,
    repeats,
    pairs: table.length,
    leftOut,
    icc: out,
    flag: out.available && out.estimate < POOR_RELIABILITY ? `${repeats} ${noun} cannot resolve this reading` : null,
  };
}

export interface BindingGapUncertainty {
  readonly wbc: string;
  readonly rows: readonly GapCell[];
  readonly byGroup: readonly { group: CapabilityGroup | 'unassigned'; clips: number; rows: readonly GapCell[] }[];
  readonly clips: readonly { clipId: string; rows: readonly GapCell[] }[];
  readonly reliability: readonly Reliability[];
}

/** Every cell of Table 11 with its uncertainty, per binding; reliability of every numeric reading. */
export function gapUncertainty(pairs: readonly MatchedPair[], options: GapUncertaintyOptions): BindingGapUncertainty[] {
  const byWbc = new Map<string, MatchedPair[]>();
  for (const p of pairs) byWbc.set(p.wbc, [...(byWbc.get(p.wbc) ?? []), p]);
  return [...byWbc].map(([wbc, ps]) => {
    const groups = [...new Set(ps.map((p) => p.group ?? 'unassigned'))].sort();
    return {
      wbc,
      rows: AGGREGATE_KEYS.map((k) => rowCell(ps, k, options)),
      byGroup: groups.map((g) => {
        const gp = ps.filter((p) => (p.group ?? 'unassigned') === g);
        return { group: g, clips: gp.length, rows: AGGREGATE_KEYS.map((k) => rowCell(gp, k, options)) };
      }),
      clips: ps.map((p) => ({ clipId: p.clipId, rows: AGGREGATE_KEYS.map((k) => clipCell(p, k, options)) })),
      reliability: NUMERIC_READINGS.flatMap((k) => [
        reliability(ps, k, 'real', options.level),
        reliability(ps, k, 'sim', options.level),
      ]),
    };
  });
}
