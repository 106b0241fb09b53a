// Trace events (table events): campaign-, parent- or episode-level, a refusal or human-gated
// reset with its reason.

import {
  EVENT_KINDS_NEEDING_REASON,
  TRACE_EVENT_KINDS,
  type NewTraceEvent,
  type TraceEvent,
  type TraceEventKind,
} from '../../domain/trace/records';
import type { CampaignDb } from './campaignDb';
import { eventOf, json, nowIso, type EventRow } from './campaignRows';
import { TraceStoreError } from './errors';
import { Where } from './whereClause';

export class EventRepository {
  constructor(private readonly c: CampaignDb) {}

  /** Records an event (a refusal or human-gated reset needs a reason). Outside an episode, name the parent trace (or nothing: a campaign-level event). */
  recordEvent(e: NewTraceEvent): TraceEvent {
    return this.c.tx('cannot record the event in', () => this.insertEvent(e));
  }

  /** recordEvent inside the caller's transaction. */
  insertEvent(e: NewTraceEvent): TraceEvent {
    if (!TRACE_EVENT_KINDS.includes(e.kind))
      throw new TraceStoreError('invalid', this.c.dbFile, `unknown event kind ${String(e.kind)}`);
    const reason = e.reason ?? null;
    if (EVENT_KINDS_NEEDING_REASON.includes(e.kind) && (reason === null || reason.trim() === ''))
      throw new TraceStoreError('invalid', this.c.dbFile, `a ${e.kind} event must give its reason`);
    if (e.tS != null && !Number.isFinite(e.tS))
      throw new TraceStoreError('invalid', this.c.dbFile, `event time must be finite, got ${e.tS}`);
    let parentId = e.parentTraceId ?? null;
    if (e.runId) {
      const row = this.c.db
        .prepare('SELECT b.parent_trace_id FROM episodes e JOIN branches b ON b.id = e.branch_id WHERE e.run_id = ?')
        .get(e.runId) as { parent_trace_id: string } | undefined;
      if (!row)
        throw new TraceStoreError('invalid', this.c.dbFile, `episode ${e.runId} is not stored in this campaign`);
      if (parentId !== null && parentId !== row.parent_trace_id)
        throw new TraceStoreError(
          'invalid',
          this.c.dbFile,
          `episode ${e.runId} belongs to parent trace ${row.parent_trace_id}, not ${parentId}`,
        );
      parentId = row.parent_trace_id;
    } else if (parentId !== null && !this.c.db.prepare('SELECT 1 FROM parent_traces WHERE id = ?').get(parentId)) {
      throw new TraceStoreError('invalid', this.c.dbFile, `parent trace ${parentId} is not stored in this campaign`);
    }
    const info = this.c.db
      .prepare(
        'INSERT INTO events (campaign_id, parent_trace_id, run_id, at, t_s, kind, reason, detail_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(this.c.campaign.id, parentId, e.runId ?? null, nowIso(e.atMs), e.tS ?? null, e.kind, reason, json(e.detail));
    return eventOf(this.c.db.prepare('SELECT * FROM events WHERE id = ?').get(info.lastInsertRowid) as EventRow);
  }

  listEvents(f: { runId?: string; parentTraceId?: string; kind?: TraceEventKind } = {}): TraceEvent[] {
    const w = new Where()
      .when(f.runId, 'run_id = ?')
      .when(f.parentTraceId, 'parent_trace_id = ?')
      .when(f.kind, 'kind = ?');
    return this.c.read('cannot read', () =>
      (this.c.db.prepare(`SELECT * FROM events ${w.sql} ORDER BY id`).all(...w.args) as EventRow[]).map(eventOf),
    );
  }
}
