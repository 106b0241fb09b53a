// `motionbench sim` through the entry the bin calls (in this process), real MuJoCo worker, JSON on stdout,
// progress on stderr, the episode file and the executed motion written when asked.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEpisodeFile, trajectorySha256OfEpisode } from '../../src/services/episode/episodeReader';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { encodeLinearPolicy, standardInterface, writeBindingFiles } from '../helpers/onnxBuilder';
import { MB_METRICS_1_FIELDS } from '../helpers/mbMetricsFields';
import { MENAGERIE_G1, MENAGERIE_SCENE, REPO_ROOT, sharedData } from '../helpers/sharedData';
import { motionbench as mbProcess, motionbenchInProcess as mb } from '../helpers/runCli';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-sim-cli-'));
/** The first 4 s of LAFAN1 dance1 (a test fixture cut at run time, never stored in the repo). */
const CLIP = path.join(dir, 'short_dance.csv');
const METRIC_FIELDS = MB_METRICS_1_FIELDS;

beforeAll(() => {
  const lines = fs.readFileSync(sharedData('motions/lafan1_g1_csv/dance1_subject2.csv'), 'utf8').split('\n');
  fs.writeFileSync(CLIP, lines.slice(0, 121).join('\n') + '\n');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('motionbench sim', () => {
  let first: Record<string, unknown>;

  it('runs a clip under builtin:assist, prints metrics + outcome + audit hash, writes the episode and the executed motion', async () => {
    const out = path.join(dir, 'episode.mcap');
    const exec = path.join(dir, 'exec.json');
    const r = await mb(
      'sim',
      '--clip',
      CLIP,
      '--fps',
      '30',
      '--binding',
      'builtin:assist=3000',
      '--out',
      out,
      '--exec-out',
      exec,
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    first = doc;
    for (const f of METRIC_FIELDS) expect(doc).toHaveProperty(f);
    expect(doc).toMatchObject({
      contract: 'mb-metrics/1',
      K: 201,
      failed: false,
      failure: null,
      progress_soft: 1,
      outcome: 'completed',
      sim_seconds: 4,
      frames: 201,
      seed: 0,
    });
    expect(doc.mpjpe_l_mm).toBeGreaterThan(1);
    expect(doc.mpjpe_l_mm).toBeLessThan(60);
    expect(doc.wall_seconds).toBeGreaterThan(0);
    expect(doc.real_time_factor).toBeCloseTo(doc.sim_seconds / doc.wall_seconds, 9);
    expect(doc.trajectory_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(doc.binding).toMatchObject({
      id: 'builtin',
      kind: 'builtin',
      label: 'reference tracker, not a policy (root assist 3000 N/m)',
    });
    expect(doc.binding.version).toMatch(/^pd1-[0-9a-f]{10}$/);
    expect(doc.episode_file).toBe(out);
    expect(r.stderr).toMatch(/sim: 4\.0 \/ 4\.0 s simulated \(\d+(\.\d)?x real time\)/);
    expect(r.stderr).toMatch(/reference tracker, not a policy/);
    // the episode file holds the same trajectory
    const ep = await readEpisodeFile(out);
    expect(ep.complete).toBe(true);
    expect(trajectorySha256OfEpisode(ep)).toBe(doc.trajectory_sha256);
    // `motionbench metrics` on the executed motion gives the same readings
    // against the reference as placed for the run (this clip's frame 0 stands 3 mm off the floor)
    expect(doc.reference_lift_m).toBeGreaterThan(0.001);
    expect(doc.reference_lift_m).toBeLessThan(0.01);
    const m = await mb(
      'metrics',
      '--ref',
      CLIP,
      '--fps',
      '30',
      '--exec',
      exec,
      '--reference-lift',
      String(doc.reference_lift_m),
      '--json',
    );
    expect(m.code, m.stderr).toBe(0);
    const metrics = JSON.parse(m.stdout);
    for (const f of METRIC_FIELDS) expect(metrics[f]).toEqual(doc[f]);
  });

  it('replays bit-identically in another process (the seed is recorded; nothing in the builtin sim is random)', async () => {
    const r = await mb(
      'sim',
      '--clip',
      CLIP,
      '--fps',
      '30',
      '--binding',
      'builtin:assist=3000',
      '--seed',
      '5',
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.seed).toBe(5);
    expect(doc.trajectory_sha256).toBe(first.trajectory_sha256);
  });

  it('without assist the reference tracker falls: hard_failure, still exit 0; Menagerie’s scene runs too', async () => {
    const r = await mb('sim', '--clip', CLIP, '--fps', '30', '--model', MENAGERIE_SCENE, '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      outcome: 'hard_failure',
      failed: true,
      binding: { label: 'reference tracker, not a policy' },
    });
    expect(doc.failure.frame).toBeLessThan(150);
    expect(doc.progress_soft).toBeLessThan(1);
    expect(doc.model.file).toBe(MENAGERIE_SCENE);
  });

  it('runs an onnx binding file in the worker: the policy, not the reference, sets the targets', async () => {
    // a constant policy: action 0.4 on every joint → target = default pose + 0.25 · 0.4
    const iface = standardInterface({ gains: { kp: 300, kd: 10 } });
    const D = 29 + 29 + 3 + 3 + 2 * 29 + 29;
    const bindingFile = writeBindingFiles(
      path.join(dir, 'onnx'),
      encodeLinearPolicy({ inDim: D, outDim: 29, bias: new Float64Array(29).fill(0.4) }),
      iface,
    );
    const out = path.join(dir, 'onnx.mcap');
    const r = await mb('sim', '--clip', CLIP, '--fps', '30', '--binding', bindingFile, '--out', out, '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.binding).toMatchObject({ id: 'test-policy', version: '1', kind: 'onnx' });
    expect(doc.binding.checkpoint_hash).toMatch(/^[0-9a-f]{64}$/);
    const def = loadRobotProfile().defaultPose.jointPosRad;
    const ep = await readEpisodeFile(out);
    for (const c of [ep.commands[0], ep.commands[100]]) {
      c.jointTargetRad.forEach((t, j) => expect(t).toBeCloseTo(def[j] + 0.1, 6));
      expect(c.kp).toEqual(new Array(29).fill(300));
    }
  });

  it('MuJoCo warnings go to stderr: under --json stdout is exactly one JSON document', async () => {
    // Our G1 under a gravity of 1e20 m/s²: MuJoCo warns "Nan, Inf or huge value in QACC" at the first step.
    const model = path.join(dir, 'g1_huge_gravity.xml');
    const xml = fs.readFileSync(path.join(REPO_ROOT, 'assets/g1/g1.xml'), 'utf8');
    const warped = xml.replace(/<option timestep="0\.002" integrator="implicitfast"\/>/, (o) =>
      o.replace('/>', ' gravity="0 0 -1e20"/>'),
    );
    expect(warped).not.toBe(xml);
    fs.writeFileSync(model, warped);
    // A child process: MuJoCo's warnings are written by the simulator worker to the process's stderr.
    const r = await mbProcess('sim', '--clip', CLIP, '--fps', '30', '--model', model, '--json');
    expect(r.stderr).toMatch(/^mujoco: WARNING: Nan, Inf or huge value in QACC/m);
    expect(r.stdout).not.toMatch(/WARNING/);
    const doc = JSON.parse(r.stdout) as { contract: string };
    expect(doc.contract).toBe('mb-metrics/1');
  });

  it('(negative control) a model that does not make MuJoCo warn prints no mujoco line', async () => {
    const r = await mb('sim', '--clip', CLIP, '--fps', '30', '--binding', 'builtin:assist=3000', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/^mujoco: /m);
    expect(() => JSON.parse(r.stdout) as unknown).not.toThrow();
  });

  it('bad input: one-line reasons and exit codes', async () => {
    const bad = path.join(dir, 'binding.json');
    fs.writeFileSync(bad, JSON.stringify({ kind: 'builtin', rootAssist: { kpNPerM: 'high' } }));
    const [usage, noClip, noFloor, badFile] = await Promise.all([
      mb('sim', '--clip', CLIP, '--binding', 'builtin:assist=lots'),
      mb('sim', '--json'),
      mb('sim', '--clip', CLIP, '--fps', '30', '--model', MENAGERIE_G1, '--json'),
      mb('sim', '--clip', CLIP, '--fps', '30', '--binding', bad, '--json'),
    ]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^motionbench: --binding builtin:assist=lots: assist must be a stiffness in N\/m/);
    expect(noClip.code).toBe(2);
    expect(noClip.stderr).toMatch(/--clip is required/);
    expect(noFloor.code).toBe(1);
    expect(noFloor.stdout).toBe('');
    expect(noFloor.stderr).toMatch(/g1\.xml: the model has no floor .*scene\.xml/);
    expect(badFile.code).toBe(1);
    expect(badFile.stderr).toContain(`${bad} [rootAssist.kpNPerM]`);
  });
});
