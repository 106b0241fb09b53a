// `motionbench analyze` output: one JSON document (motionbench-analysis/1) with the inputs it used,
// so anyone can recompute it, and a Markdown text of the same numbers.

import type {
  AnalysisDocument,
  GapCellDoc,
  IntervalDoc,
  RedundancyDoc,
  ReliabilityDoc,
  StrengthsDoc,
} from '../../api/analysisContract';
import type { BradleyTerryRanking } from '../../domain/analysis/bradleyTerry';
import { POOR_RELIABILITY, type GapCell, type Interval, type Reliability } from '../../domain/analysis/gapUncertainty';
import type { RedundancyAudit } from '../../domain/analysis/redundancy';
import type { AggregateKey } from '../../domain/metrics/aggregate';
import { READING_INFO, type NumericReadingKey } from '../../domain/metrics/readings';
import type { HodgesLehmannResult } from '../../domain/stats/paired';
import type { Unavailable } from '../../domain/stats/result';
import type { CampaignAnalysisResult } from './campaignAnalysisReader';

export const ANALYSIS_FORMAT_ID = 'motionbench-analysis/1';
export const DIRECTION_NOTE =
  'lower is better for every error reading (mpjpe_l_mm and the joint readings); higher is better for sr and progress_soft';

const json = (k: AggregateKey) => READING_INFO[k].json;
const r6 = (v: number) => Number(v.toPrecision(6));
const ciOf = (x: { lo: number | null; hi: number | null }): [number, number] | null =>
  x.lo === null || x.hi === null ? null : [r6(x.lo), r6(x.hi)];
const unav = (u: Unavailable): { value: null; reason: string } => ({ value: null, reason: u.reason });

function intervalJson(i: Interval | Unavailable): IntervalDoc {
  return i.available ? { value: r6(i.estimate), ci: ciOf(i), resampled: i.resampled, units: i.units } : unav(i);
}
function hlJson(h: HodgesLehmannResult | Unavailable) {
  return h.available
    ? {
        value: r6(h.estimate),
        ci: ciOf(h),
        achieved_level: r6(h.achievedLevel),
        level_achieved: h.levelAchieved,
        n: h.n,
      }
    : unav(h);
}
function reliabilityJson(r: Reliability | undefined): ReliabilityDoc | null {
  if (!r) return null;
  return {
    repeats: r.repeats,
    pairs: r.pairs,
    left_out: r.leftOut,
    ...(r.icc.available ? { value: r6(r.icc.estimate), ci: ciOf(r.icc) } : unav(r.icc)),
    flag: r.flag,
  };
}
function cellJson(c: GapCell, rel?: readonly Reliability[]): GapCellDoc {
  const icc =
    rel && c.key !== 'successRate'
      ? {
          real: reliabilityJson(rel.find((r) => r.key === c.key && r.domain === 'real')),
          sim: reliabilityJson(rel.find((r) => r.key === c.key && r.domain === 'sim')),
        }
      : undefined;
  return {
    reading: json(c.key),
    n: c.n,
    sim: intervalJson(c.sim),
    real: intervalJson(c.real),
    gap_pct: c.gapPct.available ? r6(c.gapPct.estimate) : null,
    ci: c.gapPct.available ? ciOf(c.gapPct) : null,
    ...(c.gapPct.available ? {} : { reason: c.gapPct.reason }),
    hl_median: hlJson(c.hlMedian),
    distinguishable_from_zero: c.distinguishable,
    ...(icc ? { icc } : {}),
  };
}

function redundancyJson(a: RedundancyAudit | Unavailable, names: (v: string) => string): RedundancyDoc {
  if (!a.available) return unav(a);
  const audit = a;
  return {
    variables: audit.variables.map(names),
    observations: audit.observations,
    lambda: audit.lambda,
    spearman: audit.spearman.map((row) =>
      row.map((c) => (c.available ? { rho: r6(c.estimate), ci: ciOf(c) } : { rho: null, reason: c.reason })),
    ),
    loo_r2: audit.looR2.map((r, i) =>
      r.available
        ? { variable: names(audit.variables[i]), r2: r6(r.r2) }
        : { variable: names(audit.variables[i]), r2: null, reason: r.reason },
    ),
  };
}

function btJson(
  b: BradleyTerryRanking | Unavailable,
  bindingName: (k: string) => string,
): StrengthsDoc | { value: null; reason: string } {
  if (!b.available) return unav(b);
  return {
    judges: b.judges,
    virtual_ties: b.virtualTies,
    B: b.B,
    seed: b.seed,
    degenerate_replicates: b.degenerateReplicates,
    strengths: b.strengths.map((s) => ({
      binding: s.player,
      binding_name: bindingName(s.player),
      strength: r6(s.theta),
      ci: ciOf(s),
      rank: s.rank,
    })),
  };
}

export function analysisJson(r: CampaignAnalysisResult): AnalysisDocument {
  const a = r.analysis;
  const bname = (k: string) => r.bindingNames[k] ?? k;
  const cname = (id: string) => r.clipNames[id] ?? id;
  const readingJson = (k: string) => (k in READING_INFO ? READING_INFO[k as NumericReadingKey].json : k);
  return {
    format: ANALYSIS_FORMAT_ID,
    campaign: r.campaign,
    contract: r.contract,
    domain: r.domain,
    seed: r.seed,
    bootstrap: { gap_and_rho_replicates: r.B, bradley_terry_replicates: r.btB, level: 0.95 },
    direction: DIRECTION_NOTE,
    reading: readingJson(a.reading),
    better: a.better,
    matrix: a.matrix.map((c) => ({ binding: c.binding, clip: c.clip, clip_name: cname(c.clip), value: r6(c.value) })),
    matrix_used: {
      bindings: [...a.dense.bindings],
      clips: [...a.dense.clips],
      dropped_clips: [...a.dense.droppedClips],
      dropped_bindings: [...a.dense.droppedBindings],
    },
    redundancy: {
      readings: redundancyJson(a.readingRedundancy, readingJson),
      clips: redundancyJson(a.clipRedundancy, cname),
    },
    selection: a.selection.available
      ? {
          reading: readingJson(a.reading),
          share: a.selection.share,
          lambda: a.selection.lambda,
          path: a.selection.path.map((s) => ({
            clip: s.clip,
            clip_name: cname(s.clip),
            gini: r6(s.gini),
            r2: r6(s.r2),
            marginal_utility: r6(s.marginalUtility),
            cumulative_share: r6(s.cumulativeShare),
          })),
          minimal_set: [...a.selection.minimalSet],
          minimal_set_names: a.selection.minimalSet.map(cname),
          minimal_share: r6(a.selection.minimalShare),
          robustness: a.selection.robustness.map((x) => ({
            forced_first: x.forcedFirst,
            minimal_set: [...x.minimalSet],
            survives: x.survives,
            overlap: x.overlap,
          })),
        }
      : { reading: readingJson(a.reading), ...unav(a.selection) },
    bradley_terry: {
      reading: readingJson(a.reading),
      ties: 'equal scores count half a win to each binding',
      ...btJson(a.bradleyTerry, bname),
      minimal_set_strengths: btJson(a.bradleyTerryMinimal, bname),
      moves: a.rankMoves.map((m) => ({
        binding: m.binding,
        full_rank: m.fullRank,
        minimal_rank: m.minimalRank,
        moved: m.moved,
      })),
    },
    gaps: a.gaps.map((g) => ({
      binding: g.wbc,
      binding_name: bname(g.wbc),
      readings: g.rows.map((c) => cellJson(c, g.reliability)),
      groups: g.byGroup.map((x) => ({ group: x.group, clips: x.clips, readings: x.rows.map((c) => cellJson(c)) })),
      clips: g.clips.map((x) => ({
        clip: x.clipId,
        clip_name: cname(x.clipId),
        parent_trace_id: r.matchedParents[`${g.wbc}\u0000${x.clipId}`] ?? null,
        readings: x.rows.map((c) => cellJson(c)),
      })),
    })),
    rollout_reliability: r.rolloutReliability.map((x) => ({
      binding: x.binding,
      binding_name: bname(x.binding),
      pairs: x.pairs,
      readings: x.readings.map((rel) => ({ reading: readingJson(rel.key), ...reliabilityJson(rel)! })),
    })),
    sensitivity_pairs: r.sensitivityPairs.map((p) => ({
      pair_id: p.pairId,
      clip_name: p.clipName,
      binding_name: p.bindingName,
      calibration_id: p.calibrationId,
      captured_at: p.capturedAt,
    })),
  };
}

// ------------------------------------------------------------------ text

const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(1) : Math.abs(v) >= 1 ? v.toFixed(3) : v.toPrecision(3));
const iv = (i: Interval | Unavailable) =>
  i.available ? `${fmt(i.estimate)} [${fmt(i.lo)}, ${fmt(i.hi)}]` : `— (${i.reason})`;
const hlText = (c: GapCell) =>
  c.hlMedian.available
    ? `${fmt(c.hlMedian.estimate)} [${fmt(c.hlMedian.lo)}, ${fmt(c.hlMedian.hi)}]${c.hlMedian.levelAchieved ? '' : ` (${(100 * c.hlMedian.achievedLevel).toFixed(0)} % level)`}`
    : '—';

/** Table 11's rows with their CIs, HL median and the real trials' reliability. */
function gapTable(rows: readonly GapCell[], hlHeader: string, reliability: readonly Reliability[]): string[] {
  const out = [
    `| reading | Sim [95 % CI] | Real [95 % CI] | Gap % [95 % CI] | ${hlHeader} | ICC(A,1) real trials | |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const c of rows) {
    const rel = reliability.find((x) => x.key === c.key && x.domain === 'real');
    const icc = rel ? (rel.icc.available ? `${fmt(rel.icc.estimate)} (${rel.pairs} pairs × ${rel.repeats})` : '—') : '';
    const notes = [c.distinguishable === false ? 'not distinguishable from zero' : null, rel?.flag ?? null].filter(
      Boolean,
    );
    out.push(
      `| ${READING_INFO[c.key].label} | ${iv(c.sim)} | ${iv(c.real)} | ${iv(c.gapPct)} | ${hlText(c)} | ${icc} | ${notes.join('; ')} |`,
    );
  }
  return out;
}

/** Binding and clip names as shown: the campaign's names, else the key. */
interface Names {
  bname(key: string): string;
  cname(clipId: string): string;
}

export function analysisMarkdown(r: CampaignAnalysisResult): string {
  const names: Names = {
    bname: (k: string) => r.bindingNames[k] ?? k,
    cname: (id: string) => r.clipNames[id] ?? id,
  };
  const out: string[] = [];
  out.push(`# Analysis of campaign ${r.campaign.name}`, '');
  out.push(
    `Contract ${r.contract ?? '—'}; score matrix from ${r.domain === 'sim' ? 'simulation' : 'hardware'} episodes; seed ${r.seed}; ${r.B} bootstrap replicates (Bradley–Terry ${r.btB}), 95 % percentile intervals. ${DIRECTION_NOTE[0].toUpperCase()}${DIRECTION_NOTE.slice(1)}.`,
    '',
  );
  const dups = r.duplicateRollouts ?? [];
  if (dups.length > 0)
    out.push(
      `${dups.length} duplicate rollout episode(s) not counted: a rollout recorded more than once counts once, by its first settled episode (${dups
        .slice(0, 5)
        .map((d) => `${d.runId} repeats ${d.keptRunId}`)
        .join(', ')}${dups.length > 5 ? ', …' : ''}).`,
      '',
    );

  out.push(...gapSection(r, names));
  out.push(...rolloutReliabilitySection(r, names));
  out.push(...redundancySection(r));
  out.push(...minimalSetSection(r, names));
  out.push(...bradleyTerrySection(r, names));

  out.push('## Start-state sensitivity', '');
  out.push(
    r.sensitivityPairs.length === 0
      ? 'No pair has a calibrated start yet (capture one: motionbench calibrate, or the Trial runner); nothing to perturb.'
      : `Pairs with a calibrated start (\`motionbench sensitivity --campaign … --pair <id>\`, or the console's Analysis panel): ${r.sensitivityPairs.map((p) => `${p.clipName} × ${p.bindingName} (\`${p.pairId}\`, calibration ${p.calibrationId})`).join('; ')}.`,
    '',
  );
  return out.join('\n');
}

/** The sim-to-real gap of each binding with its CIs, per capability group and per clip. */
function gapSection(r: CampaignAnalysisResult, names: Names): string[] {
  const a = r.analysis;
  const { bname, cname } = names;
  const out: string[] = [];
  out.push('## Sim-to-real gap with uncertainty (Table 11)', '');
  if (a.gaps.length === 0) out.push('No matched pairs in this campaign: no gap to put a CI on.', '');
  const chosen = READING_INFO[a.reading].label;
  for (const g of a.gaps) {
    out.push(`### ${bname(g.wbc)}`, '');
    if (g.clips.length === 1) {
      // One matched pair: no pair-cluster bootstrap; the row is the clip's cell, whose CI
      // resamples its simulation rollouts and hardware trials.
      const only = g.clips[0];
      out.push(
        `One matched pair (${cname(only.clipId)}): the rows are that clip's cells, its simulation rollouts and hardware trials resampled independently; the HL median is over the per-trial gaps.`,
        '',
      );
      out.push(...gapTable(only.rows, 'HL median of per-trial gaps %', g.reliability));
      out.push('');
      continue;
    }
    out.push(...gapTable(g.rows, 'HL median of per-pair gaps %', g.reliability));
    out.push('', `${g.clips.length} matched pairs; each row resamples the pairs.`, '');
    out.push(
      `${chosen} per capability group (each row resamples its pairs) and per clip (its episodes resampled):`,
      '',
    );
    out.push(`| group or clip | pairs / episodes | Sim [95 % CI] | Real [95 % CI] | Gap % [95 % CI] | HL median % | |`);
    out.push('|---|---|---|---|---|---|---|');
    const line = (name: string, c: GapCell | undefined) => {
      if (!c) return;
      const note = c.distinguishable === false ? 'not distinguishable from zero' : '';
      out.push(`| ${name} | ${c.n} | ${iv(c.sim)} | ${iv(c.real)} | ${iv(c.gapPct)} | ${hlText(c)} | ${note} |`);
    };
    for (const grp of g.byGroup) {
      if (grp.clips === 1) out.push(`| group ${grp.group} | 1 | one pair: its clip's row below | | | | |`);
      else
        line(
          `group ${grp.group}`,
          grp.rows.find((c) => c.key === a.reading),
        );
    }
    for (const clip of g.clips)
      line(
        cname(clip.clipId),
        clip.rows.find((c) => c.key === a.reading),
      );
    out.push('');
  }

  return out;
}

/** The ICC of each binding's repeated qualification rollouts. */
function rolloutReliabilitySection(r: CampaignAnalysisResult, names: Names): string[] {
  const { bname } = names;
  const out: string[] = [];
  out.push('## Reliability of repeated simulation rollouts (qualification)', '');
  if (r.rolloutReliability.length === 0) out.push('No qualification rollouts under this contract.', '');
  else {
    out.push(
      `ICC(A,1) of each qualification pair's seeded rollouts (pairs × rollouts, per binding) with its 95 % CI; below ${POOR_RELIABILITY} is flagged. A matched pair has one simulation branch, so this is where the simulator's repeats are judged.`,
      '',
    );
    const keys = r.rolloutReliability[0].readings.map((x) => x.key);
    out.push(`| binding | pairs × rollouts | ${keys.map((k) => READING_INFO[k].label).join(' | ')} |`);
    out.push(`|---|---|${keys.map(() => '---').join('|')}|`);
    for (const x of r.rolloutReliability) {
      const shape = x.readings.find((y) => y.icc.available) ?? x.readings[0];
      const cells = x.readings.map((y) =>
        y.icc.available
          ? `${fmt(y.icc.estimate)}${y.icc.lo !== null && y.icc.hi !== null ? ` [${fmt(y.icc.lo)}, ${fmt(y.icc.hi)}]` : ''}${y.flag ? ' ⚠' : ''}`
          : '—',
      );
      out.push(`| ${bname(x.binding)} | ${shape.pairs} × ${shape.repeats} | ${cells.join(' | ')} |`);
    }
    const flagged = r.rolloutReliability.flatMap((x) =>
      x.readings.filter((y) => y.flag).map((y) => `${bname(x.binding)} · ${READING_INFO[y.key].label}`),
    );
    out.push('', flagged.length ? `⚠ ${flagged.length} flagged (${flagged.join('; ')}).` : 'None flagged.', '');
  }

  return out;
}

/** Spearman correlations between the readings and how well the others predict each. */
function redundancySection(r: CampaignAnalysisResult): string[] {
  const a = r.analysis;
  const out: string[] = [];
  out.push(`## Redundancy of the readings`, '');
  const rr = a.readingRedundancy;
  if (!rr.available) out.push(rr.reason, '');
  else {
    out.push(
      `Spearman ρ over ${rr.observations} binding × clip cells (CIs resample clips); leave-one-out ridge R² (λ = ${rr.lambda}) of each reading from the other six.`,
      '',
    );
    out.push(`| | ${rr.variables.map((v) => READING_INFO[v as NumericReadingKey].label).join(' | ')} | LOO R² |`);
    out.push(`|---|${rr.variables.map(() => '---').join('|')}|---|`);
    rr.variables.forEach((v, i) => {
      const cells = rr.spearman[i].map((c) => (c.available ? c.estimate.toFixed(2) : '—'));
      const r2 = rr.looR2[i];
      out.push(
        `| ${READING_INFO[v as NumericReadingKey].label} | ${cells.join(' | ')} | ${r2.available ? r2.r2.toFixed(2) : '—'} |`,
      );
    });
    const subs = rr.variables.filter((_, i) => rr.looR2[i].available && (rr.looR2[i] as { r2: number }).r2 >= 0.9);
    out.push(
      '',
      subs.length
        ? `Substitutes (LOO R² ≥ 0.9): ${subs.map((v) => READING_INFO[v as NumericReadingKey].label).join(', ')}.`
        : 'No reading is predicted by the others with LOO R² ≥ 0.9.',
      '',
    );
  }

  return out;
}

/** The greedy minimal hardware clip set and its robustness to the first clip. */
function minimalSetSection(r: CampaignAnalysisResult, names: Names): string[] {
  const a = r.analysis;
  const { cname } = names;
  const out: string[] = [];
  out.push(`## Minimal hardware clip set (${READING_INFO[a.reading].label})`, '');
  if (!a.selection.available) out.push(a.selection.reason, '');
  else {
    const s = a.selection;
    out.push(
      `Greedy U(c|S) = Gini(c) · (1 − R²(c ~ S)) over ${s.bindings} bindings; the smallest prefix reaching ${(100 * s.share).toFixed(0)} % of the full set's utility.`,
      '',
    );
    out.push('| step | clip | Gini | R²(c ~ S) | marginal utility | cumulative % |', '|---|---|---|---|---|---|');
    s.path.forEach((p, i) => {
      if (i < Math.max(s.minimalSet.length + 3, 10))
        out.push(
          `| ${i + 1} | ${cname(p.clip)} | ${p.gini.toFixed(3)} | ${p.r2.toFixed(3)} | ${p.marginalUtility.toFixed(4)} | ${(100 * p.cumulativeShare).toFixed(1)} |`,
        );
    });
    if (s.path.length > Math.max(s.minimalSet.length + 3, 10))
      out.push(`| … | ${s.path.length} clips in all (--json has the whole path) | | | | |`);
    out.push(
      '',
      `**Minimal set (${s.minimalSet.length} of ${s.path.length} clips, ${(100 * s.minimalShare).toFixed(1)} %):** ${s.minimalSet.map(cname).join(', ')}`,
      '',
    );
    const lost = s.robustness.filter((x) => !x.survives);
    const diff = (x: (typeof s.robustness)[number]) => {
      const added = x.minimalSet.filter((c) => !s.minimalSet.includes(c)).map(cname);
      const dropped = s.minimalSet.filter((c) => !x.minimalSet.includes(c)).map(cname);
      return `${cname(x.forcedFirst)} first: ${x.minimalSet.length} clips, ${x.overlap} shared${added.length ? `, adds ${added.join(', ')}` : ''}${dropped.length ? `, drops ${dropped.join(', ')}` : ''}`;
    };
    out.push(
      lost.length === 0
        ? `Robust: forcing each of its clips first yields the same set.`
        : `Robustness: ${s.robustness.length - lost.length} of ${s.robustness.length} forced starts yield the same set; the others — ${lost.map(diff).join('; ')}.`,
      '',
    );
  }

  return out;
}

/** The Bradley–Terry ranking of the bindings, clips as judges, and its moves on the minimal set. */
function bradleyTerrySection(r: CampaignAnalysisResult, names: Names): string[] {
  const a = r.analysis;
  const { bname } = names;
  const out: string[] = [];
  out.push(`## Bradley–Terry ranking (${READING_INFO[a.reading].label}, clips as judges)`, '');
  const bt = a.bradleyTerry;
  if (!bt.available) out.push(bt.reason, '');
  else {
    out.push(
      `${bt.judges} clips; log-strength θ (Σθ = 0) with bootstrap CIs over clips${bt.virtualTies ? '; one virtual tie per pair was added (some binding won or lost every comparison)' : ''}; ties count half a win.`,
      '',
    );
    out.push('| rank | binding | θ [95 % CI] | rank on the minimal set | moved |', '|---|---|---|---|---|');
    for (const s of bt.strengths) {
      const m = a.rankMoves.find((x) => x.binding === s.player);
      out.push(
        `| ${s.rank} | ${bname(s.player)} | ${s.theta.toFixed(3)} [${s.lo?.toFixed(3) ?? '—'}, ${s.hi?.toFixed(3) ?? '—'}] | ${m?.minimalRank ?? '—'} | ${m?.moved ?? '—'} |`,
      );
    }
    out.push('');
  }

  return out;
}
