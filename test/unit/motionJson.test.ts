import { describe, expect, it } from 'vitest';
import { decodeLafan1Csv } from '../../src/domain/motion/lafan1Csv';
import { decodeMotionbenchJson, encodeClipJson, locateJsonSyntaxError } from '../../src/domain/motion/motionbenchJson';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { csvText, enc, expectInputError, J, syntheticClip } from './motionTestHelpers';

const file = 'clips/test.json';

function doc(N = 3, patch: (d: Record<string, unknown>) => void = () => {}): string {
  const c = syntheticClip(N);
  const d: Record<string, unknown> = {
    format: 'motionbench-clip/1',
    name: 'synthetic',
    fps: 50,
    capability_group: 'locomotion',
    joint_order: [...G1_JOINT_NAMES],
    frames: {
      root_pos_m: c.rootPos,
      root_quat_wxyz: c.rootQuatXyzw.map(([x, y, z, w]) => [w, x, y, z]),
      joint_pos_rad: c.joints,
    },
  };
  patch(d);
  return JSON.stringify(d, null, 2);
}
const frames = (d: Record<string, unknown>) => d.frames as Record<string, number[][]>;

describe('motionbench-clip/1 JSON', () => {
  it('decodes a clip', () => {
    const clip = decodeMotionbenchJson(enc(doc()), { file });
    expect(clip).toMatchObject({ name: 'synthetic', fps: 50, frameCount: 3, capabilityGroup: 'locomotion' });
    expect(clip.provenance).toMatchObject({ file, format: 'motionbench-json', fpsSource: 'file' });
    expect(clip.jointPosRad.length).toBe(3 * J);
  });

  it('round-trips through encodeClipJson preserving the id and every number', () => {
    const csv = decodeLafan1Csv(enc(csvText(syntheticClip(7))), { file: 'walk.csv', fps: 30 });
    const text = encodeClipJson(csv);
    const back = decodeMotionbenchJson(enc(text), { file });
    expect(back.id).toBe(csv.id);
    expect(back.name).toBe('walk');
    expect(back.fps).toBe(30);
    expect(Array.from(back.rootQuatWxyz)).toEqual(Array.from(csv.rootQuatWxyz));
    expect(Array.from(back.jointPosRad)).toEqual(Array.from(csv.jointPosRad));
    expect(encodeClipJson(back)).toBe(text);
    // one frame per line
    expect(text.split('\n').length).toBeGreaterThan(3 * 7);
  });

  it('reports JSON syntax errors with line and column', () => {
    const text = '{\n  "format": "motionbench-clip/1",\n  "fps": 30,,\n}';
    expectInputError(() => decodeMotionbenchJson(enc(text), { file }), { file, line: 3, column: 13 }, /invalid JSON/);
    const nan = '{\n  "fps": NaN\n}';
    expectInputError(
      () => decodeMotionbenchJson(enc(nan), { file }),
      { file, line: 2, column: 10 },
      /NaN is not valid JSON/,
    );
    expectInputError(
      () => decodeMotionbenchJson(enc('{"a": [1, 2'), { file }),
      { file, line: 1, column: 12 },
      /end of input/,
    );
    expectInputError(
      () => decodeMotionbenchJson(enc('{"a": "x\ny"}'), { file }),
      { file, line: 1, column: 9 },
      /control character/,
    );
  });

  it('locateJsonSyntaxError agrees that valid JSON is valid', () => {
    for (const t of ['{}', '[]', ' {"a": [1, -2.5e-3, true, false, null, "\\u00e9\\n"]} ', '0', '"x"']) {
      expect(locateJsonSyntaxError(t), t).toBeNull();
    }
    for (const t of ['{', '[1,]', '{"a" 1}', '01', '1.', '-', '"\\x"', '{} x', "{'a': 1}"]) {
      expect(locateJsonSyntaxError(t), t).not.toBeNull();
      expect(() => JSON.parse(t)).toThrow();
    }
  });

  it('rejects a permuted joint order and shows the remap', () => {
    const text = doc(3, (d) => {
      const order = [...G1_JOINT_NAMES] as string[];
      [order[0], order[12]] = [order[12], order[0]];
      d.joint_order = order;
    });
    const e = expectInputError(
      () => decodeMotionbenchJson(enc(text), { file }),
      { file, key: 'joint_order' },
      /permutation/,
    );
    expect(e.message).toContain('[0] waist_yaw_joint → canonical [12]');
    expect(e.message).toContain('[12] left_hip_pitch_joint → canonical [0]');
  });

  type Patch = (d: Record<string, unknown>) => unknown;
  const cases: [string, Patch, string, RegExp][] = [
    [
      'unknown joint names',
      (d) => (d.joint_order = [...G1_JOINT_NAMES.slice(0, 28), 'head_joint']),
      'joint_order',
      /unknown joint name 'head_joint'/,
    ],
    [
      'too few joints',
      (d) => (d.joint_order = G1_JOINT_NAMES.slice(0, 27)),
      'joint_order',
      /has 27 joints.*missing: right_wrist_pitch_joint, right_wrist_yaw_joint/,
    ],
    [
      'a duplicated joint',
      (d) => (d.joint_order = [...G1_JOINT_NAMES, G1_JOINT_NAMES[3]]),
      'joint_order',
      /listed twice/,
    ],
    ['a missing joint_order', (d) => delete d.joint_order, 'joint_order', /must be an array/],
    ['a wrong format', (d) => (d.format = 'motionbench-clip/2'), 'format', /not supported.*motionbench-clip\/1/],
    ['a missing format', (d) => delete d.format, 'format', /missing/],
    ['fps 0', (d) => (d.fps = 0), 'fps', /fps 0 is invalid/],
    ['fps over 1000', (d) => (d.fps = 1200), 'fps', /must be > 0 and ≤ 1000/],
    ['fps as a string', (d) => (d.fps = '30'), 'fps', /must be a number/],
    ['a missing fps', (d) => delete d.fps, 'fps', /missing.*--fps/],
    ['an unknown capability group', (d) => (d.capability_group = 'acrobatics'), 'capability_group', /not one of/],
    ['missing frames', (d) => delete d.frames, 'frames', /must be an object/],
    ['a short row', (d) => frames(d).joint_pos_rad[1].pop(), 'frames.joint_pos_rad[1]', /29 numbers, found 28 values/],
    [
      'a null value',
      (d) => ((frames(d).root_pos_m[2] as unknown[])[1] = null),
      'frames.root_pos_m[2][1]',
      /finite number, found null/,
    ],
    [
      'a string value',
      (d) => ((frames(d).joint_pos_rad[0] as unknown[])[4] = '0.1'),
      'frames.joint_pos_rad[0][4]',
      /finite number/,
    ],
    [
      'mismatched frame counts',
      (d) => frames(d).root_quat_wxyz.pop(),
      'frames.root_quat_wxyz',
      /has 2 frames but frames.root_pos_m has 3/,
    ],
    [
      'a non-unit quaternion',
      (d) => (frames(d).root_quat_wxyz[1] = [1, 0.1, 0, 0]),
      'frames.root_quat_wxyz[1]',
      /norm is 1\.004988/,
    ],
    ['a single frame', (d) => Object.values(frames(d)).forEach((a) => a.splice(1)), 'frames.root_pos_m', /at least 2/],
  ];
  it.each(cases)('rejects %s, naming the key', (_what, patch, key, msg) => {
    expectInputError(() => decodeMotionbenchJson(enc(doc(3, patch)), { file }), { file, key }, msg);
  });

  it('checks --fps against the file', () => {
    expect(decodeMotionbenchJson(enc(doc()), { file, fps: 50 }).provenance.fpsSource).toBe('file');
    expectInputError(
      () => decodeMotionbenchJson(enc(doc()), { file, fps: 30 }),
      { file, key: 'fps' },
      /states fps 50 but --fps 30/,
    );
    const noFps = doc(3, (d) => delete d.fps);
    const clip = decodeMotionbenchJson(enc(noFps), { file, fps: 30 });
    expect(clip.fps).toBe(30);
    expect(clip.provenance.fpsSource).toBe('user');
  });

  it('a top-level value that is not an object', () => {
    expectInputError(() => decodeMotionbenchJson(enc('[1, 2]'), { file }), { file }, /expected a JSON object/);
  });
});
