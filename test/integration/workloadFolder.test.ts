// A user's folder of clips as a workload snapshot: real files in a temp folder, written with our
// own encoders (CSV, JSON) and an NPZ built member by member, plus workload.json. Checks the
// snapshot (ids, groups, hash over the clip ids), that a clip's id does not depend on its file
// format, and every error case with the file and key it names. Also loadWorkload('core-v1').
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeLafan1Csv } from '../../src/domain/motion/lafan1Csv';
import { encodeClipJson } from '../../src/domain/motion/motionbenchJson';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { InputError } from '../../src/domain/problems';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { generateCoreV1 } from '../../src/domain/workload/coreV1';
import { snapshotHash } from '../../src/domain/workload/snapshot';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { loadFolderWorkload, WorkloadInputError } from '../../src/services/workload/folderWorkload';
import { loadWorkload } from '../../src/services/workload/loadWorkload';
import { npyBytes, npyStringBytes, zipBytes } from '../unit/motionTestHelpers';

const profile = loadRobotProfile();
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-workload-'));
let clips: Record<string, MotionClip>;

/** An mjlab-style NPZ of a clip: fps, joint_pos, joint_vel, body_pos_w / body_quat_w (root only), joint_names (root-only bodies cannot tell the joint order). */
function npzOf(c: MotionClip): Uint8Array {
  const N = c.frameCount;
  const vel = new Float64Array(N * G1_NUM_JOINTS);
  return zipBytes([
    { name: 'fps.npy', data: npyBytes([], [c.fps]) },
    { name: 'joint_pos.npy', data: npyBytes([N, G1_NUM_JOINTS], c.jointPosRad) },
    { name: 'joint_vel.npy', data: npyBytes([N, G1_NUM_JOINTS], vel) },
    { name: 'body_pos_w.npy', data: npyBytes([N, 1, 3], c.rootPosM) },
    { name: 'body_quat_w.npy', data: npyBytes([N, 1, 4], c.rootQuatWxyz) },
    { name: 'joint_names.npy', data: npyStringBytes(G1_JOINT_NAMES) },
  ]);
}

let serial = 0;
/** A fresh workload folder with the given files (string or bytes) and manifest (object or raw text). */
function folder(files: Record<string, string | Uint8Array>, manifest?: unknown): string {
  const dir = path.join(root, `w${++serial}`);
  fs.mkdirSync(dir);
  for (const [name, data] of Object.entries(files)) {
    const p = path.join(dir, name);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, data);
  }
  if (manifest !== undefined)
    fs.writeFileSync(
      path.join(dir, 'workload.json'),
      typeof manifest === 'string' ? manifest : JSON.stringify(manifest, null, 2),
    );
  return dir;
}

const standardFiles = () => ({
  'walk.csv': encodeLafan1Csv(clips.walk),
  'wave.json': encodeClipJson(clips.wave),
  'moves/jump.npz': npzOf(clips.jump),
});
const standardManifest = () => ({
  id: 'lab-set',
  version: 3,
  description: 'three clips',
  clips: {
    'walk.csv': { group: 'locomotion', fps: 50 },
    'wave.json': { group: 'upper_body' },
    'moves/jump.npz': { group: 'dynamic', name: 'hop' },
  },
});

/** Runs fn, expects an InputError; returns it (and all its problems when there are several). */
function inputError(fn: () => unknown): { err: InputError; all: InputError[] } {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected an InputError').toBeInstanceOf(InputError);
  const err = caught as InputError;
  return { err, all: err instanceof WorkloadInputError ? err.problems : [err] };
}

beforeAll(() => {
  const g = generateCoreV1(profile, {
    only: ['loco_walk_forward', 'ub_wave_right', 'dyn_small_jumps'],
    withFileSha256: false,
  });
  const by = (n: string) => g.clips.find((c) => c.name === n)!;
  clips = { walk: by('loco_walk_forward'), wave: by('ub_wave_right'), jump: by('dyn_small_jumps') };
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('folder workload', () => {
  it('becomes its own snapshot: manifest order, groups, names, files, hash over the clip ids', () => {
    const dir = folder(standardFiles(), standardManifest());
    const w = loadWorkload(dir, { profile });
    expect(w.snapshot).toMatchObject({
      format: 'mb-workload-snapshot/1',
      id: 'lab-set',
      version: '3',
      source: 'folder',
    });
    expect(w.snapshot.clips.map((c) => [c.file, c.name, c.group, c.fps, c.frames])).toEqual([
      ['walk.csv', 'walk', 'locomotion', 50, clips.walk.frameCount],
      ['wave.json', 'ub_wave_right', 'upper_body', 50, clips.wave.frameCount],
      ['moves/jump.npz', 'hop', 'dynamic', 50, clips.jump.frameCount],
    ]);
    expect(w.clips.map((c) => c.capabilityGroup)).toEqual(['locomotion', 'upper_body', 'dynamic']);
    // a clip's id is its content: the same motion has the same id as CSV, JSON or NPZ
    expect(w.snapshot.clips.map((c) => c.id)).toEqual([clips.walk.id, clips.wave.id, clips.jump.id]);
    expect(w.snapshot.snapshot_hash).toBe(snapshotHash(w.snapshot.clips));
    expect(w.snapshot.clips[0].duration_s).toBeCloseTo((clips.walk.frameCount - 1) / 50, 12);
    // our clips respect the joint limits: no warnings
    for (const c of w.clips) expect(c.warnings.filter((x) => x.code === 'joint_limit')).toEqual([]);
  });

  it('the same folder gives the same hash; renaming a clip or changing a group changes it', () => {
    const a = loadFolderWorkload(folder(standardFiles(), standardManifest()));
    const b = loadFolderWorkload(folder(standardFiles(), { ...standardManifest(), id: 'other', version: '9' }));
    expect(b.snapshot.snapshot_hash).toBe(a.snapshot.snapshot_hash); // id and version are names, not content
    const m = standardManifest();
    m.clips['walk.csv'] = { group: 'in_place', fps: 50 };
    expect(loadFolderWorkload(folder(standardFiles(), m)).snapshot.snapshot_hash).not.toBe(a.snapshot.snapshot_hash);
    const n = standardManifest();
    (n.clips['walk.csv'] as { name?: string }).name = 'walk_renamed';
    expect(loadFolderWorkload(folder(standardFiles(), n)).snapshot.snapshot_hash).not.toBe(a.snapshot.snapshot_hash);
  });

  it('accepts the manifest path itself, and a CSV fps sidecar beside a listed CSV', () => {
    const dir = folder({ ...standardFiles(), 'walk.json': '{"fps": 50}' }, standardManifest());
    const w = loadWorkload(path.join(dir, 'workload.json'));
    expect(w.clips).toHaveLength(3);
  });
});

describe('folder workload errors name the file and key', () => {
  it('no workload.json', () => {
    const dir = folder(standardFiles());
    const { err } = inputError(() => loadWorkload(dir));
    expect(err.location.file).toBe(path.join(dir, 'workload.json'));
    expect(err.message).toMatch(/has no workload\.json.*"group"/);
  });

  it('invalid JSON', () => {
    const dir = folder(standardFiles(), '{"id": "x", ');
    const { err } = inputError(() => loadWorkload(dir));
    expect(err.message).toMatch(/workload\.json: not valid JSON/);
  });

  it('an unknown group names clips["<file>"].group and the allowed groups', () => {
    const m = standardManifest();
    m.clips['walk.csv'] = { group: 'walking', fps: 50 } as never;
    const { err } = inputError(() => loadWorkload(folder(standardFiles(), m)));
    expect(err.location.key).toBe('clips["walk.csv"].group');
    expect(err.message).toMatch(
      /workload\.json \[clips\["walk\.csv"\]\.group\]: must be one of upper_body, locomotion, in_place, dynamic, low_posture, found "walking"/,
    );
  });

  it('a typo in an entry key, a missing id, a bad version, a reserved id — all reported together', () => {
    const m = {
      version: '',
      clips: {
        'walk.csv': { group: 'locomotion', fps: 50, grup: 'x' },
        'wave.json': { group: 'upper_body' },
        'moves/jump.npz': { group: 'dynamic' },
      },
    };
    const { err, all } = inputError(() => loadWorkload(folder(standardFiles(), m)));
    expect(err).toBeInstanceOf(WorkloadInputError);
    const keys = all.map((e) => e.location.key);
    expect(keys).toEqual(expect.arrayContaining(['id', 'version', 'clips["walk.csv"]']));
    expect(err.message).toMatch(/unknown key "grup" \(allowed: group, fps, name\)/);
    const r = inputError(() => loadWorkload(folder(standardFiles(), { ...standardManifest(), id: 'core-v2' })));
    expect(r.err.location.key).toBe('id');
    expect(r.err.message).toMatch(/reserved for the built-in workloads/);
  });

  it('a listed file that does not exist', () => {
    const m = standardManifest();
    (m.clips as Record<string, unknown>)['gone.csv'] = { group: 'in_place', fps: 30 };
    const { err } = inputError(() => loadWorkload(folder(standardFiles(), m)));
    expect(err.location.key).toBe('clips["gone.csv"]');
    expect(err.message).toMatch(/lists gone\.csv, but .*gone\.csv does not exist/);
  });

  it('a clip file in the folder that the manifest does not list', () => {
    const dir = folder({ ...standardFiles(), 'extra/run.csv': encodeLafan1Csv(clips.walk) }, standardManifest());
    const { err } = inputError(() => loadWorkload(dir));
    expect(err.location.file).toBe(path.join(dir, 'extra', 'run.csv'));
    expect(err.message).toMatch(/not listed in workload\.json; add it to "clips" with its group, or move it out/);
  });

  it('a CSV without fps in the manifest', () => {
    const m = standardManifest();
    m.clips['walk.csv'] = { group: 'locomotion' } as never;
    const { err } = inputError(() => loadWorkload(folder(standardFiles(), m)));
    expect(err.location.key).toBe('clips["walk.csv"].fps');
    expect(err.message).toMatch(/CSV clip, which does not state its frame rate: give "fps"/);
  });

  it('an NPZ whose fps disagrees with the manifest (the decoder names the file)', () => {
    const m = standardManifest();
    (m.clips['moves/jump.npz'] as { fps?: number }).fps = 30;
    const dir = folder(standardFiles(), m);
    const { err } = inputError(() => loadWorkload(dir));
    expect(err.location.file).toBe(path.join(dir, 'moves', 'jump.npz'));
    expect(err.message).toMatch(/states fps 50 but --fps 30/);
  });

  it('a JSON clip whose own capability_group disagrees with the manifest', () => {
    const m = standardManifest();
    m.clips['wave.json'] = { group: 'dynamic' };
    const { err } = inputError(() => loadWorkload(folder(standardFiles(), m)));
    expect(err.location.key).toBe('clips["wave.json"].group');
    expect(err.message).toMatch(/is dynamic, but wave\.json itself says capability_group "upper_body"/);
  });

  it('two clips with one name, and the same motion twice', () => {
    const files = { ...standardFiles(), 'walk_again.json': encodeClipJson({ ...clips.walk, name: 'walk' }) };
    const m = standardManifest();
    (m.clips as Record<string, unknown>)['walk_again.json'] = { group: 'locomotion' };
    const { all } = inputError(() => loadWorkload(folder(files, m)));
    expect(all.map((e) => e.message).join('\n')).toMatch(/clip name "walk" is also the name of walk\.csv/);
    expect(all.map((e) => e.message).join('\n')).toMatch(/walk_again\.json holds the same motion as walk\.csv/);
  });

  it('paths outside the folder, absolute paths and non-clip files are refused', () => {
    for (const bad of ['../walk.csv', '/tmp/walk.csv', 'notes.txt', 'a\\b.csv']) {
      const m = standardManifest();
      (m.clips as Record<string, unknown>)[bad] = { group: 'locomotion', fps: 50 };
      const { all } = inputError(() => loadWorkload(folder(standardFiles(), m)));
      expect(
        all.some((e) => e.location.key === `clips[${JSON.stringify(bad)}]`),
        bad,
      ).toBe(true);
    }
  });

  it('a broken clip file is reported by its decoder with the file and line', () => {
    const dir = folder({ ...standardFiles(), 'walk.csv': '1,2,3\n4,5,6\n' }, standardManifest());
    const { err } = inputError(() => loadWorkload(dir));
    expect(err.location.file).toBe(path.join(dir, 'walk.csv'));
    expect(err.location.line).toBe(1);
    expect(err.message).toMatch(/walk\.csv:1/);
  });

  it('an unknown built-in and a missing folder', () => {
    expect(inputError(() => loadWorkload('core-v9')).err.message).toMatch(
      /unknown workload "core-v9": the built-in workloads are core-v1/,
    );
    expect(inputError(() => loadWorkload(path.join(root, 'nope'))).err.message).toMatch(/no such folder/);
  });
});

describe("loadWorkload('core-v1')", () => {
  it('generates the built-in snapshot and checks it against the frozen manifest', () => {
    const w = loadWorkload('core-v1');
    expect(w.snapshot.id).toBe('core-v1');
    expect(w.clips.length).toBe(w.snapshot.clips.length);
    expect(w.clips.length).toBeGreaterThanOrEqual(40);
    expect(w.clips.find((c) => c.name === 'loco_walk_forward')!.id).toBe(clips.walk.id);
  });
});
