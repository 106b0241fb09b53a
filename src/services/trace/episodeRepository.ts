// Episodes read back (table episodes joined with its branch): one, by filter, or the settled
// rollouts a resumed qualification skips.

import type { EpisodeOutcome, ExecutionDomain } from '../../domain/backend/backend';
import type { EpisodeRecord, EpisodeStatus } from '../../domain/trace/records';
import type { CampaignDb } from './campaignDb';
import { EPISODE_SELECT, episodeOf, type EpisodeRow } from './campaignRows';
import { Where } from './whereClause';

export interface EpisodeFilter {
  parentTraceId?: string;
  executionDomain?: ExecutionDomain;
  status?: EpisodeStatus;
  outcome?: EpisodeOutcome;
  snapshotHash?: string;
  rolloutIndex?: number;
}

export class EpisodeRepository {
  constructor(private readonly c: CampaignDb) {}

  getEpisode(runId: string): EpisodeRecord | null {
    return this.c.read('cannot read', () => {
      const row = this.c.db.prepare(`${EPISODE_SELECT} WHERE e.run_id = ?`).get(runId) as EpisodeRow | undefined;
      return row ? episodeOf(row) : null;
    });
  }

  findEpisodes(f: EpisodeFilter = {}): EpisodeRecord[] {
    const w = new Where()
      .when(f.parentTraceId, 'b.parent_trace_id = ?')
      .when(f.executionDomain, 'b.execution_domain = ?')
      .when(f.status, 'e.status = ?')
      .when(f.outcome, 'e.outcome = ?')
      .when(f.snapshotHash, 'e.snapshot_hash = ?')
      .when(f.rolloutIndex, 'e.rollout_index = ?');
    return this.c.read('cannot read', () =>
      (
        this.c.db.prepare(`${EPISODE_SELECT} ${w.sql} ORDER BY e.started_at, e.run_id`).all(...w.args) as EpisodeRow[]
      ).map(episodeOf),
    );
  }

  /**
   * The rollouts of a parent's branch that need no rerun: finished episodes whose outcome is not
   * infrastructure_error (only those may be retried automatically, DESIGN §3), one per
   * rollout_index (the first finished), in index order. A resumed qualification runs the others.
   */
  settledRollouts(parentTraceId: string, domain: ExecutionDomain): EpisodeRecord[] {
    return this.c.read('cannot read', () => {
      const rows = this.c.db
        .prepare(
          `${EPISODE_SELECT} WHERE b.parent_trace_id = ? AND b.execution_domain = ? AND e.status = 'finished' AND e.outcome <> 'infrastructure_error' AND e.rollout_index IS NOT NULL ORDER BY e.rollout_index, e.ended_at, e.run_id`,
        )
        .all(parentTraceId, domain) as EpisodeRow[];
      const seen = new Set<number>();
      return rows.filter((r) => !seen.has(r.rollout_index!) && seen.add(r.rollout_index!)).map(episodeOf);
    });
  }
}
