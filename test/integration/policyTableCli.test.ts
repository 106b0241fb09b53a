// `motionbench policy table <folder>` (in this process through the bin's entry: real MuJoCo, the
// real released policies, linked into a temp folder, never copied): a BeyondMimic export runs on
// its baked motion, the unitree_rl_mjlab mimic folder on the motion file its folder ships (first
// 4 s with --seconds),
// the unitree_rl_lab velocity policy is listed as not a tracker, and a file the console refuses
// (an .onnx that is not an ONNX model) is a row with its located refusal, not skipped. Negative
// control: the refused row has no episodes and no readings, and a run row's readings come from
// its episodes (SR 1 with no failure; the window bounds every episode).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { policiesInFolder } from '../../src/services/policyCheck/policyTableRun';
import { motionbenchInProcess as motionbench } from '../helpers/runCli';
import { sharedData } from '../helpers/sharedData';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-policy-table-'));
const folder = path.join(root, 'policies');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

interface Entry {
  policy: string;
  status: string;
  family: string | null;
  physics: string | null;
  motions: string | null;
  why: string | null;
  groups: {
    group: string;
    clips: number;
    success_rate: number | null;
    progress_soft: number | null;
    mpjpe_l_mm: number | null;
  }[];
  episodes: {
    clip: string;
    seconds: number;
    outcome: string;
    failure: string | null;
    reference_lift_m: number | null;
  }[];
}
let doc: { wall_seconds: number; seconds_cap: number | null; policies: Entry[] };
let text: string;

beforeAll(async () => {
  fs.mkdirSync(folder);
  fs.symlinkSync(sharedData('policies/beyondmimic/Jump_wose.onnx'), path.join(folder, 'Jump_wose.onnx'));
  fs.symlinkSync(sharedData('policies/unitree_rl_mjlab_mimic_dance1_subject2'), path.join(folder, 'mjlab_dance'));
  fs.symlinkSync(sharedData('policies/unitree_rl_lab_g1_velocity_v0'), path.join(folder, 'velocity'));
  fs.writeFileSync(path.join(folder, 'broken.onnx'), 'not an onnx model\n');
  const r = await motionbench('policy', 'table', folder, '--seconds', '4', '--workers', '2', '--json');
  expect(r.code, r.stderr).toBe(0);
  doc = JSON.parse(r.stdout);
  const t = await motionbench(
    'policy',
    'table',
    folder,
    '--seconds',
    '2',
    '--workers',
    '2',
    '--md',
    path.join(root, 'table.md'),
  );
  expect(t.code, t.stderr).toBe(0);
  text = t.stdout;
}, 300_000);

const entry = (name: string) => doc.policies.find((p) => p.policy === name)!;

describe('policy table', () => {
  it('lists every entry of the folder, in name order, each with a status', () => {
    expect(doc.policies.map((p) => [p.policy, p.status])).toEqual([
      ['broken.onnx', 'refused'],
      ['Jump_wose.onnx', 'run'],
      ['mjlab_dance', 'run'],
      ['velocity', 'not_a_tracker'],
    ]);
    expect(doc.seconds_cap).toBe(4);
    console.log(`  4 policies (--seconds 4) in ${doc.wall_seconds.toFixed(1)} s`);
  });

  it('runs the BeyondMimic export on its own motion, named with its family and physics', () => {
    const e = entry('Jump_wose.onnx');
    expect(e.family).toBe('beyondmimic');
    expect(e.physics).toMatch(/^mjlab-g1\//);
    expect(e.motions).toBe('own motion');
    expect(e.episodes.map((x) => x.clip)).toEqual(['Jump_wose']);
    expect(e.episodes[0].outcome).toBe('completed');
    expect(e.episodes[0].reference_lift_m).toBeGreaterThan(0.02); // its reference starts ~3 cm below the floor
    expect(e.groups).toHaveLength(1);
    // Its root neither travels 1 m nor drops below 0.5 m: no group is measured, it is its own motion.
    expect(e.groups[0].group).toBe('own motion');
    expect(e.groups[0].success_rate).toBe(1);
    expect(e.groups[0].progress_soft).toBe(1);
    expect(e.groups[0].mpjpe_l_mm).toBeGreaterThan(5);
    expect(e.groups[0].mpjpe_l_mm).toBeLessThan(40);
  });

  it('runs the unitree_rl_mjlab folder on its motion file, bounded by --seconds', () => {
    const e = entry('mjlab_dance');
    expect(e.family).toBe('mjlab-deploy');
    expect(e.motions).toBe('own motion');
    expect(e.episodes).toHaveLength(1);
    expect(e.episodes[0].clip).toMatch(/^dance1_subject2\[0-4s\]$/);
    expect(e.episodes[0].seconds).toBeLessThanOrEqual(4);
    expect(e.groups[0].clips).toBe(1);
    // The group is measured on the whole motion (it travels), not on the 4 s window.
    expect(e.groups[0].group).toBe('locomotion');
  });

  it('lists the refused file and the velocity policy with their reasons, with no readings', () => {
    const b = entry('broken.onnx');
    expect(b.why).toContain(path.join(folder, 'broken.onnx'));
    expect(b.episodes).toEqual([]);
    expect(b.groups).toEqual([]);
    const v = entry('velocity');
    expect(v.why).toMatch(/velocity \(locomotion\) policy/);
    expect(v.episodes).toEqual([]);
  });

  it('prints the table and the reasons as text and Markdown', () => {
    expect(text).toMatch(/^policy\s+family\s+physics\s+group\s+clips\s+SR\s+progress-soft\s+MPJPE-l \(cm\)/);
    expect(text).toMatch(/Jump_wose\.onnx\s+beyondmimic\s+mjlab-g1\S+\s+own motion\s+1\s+1\.00\s+1\.00/);
    expect(text).toMatch(/mjlab_dance\s+mjlab-deploy\s+mjlab-g1\S+\s+locomotion \(own motion\)\s+1\s/);
    expect(text).toMatch(/broken\.onnx: refused — /);
    expect(text).toMatch(/velocity: not a tracker — /);
    expect(text).toMatch(/4 policies, 2 episodes \(first 2 s of each clip\)/);
    const md = fs.readFileSync(path.join(root, 'table.md'), 'utf8');
    expect(md).toMatch(/^\| policy \| family \| physics \| group \| clips \| SR \| progress-soft \| MPJPE-l \(cm\) \|/);
    expect(md).toMatch(/\| broken\.onnx \| — \| — \| refused \|/);
  });

  it('refuses to write over an existing --md file without --force', async () => {
    const r = await motionbench('policy', 'table', folder, '--md', path.join(root, 'table.md'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--md .* already exists; pass --force/);
  });

  it('finds each export of a folder holding several, and a folder holding one as one policy', () => {
    const f = path.join(root, 'discover');
    fs.mkdirSync(path.join(f, 'several'), { recursive: true });
    fs.mkdirSync(path.join(f, 'single'));
    for (const n of ['Waltz.onnx', 'Violin.onnx'])
      fs.symlinkSync(sharedData('policies/beyondmimic', n), path.join(f, 'several', n));
    fs.symlinkSync(sharedData('policies/beyondmimic/Waltz.onnx'), path.join(f, 'single', 'model.onnx'));
    fs.writeFileSync(path.join(f, 'README.md'), 'not a policy\n');
    expect(policiesInFolder(f).map((p) => path.relative(f, p))).toEqual([
      path.join('several', 'Violin.onnx'),
      path.join('several', 'Waltz.onnx'),
      'single',
    ]);
  });
});
