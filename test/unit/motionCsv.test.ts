import { describe, expect, it } from 'vitest';
import { decodeLafan1Csv, encodeLafan1Csv } from '../../src/domain/motion/lafan1Csv';
import {
  MAX_FRAMES,
  MAX_INPUT_BYTES,
  MAX_JOINT_LIMIT_WARNINGS,
  type JointLimitExcursion,
} from '../../src/domain/motion/clipCommon';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { csvRow, csvText, enc, expectInputError, J, syntheticClip } from './motionTestHelpers';

const file = 'clips/test_clip.csv';
const zeros = new Array(J).fill(0);
const ident = [0, 0, 0, 1];

/** CSV text with `rows` good frames, with line `badLine` (1-based) replaced. */
function withLine(badLine: number, text: string, rows = 4): string {
  const lines = csvText(syntheticClip(rows)).trimEnd().split('\n');
  lines[badLine - 1] = text;
  return lines.join('\n') + '\n';
}
function fields(line: number): string[] {
  return csvText(syntheticClip(4)).split('\n')[line - 1].split(',');
}

describe('LAFAN1-G1 CSV decoder', () => {
  it('decodes root position, xyzw → wxyz quaternion and 29 joints in canonical order', () => {
    const c = syntheticClip(5);
    const clip = decodeLafan1Csv(enc(csvText(c)), { file, fps: 30 });
    expect(clip.frameCount).toBe(5);
    expect(clip.fps).toBe(30);
    expect(clip.name).toBe('test_clip');
    expect(clip.provenance).toMatchObject({ file, format: 'lafan1-csv', fpsSource: 'user' });
    expect(clip.provenance.fileSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(clip.id).toMatch(/^clip-[0-9a-f]{16}$/);
    expect(clip.rootPosM.length).toBe(15);
    expect(clip.rootQuatWxyz.length).toBe(20);
    expect(clip.jointPosRad.length).toBe(5 * J);
    expect(clip.rootPosM[3 * 4]).toBeCloseTo(0.04, 9);
    const [x, y, z, w] = c.rootQuatXyzw[3];
    expect(Array.from(clip.rootQuatWxyz.subarray(12, 16))).toEqual([w, x, y, z].map((v) => expect.closeTo(v, 6)));
    expect(clip.jointPosRad[2 * J + 28]).toBeCloseTo(Number(c.joints[2][28].toFixed(6)), 12);
    expect(clip.warnings).toEqual([]);
  });

  it('a 90° yaw stored as xyzw (0, 0, sin45, cos45) comes out as wxyz (cos45, 0, 0, sin45)', () => {
    const s = Math.SQRT1_2;
    const text = [csvRow([0, 0, 0.79], [0, 0, s, s], zeros), csvRow([0, 0, 0.79], [0, 0, s, s], zeros)].join('\n');
    const clip = decodeLafan1Csv(enc(text), { file, fps: 30 });
    for (const k of [0, 1]) {
      const q = Array.from(clip.rootQuatWxyz.subarray(k * 4, k * 4 + 4));
      expect(q[0]).toBeCloseTo(Math.cos(Math.PI / 4), 6);
      expect(q[1]).toBe(0);
      expect(q[2]).toBe(0);
      expect(q[3]).toBeCloseTo(Math.sin(Math.PI / 4), 6);
    }
  });

  it('accepts CRLF line endings, a BOM and trailing blank lines', () => {
    const text = '\ufeff' + csvText(syntheticClip(3)).replace(/\n/g, '\r\n') + '\r\n\r\n';
    const clip = decodeLafan1Csv(enc(text), { file, fps: 30 });
    expect(clip.frameCount).toBe(3);
    expect(clip.id).toBe(decodeLafan1Csv(enc(csvText(syntheticClip(3))), { file, fps: 30 }).id);
  });

  describe('fps', () => {
    const text = enc(csvText(syntheticClip(3)));
    it('is never assumed: without --fps or a hint it is an error asking for --fps', () => {
      expectInputError(() => decodeLafan1Csv(text, { file }), { file, key: 'fps' }, /fps is unknown.*--fps/);
    });
    it('takes a hint as inferred, with an fps_inferred warning naming its source', () => {
      const clip = decodeLafan1Csv(text, { file, fpsHint: { fps: 60, source: 'the sidecar file x.json' } });
      expect(clip.fps).toBe(60);
      expect(clip.provenance.fpsSource).toBe('inferred');
      expect(clip.warnings).toHaveLength(1);
      expect(clip.warnings[0].code).toBe('fps_inferred');
      expect(clip.warnings[0].message).toContain('the sidecar file x.json');
    });
    it('prefers the user fps over a hint', () => {
      const clip = decodeLafan1Csv(text, { file, fps: 25, fpsHint: { fps: 60, source: 'x' } });
      expect(clip.fps).toBe(25);
      expect(clip.provenance.fpsSource).toBe('user');
      expect(clip.warnings).toEqual([]);
    });
    it.each([0, -30, NaN, Infinity, 1000.5, 5000])('rejects --fps %s', (fps) => {
      expectInputError(() => decodeLafan1Csv(text, { file, fps }), { file, key: 'fps' }, /--fps/);
    });
    it('rejects an invalid inferred fps', () => {
      expectInputError(
        () => decodeLafan1Csv(text, { file, fpsHint: { fps: 0, source: 'the sidecar' } }),
        { file, key: 'fps' },
        /sidecar/,
      );
    });
    it('the id depends on fps', () => {
      expect(decodeLafan1Csv(text, { file, fps: 30 }).id).not.toBe(decodeLafan1Csv(text, { file, fps: 60 }).id);
    });
  });

  describe('bad input names file, line and column', () => {
    it('too few columns', () => {
      const f = fields(3).slice(0, 35);
      expectInputError(
        () => decodeLafan1Csv(enc(withLine(3, f.join(','))), { file, fps: 30 }),
        { file, line: 3, column: 36 },
        /expected 36 fields.*found 35/,
      );
    });
    it('too many columns (trailing comma)', () => {
      expectInputError(
        () => decodeLafan1Csv(enc(withLine(2, fields(2).join(',') + ',')), { file, fps: 30 }),
        { file, line: 2, column: 37 },
        /found 37/,
      );
    });
    it('a non-numeric field', () => {
      const f = fields(2);
      f[9] = 'abc';
      const e = expectInputError(
        () => decodeLafan1Csv(enc(withLine(2, f.join(','))), { file, fps: 30 }),
        { file, line: 2, column: 10 },
        /'abc' is not a number/,
      );
      expect(e.message).toContain(`${file}:2:10`);
    });
    it('hexadecimal is not a CSV number', () => {
      const f = fields(2);
      f[0] = '0x10';
      expectInputError(
        () => decodeLafan1Csv(enc(withLine(2, f.join(','))), { file, fps: 30 }),
        { file, line: 2, column: 1 },
        /not a number/,
      );
    });
    it('an empty field', () => {
      const f = fields(4);
      f[35] = '';
      expectInputError(
        () => decodeLafan1Csv(enc(withLine(4, f.join(','))), { file, fps: 30 }),
        { file, line: 4, column: 36 },
        /empty field/,
      );
    });
    it('a header row', () => {
      const header = Array.from({ length: 36 }, (_, i) => `c${i}`).join(',');
      expectInputError(
        () => decodeLafan1Csv(enc(header + '\n' + csvText(syntheticClip(3))), { file, fps: 30 }),
        { file, line: 1, column: 1 },
        /header row\? LAFAN1-G1 CSV has none/,
      );
    });
    it.each([
      ['nan', 12],
      ['NaN', 1],
      ['inf', 5],
      ['-Infinity', 36],
      ['1e400', 8],
    ])('non-finite value %s', (tok, col) => {
      const f = fields(3);
      f[col - 1] = tok;
      expectInputError(
        () => decodeLafan1Csv(enc(withLine(3, f.join(','))), { file, fps: 30 }),
        { file, line: 3, column: col },
        /not finite/,
      );
    });
    it('a blank line in the middle', () => {
      expectInputError(
        () => decodeLafan1Csv(enc(withLine(2, '')), { file, fps: 30 }),
        { file, line: 2, column: 1 },
        /empty line/,
      );
    });
    it('a non-unit quaternion, with its norm', () => {
      const line = csvRow([0, 0, 0.79], [0, 0, 0, 0.9], zeros);
      expectInputError(
        () => decodeLafan1Csv(enc(withLine(2, line)), { file, fps: 30 }),
        { file, line: 2, column: 4 },
        /norm is 0\.9\b/,
      );
    });
    it('a zero quaternion', () => {
      const line = csvRow([0, 0, 0.79], [0, 0, 0, 0], zeros);
      expectInputError(
        () => decodeLafan1Csv(enc(withLine(1, line)), { file, fps: 30 }),
        { file, line: 1, column: 4 },
        /norm is 0\b/,
      );
    });
    it('fewer than 2 frames', () => {
      expectInputError(
        () => decodeLafan1Csv(enc(csvRow([0, 0, 0.79], ident, zeros) + '\n'), { file, fps: 30 }),
        { file },
        /1 frame; at least 2/,
      );
    });
    it('an empty file', () => {
      expectInputError(() => decodeLafan1Csv(new Uint8Array(0), { file, fps: 30 }), { file }, /empty/);
      expectInputError(() => decodeLafan1Csv(enc('\n\n'), { file, fps: 30 }), { file }, /0 frames/);
    });
    it('too many frames', () => {
      expectInputError(
        () => decodeLafan1Csv(enc('0\n'.repeat(MAX_FRAMES + 1)), { file, fps: 30 }),
        { file },
        /more than the limit of 2000000/,
      );
    });
    it('an oversized file', () => {
      const big = new Uint8Array(MAX_INPUT_BYTES + 1);
      expectInputError(() => decodeLafan1Csv(big, { file, fps: 30 }), { file }, /256 MiB limit/);
    });
  });

  it('accepts quaternions within 1e-3 of unit norm and normalises them', () => {
    const text = [csvRow([0, 0, 0.79], [0, 0, 0, 1.0009], zeros), csvRow([0, 0, 0.79], [0, 0, 0.6, 0.8], zeros)].join(
      '\n',
    );
    const clip = decodeLafan1Csv(enc(text), { file, fps: 30 });
    expect(clip.rootQuatWxyz[0]).toBe(1);
    expect(Math.hypot(...clip.rootQuatWxyz.subarray(4, 8))).toBeCloseTo(1, 15);
  });

  it('makes the quaternion sign continuous along the clip (q and −q are the same rotation)', () => {
    const yaw = (a: number) => [0, 0, Math.sin(a / 2), Math.cos(a / 2)];
    const neg = (q: number[]) => q.map((v) => -v);
    const qs = [yaw(0.1), neg(yaw(0.2)), yaw(0.3), neg(yaw(0.4))];
    const text = qs.map((q) => csvRow([0, 0, 0.79], q, zeros)).join('\n');
    const clip = decodeLafan1Csv(enc(text), { file, fps: 30 });
    const q = clip.rootQuatWxyz;
    expect(q[0]).toBeGreaterThan(0); // frame 0 keeps its sign
    for (let k = 1; k < 4; k++) {
      let dot = 0;
      for (let c = 0; c < 4; c++) dot += q[k * 4 + c] * q[(k - 1) * 4 + c];
      expect(dot).toBeGreaterThan(0);
      expect(q[k * 4]).toBeCloseTo(Math.cos((0.1 * (k + 1)) / 2), 6);
    }
  });

  describe('joint-limit warnings', () => {
    const limits = G1_JOINT_NAMES.map(() => [-1, 1] as const);
    it('reports each excursion run once, at its first frame, with joint and value', () => {
      const rows: string[] = [];
      const knee = 3;
      const values = [0, 1.0000005, 1.2, 1.5, 0.5, -1.3, 0, 1.1];
      for (const v of values) {
        const j = zeros.slice();
        j[knee] = v;
        rows.push(csvRow([0, 0, 0.79], ident, j));
      }
      const clip = decodeLafan1Csv(enc(rows.join('\n')), { file, fps: 30, jointLimitsRad: limits });
      const w = clip.warnings as JointLimitExcursion[];
      expect(w.map((x) => [x.code, x.joint, x.frame, x.value])).toEqual([
        ['joint_limit', 'left_knee_joint', 2, 1.2],
        ['joint_limit', 'left_knee_joint', 5, -1.3],
        ['joint_limit', 'left_knee_joint', 7, 1.1],
      ]);
      expect(w[0].runFrames).toBe(2);
      expect(w[0].peakValue).toBe(1.5);
      expect(w[0].message).toMatch(/left_knee_joint is 1\.2 rad at frame 2, above its upper limit 1 rad/);
      expect(w[1].side).toBe('lower');
    });
    it('null limits mean unlimited', () => {
      const rows = [
        csvRow([0, 0, 0.79], ident, new Array(J).fill(5)),
        csvRow([0, 0, 0.79], ident, new Array(J).fill(5)),
      ];
      const lim = G1_JOINT_NAMES.map(() => null);
      expect(decodeLafan1Csv(enc(rows.join('\n')), { file, fps: 30, jointLimitsRad: lim }).warnings).toEqual([]);
    });
    it('caps the list and counts the rest', () => {
      // every joint alternates in and out of range on every frame: 29 × 10 runs
      const rows: string[] = [];
      for (let k = 0; k < 20; k++) rows.push(csvRow([0, 0, 0.79], ident, new Array(J).fill(k % 2 === 0 ? 2 : 0)));
      const clip = decodeLafan1Csv(enc(rows.join('\n')), { file, fps: 30, jointLimitsRad: limits });
      expect(clip.warnings).toHaveLength(MAX_JOINT_LIMIT_WARNINGS + 1);
      expect(clip.warnings.slice(0, MAX_JOINT_LIMIT_WARNINGS).every((w) => w.code === 'joint_limit')).toBe(true);
      const last = clip.warnings[MAX_JOINT_LIMIT_WARNINGS];
      expect(last.code).toBe('joint_limit_more');
      expect(last.message).toContain(`${29 * 10 - MAX_JOINT_LIMIT_WARNINGS} more`);
    });
  });

  it('encodeLafan1Csv writes xyzw back and re-decodes to the same id', () => {
    const clip = decodeLafan1Csv(enc(csvText(syntheticClip(6))), { file, fps: 30 });
    const again = decodeLafan1Csv(enc(encodeLafan1Csv(clip)), { file, fps: 30 });
    expect(again.id).toBe(clip.id);
  });
});
