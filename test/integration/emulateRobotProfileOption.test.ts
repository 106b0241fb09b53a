// `motionbench emulate-robot --profile` as a user runs it (child processes): a named profile is
// picked by name and reported by name (the --json document and the hello), a misspelt name is
// refused with the names there are, a profile file is read on its base profile and a bad field in
// it is named (docs/ROBOT_EMULATOR.md §1, §4).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MOTIONBENCH_BIN, motionbench as mb } from '../helpers/runCli';
import { REPO_ROOT } from '../helpers/sharedData';
import { PlainClient } from './bridgeTestClient';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-emu-profile-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Starts emulate-robot with `args` and --json; resolves with its document once it listens, and a stop. */
async function startEmulator(args: string[]): Promise<{ doc: Record<string, unknown>; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [MOTIONBENCH_BIN, 'emulate-robot', '--port', '0', '--json', ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  const doc = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`emulate-robot did not start within 60 s:\n${err}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += String(d);
      try {
        const parsed = JSON.parse(out) as Record<string, unknown>;
        clearTimeout(t);
        resolve(parsed);
      } catch {
        // not all of it yet
      }
    });
    void exited.then(() => reject(new Error(`emulate-robot exited before listening:\n${err}`)));
  });
  return {
    doc,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('emulate-robot --profile', () => {
  it('by name: the profile is reported by its name in the --json document and the hello', async () => {
    const emu = await startEmulator(['--profile', 'exaggerated']);
    try {
      const profile = emu.doc.profile as { name: string; encoderNoise: { qRad: number } };
      expect(profile.name).toBe('exaggerated');
      expect(profile.encoderNoise.qRad).toBe(1e-3);
      const c = await PlainClient.connect(emu.doc.url as string, { subscribe: false });
      try {
        expect(c.serverInfo!.name).toBe('motionbench emulate-robot (profile exaggerated)');
      } finally {
        await c.close();
      }
    } finally {
      await emu.stop();
    }
  }, 90_000);

  it('without it: g1-plausible; a file: its base with its fields, named after both', async () => {
    const file = path.join(dir, 'lab.json');
    fs.writeFileSync(
      file,
      JSON.stringify({ format: 'motionbench-robot-emulator/1', base: 'exaggerated', actuatorLatencyMs: 2 }),
    );
    const [plain, fromFile] = await Promise.all([startEmulator([]), startEmulator(['--profile', file])]);
    try {
      expect((plain.doc.profile as { name: string }).name).toBe('g1-plausible');
      expect(fromFile.doc.profile).toMatchObject({
        name: `exaggerated + ${file}`,
        actuatorLatencyMs: 2,
        kpScale: 0.8,
        encoderNoise: { qRad: 1e-3 },
      });
    } finally {
      await Promise.all([plain.stop(), fromFile.stop()]);
    }
  }, 90_000);

  it('a misspelt name is refused (exit 2) with the names; a bad field in a file is named (exit 1)', async () => {
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ format: 'motionbench-robot-emulator/1', encoderNoise: { qStepRad: -1 } }));
    const [misspelt, badField] = await Promise.all([
      mb('emulate-robot', '--port', '0', '--profile', 'g1_plausible'),
      mb('emulate-robot', '--port', '0', '--profile', bad),
    ]);
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toMatch(
      /--profile: unknown robot emulator profile "g1_plausible"; the named profiles are g1-plausible, exaggerated, zero/,
    );
    expect(badField.code).toBe(1);
    expect(badField.stderr).toContain(`${bad} [encoderNoise.qStepRad]: encoderNoise.qStepRad (rad) must be in [0, 1]`);
  }, 60_000);
});
