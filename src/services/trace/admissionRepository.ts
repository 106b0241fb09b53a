// Admissions (table admissions): a parent trace's admission decision under a policy version; a
// replaced decision is kept in the `admission` event that replaces it.

import { canonicalJson } from '../../domain/trace/canonicalJson';
import type { AdmissionRecord } from '../../domain/trace/records';
import type { CampaignDb } from './campaignDb';
import { json, nowIso, parse } from './campaignRows';
import { TraceStoreError } from './errors';
import type { EventRepository } from './eventRepository';
import { Where } from './whereClause';

export class AdmissionRepository {
  constructor(
    private readonly c: CampaignDb,
    private readonly events: EventRepository,
  ) {}

  /** Stores (or replaces, with an `admission` event keeping the previous decision) a pair's admission under a policy version. */
  putAdmission(a: Omit<AdmissionRecord, 'decidedAt'> & { decidedAt?: string }): AdmissionRecord {
    if (!a.admitted && (!Array.isArray(a.reasons) || a.reasons.length === 0))
      throw new TraceStoreError('invalid', this.c.dbFile, `a rejection of ${a.parentTraceId} must give its reasons`);
    const decidedAt = a.decidedAt ?? nowIso();
    return this.c.tx('cannot store the admission in', () => {
      if (!this.c.db.prepare('SELECT 1 FROM parent_traces WHERE id = ?').get(a.parentTraceId))
        throw new TraceStoreError(
          'invalid',
          this.c.dbFile,
          `parent trace ${a.parentTraceId} is not stored in this campaign`,
        );
      const prev = this.c.db
        .prepare(
          'SELECT admitted, reasons_json, decided_at FROM admissions WHERE parent_trace_id = ? AND policy_id = ? AND policy_version = ?',
        )
        .get(a.parentTraceId, a.policyId, a.policyVersion) as
        { admitted: number; reasons_json: string; decided_at: string } | undefined;
      this.c.db
        .prepare(
          `INSERT INTO admissions (parent_trace_id, policy_id, policy_version, admitted, reasons_json, evidence_json, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (parent_trace_id, policy_id, policy_version) DO UPDATE SET admitted = excluded.admitted, reasons_json = excluded.reasons_json, evidence_json = excluded.evidence_json, decided_at = excluded.decided_at`,
        )
        .run(
          a.parentTraceId,
          a.policyId,
          a.policyVersion,
          a.admitted ? 1 : 0,
          canonicalJson(a.reasons ?? []),
          json(a.evidence),
          decidedAt,
        );
      this.events.insertEvent({
        kind: 'admission',
        parentTraceId: a.parentTraceId,
        reason: a.admitted ? null : a.reasons.join('; '),
        detail: {
          policy: `${a.policyId}@${a.policyVersion}`,
          admitted: a.admitted,
          ...(prev
            ? {
                replaces: {
                  admitted: prev.admitted === 1,
                  reasons: parse<string[]>(prev.reasons_json),
                  decided_at: prev.decided_at,
                },
              }
            : {}),
        },
      });
      return {
        parentTraceId: a.parentTraceId,
        policyId: a.policyId,
        policyVersion: a.policyVersion,
        admitted: a.admitted,
        reasons: [...(a.reasons ?? [])],
        evidence: a.evidence ?? {},
        decidedAt,
      };
    });
  }

  listAdmissions(f: { parentTraceId?: string; policyId?: string; policyVersion?: string } = {}): AdmissionRecord[] {
    const w = new Where()
      .when(f.parentTraceId, 'parent_trace_id = ?')
      .when(f.policyId, 'policy_id = ?')
      .when(f.policyVersion, 'policy_version = ?');
    return this.c.read('cannot read', () =>
      (
        this.c.db
          .prepare(`SELECT * FROM admissions ${w.sql} ORDER BY parent_trace_id, policy_id, policy_version`)
          .all(...w.args) as {
          parent_trace_id: string;
          policy_id: string;
          policy_version: string;
          admitted: number;
          reasons_json: string;
          evidence_json: string;
          decided_at: string;
        }[]
      ).map((r) => ({
        parentTraceId: r.parent_trace_id,
        policyId: r.policy_id,
        policyVersion: r.policy_version,
        admitted: r.admitted === 1,
        reasons: parse<string[]>(r.reasons_json),
        evidence: parse<Record<string, unknown>>(r.evidence_json),
        decidedAt: r.decided_at,
      })),
    );
  }
}
