// Hostile files where the services expect a user's file: /dev/zero, a
// FIFO, symlinks to them, a ZIP bomb shaped as a motion NPZ. Every reader must refuse them at
// once with an InputError-style message naming the file — never read without bound, block, or
// inflate before checking. Each read runs in a child process under a watchdog
// (test/helpers/hostileLoadChild.ts), so a reader that runs away fails the test instead of
// exhausting the machine's memory or hanging the run; its peak RSS is what is asserted (no timing).

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observationSize } from '../../src/domain/wbc/observationBuilder';
import { InputError } from '../../src/domain/problems';
import { FILE_LIMITS, readBoundedFile } from '../../src/services/files/boundedRead';
import {
  amplificationNpz,
  declaredInflatedBytes,
  DEV_ZERO,
  hostileDir,
  makeFifo,
  mjcfIncluding,
  readInChild,
  symlinkTo,
  workloadWithManifest,
  type ChildLoadReport,
} from '../helpers/hostileFiles';
import { encodeLinearPolicy, standardInterface, writeBindingFiles } from '../helpers/onnxBuilder';
import { motionbenchWithin } from '../helpers/runCli';

/** RSS a refused hostile read may add, MiB: the file's own bytes and the reader's bookkeeping, not the payload. */
const REFUSAL_RSS_GROWTH_MIB = 64;

let tmp: { dir: string; cleanup(): void };
beforeAll(() => {
  tmp = hostileDir('mb-hostile-files-');
});
afterAll(() => tmp?.cleanup());

const sub = (name: string) => {
  const d = path.join(tmp.dir, name);
  fs.mkdirSync(d, { recursive: true });
  return d;
};

function expectRefused(r: ChildLoadReport, message: RegExp): void {
  expect(r.killed, `the reader ran away: ${r.error}`).toBeFalsy();
  expect(r.ok).toBe(false);
  expect(r.error).toMatch(message);
  expect(r.peakRssMiB - r.rssBeforeMiB).toBeLessThan(REFUSAL_RSS_GROWTH_MIB);
}

const NOT_REGULAR_DEVICE = /not a regular file \(character device\)/;

describe('devices and FIFOs where a file is expected', () => {
  it('`motionbench clip info /dev/zero` refuses the character device at once, naming it', async () => {
    const t0 = performance.now();
    const r = await motionbenchWithin(20_000, 'clip', 'info', DEV_ZERO);
    const ms = performance.now() - t0;
    console.log(`clip info /dev/zero: exit ${r.code} after ${ms.toFixed(0)} ms (process start included)`);
    expect(r.killed).toBeFalsy();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/\/dev\/zero: not a regular file \(character device\)/);
  });

  it('loadClipFile refuses /dev/zero without reading it', async () => {
    const r = await readInChild('clip', DEV_ZERO, 30);
    console.log(
      `loadClipFile(/dev/zero): refused in ${r.ms.toFixed(2)} ms, RSS ${r.rssBeforeMiB.toFixed(0)} → peak ${r.peakRssMiB.toFixed(0)} MiB`,
    );
    expectRefused(r, /^\/dev\/zero: not a regular file \(character device\)$/);
  });

  it('a symlink named like a clip that points at /dev/zero is judged by what it opens, and named as given', async () => {
    const link = symlinkTo(sub('symlink'), 'walk1_subject1.csv', DEV_ZERO);
    const r = await readInChild('clip', link);
    expectRefused(
      r,
      new RegExp(`^${link.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: not a regular file \\(character device\\)$`),
    );
  });

  it('a FIFO with no writer as a clip is refused promptly instead of blocking the open', async () => {
    const fifo = makeFifo(sub('fifo'), 'clip.csv');
    const r = await readInChild('clip', fifo, 30);
    console.log(`loadClipFile(FIFO): refused in ${r.ms.toFixed(2)} ms`);
    expectRefused(r, /clip\.csv: not a regular file \(FIFO \(named pipe\)\)/);
  });

  it('an ONNX binding whose modelFile is /dev/zero is refused at [modelFile]', async () => {
    const iface = standardInterface();
    const model = encodeLinearPolicy({ inDim: observationSize(iface), outDim: 29 });
    const binding = writeBindingFiles(sub('onnx'), model, iface, { modelFile: DEV_ZERO });
    const r = await readInChild('onnx', binding);
    expectRefused(
      r,
      /binding\.json \[modelFile\]: cannot read \/dev\/zero \(not a regular file \(character device\)\)/,
    );
  });

  it('an MJCF whose <include> is /dev/zero is refused at the include', async () => {
    const model = mjcfIncluding(sub('mjcf'), DEV_ZERO);
    const r = await readInChild('mjcf', model);
    expectRefused(r, /part\.xml: cannot read the file \(not a regular file \(character device\)\)/);
  });

  it('the simulator’s model loader refuses the same /dev/zero include at the include, before MuJoCo copies the folder', async () => {
    const model = mjcfIncluding(sub('mjcf-sim'), DEV_ZERO);
    const r = await readInChild('mujoco', model);
    expectRefused(r, /part\.xml: cannot read the file \(not a regular file \(character device\)\)/);
  });

  it('a workload folder whose workload.json is /dev/zero, and /dev/zero named as the workload, are refused', async () => {
    const folder = workloadWithManifest(sub('workload'), DEV_ZERO);
    expectRefused(
      await readInChild('workload', folder),
      /workload\.json: cannot read the manifest \(not a regular file \(character device\)\)/,
    );
    expectRefused(
      await readInChild('workload', DEV_ZERO),
      /^\/dev\/zero: cannot read the manifest \(not a regular file \(character device\)\)/,
    );
  });

  it('a binding spec, an episode file, a hashed model file and a robot mesh that are /dev/zero are refused', async () => {
    expectRefused(
      await readInChild('binding', DEV_ZERO),
      /not a readable JSON binding file \(not a regular file \(character device\)\)/,
    );
    expectRefused(
      await readInChild('episode', DEV_ZERO),
      /cannot read the episode file \(not a regular file \(character device\)\)/,
    );
    expectRefused(
      await readInChild('hash', DEV_ZERO),
      /cannot hash \/dev\/zero: not a regular file \(character device\)/,
    );
    const mesh = symlinkTo(sub('mesh'), 'pelvis.stl', DEV_ZERO);
    expectRefused(await readInChild('mesh', mesh), NOT_REGULAR_DEVICE);
  });
});

describe('size limits on the open descriptor', () => {
  it('refuses a file over its kind limit from the descriptor size, before reading', () => {
    const big = path.join(sub('limits'), 'huge.json');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, FILE_LIMITS.json.bytes + 1); // sparse: nothing to read
    expect(() => readBoundedFile(big, 'json')).toThrow(
      /huge\.json: file is 16\.0 MiB, larger than the 16 MiB limit for JSON documents/,
    );
  });

  it('refuses a file that grows past the limit while it is read (its size at open said it fits)', () => {
    // /proc/self/status is a regular file whose fstat size is 0 and whose content is ~1.5 kB.
    let caught: unknown;
    try {
      readBoundedFile('/proc/self/status', { bytes: 100, what: 'test files' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InputError);
    expect((caught as InputError).message).toMatch(
      /\/proc\/self\/status: file grew past the 100-byte limit for test files while it was read/,
    );
    expect(
      new TextDecoder().decode(readBoundedFile('/proc/self/status', { bytes: 1 << 20, what: 'test files' })),
    ).toMatch(/^Name:/);
  });
});

describe('NPZ amplification: shapes and budget checked before inflating', () => {
  it('the amplification NPZ (members inflating to just under the per-member limit) is refused from its headers: peak RSS stays small', async () => {
    const npz = await amplificationNpz();
    const file = path.join(sub('npz'), 'bomb.npz');
    fs.writeFileSync(file, npz);
    const r = await readInChild('clip', file);
    console.log(
      `amplification NPZ: ${(npz.length / 1048576).toFixed(2)} MB declaring ${(declaredInflatedBytes(npz) / 1048576).toFixed(0)} MiB; ` +
        `refused in ${r.ms.toFixed(0)} ms, RSS ${r.rssBeforeMiB.toFixed(0)} → peak ${r.peakRssMiB.toFixed(0)} MiB, arrayBuffers ${r.arrayBuffersMiB.toFixed(0)} MiB`,
    );
    expectRefused(r, /bomb\.npz: the arrays would inflate to 944\.6 MiB .* more than the 256 MiB budget for one NPZ/);
  });

  it('its shape-mismatched variant is refused before any member is inflated', async () => {
    const npz = await amplificationNpz({ mismatch: true });
    const file = path.join(sub('npz'), 'bomb_mismatch.npz');
    fs.writeFileSync(file, npz);
    const r = await readInChild('clip', file);
    console.log(
      `shape-mismatched amplification NPZ: refused in ${r.ms.toFixed(0)} ms, RSS ${r.rssBeforeMiB.toFixed(0)} → peak ${r.peakRssMiB.toFixed(0)} MiB`,
    );
    expectRefused(r, /bomb_mismatch\.npz \[body_quat_w\]: has \d+ frames but joint_pos has \d+/);
  });
});
