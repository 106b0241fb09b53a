// Workload snapshots and their clip lists (tables workload_snapshots, snapshot_clips): stored
// once per content, immutable under their id@version.

import { canonicalJson } from '../../domain/trace/canonicalJson';
import { CAPABILITY_GROUPS, snapshotHash, type WorkloadSnapshot } from '../../domain/workload/snapshot';
import type { CampaignDb } from './campaignDb';
import { nowIso, parse } from './campaignRows';
import { TraceStoreError } from './errors';

export class WorkloadSnapshotRepository {
  constructor(private readonly c: CampaignDb) {}

  /** Stores a snapshot and its clip list; storing the same snapshot again is a no-op. */
  putWorkloadSnapshot(s: WorkloadSnapshot): void {
    const recomputed = snapshotHash(s.clips);
    if (recomputed !== s.snapshot_hash)
      throw new TraceStoreError(
        'invalid',
        this.c.dbFile,
        `workload ${s.id}@${s.version}: snapshot_hash ${s.snapshot_hash} does not match its clips (${recomputed})`,
      );
    for (const c of s.clips)
      if (!CAPABILITY_GROUPS.includes(c.group))
        throw new TraceStoreError(
          'invalid',
          this.c.dbFile,
          `workload ${s.id}@${s.version}: clip ${c.name} has unknown group ${c.group}`,
        );
    const record = canonicalJson(s);
    this.c.tx('cannot store the workload snapshot in', () => {
      const byHash = this.c.db
        .prepare('SELECT id, version, record_json FROM workload_snapshots WHERE snapshot_hash = ?')
        .get(s.snapshot_hash) as { id: string; version: string; record_json: string } | undefined;
      if (byHash) {
        if (byHash.id !== s.id || byHash.version !== s.version) {
          throw new TraceStoreError(
            'conflict',
            this.c.dbFile,
            `workload ${s.id}@${s.version} has the same content (snapshot_hash ${s.snapshot_hash}) as the stored ${byHash.id}@${byHash.version}; results name one snapshot per content`,
          );
        }
        if (byHash.record_json !== record)
          throw new TraceStoreError(
            'conflict',
            this.c.dbFile,
            `workload ${s.id}@${s.version} is stored with different metadata; a changed snapshot needs a new version`,
          );
        return;
      }
      const byName = this.c.db
        .prepare('SELECT snapshot_hash FROM workload_snapshots WHERE id = ? AND version = ?')
        .get(s.id, s.version) as { snapshot_hash: string } | undefined;
      if (byName) {
        throw new TraceStoreError(
          'conflict',
          this.c.dbFile,
          `workload ${s.id}@${s.version} is already stored with snapshot_hash ${byName.snapshot_hash}, this one has ${s.snapshot_hash}: a changed workload needs a new version`,
        );
      }
      this.c.db
        .prepare(
          'INSERT INTO workload_snapshots (snapshot_hash, id, version, source, format, record_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(s.snapshot_hash, s.id, s.version, s.source, s.format, record, nowIso());
      const ins = this.c.db.prepare(
        'INSERT INTO snapshot_clips (snapshot_hash, position, clip_id, name, capability_group, frames, fps, duration_s, file) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      s.clips.forEach((c, i) =>
        ins.run(s.snapshot_hash, i, c.id, c.name, c.group, c.frames, c.fps, c.duration_s, c.file ?? null),
      );
    });
  }

  /** By snapshot hash, or by `id@version`. */
  getWorkloadSnapshot(key: string): WorkloadSnapshot | null {
    return this.c.read('cannot read', () => {
      const at = key.lastIndexOf('@');
      const row = (
        at > 0
          ? this.c.db
              .prepare('SELECT record_json FROM workload_snapshots WHERE id = ? AND version = ?')
              .get(key.slice(0, at), key.slice(at + 1))
          : this.c.db.prepare('SELECT record_json FROM workload_snapshots WHERE snapshot_hash = ?').get(key)
      ) as { record_json: string } | undefined;
      return row ? parse<WorkloadSnapshot>(row.record_json) : null;
    });
  }

  listWorkloadSnapshots(): { id: string; version: string; snapshotHash: string; clips: number }[] {
    return this.c.read('cannot read', () =>
      (
        this.c.db
          .prepare(
            'SELECT w.id, w.version, w.snapshot_hash, (SELECT count(*) FROM snapshot_clips c WHERE c.snapshot_hash = w.snapshot_hash) AS clips FROM workload_snapshots w ORDER BY w.created_at',
          )
          .all() as { id: string; version: string; snapshot_hash: string; clips: number }[]
      ).map((r) => ({
        id: r.id,
        version: r.version,
        snapshotHash: r.snapshot_hash,
        clips: r.clips,
      })),
    );
  }
}
