import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { MB_METRICS_1_FIELDS } from '../helpers/mbMetricsFields';
import { MENAGERIE_G1, OUR_G1, sharedData } from '../helpers/sharedData';
import { motionbenchInProcess as mb } from '../helpers/runCli';
import { independentMetrics } from './metricsIndependent';

// `motionbench metrics` through the entry the bin calls (in this process) on shared-data clips, one JSON
// document on stdout with exactly the fields of DESIGN §12, exit codes 0 / 1 / 2.

const HANDS_UP = sharedData('motions/g1_moves/csv/B_HandsUp.csv');
const DANCE = sharedData('motions/lafan1_g1_csv/dance1_subject2.csv');
const DANCE2 = sharedData('motions/lafan1_g1_csv/dance2_subject1.csv');
const TIKTOK = sharedData('motions/g1_moves/csv/J_Dance18_TikTok.csv');

const FIELDS = MB_METRICS_1_FIELDS;

/** Writes a LAFAN1-G1 CSV (36 columns, xyzw quaternion) of `file` with a joint offset and root shift. */
function writePerturbedCsv(file: string, out: string, jointOffset: number, rootShift: [number, number, number]): void {
  const c = loadClipFile(file);
  const lines: string[] = [];
  for (let i = 0; i < c.frameCount; i++) {
    const p = [0, 1, 2].map((a) => c.rootPosM[3 * i + a] + rootShift[a]);
    const [w, x, y, z] = c.rootQuatWxyz.subarray(4 * i, 4 * i + 4);
    const q = Array.from(c.jointPosRad.subarray(29 * i, 29 * i + 29), (v) => v + jointOffset);
    lines.push([...p, x, y, z, w, ...q].map((v) => String(v)).join(','));
  }
  fs.writeFileSync(out, `${lines.join('\n')}\n`);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-metrics-'));

describe('motionbench metrics', () => {
  it('prints exactly the DESIGN §12 fields; a 0.04 rad joint offset gives joint_pos_rmse 0.04', async () => {
    const exec = path.join(tmp, 'hands_up_offset.csv');
    writePerturbedCsv(HANDS_UP, exec, 0.04, [0.1, 0, 0]);
    const r = await mb('metrics', '--ref', HANDS_UP, '--exec', exec, '--exec-fps', '60', '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(FIELDS);
    expect(doc.contract).toBe('mb-metrics/1');
    expect(doc.K).toBe(Math.floor((50 * 441) / 60 + 1e-9) + 1);
    expect(doc.failed).toBe(false);
    expect(doc.failure).toBeNull();
    expect(doc.progress_soft).toBe(1);
    expect(doc.joint_pos_rmse).toBeCloseTo(0.04, 12);
    expect(doc.joint_vel_rmse).toBeLessThan(1e-9);
    const self = JSON.parse((await mb('metrics', '--ref', HANDS_UP, '--exec', HANDS_UP, '--json')).stdout);
    expect(doc.joint_acc_rms).toBeCloseTo(self.joint_acc_rms, 8);
    expect(doc.joint_jerk_p95).toBeCloseTo(self.joint_jerk_p95, 6);
    expect(self.mpjpe_l_mm).toBe(0);
    // The stderr note says where the reference fps came from.
    expect(r.stderr).toMatch(/60 fps inferred/);
  });

  it('--contract all: the peers beside mb-metrics/1; a 0.1 m root shift moves only the global readings', async () => {
    const exec = path.join(tmp, 'hands_up_shift.csv');
    writePerturbedCsv(HANDS_UP, exec, 0, [0.1, 0, 0]);
    const r = await mb('metrics', '--ref', HANDS_UP, '--exec', exec, '--exec-fps', '60', '--contract', 'all', '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(['mb-metrics/1', 'sonic-eval/1', 'holomotion-eval/1']);
    expect(doc['mb-metrics/1'].mpjpe_l_mm).toBeLessThan(1e-6);
    const s = doc['sonic-eval/1'];
    expect(s.success).toBe(true);
    expect(s.means.mpjpe_g_mm).toBeCloseTo(100, 6); // every body 0.1 m off in x
    expect(s.means.mpjpe_l_mm).toBeLessThan(1e-6);
    expect(s.means.mpjpe_pa_mm).toBeLessThan(1e-6);
    const h = doc['holomotion-eval/1'];
    expect(h.clip.mpjpe_g_mm).toBeCloseTo(100, 6);
    expect(h.clip.mpjpe_l_mm).toBeLessThan(1e-6);
    const only = JSON.parse(
      (await mb('metrics', '--ref', HANDS_UP, '--exec', exec, '--exec-fps', '60', '--contract', 'sonic-eval', '--json'))
        .stdout,
    );
    expect(Object.keys(only)).toEqual(['sonic-eval/1']);
    const bad = await mb('metrics', '--ref', HANDS_UP, '--exec', exec, '--contract', 'smplsim');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--contract must be mb-metrics\/1, sonic-eval, holomotion-eval or all, got "smplsim"/);
  });

  it('matches the independent computation on clips it was not tuned on (dance1 vs dance2, 30 fps)', async () => {
    const r = await mb('metrics', '--ref', DANCE, '--exec', DANCE2, '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    const ind = await independentMetrics(OUR_G1, loadClipFile(DANCE), loadClipFile(DANCE2));
    expect(doc.K).toBe(ind.K);
    expect(doc.failed).toBe(ind.failure !== null);
    expect(doc.failure).toEqual(ind.failure);
    const expected = ind as unknown as Record<string, number>;
    for (const key of FIELDS.slice(4))
      expect(Math.abs(doc[key] - expected[key]), key).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(doc[key])));
  });

  it('works on the Menagerie model with a 60 fps G1 Moves clip against a 30 fps LAFAN1 clip', async () => {
    const r = await mb('metrics', '--ref', TIKTOK, '--fps', '60', '--exec', DANCE, '--model', MENAGERIE_G1, '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    const ind = await independentMetrics(MENAGERIE_G1, loadClipFile(TIKTOK, { fps: 60 }), loadClipFile(DANCE));
    expect(doc.K).toBe(ind.K); // the shorter clip (TikTok, 1076/60 s) sets K
    expect(doc.K).toBe(Math.floor((50 * 1076) / 60 + 1e-9) + 1);
    expect(doc.failure).toEqual(ind.failure);
    expect(doc.mpjpe_l_mm).toBeCloseTo(ind.mpjpe_l_mm, 8);
  });

  it('reports readings needing global root state as null with reasons under --exec-no-global-root', async () => {
    const r = await mb('metrics', '--ref', DANCE, '--exec', DANCE2, '--exec-no-global-root', '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual([...FIELDS, 'unavailable']);
    expect(doc).toMatchObject({ failed: null, failure: null, progress_soft: null, mpjpe_l_mm: null });
    expect(Object.keys(doc.unavailable).sort()).toEqual(['failed', 'failure', 'mpjpe_l_mm', 'progress_soft']);
    expect(doc.unavailable.mpjpe_l_mm).toMatch(/heading/);
    expect(typeof doc.joint_pos_rmse).toBe('number');
  });

  it('prints a human-readable report without --json', async () => {
    const r = await mb('metrics', '--ref', DANCE, '--exec', DANCE2);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/metrics under mb-metrics\/1: K = \d+ frames at 50 Hz/);
    expect(r.stdout).toMatch(/hard failure\s+(none|FAILED at frame \d+)/);
    expect(r.stdout).toMatch(/MPJPE-l\s+[\d.]+ mm \([\d.]+ cm\)/);
    expect(r.stdout).toMatch(/joint-jerk P95\s+[\d.]+ rad\/s³/);
  });

  it('exits 2 on bad usage and 1 on bad input, with a one-line reason', async () => {
    const help = await mb('metrics', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage: motionbench metrics --ref <file> --exec <file>/);
    const noRef = await mb('metrics', '--exec', DANCE);
    expect(noRef.code).toBe(2);
    expect(noRef.stderr).toMatch(/--ref is required/);
    const badFps = await mb('metrics', '--ref', DANCE, '--exec', DANCE, '--exec-fps', 'fast');
    expect(badFps.code).toBe(2);
    expect(badFps.stderr).toMatch(/--exec-fps must be/);
    // An executed CSV whose rate cannot be inferred: the reason names the file and --exec-fps.
    const mystery = path.join(tmp, 'mystery.csv');
    fs.copyFileSync(DANCE, mystery);
    const noFps = await mb('metrics', '--ref', DANCE, '--exec', mystery, '--json');
    expect(noFps.code).toBe(1);
    expect(noFps.stdout).toBe('');
    expect(noFps.stderr).toContain(mystery);
    expect(noFps.stderr).toMatch(/--exec-fps/);
    expect(noFps.stderr.trim().split('\n')).toHaveLength(1);
    const missing = await mb('metrics', '--ref', path.join(tmp, 'nope.csv'), '--exec', DANCE);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.csv: cannot read the file: no such file/);
  });
});
