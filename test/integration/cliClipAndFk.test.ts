import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadMujocoModel } from '../../src/services/mujoco/mujocoRuntime';
import { MENAGERIE_G1, REPO_ROOT, sharedData } from '../helpers/sharedData';
import { motionbenchInProcess as mb } from '../helpers/runCli';

const run = promisify(execFile);

// The `motionbench` command through the entry the bin calls, in this process: JSON on stdout,
// one-line reasons on stderr, exit codes 0 / 1 (bad input) / 2 (bad usage). The last case runs
// it as installed (`npx motionbench`, a child process).

const DANCE = sharedData('motions/lafan1_g1_csv/dance1_subject2.csv');
const TIKTOK = sharedData('motions/g1_moves/csv/J_Dance18_TikTok.csv');
const HANDS_UP_NPZ = sharedData('motions/g1_moves/npz/B_HandsUp.npz');

/** Independent read of a LAFAN1-G1 CSV row, for expected values. */
function csvRow(file: string, row: number): number[] {
  return fs.readFileSync(file, 'utf8').split('\n')[row].split(',').map(Number);
}

describe('motionbench clip info', () => {
  it('describes a LAFAN1-G1 CSV (fps inferred from the dataset naming, and said so)', async () => {
    const r = await mb('clip', 'info', DANCE, '--json');
    expect(r.code, r.stderr).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info).toMatchObject({ frames: 3945, fps: 30, fps_source: 'inferred', joints: 29, format: 'lafan1-csv' });
    expect(info.duration_s).toBeCloseTo(3944 / 30, 9);
    const zs = fs
      .readFileSync(DANCE, 'utf8')
      .trim()
      .split('\n')
      .map((l) => Number(l.split(',')[2]));
    expect(info.root_z_min).toBe(Math.min(...zs));
    expect(info.root_z_max).toBe(Math.max(...zs));
    expect(Array.isArray(info.limit_violations)).toBe(true);
    for (const v of info.limit_violations) expect(Object.keys(v).sort()).toEqual(['frame', 'joint', 'value']);
  });

  it('uses --fps over anything inferred, and reports the user as its source', async () => {
    const r = await mb('clip', 'info', TIKTOK, '--fps', '60', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ frames: 1077, fps: 60, fps_source: 'user' });
    expect(JSON.parse(r.stdout).duration_s).toBeCloseTo(1076 / 60, 9);
  });

  it('describes an mjlab NPZ with the fps stored in it', async () => {
    const r = await mb('clip', 'info', HANDS_UP_NPZ, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ frames: 441, fps: 60, fps_source: 'file', format: 'mjlab-npz' });
  });

  it('refuses a CSV whose fps is unknown, naming the file and the fix', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-cli-'));
    const file = path.join(dir, 'mystery.csv');
    fs.writeFileSync(file, fs.readFileSync(DANCE, 'utf8').split('\n').slice(0, 10).join('\n'));
    const r = await mb('clip', 'info', file, '--json');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(/--fps/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('names the line and column of a malformed CSV', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-cli-'));
    const file = path.join(dir, 'bad.csv');
    const lines = fs.readFileSync(DANCE, 'utf8').split('\n').slice(0, 5);
    lines[2] = lines[2].replace(/,[^,]*$/, ',NaN');
    fs.writeFileSync(file, lines.join('\n'));
    const r = await mb('clip', 'info', file, '--fps', '30');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}:3:36`);
  });

  it('rejects a bad --fps value as a usage error', async () => {
    const r = await mb('clip', 'info', DANCE, '--fps=-3');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--fps must be/);
  });
});

describe('motionbench fk', () => {
  it('prints every body in model order, matching mujoco-js mj_kinematics at that frame', async () => {
    const frame = 1234;
    const r = await mb('fk', '--clip', DANCE, '--frame', String(frame), '--model', MENAGERIE_G1, '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.bodies).toHaveLength(30);
    expect(doc.bodies[0].name).toBe('pelvis');
    expect(doc.bodies[29].name).toBe('right_wrist_yaw_link');
    // Independent expectation: the CSV row (xyzw quaternion) into MuJoCo's qpos (wxyz).
    const c = csvRow(DANCE, frame);
    const mj = await loadMujocoModel(MENAGERIE_G1);
    mj.data.qpos.set([c[0], c[1], c[2], c[6], c[3], c[4], c[5], ...c.slice(7)]);
    mj.mujoco.mj_kinematics(mj.model, mj.data);
    const xpos = mj.data.xpos;
    const xquat = mj.data.xquat;
    let maxPos = 0;
    let maxQuat = 0;
    doc.bodies.forEach((b: { name: string; pos: number[]; quat: number[] }) => {
      const id = mj.mujoco.mj_name2id(mj.model, mj.mujoco.mjtObj.mjOBJ_BODY.value, b.name);
      b.pos.forEach((v, k) => (maxPos = Math.max(maxPos, Math.abs(v - xpos[3 * id + k]))));
      // q and −q are the same rotation; the codec keeps the root quaternion's sign continuous.
      const same = Math.max(...b.quat.map((v, k) => Math.abs(v - xquat[4 * id + k])));
      const flipped = Math.max(...b.quat.map((v, k) => Math.abs(v + xquat[4 * id + k])));
      maxQuat = Math.max(maxQuat, Math.min(same, flipped));
    });
    mj.dispose();
    expect(maxPos).toBeLessThan(1e-9);
    expect(maxQuat).toBeLessThan(1e-9);
  });

  it('refuses a frame past the end, with the last valid frame in the reason', async () => {
    const r = await mb('fk', '--clip', HANDS_UP_NPZ, '--frame', '441', '--json');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/last frame \(440\)/);
  });

  it('requires --frame', async () => {
    const r = await mb('fk', '--clip', HANDS_UP_NPZ);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--frame is required/);
  });
});

describe('motionbench command line', () => {
  it('lists its commands with --help and refuses unknown ones', async () => {
    const help = await mb('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/clip info/);
    expect(help.stdout).toMatch(/\bfk\b/);
    const bad = await mb('frobnicate');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown command "frobnicate"/);
  });

  it('runs through npx as installed', async () => {
    const { stdout } = await run('npx', ['--no-install', 'motionbench', 'clip', 'info', '--help'], { cwd: REPO_ROOT });
    expect(stdout).toMatch(/usage: motionbench clip info/);
  });
});
