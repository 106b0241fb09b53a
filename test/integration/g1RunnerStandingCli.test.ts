import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { motionbenchInProcess as motionbench } from '../helpers/runCli';
import { sharedData } from '../helpers/sharedData';

// `motionbench g1-runner --after-clip standing_policy`: the standing controller's folder is
// required and read at start-up; a bad one is refused with the file and key before anything
// touches DDS.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-standing-cli-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('g1-runner --after-clip standing_policy (command line)', () => {
  it('needs --standing-policy', async () => {
    const r = await motionbench('g1-runner', '--interface', 'lo', '--after-clip', 'standing_policy');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/needs --standing-policy/);
  });

  it('refuses a folder whose deploy.yaml reads joint_ids_map wrong, naming the file and key', async () => {
    const src = sharedData('policies/unitree_rl_lab_g1_velocity_v0');
    const dir = path.join(tmp, 'v0');
    fs.mkdirSync(path.join(dir, 'params'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'exported'), { recursive: true });
    fs.copyFileSync(path.join(src, 'exported/policy.onnx'), path.join(dir, 'exported/policy.onnx'));
    const yaml = fs.readFileSync(path.join(src, 'params/deploy.yaml'), 'utf8');
    fs.writeFileSync(
      path.join(dir, 'params/deploy.yaml'),
      yaml.replace('joint_ids_map: [0, 6,', 'joint_ids_map: [0, 0,'),
    );
    const r = await motionbench(
      'g1-runner',
      '--interface',
      'lo',
      '--after-clip',
      'standing_policy',
      '--standing-policy',
      dir,
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(
      /deploy\.yaml:\d+:\d+ \[joint_ids_map\[1\]\]: motor 0 \(left_hip_pitch_joint\) is listed twice/,
    );
  });

  it('refuses --standing-policy without standing_policy, and an unknown declaration', async () => {
    const a = await motionbench('g1-runner', '--interface', 'lo', '--after-clip', 'gantry', '--standing-policy', tmp);
    expect(a.stderr).toMatch(/only with --after-clip standing_policy/);
    const b = await motionbench('g1-runner', '--interface', 'lo', '--after-clip', 'floor');
    expect(b.stderr).toMatch(/neither gantry nor standing_policy/);
  });
});
