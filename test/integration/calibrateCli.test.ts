import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import { openCampaign } from '../../src/services/trace';
import { loadWorkload } from '../../src/services/workload';
import { connectRobot } from '../../src/services/bridge/bridgeClientBackend';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/robotEmulatorProcess';
import { motionbench } from '../helpers/runCli';
import { qualifyWavePair } from '../helpers/qualifiedWavePair';

// `motionbench calibrate` and `motionbench trial --list` against the robot emulator (a real child
// process): a still robot is captured and stored with its residuals vs the pair's clip; a robot
// that is moving (damped, sagging to the floor) is refused with the reason and nothing is stored;
// bad input names what is wrong.

let dir: string;
let emu: EmulatorProcess;
let pairId: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mb-calibrate-'));
  pairId = (await qualifyWavePair(dir, { workers: 1 })).pairId;
  emu = await startEmulatorProcess(['--mocap']);
}, 90_000);

afterAll(async () => {
  await emu?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('motionbench calibrate / trial --list', () => {
  it('lists the decided pairs', async () => {
    const r = await motionbench('trial', '--campaign', dir, '--list', '--json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      pairs: { pairId: string; admitted: boolean; clipName: string; matched: unknown }[];
    };
    expect(doc.pairs).toEqual([
      expect.objectContaining({ pairId, admitted: true, clipName: 'ub_wave_right', matched: null }),
    ]);
  });

  it('captures a still robot, bound to the pair’s clip, and stores it', async () => {
    const r = await motionbench(
      'calibrate',
      '--robot',
      emu.url,
      '--campaign',
      dir,
      '--pair',
      pairId.slice(0, 10),
      '--robot-unit',
      'g1-bench-3',
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      ok: boolean;
      calibration_id: string;
      record: {
        robotUnit: string;
        clipId: string;
        measured: { rootPosM: number[] | null };
        simulatorInitialState: unknown;
        residuals: { measuredVsClipStart: Record<string, number> };
      };
      residuals_vs_clip_start: { maxAbsJointRad: number; rollRad: number; pitchRad: number };
      stillness: { rateHz: number; maxJointVelRmsRadS: number };
    };
    expect(doc.ok).toBe(true);
    expect(doc.calibration_id).toMatch(/^cal-[0-9a-f]{24}$/);
    expect(doc.record.robotUnit).toBe('g1-bench-3');
    expect(doc.record.measured.rootPosM).not.toBeNull(); // --mocap
    expect(doc.record.simulatorInitialState).not.toBeNull();
    // The emulator stands in its default pose; the clip starts near it: small but non-zero residuals.
    expect(doc.residuals_vs_clip_start.maxAbsJointRad).toBeGreaterThan(0);
    expect(doc.residuals_vs_clip_start.maxAbsJointRad).toBeLessThan(0.3);
    expect(Math.abs(doc.residuals_vs_clip_start.pitchRad)).toBeLessThan(0.05);
    expect(doc.stillness.rateHz).toBeGreaterThan(400);
    const store = await openCampaign(dir);
    try {
      expect(store.getCalibration(doc.calibration_id)?.record.clipId).toBe(doc.record.clipId);
    } finally {
      store.close();
    }
  }, 60_000);

  it('refuses a robot that is moving, with the reason, and stores nothing', async () => {
    const store = await openCampaign(dir);
    const before = store.listEvents({ kind: 'calibration' }).length;
    store.close();
    // Another console drives the robot through the clip, again and again, for as long as the
    // capture may take: it is moving whenever we try to calibrate, however slowly the CLI starts.
    const driver = connectRobot({ url: emu.url });
    driver.setListener(async () => {});
    const clip = loadWorkload('core-v1').clips.find((c) => c.name === 'ub_wave_right')!;
    const binding = await resolveBindingSpec('builtin:assist=3000');
    let driving = true;
    let lease: Awaited<ReturnType<typeof driver.acquire>> | null = null;
    let firstStarted!: () => void;
    const started = new Promise<void>((r) => (firstStarted = r));
    const drive = (async () => {
      for (let n = 0; driving; n++) {
        lease = await driver.acquire(`real-20261129T000000Z-${(0x0123abcd + n).toString(16).padStart(8, '0')}`);
        try {
          const running = lease.run({ clip, binding, seed: 0, beforeStart: async () => (firstStarted(), true) });
          await running;
        } finally {
          await lease.release();
          lease = null;
        }
      }
    })();
    try {
      await started;
      await new Promise((r) => setTimeout(r, 500));
      const r = await motionbench('calibrate', '--robot', emu.url, '--campaign', dir, '--timeout', '3');
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /calibration refused: the robot was not still for 1 s within 3000 ms: .*is moving: RMS velocity/,
      );
    } finally {
      driving = false;
      const current = lease as Awaited<ReturnType<typeof driver.acquire>> | null;
      await current?.stop('aborted_by_operator', 'test over').catch(() => undefined);
      await drive.catch(() => undefined);
      await driver.close();
    }
    const after = await openCampaign(dir);
    try {
      expect(after.listEvents({ kind: 'calibration' }).length).toBe(before);
      expect(after.listEvents({ kind: 'refusal' }).some((e) => /not still/.test(e.reason ?? ''))).toBe(true);
    } finally {
      after.close();
    }
    await emu.control({ action: 'human_reset' });
  }, 60_000);

  it('names a pair that does not exist and a robot that cannot be reached', async () => {
    const bad = await motionbench('calibrate', '--robot', emu.url, '--campaign', dir, '--pair', 'pt-nope');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/no qualification pair "pt-nope" in this campaign; admitted: pt-/);
    const away = await motionbench('calibrate', '--robot', 'ws://127.0.0.1:1', '--campaign', dir, '--timeout', '1');
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(/cannot reach the robot at ws:\/\/127\.0\.0\.1:1/);
  }, 30_000);
});
