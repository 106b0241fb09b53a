// `motionbench sensitivity --robot` end to end: a qualification
// pair with a stored calibration, a robot emulator in a process of its own, the interlock box on a
// real socat PTY, the CLI in-process. Every perturbation runs as a real trial (the gate, the armed
// interlock, the start-pose check) of the clip's first second, placed by the emulator's control
// channel, recorded in a campaign of its own. Checked, with the `zero` and the `exaggerated`
// profiles: the robot's trials are all there and none in the pair's campaign; the joint offsets
// the robot reached follow the asked-for ones (a pelvis tilt it does not keep); the robot's Gram
// beats isotropy on held-out directions; root pitch dominates in both Grams; D_G and the angle
// are in range; the repeats agree (ICC > 0.99) without being bit-identical. Refused: a robot
// without the control channel (nothing moves, nothing is recorded), a scale beyond the start-pose
// check, a missing --yes, --record = --campaign, an axis that is not perturbed.
//
// Slow on purpose (a whole-system run): per profile, 12 real trials of the clip's first second at
// real time on the emulated robot, each after the emulator places the start and the interlock is
// armed, besides the simulated study; the qualification runs once for the file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SensitivityDocument } from '../../src/api/contract';
import { main } from '../../src/cli/main';
import { openCampaign } from '../../src/services/trace';
import { listAdmittedPairs } from '../../src/services/trial';
import { storeCalibratedStart } from '../helpers/calibratedPair';
import { makePtyPair, type TestPtyPair } from '../helpers/ptyPair';
import { WAVE_CLIP, waveQualifyArgs } from '../helpers/qualifiedWavePair';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/robotEmulatorProcess';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-robot-sensitivity-'));
const campaign = path.join(root, 'campaign');
let pairId = '';
let pty: TestPtyPair;

async function inProcess(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (x) => void (stdout += x), stderr: (x) => void (stderr += x) });
  return { code, stdout, stderr };
}

const realEpisodes = async (dir: string) => {
  const s = await openCampaign(dir, { readOnly: true });
  try {
    return s.findEpisodes({ executionDomain: 'real_robot' });
  } finally {
    s.close();
  }
};

beforeAll(async () => {
  pty = await makePtyPair();
  // In this process like the studies below (no second start-up of the command); the same command line.
  const q = await inProcess(...waveQualifyArgs(campaign, 2));
  expect(q.code, q.stderr).toBe(0);
  const store = await openCampaign(campaign);
  try {
    pairId = listAdmittedPairs(store).find((p) => p.clipName === WAVE_CLIP)!.pairId;
  } finally {
    store.close();
  }
  await storeCalibratedStart(campaign, pairId);
}, 240_000);

afterAll(async () => {
  await pty?.dispose();
  fs.rmSync(root, { recursive: true, force: true });
});

const study = (emu: EmulatorProcess, record: string, ...extra: string[]) =>
  inProcess(
    'sensitivity',
    '--campaign',
    campaign,
    '--pair',
    pairId,
    '--axes',
    'left_knee_joint,left_hip_pitch_joint,root_pitch',
    '--scales',
    '5',
    '--seconds',
    '1',
    '--held-out',
    '3',
    '--robot',
    emu.url,
    '--interlock',
    pty.consolePath,
    '--record',
    record,
    '--yes',
    '--json',
    ...extra,
  );

const axisOf = (doc: SensitivityDocument, response: string, where: 'sim' | 'robot') => {
  const r = where === 'sim' ? doc.responses : doc.robot!.responses;
  return r.find((x) => x.response === response)!.scales[0];
};

describe.each(['zero', 'exaggerated'])('motionbench sensitivity --robot (emulator --profile %s)', (profile) => {
  let emu: EmulatorProcess;
  beforeAll(async () => {
    emu = await startEmulatorProcess(['--interlock', pty.devicePath, '--mocap', '--seed', '7', '--profile', profile]);
  }, 60_000);
  afterAll(async () => {
    await emu?.stop();
  });

  it('runs every perturbation as a recorded real trial and fits the robot’s Gram on the starts it reached', async () => {
    const record = path.join(root, `record-${profile}`);
    const r = await study(emu, record);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/robot batch 1: runs 1–12 of 12/);
    const doc = JSON.parse(r.stdout) as SensitivityDocument;
    expect(doc.domain).toBe('simulation_and_robot');
    const rb = doc.robot!;
    // 3 repeats + 2 × 3 axis runs + 3 held-out, every one a finished real-robot episode of the prefix.
    expect(rb.runs).toBe(12);
    expect(rb.outcomes).toEqual({ completed: 12 });
    expect(rb.prefix_clip.name).toBe('ub_wave_right (first 1.00 s)');
    const recorded = await realEpisodes(record);
    expect(recorded.length).toBe(12);
    expect(recorded.every((e) => e.status === 'finished')).toBe(true);
    // The pair's own campaign holds no trial from a perturbed start.
    expect(await realEpisodes(campaign)).toEqual([]);

    // The robot kept most of each asked-for joint offset, with its sign (a wrong joint mapping
    // would put ≈ 0 or a negative share here). A pelvis tilt it does not keep: put down with its
    // feet on the floor, it stands back on them (measured: about −30 % of the asked-for pitch).
    for (const k of rb.kept.filter((x) => x.axis !== 'root_pitch')) {
      expect(k.share, k.axis).toBeGreaterThan(0.3);
      expect(k.share, k.axis).toBeLessThan(1.5);
    }
    expect(Math.abs(rb.kept.find((x) => x.axis === 'root_pitch')!.share)).toBeLessThan(0.6);

    for (const response of ['body_position_mm', 'joint_position_rad']) {
      const sim = axisOf(doc, response, 'sim');
      const robot = axisOf(doc, response, 'robot');
      // The robot's Gram carries geometry: it predicts held-out directions far better than isotropy.
      expect(robot.held_out.wape).toBeLessThan(0.5 * robot.held_out.wape_isotropic);
      // Root pitch dominates on both.
      expect(robot.dominant_direction[0].axis).toBe('root_pitch');
      expect(sim.dominant_direction[0].axis).toBe('root_pitch');
      const g = robot.gram;
      g.forEach((row, i) => row.forEach((v, j) => expect(v).toBeCloseTo(g[j][i], 12)));
      expect(robot.eigenvalues.at(-1)!).toBeGreaterThanOrEqual(0);
      const c = doc.sim_vs_robot!.find((x) => x.response === response)!;
      expect(c.d_g).toBeGreaterThan(0);
      expect(c.d_g).toBeLessThan(Math.SQRT2);
      expect(c.angle_deg).toBeGreaterThanOrEqual(0);
      expect(c.angle_deg).toBeLessThanOrEqual(90);
    }
    // The robot's repeats: a real-time loop, not a replay (never bit-identical), and reliable.
    expect(rb.replay.repeats).toBe(3);
    expect(rb.replay.icc!).toBeGreaterThan(0.99);
  }, 600_000);
});

describe('motionbench sensitivity --robot refuses', () => {
  it('a robot without the emulator’s control channel: nothing moves, nothing is recorded', async () => {
    const emu = await startEmulatorProcess(['--interlock', pty.devicePath, '--no-control']);
    try {
      const record = path.join(root, 'record-no-control');
      const r = await study(emu, record);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/the robot's start cannot be set: .*does not declare \/emulator\/control/);
      expect(r.stderr).toMatch(/no human places a real robot to a milliradian/);
      expect(fs.existsSync(record)).toBe(false);
    } finally {
      await emu.stop();
    }
  }, 120_000);

  it('a scale beyond the start-pose check, before anything connects; and options without --robot', async () => {
    const r = await inProcess(
      'sensitivity',
      '--campaign',
      campaign,
      '--pair',
      pairId,
      '--axes',
      'left_knee_joint',
      '--scales',
      '1,45',
      '--robot',
      'ws://127.0.0.1:9',
      '--interlock',
      '/nonexistent/tty',
      '--record',
      path.join(root, 'record-far'),
      '--yes',
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(
      /left_knee_joint: 45 σ is 0\.0450 rad, beyond 80 % of the 0\.05 rad the start-pose check allows/,
    );
    const noYes = await inProcess(
      'sensitivity',
      '--campaign',
      campaign,
      '--pair',
      pairId,
      '--robot',
      'ws://x',
      '--interlock',
      '/x',
      '--record',
      '/tmp/x',
    );
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toMatch(/confirm them all with --yes/);
    const stray = await inProcess('sensitivity', '--campaign', campaign, '--pair', pairId, '--record', '/tmp/x');
    expect(stray.stderr).toMatch(/--record needs --robot/);
    const same = await inProcess(
      'sensitivity',
      '--campaign',
      campaign,
      '--pair',
      pairId,
      '--robot',
      'ws://x',
      '--interlock',
      '/x',
      '--record',
      campaign,
      '--yes',
    );
    expect(same.stderr).toMatch(/--record must not be the pair's campaign/);
    const badAxis = await inProcess(
      'sensitivity',
      '--campaign',
      campaign,
      '--pair',
      pairId,
      '--axes',
      'left_elbow_joint',
    );
    expect(badAxis.stderr).toMatch(/axis "left_elbow_joint" is not perturbed; the axes are left_hip_pitch_joint, /);
  }, 120_000);
});
