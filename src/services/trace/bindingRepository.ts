// Bindings (table bindings): a WBC binding stored once per id@version, never changed.

import { canonicalJson } from '../../domain/trace/canonicalJson';
import type { BindingRecord } from '../../domain/trace/records';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { CampaignDb } from './campaignDb';
import { nowIso, parse } from './campaignRows';
import { TraceStoreError } from './errors';

export class BindingRepository {
  constructor(private readonly c: CampaignDb) {}

  /** Stores a binding; an id@version already stored with a different record is a conflict. */
  putBinding(b: WbcBinding): BindingRecord {
    return this.c.tx('cannot store the binding in', () => this.putBindingIn(b));
  }

  /** putBinding inside the caller's transaction. */
  putBindingIn(b: WbcBinding): BindingRecord {
    if (!b || typeof b.id !== 'string' || !b.id || typeof b.version !== 'string' || !b.version)
      throw new TraceStoreError('invalid', this.c.dbFile, 'a binding needs an id and a version');
    const record = canonicalJson(b);
    const row = this.c.db
      .prepare('SELECT record_json, created_at FROM bindings WHERE id = ? AND version = ?')
      .get(b.id, b.version) as { record_json: string; created_at: string } | undefined;
    if (row) {
      if (row.record_json !== record) {
        throw new TraceStoreError(
          'conflict',
          this.c.dbFile,
          `binding ${b.id}@${b.version} is stored with a different record: a binding whose gains, assist, checkpoint or interface change needs a new version`,
        );
      }
      return this.bindingOf(b, row.created_at);
    }
    const createdAt = nowIso();
    this.c.db
      .prepare(
        'INSERT INTO bindings (id, version, kind, checkpoint_hash, label, control_rate_hz, record_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(b.id, b.version, b.kind, b.checkpointHash ?? null, b.label, b.controlRateHz, record, createdAt);
    return this.bindingOf(b, createdAt);
  }

  private bindingOf(b: WbcBinding, createdAt: string): BindingRecord {
    return {
      id: b.id,
      version: b.version,
      kind: b.kind,
      checkpointHash: b.checkpointHash ?? null,
      label: b.label,
      controlRateHz: b.controlRateHz,
      binding: JSON.parse(canonicalJson(b)) as WbcBinding,
      createdAt,
    };
  }

  getBinding(id: string, version: string): BindingRecord | null {
    return this.c.read('cannot read', () => {
      const row = this.c.db
        .prepare('SELECT record_json, created_at FROM bindings WHERE id = ? AND version = ?')
        .get(id, version) as { record_json: string; created_at: string } | undefined;
      return row ? this.bindingOf(parse<WbcBinding>(row.record_json), row.created_at) : null;
    });
  }

  listBindings(): BindingRecord[] {
    return this.c.read('cannot read', () =>
      (
        this.c.db.prepare('SELECT record_json, created_at FROM bindings ORDER BY id, version').all() as {
          record_json: string;
          created_at: string;
        }[]
      ).map((r) => this.bindingOf(parse<WbcBinding>(r.record_json), r.created_at)),
    );
  }
}
