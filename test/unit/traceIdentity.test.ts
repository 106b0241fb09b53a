// The pure trace model: parent-trace identity (stable, sensitive to every input, blind to what
// varies between episodes), clip content hash vs clip id, canonical JSON, run ids, calibration
// ids and metric scalars.
import { describe, expect, it } from 'vitest';
import { sha256HexOfString } from '../../src/domain/hash/sha256';
import { MB_METRICS_1, unavailableReading } from '../../src/domain/metrics';
import { computeClipId } from '../../src/domain/motion/clipCommon';
import {
  branchId,
  calibrationIdOf,
  canonicalJson,
  clipContentSha256,
  episodeFileRelative,
  makeRunId,
  metricScalars,
  parentTraceId,
  parentTraceText,
  runIdProblem,
  TRACE_EVENT_KINDS,
  type CalibrationRecord,
  type ParentTraceIdentity,
} from '../../src/domain/trace';
import { EPISODE_EVENT_TYPES, SCHEMAS, TOPICS } from '../../src/services/episode/episodeSchemas';
import { fixtureMetrics } from '../helpers/traceFixtures';

const base: ParentTraceIdentity = {
  bindingId: 'builtin',
  bindingVersion: 'v1-3f2a',
  checkpointHash: null,
  clipId: 'clip-0123456789abcdef',
  referenceSha256: sha256HexOfString('ref'),
  modelSha256: sha256HexOfString('model'),
  adapterVersion: 'mb-adapter/1',
  bodySet: ['pelvis', 'torso_link', 'left_ankle_roll_link'],
  contractId: 'mb-metrics/1',
  calibrationId: null,
};

describe('parent trace identity', () => {
  it('is the documented text, hashed: pt- + 32 hex, identical inputs give the same id', () => {
    expect(parentTraceText(base)).toBe(
      'mb-parent-trace/1\nbinding=builtin@v1-3f2a\ncheckpoint=-\nclip=clip-0123456789abcdef\n' +
        `reference=${base.referenceSha256}\nmodel=${base.modelSha256}\nadapter=mb-adapter/1\n` +
        'body_set=pelvis,torso_link,left_ankle_roll_link\ncontract=mb-metrics/1\ncalibration=-\n',
    );
    const id = parentTraceId(base);
    expect(id).toMatch(/^pt-[0-9a-f]{32}$/);
    expect(id).toBe('pt-' + sha256HexOfString(parentTraceText(base)).slice(0, 32));
    expect(parentTraceId({ ...base, bodySet: [...base.bodySet] })).toBe(id);
  });

  it('changes with every input it binds', () => {
    const variants: Partial<ParentTraceIdentity>[] = [
      { bindingId: 'sonic' },
      { bindingVersion: 'v2' },
      { checkpointHash: sha256HexOfString('onnx bytes') },
      { clipId: 'clip-fedcba9876543210' },
      { referenceSha256: sha256HexOfString('other ref') },
      { modelSha256: sha256HexOfString('menagerie') },
      { adapterVersion: 'mb-adapter/2' },
      { bodySet: ['pelvis', 'torso_link'] },
      { bodySet: ['torso_link', 'pelvis', 'left_ankle_roll_link'] },
      { contractId: 'mb-metrics/1+custom-0123456789ab' },
      { calibrationId: 'cal-000000000000000000000001' },
    ];
    const ids = new Set([parentTraceId(base), ...variants.map((v) => parentTraceId({ ...base, ...v }))]);
    expect(ids.size).toBe(variants.length + 1);
  });

  it('refuses malformed inputs instead of hashing them', () => {
    expect(() => parentTraceId({ ...base, clipId: 'a\nb' })).toThrow(/clipId must not contain a tab or newline/);
    expect(() => parentTraceId({ ...base, modelSha256: 'abc' })).toThrow(/modelSha256 must be 64 lowercase hex/);
    expect(() => parentTraceId({ ...base, bodySet: ['a,b'] })).toThrow(/bodySet/);
    expect(() => parentTraceId({ ...base, bindingId: 'x@y' })).toThrow(/must not contain "@"/);
    expect(() => parentTraceId({ ...base, bodySet: [] })).toThrow(/at least one body/);
  });

  it('clipContentSha256 hashes exactly what the clip id hashes (the id is its first 16 hex digits)', () => {
    const n = 7;
    const pos = Float64Array.from({ length: 3 * n }, (_, i) => Math.sin(i) - 0);
    pos[0] = -0; // −0 is written as +0 by both
    const quat = Float64Array.from({ length: 4 * n }, (_, i) => (i % 4 === 0 ? 1 : 0));
    const q = Float64Array.from({ length: 29 * n }, (_, i) => 0.01 * i);
    const full = clipContentSha256({ fps: 30, frameCount: n, rootPosM: pos, rootQuatWxyz: quat, jointPosRad: q });
    expect(full).toMatch(/^[0-9a-f]{64}$/);
    expect(computeClipId(30, n, pos, quat, q)).toBe('clip-' + full.slice(0, 16));
  });
});

describe('canonical JSON', () => {
  it('sorts keys, drops undefined, writes typed arrays as arrays and −0 as 0', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, undefined], c: -0 }, u: undefined, t: Float64Array.from([0.5, 2]) })).toBe(
      '{"a":{"c":0,"d":[1,null]},"b":1,"t":[0.5,2]}',
    );
    expect(canonicalJson({ x: 1, y: 2 })).toBe(canonicalJson({ y: 2, x: 1 }));
  });
  it('refuses what JSON cannot hold', () => {
    expect(() => canonicalJson({ a: [1, NaN] })).toThrow(/\$\.a\[1\] is NaN/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function/);
  });
});

describe('ids', () => {
  it('run ids sort by time, are safe file names, and name episodes/<run_id>.mcap', () => {
    const id = makeRunId('real_robot', Date.UTC(2025, 0, 2, 3, 4, 5), 'deadbeef00');
    expect(id).toBe('real-20250102T030405Z-deadbeef');
    expect(makeRunId('simulation', 0, '0123456789')).toMatch(/^sim-19700101T000000Z-01234567$/);
    expect(episodeFileRelative(id)).toBe(`episodes/${id}.mcap`);
    for (const bad of ['', '../x', '.hidden', 'a/b', 'a\\b', 'x.mcap', 'a b', 'x'.repeat(129)])
      expect(runIdProblem(bad)).not.toBeNull();
    for (const good of ['sim-1234-abc-1', 'r1', 'A.b_c-d']) expect(runIdProblem(good)).toBeNull();
    expect(() => makeRunId('simulation', 0, 'xyz')).toThrow(/hex/);
    expect(branchId('pt-1', 'simulation')).toBe('pt-1/sim');
    expect(branchId('pt-1', 'real_robot')).toBe('pt-1/real');
  });

  it('calibration ids are content ids: key order does not matter, any value does', () => {
    const rec: CalibrationRecord = {
      robotUnit: 'g1-unit-7',
      capturedAt: '2025-01-02T03:04:05.000Z',
      clipId: 'clip-0123456789abcdef',
      measured: { jointPosRad: new Array(29).fill(0.1), imuQuatWxyz: [1, 0, 0, 0], rootPosM: null, rootQuatWxyz: null },
      stillness: { windowS: 2, samples: 1000, jointStdRad: 0.001 },
      simulatorInitialState: null,
      residuals: { settledVsMeasured: { jointRmsRad: 0.01 }, measuredVsClipStart: null },
    };
    const { residuals, measured, ...others } = rec;
    const reordered = JSON.parse(JSON.stringify({ residuals, measured, ...others })) as CalibrationRecord;
    expect(Object.keys(reordered)[0]).toBe('residuals');
    expect(calibrationIdOf(reordered)).toBe(calibrationIdOf(rec));
    expect(calibrationIdOf(rec)).toMatch(/^cal-[0-9a-f]{24}$/);
    expect(calibrationIdOf({ ...rec, stillness: { ...rec.stillness, samples: 999 } })).not.toBe(calibrationIdOf(rec));
  });
});

describe('records', () => {
  it('metric scalars: numbers where available, null (never 0) where not', () => {
    const ok = metricScalars(fixtureMetrics());
    expect(ok).toMatchObject({
      K: 101,
      failed: false,
      failureFrame: null,
      progressSoft: 1,
      mpjpeLMm: 48.25,
      jointJerkRms: null,
      jointJerkP95: 1234.5,
    });
    const failed = metricScalars(fixtureMetrics(MB_METRICS_1.id, true));
    expect(failed).toMatchObject({
      failed: true,
      failureFrame: 42,
      failureCondition: 'root_height',
      failureBody: 'pelvis',
      progressSoft: 0.42,
    });
    const none = metricScalars({
      ...fixtureMetrics(),
      failure: unavailableReading('no root'),
      mpjpeLMm: unavailableReading('no root'),
    });
    expect(none.failed).toBeNull();
    expect(none.mpjpeLMm).toBeNull();
  });

  it('the episode file’s /events types are the trace event kinds', () => {
    expect([...EPISODE_EVENT_TYPES]).toEqual([...TRACE_EVENT_KINDS]);
    const schema = SCHEMAS[TOPICS.events].schema as { properties: { type: { enum: string[] } } };
    expect(schema.properties.type.enum).toEqual([...TRACE_EVENT_KINDS]);
  });
});
