// The campaign index on a real SQLite file: folder layout and settings, versioned migrations
// (a newer database is refused untouched, a failing migration rolls back), identity rules
// (idempotent parent traces, sibling branches, versioned bindings and workloads), events with
// reasons, metrics rows (full result + scalar columns) and the report query.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MB_METRICS_1, customContract } from '../../src/domain/metrics';
import { parentTraceId } from '../../src/domain/trace/parentTrace';
import type { CalibrationRecord } from '../../src/domain/trace/records';
import { buildSnapshot } from '../../src/domain/workload/snapshot';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { migrate, MIGRATIONS } from '../../src/services/trace/migrations';
import {
  LATEST_SCHEMA_VERSION,
  openCampaign,
  parentTraceInputs,
  TraceStoreError,
  type CampaignStore,
} from '../../src/services/trace';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { OUR_G1, sharedData } from '../helpers/sharedData';
import { createHash } from 'node:crypto';
import {
  fixtureBinding,
  fixtureEnd,
  fixtureInputs,
  fixtureMetrics,
  syntheticFrames,
  tempDir,
} from '../helpers/traceFixtures';

const root = tempDir('store');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => path.join(root, `c${++n}`);

async function errorOf(p: Promise<unknown> | (() => unknown)): Promise<TraceStoreError> {
  try {
    if (typeof p === 'function') p();
    else await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TraceStoreError);
    return err as TraceStoreError;
  }
  throw new Error('expected a TraceStoreError');
}

async function recordQuick(
  store: CampaignStore,
  parentId: string,
  domain: 'simulation' | 'real_robot',
  seed: number,
  metrics = fixtureMetrics(),
) {
  const rec = await store.beginEpisode({
    parentTraceId: parentId,
    executionDomain: domain,
    backendId: domain === 'simulation' ? 'sim-worker-0' : 'g1-link',
    robotUnit: domain === 'real_robot' ? 'g1-unit-7' : null,
    seed,
    rolloutIndex: seed,
  });
  await rec.frames(syntheticFrames(0, 20));
  return rec.finish(fixtureEnd(rec.runId, 20), metrics);
}

const calibration: CalibrationRecord = {
  robotUnit: 'g1-unit-7',
  capturedAt: '2025-03-01T10:00:00.000Z',
  clipId: 'clip-0123456789abcdef',
  measured: { jointPosRad: new Array(29).fill(0.05), imuQuatWxyz: [1, 0, 0, 0], rootPosM: null, rootQuatWxyz: null },
  stillness: { windowS: 2, samples: 1000, jointStdRad: 0.0008, gyroRmsRadS: 0.002 },
  simulatorInitialState: {
    rootPosM: [0, 0, 0.79],
    rootQuatWxyz: [1, 0, 0, 0],
    jointPosRad: new Array(29).fill(0.05),
    placeOnFloor: true,
  },
  residuals: {
    settledVsMeasured: { jointRmsRad: 0.004 },
    measuredVsClipStart: { jointRmsRad: 0.03, rootHeightM: 0.01 },
  },
};

describe('campaign folder', () => {
  it('creates campaign.sqlite (WAL, synchronous FULL, foreign keys, busy timeout) and episodes/', async () => {
    const dir = fresh();
    expect((await errorOf(openCampaign(dir))).code).toBe('not_found');
    const store = await openCampaign(dir, { create: true, name: 'lab week 12' });
    expect(fs.readdirSync(dir).sort()).toEqual(expect.arrayContaining(['campaign.sqlite', 'episodes']));
    expect(store.settings()).toMatchObject({
      journalMode: 'wal',
      synchronous: 'FULL',
      foreignKeys: true,
      busyTimeoutMs: 5000,
      applicationId: 0x4d425443,
    });
    expect(store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    expect(store.campaign).toMatchObject({ name: 'lab week 12' });
    expect(store.campaign.id).toMatch(/^cmp-[0-9a-f]{16}$/);
    store.close();
    // Reopening finds the same campaign; the folder name is not a second campaign.
    const again = await openCampaign(dir, { create: true, name: 'ignored' });
    expect(again.campaign).toEqual(store.campaign);
    expect(again.integrityCheck()).toEqual({ integrity: [], foreignKeys: [] });
    again.close();
  });

  it('refuses what is not a campaign: a file, a folder without the database, another program’s database', async () => {
    const file = path.join(root, 'plain-file');
    fs.writeFileSync(file, 'x');
    expect(await errorOf(openCampaign(file, { create: true }))).toMatchObject({
      code: 'not_a_campaign',
      path: file,
      message: `${file} is a file, not a campaign folder`,
    });
    const empty = fresh();
    fs.mkdirSync(empty);
    expect((await errorOf(openCampaign(empty))).message).toBe(
      `${empty} is not a campaign folder (no campaign.sqlite); create one first`,
    );
    const other = fresh();
    fs.mkdirSync(other);
    const db = new Database(path.join(other, 'campaign.sqlite'));
    db.exec('CREATE TABLE t (x)');
    db.close();
    expect(await errorOf(openCampaign(other))).toMatchObject({ code: 'not_a_campaign' });
    const notSqlite = fresh();
    fs.mkdirSync(notSqlite);
    fs.writeFileSync(
      path.join(notSqlite, 'campaign.sqlite'),
      'this is not a database, just text that is long enough to be read as a header '.repeat(20),
    );
    expect(await errorOf(openCampaign(notSqlite))).toMatchObject({
      code: 'not_a_campaign',
      path: path.join(notSqlite, 'campaign.sqlite'),
    });
    // an `episodes` that is a file is named
    const epFile = fresh();
    (await openCampaign(epFile, { create: true })).close();
    fs.rmSync(path.join(epFile, 'episodes'), { recursive: true });
    fs.writeFileSync(path.join(epFile, 'episodes'), '');
    expect(await errorOf(openCampaign(epFile))).toMatchObject({
      code: 'not_a_campaign',
      path: path.join(epFile, 'episodes'),
    });
  });
});

describe('migrations', () => {
  it('records each applied version; a database newer than the code is refused and left untouched', async () => {
    const dir = fresh();
    (await openCampaign(dir, { create: true })).close();
    const dbFile = path.join(dir, 'campaign.sqlite');
    const raw = new Database(dbFile);
    expect(raw.prepare('SELECT version, description FROM schema_version').all()).toEqual([
      { version: 1, description: MIGRATIONS[0].description },
    ]);
    raw
      .prepare(
        `INSERT INTO schema_version (version, description, applied_at, applied_by) VALUES (99, 'from the future', '2030-01-01T00:00:00Z', 'motionbench 9')`,
      )
      .run();
    raw.close();
    const before = fs.readFileSync(dbFile);
    const err = await errorOf(openCampaign(dir));
    expect(err.code).toBe('schema_too_new');
    expect(err.message).toBe(
      `${dbFile} has schema version 99, but this program knows versions up to ${LATEST_SCHEMA_VERSION}: open the campaign with a newer motionbench (nothing was changed)`,
    );
    expect(fs.readFileSync(dbFile).equals(before)).toBe(true);
    expect((await errorOf(openCampaign(dir, { readOnly: true }))).code).toBe('schema_too_new');
  });

  it('applies a pending migration in one transaction; a failing one rolls back completely', async () => {
    const dir = fresh();
    (await openCampaign(dir, { create: true })).close();
    const dbFile = path.join(dir, 'campaign.sqlite');
    const db = new Database(dbFile);
    const good = [
      ...MIGRATIONS,
      {
        version: 2,
        description: 'add notes',
        sql: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT;',
      },
    ];
    const bad = [
      ...good,
      {
        version: 3,
        description: 'broken',
        sql: 'CREATE TABLE half (x INTEGER) STRICT; ALTER TABLE no_such_table ADD COLUMN y TEXT;',
      },
    ];
    expect(() => migrate(db, dbFile, 'test', bad)).toThrow(/no_such_table/);
    const tables = () =>
      (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[]).map(
        (r) => r.name,
      );
    expect(tables()).toContain('notes'); // migration 2 committed on its own
    expect(tables()).not.toContain('half'); // migration 3 rolled back, statement by statement
    expect((db.prepare('SELECT max(version) AS v FROM schema_version').get() as { v: number }).v).toBe(2);
    expect(migrate(db, dbFile, 'test', good)).toEqual([]);
    db.close();
  });
});

describe('identity and repository', () => {
  it('parent traces are idempotent; simulated and physical episodes are sibling branches under one parent', async () => {
    const store = await openCampaign(fresh(), { create: true });
    const inputs = fixtureInputs();
    const p1 = store.ensureParentTrace(inputs);
    const p2 = store.ensureParentTrace(fixtureInputs());
    expect(p2).toEqual(p1);
    expect(p1.id).toBe(
      parentTraceId({
        bindingId: inputs.binding.id,
        bindingVersion: inputs.binding.version,
        checkpointHash: null,
        clipId: inputs.clipId,
        referenceSha256: inputs.referenceSha256,
        modelSha256: inputs.modelSha256,
        adapterVersion: inputs.adapterVersion,
        bodySet: inputs.bodySet,
        contractId: inputs.contractId,
        calibrationId: null,
      }),
    );
    expect(store.findParentTraces()).toHaveLength(1);
    const sim = await recordQuick(store, p1.id, 'simulation', 0);
    const real = await recordQuick(store, p1.id, 'real_robot', 0);
    expect(sim.branchId).toBe(`${p1.id}/sim`);
    expect(real.branchId).toBe(`${p1.id}/real`);
    expect(store.listBranches(p1.id).map((b) => b.executionDomain)).toEqual(['real_robot', 'simulation']);
    expect(
      store
        .findEpisodes({ parentTraceId: p1.id })
        .map((e) => e.executionDomain)
        .sort(),
    ).toEqual(['real_robot', 'simulation']);
    expect(real).toMatchObject({
      robotUnit: 'g1-unit-7',
      backendId: 'g1-link',
      seed: 0,
      rolloutIndex: 0,
      status: 'finished',
      outcome: 'completed',
      frameCount: 20,
    });
    // resuming: rollout 1 failed on infrastructure (retry it), rollout 2 had a hard failure (final)
    const broken = await store.beginEpisode({
      parentTraceId: p1.id,
      executionDomain: 'simulation',
      backendId: 'sim-worker-0',
      seed: 1,
      rolloutIndex: 1,
    });
    await broken.abort('worker crashed');
    const hard = await store.beginEpisode({
      parentTraceId: p1.id,
      executionDomain: 'simulation',
      backendId: 'sim-worker-0',
      seed: 2,
      rolloutIndex: 2,
    });
    await hard.finish(fixtureEnd(hard.runId, 0, 'hard_failure'), null);
    expect(store.settledRollouts(p1.id, 'simulation').map((e) => [e.rolloutIndex, e.outcome])).toEqual([
      [0, 'completed'],
      [2, 'hard_failure'],
    ]);
    expect(store.settledRollouts(p1.id, 'real_robot').map((e) => e.rolloutIndex)).toEqual([0]);
    // the same pair under another binding assist, another model or a calibration is another parent
    expect(store.ensureParentTrace(fixtureInputs({ binding: fixtureBinding(0) })).id).not.toBe(p1.id);
    const cal = store.putCalibration(calibration);
    expect(store.putCalibration(JSON.parse(JSON.stringify(calibration)))).toEqual(cal);
    expect(store.getCalibration(cal.id)?.record).toEqual(calibration);
    const matched = store.ensureParentTrace(fixtureInputs({ calibrationId: cal.id }));
    expect(matched.id).not.toBe(p1.id);
    expect(matched.identity.calibrationId).toBe(cal.id);
    expect(store.findParentTraces({ calibrationId: null }).map((p) => p.id)).not.toContain(matched.id);
    expect(store.findParentTraces({ calibrationId: cal.id }).map((p) => p.id)).toEqual([matched.id]);
    expect(
      (await errorOf(() => store.ensureParentTrace(fixtureInputs({ calibrationId: 'cal-000000000000000000000000' }))))
        .message,
    ).toMatch(/not stored in this campaign: putCalibration\(\) first/);
    expect(
      (
        await errorOf(() =>
          store.putCalibration({ ...calibration, measured: { ...calibration.measured, jointPosRad: [1, 2] } }),
        )
      ).code,
    ).toBe('invalid');
    store.close();
  });

  it('parentTraceInputs: real clip and model give the content hash, the model file hash and the body set', async () => {
    const profile = loadRobotProfile(OUR_G1);
    const clip = loadClipFile(sharedData('motions/lafan1_g1_csv/dance1_subject2.csv'));
    const binding = fixtureBinding();
    const inputs = parentTraceInputs({ binding, clip, profile, contract: MB_METRICS_1 });
    expect(inputs.modelSha256).toBe(createHash('sha256').update(fs.readFileSync(OUR_G1)).digest('hex'));
    expect(clip.id).toBe('clip-' + inputs.referenceSha256.slice(0, 16));
    expect(inputs.bodySet).toEqual(profile.trackedBodyIndices.map((i) => profile.bodies[i].name));
    expect(inputs.bodySet[0]).toBe('pelvis');
    expect(inputs).toMatchObject({
      clipId: clip.id,
      contractId: 'mb-metrics/1',
      adapterVersion: 'mb-adapter/1',
      calibrationId: null,
    });
    const store = await openCampaign(fresh(), { create: true });
    const p = store.ensureParentTrace(inputs);
    // the same clip loaded again (a new object, same content) is the same parent; a shorter window of it is not
    expect(
      store.ensureParentTrace(
        parentTraceInputs({
          binding,
          clip: loadClipFile(sharedData('motions/lafan1_g1_csv/dance1_subject2.csv')),
          profile,
          contract: MB_METRICS_1,
        }),
      ).id,
    ).toBe(p.id);
    expect(
      store.ensureParentTrace(parentTraceInputs({ binding, clip: clipHead(clip, 4), profile, contract: MB_METRICS_1 }))
        .id,
    ).not.toBe(p.id);
    store.close();
  });

  it('a binding id@version names one record forever; a workload id@version one content', async () => {
    const store = await openCampaign(fresh(), { create: true });
    const b = fixtureBinding();
    store.putBinding(b);
    expect(store.putBinding(JSON.parse(JSON.stringify(b))).binding).toEqual(JSON.parse(JSON.stringify(b)));
    const changed = { ...b, gains: { kp: 100, kd: 2 } };
    const err = await errorOf(() => store.putBinding(changed));
    expect(err.code).toBe('conflict');
    expect(err.message).toBe(
      `binding ${b.id}@${b.version} is stored with a different record: a binding whose gains, assist, checkpoint or interface change needs a new version`,
    );
    expect(store.getBinding(b.id, b.version)?.kind).toBe('builtin');

    const clip = (name: string, v: number): MotionClip =>
      ({
        id: `clip-${String(v).padStart(16, '0')}`,
        name,
        fps: 50,
        frameCount: 101,
        capabilityGroup: 'upper_body',
        rootPosM: new Float64Array(),
        rootQuatWxyz: new Float64Array(),
        jointPosRad: new Float64Array(),
        provenance: { file: name, format: 'motionbench-json', fileSha256: '', fpsSource: 'file' },
        warnings: [],
      }) as MotionClip;
    const snap = buildSnapshot(
      'lab-set',
      '1',
      'folder',
      [clip('wave', 1), clip('squat', 2)],
      ['wave.json', 'squat.json'],
    );
    store.putWorkloadSnapshot(snap);
    store.putWorkloadSnapshot(JSON.parse(JSON.stringify(snap)));
    expect(store.getWorkloadSnapshot('lab-set@1')).toEqual(snap);
    expect(store.getWorkloadSnapshot(snap.snapshot_hash)).toEqual(snap);
    expect(store.listWorkloadSnapshots()).toEqual([
      { id: 'lab-set', version: '1', snapshotHash: snap.snapshot_hash, clips: 2 },
    ]);
    const v1changed = buildSnapshot('lab-set', '1', 'folder', [clip('wave', 1), clip('squat', 3)]);
    expect((await errorOf(() => store.putWorkloadSnapshot(v1changed))).message).toMatch(
      /already stored with snapshot_hash .* a changed workload needs a new version/,
    );
    expect(
      (await errorOf(() => store.putWorkloadSnapshot({ ...snap, snapshot_hash: '0'.repeat(64) }))).message,
    ).toMatch(/does not match its clips/);
    // an episode names the snapshot it ran for
    const p = store.ensureParentTrace(fixtureInputs());
    const rec = await store.beginEpisode({
      parentTraceId: p.id,
      executionDomain: 'simulation',
      backendId: 'sim-0',
      seed: 4,
      snapshotHash: snap.snapshot_hash,
    });
    await rec.finish(fixtureEnd(rec.runId, 0), null);
    expect(store.findEpisodes({ snapshotHash: snap.snapshot_hash }).map((e) => e.runId)).toEqual([rec.runId]);
    store.close();
  });

  it('events: refusals and human-gated resets carry a reason, outside or inside an episode', async () => {
    const store = await openCampaign(fresh(), { create: true });
    const p = store.ensureParentTrace(fixtureInputs());
    expect((await errorOf(() => store.recordEvent({ kind: 'refusal', parentTraceId: p.id }))).message).toBe(
      'a refusal event must give its reason',
    );
    expect(
      (await errorOf(() => store.recordEvent({ kind: 'human_reset', parentTraceId: p.id, reason: '  ' }))).code,
    ).toBe('invalid');
    const refusal = store.recordEvent({
      kind: 'refusal',
      parentTraceId: p.id,
      reason: 'interlock not ARMED (status SAFE, 12 ms old)',
      detail: { interlock: 'SAFE' },
    });
    expect(refusal).toMatchObject({
      kind: 'refusal',
      runId: null,
      parentTraceId: p.id,
      reason: 'interlock not ARMED (status SAFE, 12 ms old)',
      detail: { interlock: 'SAFE' },
    });
    const rec = await store.beginEpisode({
      parentTraceId: p.id,
      executionDomain: 'real_robot',
      backendId: 'g1-link',
      robotUnit: 'g1-unit-7',
      seed: 0,
    });
    await rec.frames(syntheticFrames(0, 10));
    await expect(rec.event('human_reset', {})).rejects.toThrow(/must give its reason/);
    await expect(rec.event('episode_end', {})).rejects.toThrow(/written by the store itself/);
    const reset = await rec.event('human_reset', {
      reason: 'operator lifted the robot back to the start pose',
      detail: { operator: 'ana' },
    });
    expect(reset).toMatchObject({ runId: rec.runId, parentTraceId: p.id, tS: 9 / 500 });
    await rec.event('stop_requested', { tS: 0.02, reason: 'operator pressed stop' });
    const ended = await rec.finish(
      { ...fixtureEnd(rec.runId, 10, 'aborted_by_operator'), reason: 'operator pressed stop' },
      null,
    );
    expect(ended.outcome).toBe('aborted_by_operator');
    expect(store.listEvents({ runId: rec.runId }).map((e) => e.kind)).toEqual([
      'episode_start',
      'human_reset',
      'stop_requested',
      'episode_end',
    ]);
    expect(store.listEvents({ parentTraceId: p.id, kind: 'refusal' })).toHaveLength(1);
    // the SQL schema enforces it too, whatever code writes
    const raw = new Database(store.dbFile);
    expect(() =>
      raw.prepare(`INSERT INTO events (campaign_id, at, kind) VALUES (?, 'now', 'refusal')`).run(store.campaign.id),
    ).toThrow(/CHECK constraint failed/);
    expect(() =>
      raw
        .prepare(`INSERT INTO events (campaign_id, at, kind, reason) VALUES (?, 'now', 'made_up', 'x')`)
        .run(store.campaign.id),
    ).toThrow(/CHECK constraint failed/);
    raw.close();
    store.close();
  });

  it('metrics keep the full result and scalar columns; stored results are never replaced', async () => {
    const store = await openCampaign(fresh(), { create: true });
    const p = store.ensureParentTrace(fixtureInputs());
    const failedMetrics = fixtureMetrics(MB_METRICS_1.id, true);
    const ep = await recordQuick(store, p.id, 'simulation', 1, failedMetrics);
    const m = store.getMetrics(ep.runId)!;
    expect(m.result).toEqual(JSON.parse(JSON.stringify(failedMetrics)));
    expect(m).toMatchObject({
      contractId: 'mb-metrics/1',
      K: 101,
      failed: true,
      failureFrame: 42,
      failureCondition: 'root_height',
      failureBody: 'pelvis',
      progressSoft: 0.42,
      mpjpeLMm: 48.25,
      jointJerkRms: null,
    });
    expect(store.putMetrics(ep.runId, failedMetrics)).toEqual(m);
    expect((await errorOf(() => store.putMetrics(ep.runId, fixtureMetrics(MB_METRICS_1.id, false)))).code).toBe(
      'conflict',
    );
    const custom = customContract({ thresholds: { rootHeightM: 0.3 } });
    store.putMetrics(ep.runId, fixtureMetrics(custom.id, false));
    expect(store.getMetrics(ep.runId, custom.id)?.failed).toBe(false);
    expect(store.getMetrics(ep.runId)?.contractId).toBe('mb-metrics/1');
    const rows = store.episodeResults({ bindingId: 'builtin' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      runId: ep.runId,
      parentTraceId: p.id,
      executionDomain: 'simulation',
      clipId: 'clip-0123456789abcdef',
      contractId: 'mb-metrics/1',
      outcome: 'completed',
      metrics: { failed: true, mpjpeLMm: 48.25 },
    });
    // metrics under another contract than the parent's are refused at finish
    const rec = await store.beginEpisode({
      parentTraceId: p.id,
      executionDomain: 'simulation',
      backendId: 'sim-0',
      seed: 2,
    });
    await expect(rec.finish(fixtureEnd(rec.runId, 0), fixtureMetrics(custom.id))).rejects.toThrow(
      /store other contracts with putMetrics/,
    );
    expect(rec.status).toBe('recording');
    await rec.finish(fixtureEnd(rec.runId, 0), null);
    store.close();
  });

  it('admissions keep every reason; a re-decision keeps the previous one in an event', async () => {
    const store = await openCampaign(fresh(), { create: true });
    const p = store.ensureParentTrace(fixtureInputs());
    expect(
      (
        await errorOf(() =>
          store.putAdmission({
            parentTraceId: p.id,
            policyId: 'mb-admission',
            policyVersion: '1',
            admitted: false,
            reasons: [],
            evidence: {},
          }),
        )
      ).code,
    ).toBe('invalid');
    store.putAdmission({
      parentTraceId: p.id,
      policyId: 'mb-admission',
      policyVersion: '1',
      admitted: false,
      reasons: ['SR 2/3 < 100%', 'MPJPE-l 61 mm ≥ 50 mm'],
      evidence: { runs: ['a', 'b', 'c'] },
    });
    store.putAdmission({
      parentTraceId: p.id,
      policyId: 'mb-admission',
      policyVersion: '1',
      admitted: true,
      reasons: [],
      evidence: { runs: ['a', 'b', 'c', 'd'] },
    });
    expect(store.listAdmissions({ parentTraceId: p.id })).toMatchObject([
      { admitted: true, reasons: [], evidence: { runs: ['a', 'b', 'c', 'd'] } },
    ]);
    const events = store.listEvents({ parentTraceId: p.id, kind: 'admission' });
    expect(events[0]).toMatchObject({ reason: 'SR 2/3 < 100%; MPJPE-l 61 mm ≥ 50 mm', detail: { admitted: false } });
    expect(events[1].detail).toMatchObject({
      admitted: true,
      replaces: { admitted: false, reasons: ['SR 2/3 < 100%', 'MPJPE-l 61 mm ≥ 50 mm'] },
    });
    store.close();
  });

  it('a second connection (another process’s view) neither recovers nor disturbs an episode this process is recording', async () => {
    const dir = fresh();
    const a = await openCampaign(dir, { create: true });
    const p = a.ensureParentTrace(fixtureInputs());
    const rec = await a.beginEpisode({
      parentTraceId: p.id,
      executionDomain: 'simulation',
      backendId: 'sim-0',
      seed: 0,
    });
    await rec.frames(syntheticFrames(0, 10));
    const b = await openCampaign(dir);
    expect(b.recovered).toEqual([]);
    expect(b.getEpisode(rec.runId)?.status).toBe('running');
    expect(() => a.close()).toThrow(/still recording/);
    await rec.finish(fixtureEnd(rec.runId, 10), fixtureMetrics());
    expect(b.getEpisode(rec.runId)?.status).toBe('finished');
    a.close();
    b.close();
  });
});
