// Tampered copies of a real campaign (child-process qualify: real MuJoCo, SQLite, MCAP; two builtin
// bindings × two core-v1 clips × 2 rollouts, one pair calibrated), changed with plain SQL
// (test/helpers/hostileCampaigns.ts):
//   M5   every rollout recorded twice (what two writers left before the writer lock): analyze
//        counts each rollout once — the same matrix and the same rollout ICCs as the clean copy —
//        and says how many duplicates it left out;
//   minor a damaged result_json, a metric column that disagrees with its result_json, a
//        calibration that is not an object, a calibration with a zero quaternion: refused in one
//        line naming campaign.sqlite, the table, the row and the column (and the field).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main';
import { sensitivitySetup } from '../../src/services/analysis/sensitivityRunner';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { openCampaign, TraceStoreError } from '../../src/services/trace';
import { listAdmittedPairs } from '../../src/services/trial';
import { storeCalibratedStart } from '../helpers/calibratedPair';
import {
  calibrations,
  copyCampaign,
  duplicateRollouts,
  firstMeasuredRun,
  setCalibrationRecord,
  setMetricColumn,
  setResultJson,
} from '../helpers/hostileCampaigns';
import { motionbench } from '../helpers/runCli';
import { qualifyArgs } from '../helpers/qualifyArgs';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-tampered-'));
const base = path.join(root, 'base');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let pairId = '';
let n = 0;
const copy = () => copyCampaign(base, path.join(root, `copy-${++n}`));

async function inProcess(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const code = await main(args, { stdout: (x) => void (stdout += x), stderr: (x) => void (stderr += x) });
  return {
    code,
    stdout,
    stderr,
    ms: performance.now() - t0,
    rssGrowthMiB: (process.memoryUsage().rss - rss0) / 2 ** 20,
  };
}

/** The refusal line `motionbench: …` of a failed run (the last stderr line). */
const refusal = (stderr: string) => stderr.trim().split('\n').at(-1)!;

beforeAll(async () => {
  const bindings = ['builtin:assist=3000', 'builtin:assist=1000'];
  const clips = ['ub_wave_right', 'ip_torso_twist'];
  const q = await motionbench(...qualifyArgs({ bindings, clips, rollouts: 2, campaign: base }));
  expect(q.code, q.stderr).toBe(0);
  const store = await openCampaign(base);
  try {
    pairId = listAdmittedPairs(store).find((p) => p.clipName === 'ub_wave_right' && p.admitted)!.pairId;
  } finally {
    store.close();
  }
  await storeCalibratedStart(base, pairId);
}, 240_000);

describe('M5: analyze on a campaign whose rollouts were recorded twice', () => {
  it('counts every rollout once (matrix, cell episode counts and rollout ICCs equal to the clean campaign) and reports the duplicates', async () => {
    const clean = await inProcess('analyze', '--campaign', base, '--json', '--replicates', '300');
    expect(clean.code, clean.stderr).toBe(0);
    const dir = copy();
    const dups = duplicateRollouts(dir);
    expect(dups).toHaveLength(8);
    const r = await inProcess('analyze', '--campaign', dir, '--json', '--replicates', '300');
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(clean.stdout);
    const b = JSON.parse(r.stdout);
    expect(b.matrix).toEqual(a.matrix);
    expect(b.rollout_reliability).toEqual(a.rollout_reliability);
    expect(b.rollout_reliability.length).toBeGreaterThan(0);
    expect(r.stderr).toContain('analyze: 8 duplicate rollout episode(s) not counted');
    expect(r.stderr).toMatch(/-dup repeats sim-/);

    // The Markdown says it too.
    const md = await inProcess('analyze', '--campaign', dir, '--replicates', '300');
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain('8 duplicate rollout episode(s) not counted');
  }, 120_000);
});

describe('minor: damaged or disagreeing campaign rows are refused with their location', () => {
  it('a result_json that is not an EpisodeMetrics: analyze and report name campaign.sqlite, the table, the run and the column', async () => {
    const dir = copy();
    const { runId, contractId } = firstMeasuredRun(dir);
    setResultJson(dir, runId, JSON.stringify({ contract: contractId, K: 5 }));
    for (const cmd of ['analyze', 'report']) {
      const r = await inProcess(cmd, '--campaign', dir);
      console.log(
        `corrupt result_json, ${cmd}: exit ${r.code} in ${r.ms.toFixed(0)} ms, RSS +${r.rssGrowthMiB.toFixed(1)} MiB`,
      );
      expect(r.code).toBe(1);
      expect(refusal(r.stderr)).toBe(
        `motionbench: ${path.join(dir, 'campaign.sqlite')}, table metrics, run ${runId} (contract ${contractId}), column result_json: failure is not a reading object`,
      );
      expect(r.ms).toBeLessThan(10_000);
    }
    setResultJson(dir, runId, '[1,2]');
    const arr = await inProcess('analyze', '--campaign', dir);
    expect(refusal(arr.stderr)).toContain(
      `table metrics, run ${runId} (contract ${contractId}), column result_json: is an array, not an object`,
    );
  });

  it('a metric column that disagrees with its result_json: the score matrix and the gaps would differ, so analyze refuses naming the column', async () => {
    const dir = copy();
    const { runId, contractId } = firstMeasuredRun(dir);
    setMetricColumn(dir, runId, 'mpjpe_l_mm', 1);
    const r = await inProcess('analyze', '--campaign', dir, '--json', '--replicates', '300');
    console.log(
      `scores vs gaps disagreement: exit ${r.code} in ${r.ms.toFixed(0)} ms, RSS +${r.rssGrowthMiB.toFixed(1)} MiB`,
    );
    expect(r.code).toBe(1);
    expect(refusal(r.stderr)).toMatch(
      new RegExp(
        `^motionbench: ${path.join(dir, 'campaign.sqlite').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, table metrics, run ${runId} \\(contract ${contractId.replace('/', '\\/')}\\): column mpjpe_l_mm holds 1 but result_json says \\d+(\\.\\d+)?; scores \\(the columns\\) and gaps \\(result_json\\) must come from the same numbers$`,
      ),
    );
    // Negative control: the untouched copy analyses.
    const ok = await inProcess('analyze', '--campaign', copy(), '--json', '--replicates', '300');
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('a calibration that is not an object: analyze (its sensitivity pairs) refuses naming the table, row and column, not a localeCompare TypeError', async () => {
    const dir = copy();
    const [cal] = calibrations(dir);
    setCalibrationRecord(dir, cal.id, '5');
    const r = await inProcess('analyze', '--campaign', dir, '--replicates', '300');
    console.log(
      `non-object calibration: exit ${r.code} in ${r.ms.toFixed(0)} ms, RSS +${r.rssGrowthMiB.toFixed(1)} MiB`,
    );
    expect(r.code).toBe(1);
    expect(refusal(r.stderr)).toBe(
      `motionbench: ${path.join(dir, 'campaign.sqlite')}, table calibrations, row ${cal.id}, column record_json: is a number, not an object`,
    );
    expect(r.stderr).not.toContain('localeCompare');
  });

  it('a calibration whose simulator start quaternion is zero: the sensitivity refuses it naming the field', async () => {
    const dir = copy();
    const [cal] = calibrations(dir);
    const rec = JSON.parse(cal.record_json);
    expect(rec.simulatorInitialState).not.toBeNull();
    rec.simulatorInitialState.rootQuatWxyz = [0, 0, 0, 0];
    setCalibrationRecord(dir, cal.id, JSON.stringify(rec));
    const store = await openCampaign(dir, { readOnly: true });
    try {
      const t0 = performance.now();
      let err: unknown = null;
      try {
        sensitivitySetup(store, loadRobotProfile(), { pairId });
      } catch (e) {
        err = e;
      }
      console.log(`zero calibration quaternion: refused in ${(performance.now() - t0).toFixed(0)} ms`);
      expect(err).toBeInstanceOf(TraceStoreError);
      expect((err as Error).message).toBe(
        `${path.join(dir, 'campaign.sqlite')}, table calibrations, row ${cal.id}, column record_json: simulatorInitialState.rootQuatWxyz has norm 0.00000, not a unit quaternion (±0.001)`,
      );
    } finally {
      store.close();
    }
    const cli = await inProcess('sensitivity', '--campaign', dir, '--pair', pairId);
    expect(cli.code).toBe(1);
    expect(refusal(cli.stderr)).toContain('simulatorInitialState.rootQuatWxyz has norm 0.00000, not a unit quaternion');
  });

  it('putCalibration refuses a zero IMU quaternion (nothing stored)', async () => {
    const dir = copy();
    const [cal] = calibrations(dir);
    const rec = JSON.parse(cal.record_json);
    rec.measured.imuQuatWxyz = [0, 0, 0, 0];
    const store = await openCampaign(dir);
    try {
      expect(() => store.putCalibration(rec)).toThrow(
        'calibration: measured.imuQuatWxyz has norm 0.00000, not a unit quaternion (±0.001)',
      );
    } finally {
      store.close();
    }
    expect(calibrations(dir)).toHaveLength(1);
  });
});
