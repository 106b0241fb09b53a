// The sim-to-real gap section of `motionbench report` (Table 11) on a real campaign store:
// bindings, calibrations, calibrated parent traces, episodes recorded through the recorder and
// finished with metrics from the real batch reducer (FK on our G1 model) on synthetic clips.
// The gap numbers are checked against arithmetic done here on the same metrics; the outcome
// rules (counted / stopped = failed / excluded), the choice among calibrations, unavailable
// readings on a robot without motion capture, and the md/csv/json shapes and the CLI are checked.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main';
import type { EpisodeOutcome, ExecutionDomain } from '../../src/domain/backend/backend';
import {
  ClipPairEvaluator,
  MB_METRICS_1,
  NO_MOTION_CAPTURE,
  FULL_STATE,
  type EpisodeMetrics,
  type SourceCapabilities,
} from '../../src/domain/metrics';
import type { TimedFrames } from '../../src/domain/motion/resample';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { sha256HexOfString } from '../../src/domain/hash/sha256';
import type { CalibrationRecord } from '../../src/domain/trace/records';
import {
  snapshotHash,
  WORKLOAD_SNAPSHOT_FORMAT,
  type WorkloadClipMeta,
  type WorkloadSnapshot,
} from '../../src/domain/workload/snapshot';
import { buildCampaignReport, formatReport } from '../../src/services/qualification';
import { buildGapSection, parseGapSortKey } from '../../src/services/report/gapSection';
import { READING_INFO } from '../../src/domain/metrics/readings';
import type { AggregateKey } from '../../src/domain/metrics/aggregate';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { openCampaign, type CampaignStore } from '../../src/services/trace';
import { MB_METRICS_1_READINGS } from '../helpers/mbMetricsFields';
import { motionbench } from '../helpers/runCli';
import { OUR_G1 } from '../helpers/sharedData';
import { fixtureBinding, fixtureEnd, fixtureInputs, syntheticFrames, tempDir } from '../helpers/traceFixtures';

const READING_JSON = Object.fromEntries(Object.entries(READING_INFO).map(([k, v]) => [k, v.json])) as Record<
  AggregateKey,
  string
>;
const FPS = 50;
const N = 51; // 1 s clips: K = 51 on the 50 Hz contract timeline

/** A 50 fps clip of n frames: standing root, joints on slow sines, plus `perturb`. */
function clip(
  n: number,
  perturb: (k: number, j: number) => number = () => 0,
  rootDrop: (k: number) => number = () => 0,
): TimedFrames {
  const rootPosM = new Float64Array(3 * n);
  const rootQuatWxyz = new Float64Array(4 * n);
  const jointPosRad = new Float64Array(G1_NUM_JOINTS * n);
  for (let k = 0; k < n; k++) {
    rootPosM.set([0.002 * k, 0, 0.78 - rootDrop(k)], 3 * k);
    rootQuatWxyz.set([1, 0, 0, 0], 4 * k);
    for (let j = 0; j < G1_NUM_JOINTS; j++)
      jointPosRad[G1_NUM_JOINTS * k + j] = 0.2 * Math.sin((2 * Math.PI * k) / (N - 1) + 0.3 * j) + perturb(k, j);
  }
  return { fps: FPS, frameCount: n, rootPosM, rootQuatWxyz, jointPosRad };
}

const clipId = (name: string) => `clip-${sha256HexOfString(name).slice(0, 16)}`;
const CLIPS = { wave: clipId('wave'), walk: clipId('walk'), reach: clipId('reach'), squat: clipId('squat') };
const meta = (name: keyof typeof CLIPS, group: WorkloadClipMeta['group']): WorkloadClipMeta => ({
  id: CLIPS[name],
  name,
  group,
  duration_s: (N - 1) / FPS,
  frames: N,
  fps: FPS,
});

function calibration(capturedAt: string, clip: string): CalibrationRecord {
  const q = Array.from({ length: 29 }, (_, j) => 0.01 * Math.sin(j));
  return {
    robotUnit: 'g1-unit-7',
    capturedAt,
    clipId: clip,
    measured: { jointPosRad: q, imuQuatWxyz: [0.9999, 0.01, -0.005, 0], rootPosM: null, rootQuatWxyz: null },
    stillness: { durationS: 1, samples: 500, maxJointStdRad: 0.0015, gyroRmsRadS: 0.003 },
    simulatorInitialState: {
      rootPosM: [0, 0, 0.79],
      rootQuatWxyz: [0.9999, 0.01, -0.005, 0],
      jointPosRad: q,
      placeOnFloor: true,
    },
    residuals: {
      settledVsMeasured: { maxJointRad: 0.004, attitudeRad: 0.002 },
      measuredVsClipStart: { maxJointRad: 0.031, attitudeRad: 0.012 },
    },
  };
}

const dir = tempDir('gap');
let store: CampaignStore;
let evaluator: ClipPairEvaluator;
const reference = clip(N);
/** Metrics of every recorded episode, by run id (the independent side of the checks). */
const M = new Map<string, EpisodeMetrics>();
const runs: Record<string, string[]> = {};
let seed = 0;

async function episode(
  parentTraceId: string,
  domain: ExecutionDomain,
  tag: string,
  exec: TimedFrames | null,
  outcome: EpisodeOutcome,
  o: { caps?: SourceCapabilities; trial?: number } = {},
): Promise<string> {
  const rec = await store.beginEpisode({
    parentTraceId,
    executionDomain: domain,
    backendId: domain === 'simulation' ? 'sim-worker-0' : 'g1-link',
    robotUnit: domain === 'real_robot' ? 'g1-unit-7' : null,
    seed: seed++,
    rolloutIndex: o.trial ?? 0,
    flush: { fsync: false },
  });
  await rec.frames(syntheticFrames(0, 5));
  const m = exec ? evaluator.evaluate(reference, exec, o.caps ?? FULL_STATE).metrics : null;
  await rec.finish(fixtureEnd(rec.runId, 5, outcome), m);
  if (m) M.set(rec.runId, m);
  (runs[tag] ??= []).push(rec.runId);
  return rec.runId;
}

const value = (r: { available: boolean; value?: number }) => {
  if (!r.available) throw new Error('unavailable');
  return r.value as number;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const gap = (sim: number, real: number) => ((real - sim) / sim) * 100;

const offset = (d: number) => (_k: number, j: number) => d * (1 + 0.05 * j);

beforeAll(async () => {
  evaluator = new ClipPairEvaluator(MB_METRICS_1, loadRobotProfile(OUR_G1));
  store = await openCampaign(dir, { create: true, name: 'gap-test' });
  const clips = [
    meta('wave', 'upper_body'),
    meta('walk', 'locomotion'),
    meta('reach', 'upper_body'),
    meta('squat', 'low_posture'),
  ];
  const snapshot: WorkloadSnapshot = {
    format: WORKLOAD_SNAPSHOT_FORMAT,
    id: 'gap-set',
    version: '1',
    source: 'folder',
    clips,
    snapshot_hash: snapshotHash(clips),
  };
  store.putWorkloadSnapshot(snapshot);
  const X = fixtureBinding(3000);
  const Y = fixtureBinding(1000);
  const parent = (binding: typeof X, name: keyof typeof CLIPS, calibrationId: string | null) =>
    store.ensureParentTrace(
      fixtureInputs({
        binding,
        clipId: CLIPS[name],
        referenceSha256: sha256HexOfString(`reference ${name}`),
        calibrationId,
      }),
    ).id;
  const cal = (at: string, name: keyof typeof CLIPS) => store.putCalibration(calibration(at, CLIPS[name])).id;

  // A qualification pair (no calibration): never in the gap section.
  await episode(parent(X, 'wave', null), 'simulation', 'qual', clip(N, offset(0.5)), 'completed');

  // wave: an older complete pair (superseded) and the latest one.
  const waveOld = parent(X, 'wave', cal('2026-11-28T10:00:00.000Z', 'wave'));
  await episode(waveOld, 'simulation', 'waveOldSim', clip(N, offset(0.3)), 'completed');
  await episode(waveOld, 'real_robot', 'waveOldReal', clip(N, offset(0.4)), 'completed');
  const wave = parent(X, 'wave', cal('2026-11-29T10:00:00.000Z', 'wave'));
  await episode(wave, 'simulation', 'waveSim', clip(N, offset(0.02)), 'completed');
  await episode(wave, 'real_robot', 'waveReal', clip(N, offset(0.03)), 'completed', { trial: 0 });
  await episode(wave, 'real_robot', 'waveExcluded', clip(N, offset(0.9)), 'infrastructure_error', { trial: 1 });
  await episode(wave, 'real_robot', 'waveReal', clip(N, offset(0.035)), 'completed', { trial: 1 });
  await episode(wave, 'real_robot', 'waveExcluded', clip(N, offset(0.9)), 'aborted_by_operator', { trial: 2 });
  // Trial 2 falls: root 0.3 m low from frame 20 → hard failure at frame 20.
  await episode(
    wave,
    'real_robot',
    'waveReal',
    clip(N, offset(0.04), (k) => (k >= 20 ? 0.3 : 0)),
    'hard_failure',
    { trial: 2 },
  );

  // walk: two completed trials, one e-stopped at 0.6 s (30 of 50 frame intervals), one link loss.
  const walk = parent(X, 'walk', cal('2026-11-29T11:00:00.000Z', 'walk'));
  await episode(walk, 'simulation', 'walkSim', clip(N, offset(0.05)), 'completed');
  await episode(walk, 'real_robot', 'walkReal', clip(N, offset(0.045)), 'completed', { trial: 0 });
  await episode(walk, 'real_robot', 'walkExcluded', clip(N, offset(0.9)), 'link_lost', { trial: 1 });
  await episode(walk, 'real_robot', 'walkReal', clip(N, offset(0.055)), 'completed', { trial: 1 });
  await episode(walk, 'real_robot', 'walkStopped', clip(31, offset(0.06)), 'estop', { trial: 2 });

  // reach: the robot has no motion capture → failure, progress and MPJPE-l unavailable on Real.
  const reach = parent(X, 'reach', cal('2026-11-29T12:00:00.000Z', 'reach'));
  await episode(reach, 'simulation', 'reachSim', clip(N, offset(0.01)), 'completed');
  for (let t = 0; t < 3; t++)
    await episode(reach, 'real_robot', 'reachReal', clip(N, offset(0.02 + 0.005 * t)), 'completed', {
      trial: t,
      caps: NO_MOTION_CAPTURE,
    });

  // squat: simulation only so far → incomplete.
  const squat = parent(X, 'squat', cal('2026-11-29T13:00:00.000Z', 'squat'));
  await episode(squat, 'simulation', 'squatSim', clip(N, offset(0.01)), 'completed');

  // A second binding with one pair.
  const waveY = parent(Y, 'wave', cal('2026-11-29T14:00:00.000Z', 'wave'));
  await episode(waveY, 'simulation', 'waveYSim', clip(N, offset(0.015)), 'completed');
  await episode(waveY, 'real_robot', 'waveYReal', clip(N, offset(0.01)), 'completed');
}, 60_000);

afterAll(() => {
  store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const X_KEY = () => `${fixtureBinding(3000).id}@${fixtureBinding(3000).version}`;
const Y_KEY = () => `${fixtureBinding(1000).id}@${fixtureBinding(1000).version}`;

describe('gap section from a campaign store', () => {
  it('selects the latest complete calibration per binding × clip, lists superseded and incomplete ones, ignores qualification pairs', () => {
    const g = buildGapSection(store);
    expect(g.contract).toBe('mb-metrics/1');
    expect(g.pairs.map((p) => [p.wbc, p.clipName, p.group])).toEqual(
      [
        [X_KEY(), 'reach', 'upper_body'],
        [X_KEY(), 'walk', 'locomotion'],
        [X_KEY(), 'wave', 'upper_body'],
        [Y_KEY(), 'wave', 'upper_body'],
      ].sort((a, b) => (a[0] === b[0] ? 0 : a[0] === X_KEY() ? -1 : 1)),
    );
    const wave = g.pairs.find((p) => p.wbc === X_KEY() && p.clipName === 'wave')!;
    expect(wave.capturedAt).toBe('2026-11-29T10:00:00.000Z');
    expect(g.skipped.map((s) => [s.clipName, s.why])).toEqual([
      ['squat', 'incomplete'],
      ['wave', 'superseded'],
    ]);
    expect(g.skipped[0].reason).toBe('no counted real-robot trial');
    expect(g.skipped[1].reason).toContain(wave.calibrationId);
    const all = g.pairs.flatMap((p) => p.trials.map((t) => t.runId));
    expect(all).not.toContain(runs.qual[0]);
  });

  it('counts trials by outcome: infrastructure error, operator abort and link loss excluded with a count; e-stop counted as a failed trial', () => {
    const g = buildGapSection(store);
    const wave = g.pairs.find((p) => p.wbc === X_KEY() && p.clipName === 'wave')!;
    expect(wave.sim).toEqual({ used: 1, failed: 0, stopped: 0, excluded: [] });
    expect(wave.real.used).toBe(3);
    expect(wave.real.failed).toBe(1);
    expect(wave.real.excluded.map((e) => [e.reason.split(' ')[0], e.count]).sort()).toEqual([
      ['aborted', 1],
      ['infrastructure', 1],
    ]);
    const walk = g.pairs.find((p) => p.clipName === 'walk')!;
    expect(walk.real).toMatchObject({
      used: 3,
      failed: 1,
      stopped: 1,
      excluded: [{ reason: expect.stringMatching(/^link lost/), count: 1 }],
    });
    expect(walk.trials.find((t) => t.runId === runs.walkStopped[0])).toMatchObject({
      outcome: 'estop',
      use: 'stopped',
      failed: true,
    });
  });

  it('gap numbers equal the hand-computed macro-averages of the same stored metrics', () => {
    const g = buildGapSection(store);
    const w = g.report.wbcs.find((x) => x.wbc === X_KEY())!;
    const mp = (tag: string) => mean(runs[tag].map((r) => value(M.get(r)!.mpjpeLMm)));
    // Stopped walk trial: its metrics show no failure over 31 frames, but it counts as failed and
    // its progress is 30/50 of the clip.
    const stopped = M.get(runs.walkStopped[0])!;
    expect(stopped.K).toBe(31);
    expect(value(stopped.progressSoft)).toBe(1);
    expect(M.get(runs.waveReal[2])!.failure).toMatchObject({
      available: true,
      value: { frame: 20, condition: 'root_height' },
    });

    // Per clip: sim single episode, real mean of counted trials.
    const walkMpjpeReal = mean([...runs.walkReal, ...runs.walkStopped].map((r) => value(M.get(r)!.mpjpeLMm)));
    const clipWalk = w.clips.find((c) => c.clipId === CLIPS.walk)!;
    expect(value(clipWalk.real.readings.mpjpeLMm)).toBeCloseTo(walkMpjpeReal, 12);
    expect(value(clipWalk.gapPercent.mpjpeLMm)).toBeCloseTo(gap(mp('walkSim'), walkMpjpeReal), 9);
    expect(value(clipWalk.real.readings.successRate)).toBeCloseTo(2 / 3, 12);
    expect(value(clipWalk.real.readings.progressSoft)).toBeCloseTo((1 + 1 + 30 / 50) / 3, 12);
    const clipWave = w.clips.find((c) => c.clipId === CLIPS.wave)!;
    expect(value(clipWave.real.readings.progressSoft)).toBeCloseTo((1 + 1 + 20 / 50) / 3, 12);

    // Overall rows: MPJPE-l over wave and walk (reach is unavailable on Real); SR likewise.
    const row = (k: string) => w.rows.find((r) => r.key === k)!;
    const simMp = mean([mp('waveSim'), mp('walkSim')]);
    const realMp = mean([mp('waveReal'), walkMpjpeReal]);
    expect(row('mpjpeLMm')).toMatchObject({ clips: 2 });
    expect(value(row('mpjpeLMm').sim)).toBeCloseTo(simMp, 12);
    expect(value(row('mpjpeLMm').real)).toBeCloseTo(realMp, 12);
    expect(value(row('mpjpeLMm').gapPercent)).toBeCloseTo(gap(simMp, realMp), 9);
    expect(row('mpjpeLMm').excluded).toEqual([{ clipId: CLIPS.reach, reason: expect.stringMatching(/^Real: /) }]);
    expect(value(row('successRate').sim)).toBe(1);
    expect(value(row('successRate').real)).toBeCloseTo(2 / 3, 12);
    expect(value(row('successRate').gapPercent)).toBeCloseTo(-100 / 3, 9);
    // Joint-position RMSE needs no global root: all three clips.
    const rm = (tag: string) => mean(runs[tag].map((r) => value(M.get(r)!.jointPosRmseRad)));
    const walkRmReal = mean([...runs.walkReal, ...runs.walkStopped].map((r) => value(M.get(r)!.jointPosRmseRad)));
    expect(row('jointPosRmseRad').clips).toBe(3);
    expect(value(row('jointPosRmseRad').real)).toBeCloseTo(mean([rm('waveReal'), walkRmReal, rm('reachReal')]), 12);
    expect(value(row('jointPosRmseRad').gapPercent)).toBeCloseTo(
      gap(mean([rm('waveSim'), rm('walkSim'), rm('reachSim')]), mean([rm('waveReal'), walkRmReal, rm('reachReal')])),
      9,
    );

    // By group: upper_body = wave + reach; for MPJPE-l only wave remains.
    const ub = w.byGroup.find((x) => x.group === 'upper_body')!;
    expect(ub.clips).toBe(2);
    const ubMp = ub.rows.find((r) => r.key === 'mpjpeLMm')!;
    expect(ubMp.clips).toBe(1);
    expect(value(ubMp.gapPercent)).toBeCloseTo(gap(mp('waveSim'), mp('waveReal')), 9);
  });

  it('a real branch without motion capture: failure-based readings and MPJPE-l unavailable on Real with the reason, never 0', () => {
    const g = buildGapSection(store);
    const w = g.report.wbcs.find((x) => x.wbc === X_KEY())!;
    const reach = w.clips.find((c) => c.clipId === CLIPS.reach)!;
    for (const k of ['successRate', 'progressSoft', 'mpjpeLMm'] as const) {
      expect(reach.real.readings[k].available).toBe(false);
      expect(reach.gapPercent[k]).toMatchObject({
        available: false,
        reason: expect.stringMatching(/^Real is unavailable: /),
      });
    }
    expect(reach.real.readings.jointPosRmseRad.available).toBe(true);
    const sr = w.rows.find((r) => r.key === 'successRate')!;
    expect(sr.clips).toBe(2);
    expect(sr.excluded[0].clipId).toBe(CLIPS.reach);
  });

  it('JSON: null with the reason for unavailable readings, mm for MPJPE-l, per-clip rows sorted by |Gap %| of MPJPE-l with trial counts', () => {
    const doc = JSON.parse(formatReport(buildCampaignReport(store), 'json'));
    expect(doc.format).toBe('motionbench-qualification-report/2');
    const gapDoc = doc.gap;
    expect(gapDoc).toMatchObject({
      title: 'Sim-to-real gap (Table 11)',
      contract: 'mb-metrics/1',
      matched_pairs: 4,
      sort: 'mpjpe_l_mm',
    });
    expect(gapDoc.bindings.map((b: { binding: string }) => b.binding)).toEqual([X_KEY(), Y_KEY()]);
    const bx = gapDoc.bindings[0];
    expect(bx.note).toBe('reference tracker, not a policy');
    expect(bx.rows.map((r: { reading: string }) => r.reading)).toEqual(['sr', ...MB_METRICS_1_READINGS]);
    const mpRow = bx.rows.find((r: { reading: string }) => r.reading === 'mpjpe_l_mm');
    expect(mpRow.unit).toBe('mm');
    expect(mpRow.excluded).toEqual([{ clip_id: CLIPS.reach, clip: 'reach', reason: expect.stringMatching(/^Real: /) }]);
    const reach = bx.clips.find((c: { clip: string }) => c.clip === 'reach');
    expect(reach.readings.mpjpe_l_mm.real).toBeNull();
    expect(reach.readings.mpjpe_l_mm.unavailable.real).toMatch(/./);
    expect(reach.readings.mpjpe_l_mm.gap_percent).toBeNull();
    expect(reach.real_trials).toEqual({ used: 3, failed: 0, stopped: 0, excluded: [] });
    // Order: available |Gap %| descending, unavailable last.
    const gaps = bx.clips.map(
      (c: { readings: { mpjpe_l_mm: { gap_percent: number | null } } }) => c.readings.mpjpe_l_mm.gap_percent,
    );
    expect(gaps[gaps.length - 1]).toBeNull();
    const avail = gaps.filter((x: number | null) => x !== null).map(Math.abs);
    expect(avail).toEqual([...avail].sort((a, b) => b - a));
    expect(
      bx.clips
        .find((c: { clip: string }) => c.clip === 'walk')
        .trials.find((t: { outcome: string }) => t.outcome === 'link_lost'),
    ).toMatchObject({ use: 'excluded', reason: expect.stringMatching(/^link lost/) });
    expect(gapDoc.skipped.map((s: { why: string }) => s.why)).toEqual(['incomplete', 'superseded']);
    // The qualification part is unchanged: the single qualification episode is a pending pair.
    expect(doc.pairs).toHaveLength(1);
    expect(doc.pairs[0].decision).toBe('pending');
  });

  it('Markdown: cm for MPJPE-l, "n/a (reason)" for unavailable, excluded clips and trial counts shown', () => {
    const r = buildCampaignReport(store);
    const md = formatReport(r, 'md');
    expect(md).toContain('## Sim-to-real gap (Table 11)');
    expect(md).toContain('## Qualification matrix');
    const w = r.gap.report.wbcs.find((x) => x.wbc === X_KEY())!;
    const mpRow = w.rows.find((x) => x.key === 'mpjpeLMm')!;
    const line = md.split('\n').find((l) => l.startsWith('| MPJPE-l (cm) |'))!;
    const gp = value(mpRow.gapPercent);
    expect(line).toContain(
      `| ${(value(mpRow.sim) / 10).toFixed(2)} | ${(value(mpRow.real) / 10).toFixed(2)} | ${gp >= 0 ? '+' : '-'}${Math.abs(gp).toFixed(1)}% | 2 | reach: Real: `,
    );
    expect(md).toMatch(/\| SR \| 100\.0% \| 66\.7% \| -33\.3% \| 2 \| reach: Real: /);
    const reachLine = md.split('\n').find((l) => l.startsWith('| reach |'))!;
    expect(reachLine).toMatch(/n\/a \(/);
    expect(md.split('\n').find((l) => l.startsWith('| walk |'))).toMatch(
      /\| walk \| locomotion \| cal-[0-9a-f]{24} \([^)]*\) \| 1 \| 3 \(1 failed, 1 stopped\) \| real: 1 link lost/,
    );
    expect(md).toContain('#### By capability group');
    expect(md).toContain('squat, calibration');
    expect(md).not.toMatch(/\| 0\.00 \| n\/a/);
  });

  it('CSV: gap rows after the qualification rows, values in stored units, unavailable empty with its reason', () => {
    const csv = formatReport(buildCampaignReport(store), 'csv').trim().split('\n');
    const header = csv[0].split(',');
    expect(header.slice(0, 21).join(',')).toBe(
      'level,contract,policy,snapshot,snapshot_hash,binding,binding_kind,binding_note,group,clip,clip_id,pairs,admitted,rejected,pending,rollouts,sr,progress_soft,mpjpe_l_mm,decision,reasons',
    );
    const col = (name: string) => header.indexOf(name);
    const rows = csv
      .slice(1)
      .map((l) =>
        l
          .match(/("([^"]|"")*"|[^,]*)(,|$)/g)!
          .map((c) => c.replace(/,$/, '').replace(/^"|"$/g, '').replace(/""/g, '"')),
      );
    const levels = rows.map((r) => r[0]);
    expect(levels.filter((l) => l === 'gap_binding')).toHaveLength(18);
    expect(levels.indexOf('gap_binding')).toBeGreaterThan(levels.lastIndexOf('pair'));
    const g = buildGapSection(store);
    const w = g.report.wbcs.find((x) => x.wbc === X_KEY())!;
    const mp = rows.find(
      (r) => r[0] === 'gap_binding' && r[col('binding')] === X_KEY() && r[col('reading')] === 'mpjpe_l_mm',
    )!;
    expect(Number(mp[col('sim')])).toBeCloseTo(value(w.rows.find((x) => x.key === 'mpjpeLMm')!.sim), 9);
    expect(mp[col('clips_used')]).toBe('2');
    const reachMp = rows.find(
      (r) => r[0] === 'gap_clip' && r[col('clip')] === 'reach' && r[col('reading')] === 'mpjpe_l_mm',
    )!;
    expect(reachMp[col('real')]).toBe('');
    expect(reachMp[col('unavailable')]).toMatch(/^real: .+ \| gap_percent: Real is unavailable/);
    expect(reachMp[col('real_trials')]).toBe('3');
    const walkSr = rows.find((r) => r[0] === 'gap_clip' && r[col('clip')] === 'walk' && r[col('reading')] === 'sr')!;
    expect([walkSr[col('sim_failed')], walkSr[col('real_failed')]]).toEqual(['0', '1']);
    expect(walkSr[col('excluded_trials')]).toMatch(/^real: 1 link lost/);
  });

  it('--sort: by another reading or by clip name; an unknown key is refused', () => {
    const byClip = buildCampaignReport(store, { gapSort: parseGapSortKey('clip') });
    const doc = JSON.parse(formatReport(byClip, 'json'));
    expect(doc.gap.bindings[0].clips.map((c: { clip: string }) => c.clip)).toEqual(['reach', 'walk', 'wave']);
    const bySr = JSON.parse(formatReport(buildCampaignReport(store, { gapSort: parseGapSortKey('sr') }), 'json'));
    // SR gaps: walk −33.3%, wave −33.3% (ties by name), reach unavailable last.
    expect(bySr.gap.bindings[0].clips.map((c: { clip: string }) => c.clip)).toEqual(['walk', 'wave', 'reach']);
    expect(() => parseGapSortKey('speed')).toThrow(/--sort must be one of sr, progress_soft, mpjpe_l_mm/);
  });
});

describe('motionbench report (CLI)', () => {
  it('--format md prints the gap section; --sort is checked', async () => {
    const r = await motionbench('report', '--campaign', dir, '--format', 'md', '--sort', 'joint_pos_rmse');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('## Sim-to-real gap (Table 11)');
    expect(r.stdout).toContain('#### Per clip (sorted by |Gap %| of joint-position RMSE)');
    expect(r.stdout).toContain(`### \`${X_KEY()}\``);
    let stderr = '';
    const bad = await main(['report', '--campaign', dir, '--sort', 'speed'], {
      stdout: () => {},
      stderr: (x) => void (stderr += x),
    });
    expect(bad).toBe(2);
    expect(stderr).toContain('--sort must be one of');
  });

  it('a campaign without matched pairs says so in one line', async () => {
    const empty = tempDir('gap-empty');
    try {
      const s = await openCampaign(empty, { create: true });
      s.close();
      let out = '';
      const code = await main(['report', '--campaign', empty], { stdout: (x) => void (out += x), stderr: () => {} });
      expect(code).toBe(0);
      const lines = out.split('\n');
      const i = lines.indexOf('## Sim-to-real gap (Table 11)');
      expect(i).toBeGreaterThan(0);
      expect(lines.slice(i + 1).filter((l) => l.trim() !== '')).toEqual([
        expect.stringMatching(/^No matched sim\/real pairs in this campaign/),
      ]);
      let json = '';
      await main(['report', '--campaign', empty, '--json'], { stdout: (x) => void (json += x), stderr: () => {} });
      expect(JSON.parse(json).gap).toMatchObject({
        matched_pairs: 0,
        bindings: [],
        message: expect.stringMatching(/^No matched/),
      });
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('motionbench analyze on the same campaign', () => {
  it('every binding row’s estimates are Table 11’s; the intervals contain them; per-clip cells resample episodes', async () => {
    let out = '';
    let err = '';
    const code = await main(['analyze', '--campaign', dir, '--json', '--replicates', '400'], {
      stdout: (x) => void (out += x),
      stderr: (x) => void (err += x),
    });
    expect(code, err).toBe(0);
    expect(err).toMatch(/analyze: reading the matched pairs/);
    const doc = JSON.parse(out);
    expect(doc.format).toBe('motionbench-analysis/1');
    expect(doc.direction).toMatch(/lower is better/);
    const section = buildGapSection(store);
    expect(doc.gaps.map((g: { binding: string }) => g.binding)).toEqual(section.report.wbcs.map((w) => w.wbc));
    for (const [i, w] of section.report.wbcs.entries()) {
      for (const row of w.rows) {
        const cell = doc.gaps[i].readings.find((c: { reading: string }) => c.reading === READING_JSON[row.key]);
        if (row.gapPercent.available && row.clips >= 2) {
          expect(cell.gap_pct).toBeCloseTo(row.gapPercent.value, 3);
          expect(cell.ci[0]).toBeLessThanOrEqual(cell.gap_pct + 1e-9);
          expect(cell.ci[1]).toBeGreaterThanOrEqual(cell.gap_pct - 1e-9);
          expect(cell.n).toBe(row.clips);
        } else {
          expect(cell.gap_pct === null || row.clips < 2).toBe(true);
        }
      }
      for (const c of doc.gaps[i].clips) {
        const mp = c.readings.find((x: { reading: string }) => x.reading === 'joint_pos_rmse');
        if (mp.real.value !== null) expect(mp.real.resampled).toBe('episodes');
      }
    }
  });

  it('Markdown: per binding Table 11 with CIs, then the chosen reading per capability group and per clip; one pair shows its clip cell', async () => {
    const run = async (...args: string[]) => {
      let out = '';
      const code = await main(['analyze', '--campaign', dir, '--replicates', '200', ...args], {
        stdout: (x) => void (out += x),
        stderr: () => {},
      });
      expect(code).toBe(0);
      return out;
    };
    const md = await run();
    const doc = JSON.parse(await run('--json'));
    for (const g of doc.gaps as {
      binding_name: string;
      clips: { clip_name: string; readings: { reading: string; gap_pct: number | null }[] }[];
      groups: { group: string; clips: number }[];
    }[]) {
      const section = md
        .slice(md.indexOf(`### ${g.binding_name}`))
        .split('\n### ')[0]
        .split('\n## ')[0];
      expect(section.length).toBeGreaterThan(0);
      if (g.clips.length === 1) {
        expect(section).toContain(`One matched pair (${g.clips[0].clip_name})`);
        expect(section).toContain('HL median of per-trial gaps %');
        expect(section).not.toContain('pair-cluster bootstrap needs at least 2');
        continue;
      }
      expect(section).toContain('MPJPE-l per capability group');
      for (const grp of g.groups) expect(section).toMatch(new RegExp(`^\\| group ${grp.group} \\| \\d+ \\|`, 'm'));
      for (const c of g.clips) {
        const row = section.split('\n').find((l) => l.startsWith(`| ${c.clip_name} |`));
        expect(row, c.clip_name).toBeDefined();
        const gap = c.readings.find((x) => x.reading === 'mpjpe_l_mm')!.gap_pct;
        // the clip's Gap % as printed (3 decimals from 1 up, 3 significant digits below)
        if (gap !== null) expect(row).toContain(Math.abs(gap) >= 1 ? gap.toFixed(3) : gap.toPrecision(3));
      }
    }
  });
});
