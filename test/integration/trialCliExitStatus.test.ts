// `motionbench trial` exit status: a session whose only real trial ended
// `link_lost` used to exit 0 — nothing remained to run, so nothing "stopped early". Exit 0 now
// means every real trial completed; this one exits 4 and says which trial did not (docs/TRIALS.md).
// All real processes: the CLI, the robot emulator (its link killed mid-trial through its control
// channel), the interlock box emulator on a socat PTY.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePtyPair, type TestPtyPair } from '../helpers/ptyPair';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/robotEmulatorProcess';
import { motionbenchInProcess, spawnMotionbench, trialCliArgs } from '../helpers/runCli';
import { qualifyWavePair } from '../helpers/qualifiedWavePair';

let dir: string;
let pty: TestPtyPair;
let emu: EmulatorProcess;
let pairId: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mb-trial-exit-'));
  pairId = (await qualifyWavePair(dir, { workers: 1 })).pairId;
  pty = await makePtyPair();
  emu = await startEmulatorProcess(['--interlock', pty.devicePath, '--mocap']);
}, 90_000);

afterAll(async () => {
  await emu?.stop('SIGKILL');
  await pty?.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('motionbench trial exit status', () => {
  it('the only trial (--trials 1) ends link_lost: exit 4, the trial named on stderr, not 0', async () => {
    const where = { campaign: dir, robot: emu.url, interlock: pty.consolePath, pair: pairId };
    const child = spawnMotionbench([...trialCliArgs(where), '--trials', '1', '--yes', '--json']);
    let out = '';
    let err = '';
    let injected = false;
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString('utf8');
      if (!injected && /^\[running\] trial 1 of 1/m.test(err)) {
        injected = true;
        // A second into the trial, the robot's link goes away (every connection terminated).
        setTimeout(() => void emu.control({ action: 'kill_link' }).catch(() => undefined), 1000);
      }
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(injected, err).toBe(true);
    const doc = JSON.parse(out) as {
      real: { trialIndex: number; outcome: string }[];
      remaining: number;
      stoppedEarly: string | null;
      session: { text: string; tone: string };
    };
    expect(doc.real.map((t) => [t.trialIndex, t.outcome])).toEqual([[0, 'link_lost']]);
    expect(doc.remaining).toBe(0);
    expect(doc.stoppedEarly).toBeNull();
    // The badge the console shows: every trial ran, but the session did not complete.
    expect(doc.session).toEqual({ text: 'ended · 1 link lost', tone: 'alarm' });
    expect(code, err).toBe(4);
    expect(err).toMatch(/^motionbench: not every real trial ran to its end: trial 1 link_lost \(/m);
  }, 120_000);

  it('--help lists the exit codes', async () => {
    const r = await motionbenchInProcess('trial', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/0 {2}every real trial of the pair ran to its end: completed, or hard_failure/);
    expect(r.stdout).toMatch(/4 {2}every trial ran, but one was cut short/);
  });
});
