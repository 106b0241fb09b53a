// Parent traces and their branches (tables parent_traces, branches): a parent trace is the
// identity of a (binding, clip, reference, model, contract, calibration) pair, a branch its
// episodes in one execution domain.

import type { ExecutionDomain } from '../../domain/backend/backend';
import { branchId } from '../../domain/trace/ids';
import {
  PARENT_TRACE_SCHEME,
  parentTraceId,
  parentTraceProblems,
  parentTraceText,
  type ParentTraceIdentity,
} from '../../domain/trace/parentTrace';
import { EXECUTION_DOMAINS, type BranchRecord, type ParentTraceRecord } from '../../domain/trace/records';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { BindingRepository } from './bindingRepository';
import type { CampaignDb } from './campaignDb';
import { nowIso, parentOf, type ParentRow } from './campaignRows';
import { TraceStoreError } from './errors';
import { Where } from './whereClause';

/**
 * What a parent trace is made from: its identity, with the binding itself in place of the
 * binding's id, version and checkpoint hash (the binding is stored, or checked against the stored
 * record, in `bindings`). calibrationId is null for qualification.
 */
export type ParentTraceInputs = Omit<ParentTraceIdentity, 'bindingId' | 'bindingVersion' | 'checkpointHash'> & {
  binding: WbcBinding;
};

export interface ParentTraceFilter {
  bindingId?: string;
  bindingVersion?: string;
  clipId?: string;
  contractId?: string;
  /** A calibration id, or null for qualification pairs only. */
  calibrationId?: string | null;
}

/** The WHERE clause of a parent-trace filter on the parent_traces table aliased `p`. */
export function parentWhere(f: ParentTraceFilter, p: string, w = new Where()): Where {
  w.when(f.bindingId, `${p}.binding_id = ?`)
    .when(f.bindingVersion, `${p}.binding_version = ?`)
    .when(f.clipId, `${p}.clip_id = ?`)
    .when(f.contractId, `${p}.contract_id = ?`);
  if (f.calibrationId === null) w.raw(`${p}.calibration_id IS NULL`);
  else w.when(f.calibrationId, `${p}.calibration_id = ?`);
  return w;
}

export class ParentTraceRepository {
  constructor(
    private readonly c: CampaignDb,
    private readonly bindings: BindingRepository,
  ) {}

  /** The parent trace of these inputs, created when new (idempotent: identical inputs → the same id and row). */
  ensureParentTrace(inputs: ParentTraceInputs): ParentTraceRecord {
    const b = inputs.binding;
    const identity: ParentTraceIdentity = {
      bindingId: b.id,
      bindingVersion: b.version,
      checkpointHash: b.checkpointHash ?? null,
      clipId: inputs.clipId,
      referenceSha256: inputs.referenceSha256,
      modelSha256: inputs.modelSha256,
      adapterVersion: inputs.adapterVersion,
      bodySet: [...inputs.bodySet],
      contractId: inputs.contractId,
      calibrationId: inputs.calibrationId,
    };
    const problems = parentTraceProblems(identity);
    if (problems.length > 0)
      throw new TraceStoreError('invalid', this.c.dbFile, `parent trace: ${problems.join('; ')}`);
    const id = parentTraceId(identity);
    const text = parentTraceText(identity);
    return this.c.tx('cannot store the parent trace in', () => {
      this.bindings.putBindingIn(b);
      if (
        identity.calibrationId !== null &&
        !this.c.db.prepare('SELECT 1 FROM calibrations WHERE id = ?').get(identity.calibrationId)
      ) {
        throw new TraceStoreError(
          'invalid',
          this.c.dbFile,
          `calibration ${identity.calibrationId} is not stored in this campaign: putCalibration() first`,
        );
      }
      const row = this.c.db.prepare('SELECT * FROM parent_traces WHERE id = ?').get(id) as ParentRow | undefined;
      if (row) {
        if (row.identity_text !== text)
          throw new TraceStoreError(
            'corrupt',
            this.c.dbFile,
            `parent trace ${id} is stored with a different identity text (hash collision or a damaged row)`,
          );
        return parentOf(row);
      }
      this.c.db
        .prepare(
          `INSERT INTO parent_traces (id, campaign_id, scheme, identity_text, binding_id, binding_version, checkpoint_hash, clip_id, reference_sha256, model_sha256, adapter_version, body_set_json, contract_id, calibration_id, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          this.c.campaign.id,
          PARENT_TRACE_SCHEME,
          text,
          identity.bindingId,
          identity.bindingVersion,
          identity.checkpointHash,
          identity.clipId,
          identity.referenceSha256,
          identity.modelSha256,
          identity.adapterVersion,
          JSON.stringify(identity.bodySet),
          identity.contractId,
          identity.calibrationId,
          nowIso(),
        );
      return parentOf(this.c.db.prepare('SELECT * FROM parent_traces WHERE id = ?').get(id) as ParentRow);
    });
  }

  getParentTrace(id: string): ParentTraceRecord | null {
    return this.c.read('cannot read', () => {
      const row = this.c.db.prepare('SELECT * FROM parent_traces WHERE id = ?').get(id) as ParentRow | undefined;
      return row ? parentOf(row) : null;
    });
  }

  findParentTraces(f: ParentTraceFilter = {}): ParentTraceRecord[] {
    const w = parentWhere(f, 'p');
    return this.c.read('cannot read', () =>
      (
        this.c.db
          .prepare(`SELECT p.* FROM parent_traces p ${w.sql} ORDER BY p.created_at, p.id`)
          .all(...w.args) as ParentRow[]
      ).map(parentOf),
    );
  }

  /** The branch of a parent for an execution domain, created when new. */
  ensureBranch(parentTraceId: string, domain: ExecutionDomain): BranchRecord {
    if (!EXECUTION_DOMAINS.includes(domain))
      throw new TraceStoreError('invalid', this.c.dbFile, `unknown execution domain ${String(domain)}`);
    return this.c.tx('cannot store the branch in', () => this.ensureBranchIn(parentTraceId, domain));
  }

  /** ensureBranch inside the caller's transaction. */
  ensureBranchIn(parentTraceId: string, domain: ExecutionDomain): BranchRecord {
    if (!this.c.db.prepare('SELECT 1 FROM parent_traces WHERE id = ?').get(parentTraceId))
      throw new TraceStoreError(
        'invalid',
        this.c.dbFile,
        `parent trace ${parentTraceId} is not stored in this campaign`,
      );
    const id = branchId(parentTraceId, domain);
    this.c.db
      .prepare(
        'INSERT INTO branches (id, parent_trace_id, execution_domain, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
      )
      .run(id, parentTraceId, domain, nowIso());
    const r = this.c.db.prepare('SELECT * FROM branches WHERE id = ?').get(id) as {
      id: string;
      parent_trace_id: string;
      execution_domain: ExecutionDomain;
      created_at: string;
    };
    return { id: r.id, parentTraceId: r.parent_trace_id, executionDomain: r.execution_domain, createdAt: r.created_at };
  }

  listBranches(parentTraceId: string): BranchRecord[] {
    return this.c.read('cannot read', () =>
      (
        this.c.db
          .prepare('SELECT * FROM branches WHERE parent_trace_id = ? ORDER BY execution_domain')
          .all(parentTraceId) as {
          id: string;
          parent_trace_id: string;
          execution_domain: ExecutionDomain;
          created_at: string;
        }[]
      ).map((r) => ({
        id: r.id,
        parentTraceId: r.parent_trace_id,
        executionDomain: r.execution_domain,
        createdAt: r.created_at,
      })),
    );
  }
}
