import type { AdmissionRecord, EpisodeRecord, ParentTraceRecord } from '../../domain/trace/records';
import { countsAsFinished } from '../../domain/trial/trialChecks';
import { bindingName } from '../../domain/wbc/bindingName';
import type { AdmittedPair, MatchedProgress } from '../../domain/trial/admittedPair';
import type { CampaignStore } from '../trace';

// The Trial runner's queue: qualification pairs (binding × clip, no calibration) with their latest
// admission decision, and how far the matched sim/real pair started for each has got. A matched
// pair is a parent trace with the same binding, clip content, model, contract and adapter but a
// calibration id (DESIGN §3 Trace): found by identity, never by name.

export type { AdmittedPair, MatchedProgress };

/** Latest decision per qualification pair (any policy), newest first by decision time. */
function latestDecisions(store: CampaignStore): Map<string, AdmissionRecord> {
  const latest = new Map<string, AdmissionRecord>();
  for (const a of store.listAdmissions()) {
    const prev = latest.get(a.parentTraceId);
    if (!prev || prev.decidedAt <= a.decidedAt) latest.set(a.parentTraceId, a);
  }
  return latest;
}

/**
 * Settled episodes of a matched pair's branch: finished, with an outcome that counts
 * (countsAsFinished: not retried). The trial session applies the same rule when it resumes.
 */
export function countingEpisodes(
  store: CampaignStore,
  parentTraceId: string,
  domain: 'simulation' | 'real_robot',
): EpisodeRecord[] {
  return store
    .findEpisodes({ parentTraceId, executionDomain: domain, status: 'finished' })
    .filter((e) => countsAsFinished(e.outcome));
}

/** The matched parent traces of a qualification pair: same identity but for the calibration. */
export function matchedTracesOf(store: CampaignStore, pair: ParentTraceRecord): ParentTraceRecord[] {
  const q = pair.identity;
  return store
    .findParentTraces({
      bindingId: q.bindingId,
      bindingVersion: q.bindingVersion,
      clipId: q.clipId,
      contractId: q.contractId,
    })
    .filter(
      (p) =>
        p.identity.calibrationId !== null &&
        p.identity.referenceSha256 === q.referenceSha256 &&
        p.identity.modelSha256 === q.modelSha256 &&
        p.identity.adapterVersion === q.adapterVersion,
    );
}

export function matchedProgress(store: CampaignStore, matched: ParentTraceRecord, trials: number): MatchedProgress {
  const realDone = countingEpisodes(store, matched.id, 'real_robot').length;
  return {
    parentTraceId: matched.id,
    calibrationId: matched.identity.calibrationId as string,
    simDone: countingEpisodes(store, matched.id, 'simulation').length > 0,
    realDone,
    remaining: Math.max(0, trials - realDone),
  };
}

export function listAdmittedPairs(store: CampaignStore, trials = 3): AdmittedPair[] {
  const decisions = latestDecisions(store);
  const out: AdmittedPair[] = [];
  for (const p of store.findParentTraces({ calibrationId: null })) {
    const a = decisions.get(p.id);
    if (!a) continue;
    const b = store.getBinding(p.identity.bindingId, p.identity.bindingVersion);
    const ev = a.evidence as { snapshot_hash?: string; clip?: { name?: string } };
    const matched = matchedTracesOf(store, p)
      .map((m) => matchedProgress(store, m, trials))
      // The most advanced matched pair first (a later calibration starts a new one only when asked).
      .sort((x, y) => y.realDone - x.realDone || Number(y.simDone) - Number(x.simDone))[0];
    out.push({
      pairId: p.id,
      clipId: p.identity.clipId,
      clipName: ev.clip?.name ?? p.identity.clipId,
      bindingKey: `${p.identity.bindingId}@${p.identity.bindingVersion}`,
      bindingName: b ? bindingName(b.binding) : `${p.identity.bindingId}@${p.identity.bindingVersion}`,
      bindingLabel: b?.label ?? '',
      contractId: p.identity.contractId,
      admitted: a.admitted,
      reasons: a.reasons,
      decidedAt: a.decidedAt,
      snapshotHash: ev.snapshot_hash ?? null,
      matched: matched ?? null,
    });
  }
  return out.sort(
    (x, y) =>
      Number(y.admitted) - Number(x.admitted) ||
      x.clipName.localeCompare(y.clipName) ||
      x.bindingKey.localeCompare(y.bindingKey),
  );
}

/** Resolves `--pair` (a parent trace id or a unique prefix of one) among the decided pairs. */
export function resolvePair(pairs: readonly AdmittedPair[], id: string): AdmittedPair {
  const exact = pairs.find((p) => p.pairId === id);
  if (exact) return exact;
  const hits = pairs.filter((p) => p.pairId.startsWith(id));
  if (hits.length === 1) return hits[0];
  if (hits.length > 1) throw new RangeError(`pair "${id}" is ambiguous: ${hits.map((h) => h.pairId).join(', ')}`);
  const admitted = pairs.filter((p) => p.admitted);
  throw new RangeError(
    `no qualification pair "${id}" in this campaign${admitted.length ? `; admitted: ${admitted.map((p) => `${p.pairId} (${p.clipName} × ${p.bindingName})`).join(', ')}` : ' (no pair is admitted yet: run motionbench qualify first)'}`,
  );
}
