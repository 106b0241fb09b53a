// Calibrations (table calibrations): stored under their content id, checked when read back.

import { canonicalJson } from '../../domain/trace/canonicalJson';
import { calibrationIdOf, type CalibrationRecord, type StoredCalibration } from '../../domain/trace/records';
import { calibrationRecordProblem } from '../../domain/trace/storedRecords';
import type { CampaignDb } from './campaignDb';
import { nowIso, parse } from './campaignRows';
import { TraceStoreError } from './errors';

export class CalibrationRepository {
  constructor(private readonly c: CampaignDb) {}

  /** A calibration's `record_json`, parsed and checked (calibrationRecordProblem), or a located TraceStoreError('corrupt'). */
  private storedCalibration(id: string, text: string): CalibrationRecord {
    const where = `${this.c.dbFile}, table calibrations, row ${id}, column record_json`;
    const v = this.c.storedJson(text, where);
    const problem = calibrationRecordProblem(v);
    if (problem) throw new TraceStoreError('corrupt', this.c.dbFile, `${where}: ${problem}`);
    return v as CalibrationRecord;
  }

  /** Stores a calibration under its content id (`cal-…`); the same record stores once. */
  putCalibration(rec: CalibrationRecord): StoredCalibration {
    const problems: string[] = [];
    if (typeof rec.robotUnit !== 'string' || rec.robotUnit.trim() === '') problems.push('robotUnit is required');
    if (typeof rec.capturedAt !== 'string' || Number.isNaN(Date.parse(rec.capturedAt)))
      problems.push('capturedAt must be an ISO 8601 time');
    if (!Array.isArray(rec.measured?.jointPosRad) || rec.measured.jointPosRad.length !== 29)
      problems.push('measured.jointPosRad must hold 29 joint angles');
    if (!Array.isArray(rec.measured?.imuQuatWxyz) || rec.measured.imuQuatWxyz.length !== 4)
      problems.push('measured.imuQuatWxyz must be a wxyz quaternion');
    if (problems.length === 0) {
      const p = calibrationRecordProblem(rec);
      if (p) problems.push(p);
    }
    if (problems.length > 0) throw new TraceStoreError('invalid', this.c.dbFile, `calibration: ${problems.join('; ')}`);
    let id: string;
    try {
      id = calibrationIdOf(rec);
    } catch (err) {
      throw new TraceStoreError('invalid', this.c.dbFile, `calibration: ${(err as Error).message}`);
    }
    const record = canonicalJson(rec);
    return this.c.tx('cannot store the calibration in', () => {
      const row = this.c.db.prepare('SELECT created_at FROM calibrations WHERE id = ?').get(id) as
        { created_at: string } | undefined;
      if (row) return { id, record: parse<CalibrationRecord>(record), createdAt: row.created_at };
      const createdAt = nowIso();
      this.c.db
        .prepare(
          'INSERT INTO calibrations (id, robot_unit, captured_at, clip_id, record_json, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(id, rec.robotUnit, rec.capturedAt, rec.clipId ?? null, record, createdAt);
      return { id, record: parse<CalibrationRecord>(record), createdAt };
    });
  }

  getCalibration(id: string): StoredCalibration | null {
    return this.c.read('cannot read', () => {
      const row = this.c.db.prepare('SELECT record_json, created_at FROM calibrations WHERE id = ?').get(id) as
        { record_json: string; created_at: string } | undefined;
      return row ? { id, record: this.storedCalibration(id, row.record_json), createdAt: row.created_at } : null;
    });
  }
}
