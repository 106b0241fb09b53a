// Hostile inputs through the `motionbench` command (the entry the bin calls, in this process; a
// child process where a case needs one: a closed pipe), real files in a temp folder: overwriting
// (an output never replaces an existing file without --force, never an input even with --force)
// and clear errors (a located, one-line reason for each
// attack instead of a stack overflow, a bare mjCError, parseArgs' "ambiguous", a 600-line flood or
// a silently accepted absurd value).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  csvWithField,
  deeplyNestedBodies,
  exponentialIncludes,
  includeCycle,
  modelWithMissingMesh,
  realCsvText,
  utf16Bytes,
  workloadWithSymlinkLoops,
  writeFiles,
} from '../helpers/hostileInputs';
import { motionbenchInProcess as mb, motionbenchInProcessWithin as mbWithin } from '../helpers/runCli';
import { OUR_G1, REPO_ROOT } from '../helpers/sharedData';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-cli-hostile-'));
const CLIP = path.join(dir, 'walk.csv');
const CLIP_TEXT = realCsvText(31); // 1 s at 30 fps: a short simulation

beforeAll(() => fs.writeFileSync(CLIP, CLIP_TEXT));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const isMcap = (file: string): boolean => fs.readFileSync(file).subarray(0, 5).toString('latin1') === '\x89MCAP';

describe('sim never writes over an input, nor over an existing file without --force', () => {
  it('--out <the clip itself> is refused, with or without --force, and the clip is intact', async () => {
    const [plain, forced] = await Promise.all([
      mb('sim', '--clip', CLIP, '--fps', '30', '--out', CLIP),
      mb('sim', '--clip', CLIP, '--fps', '30', '--out', CLIP, '--force'),
    ]);
    for (const r of [plain, forced]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(
        `motionbench: --out ${CLIP} is the --clip file ${CLIP}: refusing to write over an input, even with --force\n`,
      );
    }
    expect(fs.readFileSync(CLIP, 'utf8')).toBe(CLIP_TEXT);
  });

  it('a symlink or a hard link to the clip is the same file (realpath, device + inode)', async () => {
    const sym = path.join(dir, 'walk-link.csv');
    const hard = path.join(dir, 'walk-hard.csv');
    fs.symlinkSync(CLIP, sym);
    fs.linkSync(CLIP, hard);
    const [viaSym, viaHard] = await Promise.all([
      mb('sim', '--clip', sym, '--fps', '30', '--exec-out', CLIP, '--force'),
      mb('sim', '--clip', CLIP, '--fps', '30', '--out', hard, '--force'),
    ]);
    expect(viaSym.code).toBe(2);
    expect(viaSym.stderr).toMatch(
      /--exec-out .*walk\.csv is the --clip file .*walk-link\.csv: refusing to write over an input/,
    );
    expect(viaHard.code).toBe(2);
    expect(viaHard.stderr).toMatch(
      /--out .*walk-hard\.csv is the --clip file .*walk\.csv: refusing to write over an input/,
    );
    expect(fs.readFileSync(CLIP, 'utf8')).toBe(CLIP_TEXT);
  });

  it('the model, a file it includes and the default model are inputs too', async () => {
    const modelDir = path.join(dir, 'model-in');
    fs.mkdirSync(modelDir);
    const model = path.join(modelDir, 'scene.xml');
    fs.copyFileSync(OUR_G1, path.join(modelDir, 'g1.xml'));
    fs.writeFileSync(model, '<mujoco model="scene">\n  <include file="g1.xml"/>\n</mujoco>\n');
    const before = fs.readFileSync(path.join(modelDir, 'g1.xml'), 'utf8');
    const [top, included, ours] = await Promise.all([
      mb('sim', '--clip', CLIP, '--fps', '30', '--model', model, '--out', model, '--force'),
      mb(
        'sim',
        '--clip',
        CLIP,
        '--fps',
        '30',
        '--model',
        model,
        '--exec-out',
        path.join(modelDir, 'g1.xml'),
        '--force',
      ),
      mb('sim', '--clip', CLIP, '--fps', '30', '--exec-out', path.relative(REPO_ROOT, OUR_G1), '--force'),
    ]);
    expect(top.code).toBe(2);
    expect(top.stderr).toMatch(/--out .*scene\.xml is the --model file .*scene\.xml: refusing/);
    expect(included.code).toBe(2);
    expect(included.stderr).toMatch(/--exec-out .*g1\.xml is a file included by the model .*g1\.xml: refusing/);
    expect(ours.code).toBe(2);
    expect(ours.stderr).toMatch(/--exec-out assets\/g1\/g1\.xml is the model .*assets\/g1\/g1\.xml: refusing/);
    expect(fs.readFileSync(path.join(modelDir, 'g1.xml'), 'utf8')).toBe(before);
  });

  it('an existing output needs --force; --out and --exec-out may not be the same file', async () => {
    const out = path.join(dir, 'old-episode.mcap');
    const exec = path.join(dir, 'old-exec.json');
    fs.writeFileSync(out, 'precious');
    fs.writeFileSync(exec, 'precious too');
    const [refused, same] = await Promise.all([
      mb('sim', '--clip', CLIP, '--fps', '30', '--out', out, '--exec-out', exec),
      mb(
        'sim',
        '--clip',
        CLIP,
        '--fps',
        '30',
        '--out',
        path.join(dir, 'x.mcap'),
        '--exec-out',
        path.join(dir, '.', 'x.mcap'),
      ),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`motionbench: --out ${out} already exists; pass --force to overwrite it\n`);
    expect(fs.readFileSync(out, 'utf8')).toBe('precious');
    expect(fs.readFileSync(exec, 'utf8')).toBe('precious too');
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/--out and --exec-out name the same file/);
    expect(fs.existsSync(path.join(dir, 'x.mcap'))).toBe(false);

    const forced = await mb(
      'sim',
      '--clip',
      CLIP,
      '--fps',
      '30',
      '--out',
      out,
      '--exec-out',
      exec,
      '--force',
      '--json',
    );
    expect(forced.code, forced.stderr).toBe(0);
    expect(isMcap(out)).toBe(true);
    expect(JSON.parse(fs.readFileSync(exec, 'utf8')).format).toBe('motionbench-clip/1');
  }, 60_000);

  it('a dangling symlink as --out is an existing name: refused without --force', async () => {
    const link = path.join(dir, 'dangling.mcap');
    fs.symlinkSync(path.join(dir, 'nowhere', 'target.mcap'), link);
    const r = await mb('sim', '--clip', CLIP, '--fps', '30', '--out', link);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--out .*dangling\.mcap already exists; pass --force/);
  });

  it('--help documents --force', async () => {
    const r = await mb('sim', '--help');
    expect(r.stdout).toMatch(/--force +overwrite an existing --out \/ --exec-out file/);
    expect(r.stdout).toMatch(/never written over, even with --force/);
  });
});

describe('emulate-interlock --make-pty never replaces an existing file without --force', () => {
  it('an existing <link> (socat would unlink it, then delete it at exit) is refused; the file is intact', async () => {
    const link = path.join(dir, 'ilk');
    fs.writeFileSync(link, 'my notes');
    const r = await mbWithin(10_000, 'emulate-interlock', '--make-pty', link);
    expect(r.killed).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`motionbench: --make-pty ${link} already exists; pass --force to overwrite it\n`);
    expect(fs.readFileSync(link, 'utf8')).toBe('my notes');
    const box = path.join(dir, 'ilk2');
    fs.writeFileSync(`${box}.box`, 'mine');
    const r2 = await mbWithin(10_000, 'emulate-interlock', '--make-pty', box);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/ilk2\.box already exists; pass --force/);
    expect(fs.readFileSync(`${box}.box`, 'utf8')).toBe('mine');
  }, 30_000);
});

describe('unclear errors become one located line', () => {
  it('fk --frame -1 and --frame=-1: "--frame must be a non-negative integer" (not parseArgs\' "ambiguous")', async () => {
    const [spaced, joined, fraction] = await Promise.all([
      mb('fk', '--clip', CLIP, '--fps', '30', '--frame', '-1'),
      mb('fk', '--clip', CLIP, '--fps', '30', '--frame=-1'),
      mb('fk', '--clip', CLIP, '--fps', '30', '--frame', '-0.5'),
    ]);
    for (const [r, v] of [
      [spaced, '-1'],
      [joined, '-1'],
      [fraction, '-0.5'],
    ] as const) {
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`motionbench: --frame must be a non-negative integer (a frame index), got "${v}"\n`);
    }
  });

  it('MJCF nested 3 000 deep, including itself in a cycle, or including exponentially: file:line:column, not a stack overflow', async () => {
    const deep = path.join(dir, 'deep.xml');
    fs.writeFileSync(deep, deeplyNestedBodies(3000));
    const cycle = writeFiles(path.join(dir, 'cycle'), includeCycle());
    const expo = writeFiles(path.join(dir, 'expo'), exponentialIncludes(9, 3)); // 3^9 = 19 683 expansions
    const [d, c, e] = await Promise.all([
      mb('fk', '--clip', CLIP, '--fps', '30', '--frame', '0', '--model', deep),
      mb('fk', '--clip', CLIP, '--fps', '30', '--frame', '0', '--model', cycle),
      mb('clip', 'info', CLIP, '--fps', '30', '--model', expo),
    ]);
    expect(d.code).toBe(1);
    expect(d.stderr).toMatch(
      new RegExp(`^motionbench: ${deep}:3:\\d+: <body> is nested 257 elements deep, deeper than the limit of 256\\n$`),
    );
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(
      /^motionbench: .*cycle\/models\/b\.xml:4:3 \[file\]: include cycle: .*a\.xml -> .*b\.xml -> .*\.\/a\.xml\n$/,
    );
    expect(e.code).toBe(1);
    expect(e.stderr).toMatch(
      /^motionbench: .*expo\/models\/inc\d\.xml:\d+:3 \[file\]: the model expands more than 256 <include>s/,
    );
    for (const r of [d, c, e]) expect(r.stderr).not.toMatch(/Maximum call stack/);
  });

  it('&#x110000; in the model: located, not "Invalid code point"', async () => {
    const bad = path.join(dir, 'codepoint.xml');
    fs.writeFileSync(bad, '<mujoco model="g1">\n  <compiler angle="radian" meshdir="&#x110000;"/>\n</mujoco>\n');
    const r = await mb('clip', 'info', CLIP, '--fps', '30', '--model', bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `motionbench: ${bad}:2:37: character reference &#x110000; is not a character XML allows (beyond U+10FFFF, the last Unicode code point)\n`,
    );
  });

  it('sim with a model whose mesh file is missing names the mesh file and the MJCF line that declares it, not a bare mjCError', async () => {
    const m = modelWithMissingMesh(path.join(dir, 'ghost-model'));
    const r = await mb('sim', '--clip', CLIP, '--fps', '30', '--model', m.model);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${m.included}:${m.meshLine}:5 [file]: mesh file ${m.meshFile} does not exist (in the model ${m.model})`,
    );
    expect(r.stderr).not.toMatch(/mjCError/);
  }, 60_000);

  it('a UTF-16 CSV (FF FE, FE FF, or NUL bytes): "UTF-16 encoded; save as UTF-8" naming the file', async () => {
    const files = (['le-bom', 'be-bom', 'le-no-bom'] as const).map((form) => {
      const f = path.join(dir, `utf16-${form}.csv`);
      fs.writeFileSync(f, utf16Bytes(CLIP_TEXT, form));
      return f;
    });
    const rs = await Promise.all(files.map((f) => mb('clip', 'info', f, '--fps', '30')));
    rs.forEach((r, k) => {
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(r.stderr).toMatch(new RegExp(`^motionbench: ${files[k]}:1:\\d+: .*UTF-16 encoded.*; save as UTF-8\\n$`));
    });
  });

  it('a workload folder with symlink loops and a link out of the folder: one line per link, nothing outside scanned', async () => {
    const w = workloadWithSymlinkLoops(path.join(dir, 'wl'), CLIP_TEXT, path.join(dir, 'elsewhere'));
    const r = await mb(
      'qualify',
      '--workload',
      w.dir,
      '--binding',
      'builtin',
      '--campaign',
      path.join(dir, 'campaign'),
    );
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`motionbench: ${path.join(w.dir, 'workload.json')}: 3 problems:`);
    expect(lines).toHaveLength(4);
    expect(r.stderr).toContain(
      `${w.loop}: leads to ${fs.realpathSync(w.dir)}, a folder the scan has already been through (a symbolic-link loop); remove the link`,
    );
    expect(r.stderr).toContain(
      `${w.up}: leads to ${fs.realpathSync(w.dir)}, a folder the scan has already been through`,
    );
    expect(r.stderr).toContain(
      `${w.outside}: is a symbolic link to ${fs.realpathSync(path.join(dir, 'elsewhere'))}, outside the workload folder`,
    );
    expect(r.stderr).not.toMatch(/stray\d\.csv|not listed/);
    expect(fs.existsSync(path.join(dir, 'campaign'))).toBe(false);
  }, 60_000);

  it('absurd clip values and frame rates are refused with their place: 1e308 m, 100 rad, --fps 1e-300 / 1e300', async () => {
    const far = path.join(dir, 'far.csv');
    const twisted = path.join(dir, 'twisted.csv');
    fs.writeFileSync(far, csvWithField(CLIP_TEXT, 5, 2, '1e308'));
    fs.writeFileSync(twisted, csvWithField(CLIP_TEXT, 9, 20, '100'));
    const [f, t, slow, fast, nan] = await Promise.all([
      mb('clip', 'info', far, '--fps', '30'),
      mb('clip', 'info', twisted, '--fps', '30'),
      mb('clip', 'info', CLIP, '--fps', '1e-300'),
      mb('clip', 'info', CLIP, '--fps', '1e300'),
      mb('fk', '--clip', CLIP, '--fps', 'NaN', '--frame', '0'),
    ]);
    expect(f.code).toBe(1);
    expect(f.stderr).toBe(
      `motionbench: ${far}:5:2: position 1e+308 m is beyond ±1000 m (MAX_ROOT_POS_M): not a motion in a lab\n`,
    );
    expect(t.code).toBe(1);
    expect(t.stderr).toBe(
      `motionbench: ${twisted}:9:20: joint angle 100 rad is beyond ±4π rad (MAX_JOINT_ANGLE_RAD): not a joint angle\n`,
    );
    for (const [r, v] of [
      [slow, '1e-300'],
      [fast, '1e300'],
      [nan, 'NaN'],
    ] as const) {
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`motionbench: --fps must be a frame rate in [1, 1000] Hz, got "${v}"\n`);
    }
  });
});

describe('a reader that closes the pipe early', () => {
  it('`motionbench trial --help | head -1`: the closed stdout ends nothing with an uncaught EPIPE', async () => {
    const { spawn } = await import('node:child_process');
    const { MOTIONBENCH_BIN } = await import('../helpers/runCli');
    // The reader's end is closed before the child writes its usage text to stdout.
    const child = spawn(process.execPath, [MOTIONBENCH_BIN, 'trial', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code: number = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? -1)));
    expect(stderr).not.toMatch(/uncaught|EPIPE|last resort/);
    expect(code).toBe(0);
  });
});
