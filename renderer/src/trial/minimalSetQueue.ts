import type { AdmittedPairDto, AnalysisDocument, TrialQueueDto } from '../../../src/api/contract';

// The Trial runner's "minimal clip set" filter: when the Analysis panel holds an
// analysis of the same campaign, the queue can show only the pairs of its minimal hardware clip set,
// in the order of the selection path (then by binding). Pure, for the panel and its unit test.

export interface MinimalSetOffer {
  clips: string[];
  /** "5 of 47 clips · MPJPE-l · 80 %": what the checkbox says it keeps. */
  label: string;
}

/** The minimal set the analysis offers for this queue, or null (no analysis, another campaign, none found). */
export function minimalSetOffer(queue: TrialQueueDto | null, doc: AnalysisDocument | null): MinimalSetOffer | null {
  if (!queue || !doc || doc.campaign.dir !== queue.campaignDir || !('minimal_set' in doc.selection)) return null;
  const s = doc.selection;
  return {
    clips: s.minimal_set,
    label: `${s.minimal_set.length} of ${s.path.length} clips · ${doc.reading} · ${(100 * s.share).toFixed(0)} %`,
  };
}

export function minimalSetPairs(pairs: readonly AdmittedPairDto[], clips: readonly string[]): AdmittedPairDto[] {
  const order = new Map(clips.map((c, i) => [c, i]));
  return pairs
    .filter((p) => order.has(p.clipId))
    .sort((a, b) => order.get(a.clipId)! - order.get(b.clipId)! || a.bindingName.localeCompare(b.bindingName));
}
