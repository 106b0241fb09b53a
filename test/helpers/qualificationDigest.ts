// The result of a qualification campaign with nothing run-specific in it (no run ids, no wall
// times): every admission decision with its reasons and criteria, and every settled rollout with
// its seed, outcome, frame count, trajectory hash, mb-metrics/1 readings and admission measures.
// Two runs of the same request on the same inputs give equal digests, whatever the worker count.
import { MEASURES_EVENT_KIND } from '../../src/services/qualification';
import { openCampaign } from '../../src/services/trace';

export interface QualificationDigest {
  admissions: {
    parentTraceId: string;
    policy: string;
    admitted: boolean;
    reasons: string[];
    criteria: unknown;
    rollouts: { index: number; seed: number; outcome: string }[];
  }[];
  rollouts: {
    parentTraceId: string;
    rolloutIndex: number | null;
    seed: number;
    outcome: string | null;
    reason: string | null;
    frameCount: number;
    simSeconds: number | null;
    trajectorySha256: string | null;
    metrics: unknown;
    measures: unknown;
  }[];
}

export async function qualificationDigest(campaignDir: string): Promise<QualificationDigest> {
  const store = await openCampaign(campaignDir, { readOnly: true });
  try {
    const measures = new Map<string, unknown>();
    for (const ev of store.listEvents({ kind: 'note' })) {
      const d = ev.detail as { kind?: string; measures?: unknown };
      if (ev.runId && d.kind === MEASURES_EVENT_KIND) measures.set(ev.runId, d.measures);
    }
    const admissions = store
      .listAdmissions()
      .map((a) => {
        const ev = a.evidence as { criteria?: unknown; rollouts?: { index: number; seed: number; outcome: string }[] };
        return {
          parentTraceId: a.parentTraceId,
          policy: `${a.policyId}@${a.policyVersion}`,
          admitted: a.admitted,
          reasons: a.reasons,
          criteria: ev.criteria ?? null,
          rollouts: (ev.rollouts ?? []).map((r) => ({ index: r.index, seed: r.seed, outcome: r.outcome })),
        };
      })
      .sort((x, y) => x.parentTraceId.localeCompare(y.parentTraceId));
    const rollouts = store
      .findEpisodes({ executionDomain: 'simulation' })
      .filter((e) => e.status === 'finished')
      .map((e) => ({
        parentTraceId: e.parentTraceId,
        rolloutIndex: e.rolloutIndex,
        seed: e.seed,
        outcome: e.outcome,
        reason: e.reason,
        frameCount: e.frameCount,
        simSeconds: e.simSeconds,
        trajectorySha256: e.trajectorySha256,
        metrics: store.getMetrics(e.runId)?.result ?? null,
        measures: measures.get(e.runId) ?? null,
      }))
      .sort(
        (x, y) => x.parentTraceId.localeCompare(y.parentTraceId) || (x.rolloutIndex ?? -1) - (y.rolloutIndex ?? -1),
      );
    return { admissions, rollouts };
  } finally {
    store.close();
  }
}
