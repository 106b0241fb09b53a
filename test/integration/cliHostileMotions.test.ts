// Hostile motion files through `motionbench clip info`, which decodes in its own process (no file
// worker): the codecs' declared-size bounds are what protect it. Each file is run as a user runs
// it, under /usr/bin/time, and must be refused with one located line within a bounded wall time
// and peak RSS (a CLI start alone is ~300 MB and a few seconds on a loaded machine).
// Before the bounds: M2 was accepted as an 18.5-hour clip after 54 s at 5.8 GB peak, M3 refused
// after 50 s at 4.2 GB, the long APPENDS and the deep .npy header ended in "Maximum call stack
// size exceeded", and the __proto__ header and overlapping strides were accepted.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readInChild } from '../helpers/hostileFiles';
import { sparseSonicFolder, writeHostileMotionFiles } from '../helpers/hostileMotionFiles';
import { MOTIONBENCH_BIN } from '../helpers/runCli';
import { REPO_ROOT, sharedData } from '../helpers/sharedData';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-hostile-motions-'));
const files = writeHostileMotionFiles(dir);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Wall time and peak RSS of the child, from /usr/bin/time, with its exit code and output. */
interface TimedRun {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
  peakRssMiB: number;
}

const MARK = '@@time';

function timedClipInfo(file: string, ...extra: string[]): Promise<TimedRun> {
  return new Promise((resolve) => {
    execFile(
      '/usr/bin/time',
      ['-f', `${MARK} %e %M`, process.execPath, MOTIONBENCH_BIN, 'clip', 'info', file, ...extra],
      { cwd: REPO_ROOT, timeout: 120_000, killSignal: 'SIGKILL', maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const lines = stderr.split('\n');
        const at = lines.findIndex((l) => l.startsWith(MARK));
        const [, s, kb] = at >= 0 ? lines[at].split(' ') : ['', 'NaN', 'NaN'];
        const rest = lines.filter((l, i) => i !== at && !/^Command exited with non-zero status/.test(l));
        resolve({
          code: err ? ((err as { code?: number }).code ?? null) : 0,
          stdout,
          stderr: rest.join('\n').trim(),
          seconds: Number(s),
          peakRssMiB: Number(kb) / 1024,
        });
      },
    );
  });
}

/** Generous for a CLI start on a busy 2-core machine; the old reads took 50 s and 4–6 GB. */
const MAX_SECONDS = 45;
const MAX_PEAK_RSS_MIB = 700;

describe('clip info refuses hostile motion files with one located line, in bounded time and memory', () => {
  it.each([
    ['m2-zero-stride.motion', 'dof_pos', /has stride 0/],
    ['overlapping-stride.motion', 'dof_pos', /overlaps dimension 0/],
    ['m3-empty-dict-pickle.motion', 'm3/data.pkl', /the pickle makes more than 100000 values/],
    ['long-appends-pickle.motion', 'appends/data.pkl', /the pickle makes more than 100000 values/],
    ['deep-list-pickle.motion', 'deep/data.pkl', /the pickle makes more than 100000 values/],
    ['deep-npy-header.npz', 'joint_pos', /containers nest more than 16 deep/],
    ['proto-npy-header.npz', 'joint_pos', /unexpected key '__proto__'/],
  ])('%s', async (name, key, why) => {
    const run = await timedClipInfo(files[name]);
    console.log(`[cli] ${name}: exit ${run.code}, ${run.seconds} s, peak RSS ${run.peakRssMiB.toFixed(0)} MiB`);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr.split('\n')).toHaveLength(1);
    expect(run.stderr.startsWith(`motionbench: ${files[name]} [${key}]: `), run.stderr).toBe(true);
    expect(run.stderr).toMatch(why);
    expect(run.stderr).not.toMatch(/Maximum call stack|Invalid string length/);
    expect(run.seconds).toBeLessThan(MAX_SECONDS);
    expect(run.peakRssMiB).toBeLessThan(MAX_PEAK_RSS_MIB);
  });

  it.each([
    ['short-lines.csv', ':1:2: ', /expected 36 fields/],
    ['comma-lines.csv', ': ', /more than 2000000 lines/],
    ['empty-arrays.json', ': ', /arrays\/objects .* more than the 512 MiB budget/],
    ['many-members.npz', ': ', /lists 65534 members, more than the 10000 read/],
    ['duplicate-member.npz', ': ', /lists the member joint_pos\.npy twice/],
  ])('%s (from the audit of the other codecs)', async (name, after, why) => {
    const run = await timedClipInfo(files[name], '--fps', '30');
    console.log(`[cli] ${name}: exit ${run.code}, ${run.seconds} s, peak RSS ${run.peakRssMiB.toFixed(0)} MiB`);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr.split('\n')).toHaveLength(1);
    expect(run.stderr.startsWith(`motionbench: ${files[name]}${after}`), run.stderr).toBe(true);
    expect(run.stderr).toMatch(why);
    expect(run.seconds).toBeLessThan(MAX_SECONDS);
    expect(run.peakRssMiB).toBeLessThan(MAX_PEAK_RSS_MIB);
  });

  it('control: the real ProtoMotions clip is read', async () => {
    const run = await timedClipInfo(sharedData('motions/protomotions/g1_crouch_to_run.motion'));
    console.log(
      `[cli] control g1_crouch_to_run.motion: exit ${run.code}, ${run.seconds} s, peak RSS ${run.peakRssMiB.toFixed(0)} MiB`,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/frames\s+97 at 30 fps/);
  });
});

describe("a SONIC folder's files share one 256 MiB budget, checked before each file is read", () => {
  it('five 250 MiB files (1.25 GB together) are refused at the second, after reading only the first', async () => {
    const folder = sparseSonicFolder(dir);
    const r = await readInChild('clip', folder);
    console.log(
      `[child] sparse SONIC folder: ${r.ms.toFixed(0)} ms, peak RSS ${r.peakRssMiB.toFixed(0)} MiB (before ${r.rssBeforeMiB.toFixed(0)})`,
    );
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(
      /body_pos\.csv: file is 250\.0 MiB, larger than the 6 MiB limit for what the folder's files before body_pos\.csv left of the 256 MiB/,
    );
    expect(r.peakRssMiB - r.rssBeforeMiB).toBeLessThan(400);
  });
});
