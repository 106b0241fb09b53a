// LAFAN1-G1 CSV (Unitree's LAFAN1 retargeting dataset layout, also used by G1 Moves):
// no header, comma-separated, one row per frame, 36 columns:
//   x y z (m) | qx qy qz qw (root orientation, scalar LAST) | 29 joint angles (rad, canonical order).
// The file does not state its frame rate: it comes from the user (--fps) or from an inferred
// hint; with neither, decoding fails. No default rate is ever assumed.

import { InputError, type Warning } from '../problems';
import { G1_NUM_JOINTS } from '../robot/g1Joints';
import {
  boundProblem,
  checkFps,
  checkFrameCount,
  checkInputSize,
  checkNotUtf16,
  clipNameFromFile,
  finalizeClip,
  lineCount,
  MAX_FRAMES,
  quatNormProblem,
  textContentEnd,
  type DecodeOptions,
} from './clipCommon';
import type { FpsSource, MotionClip } from './motionClip';

export const LAFAN1_CSV_COLUMNS = 7 + G1_NUM_JOINTS;

const NUMBER_RE = /^[ \t]*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[ \t]*$/;
const NONFINITE_RE = /^[ \t]*[-+]?(?:nan|inf|infinity)[ \t]*$/i;

function resolveCsvFps(options: DecodeOptions): { fps: number; fpsSource: FpsSource; warnings: Warning[] } {
  const { file } = options;
  if (options.fps !== undefined) {
    return { fps: checkFps(options.fps, { file, key: 'fps' }, '--fps'), fpsSource: 'user', warnings: [] };
  }
  if (options.fpsHint) {
    const { fps, source } = options.fpsHint;
    checkFps(fps, { file, key: 'fps' }, `fps inferred from ${source}`);
    return {
      fps,
      fpsSource: 'inferred',
      warnings: [
        {
          code: 'fps_inferred',
          message: `the file does not state its frame rate; using ${fps} fps inferred from ${source} (pass --fps to override)`,
        },
      ],
    };
  }
  throw new InputError(
    { file, key: 'fps' },
    'fps is unknown: LAFAN1-G1 CSV files do not state their frame rate and none could be inferred; pass --fps N (e.g. --fps 30 for LAFAN1 retargeted clips, --fps 60 for G1 Moves clips)',
  );
}

/** Decodes a LAFAN1-G1 CSV file (bytes or already-decoded text) into a MotionClip. */
export function decodeLafan1Csv(input: Uint8Array | string, options: DecodeOptions): MotionClip {
  const { file } = options;
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  checkInputSize(bytes, file);
  checkNotUtf16(bytes, file);
  const { fps, fpsSource, warnings } = resolveCsvFps(options);

  let text = typeof input === 'string' ? input : new TextDecoder('utf-8').decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // The frame count is bounded before the text is split: trailing blank lines (a final newline,
  // an editor's extra line) are not frames, and the lines before them are counted first.
  const content = textContentEnd(text);
  const lineBound = lineCount(text, content, MAX_FRAMES + 1);
  if (lineBound > MAX_FRAMES)
    throw new InputError(
      { file },
      `the file has more than ${MAX_FRAMES} lines, more than the limit of ${MAX_FRAMES} frames`,
    );
  const lines = text.slice(0, content).split('\n');
  let n = lines.length;
  while (n > 0 && lines[n - 1].trim() === '') n--;
  checkFrameCount(n, { file });

  const C = LAFAN1_CSV_COLUMNS;
  const J = G1_NUM_JOINTS;
  // Arrays for the rows the text can hold: a row of C non-empty fields takes at least 2C − 1
  // characters and a newline, so rows 0..k are all valid only if k < rowsBacked. A file with more
  // lines than that has a short row, refused at its line before the arrays could fill.
  const rowsBacked = Math.min(n, Math.floor((content + 1) / (2 * C)));
  const rootPosM = new Float64Array(rowsBacked * 3);
  const rootQuatWxyz = new Float64Array(rowsBacked * 4);
  const jointPosRad = new Float64Array(rowsBacked * J);
  const row = new Float64Array(C);

  for (let k = 0; k < n; k++) {
    const lineNo = k + 1;
    let line = lines[k];
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const fields = line.split(',');
    if (fields.length !== C) {
      if (line.trim() === '') {
        throw new InputError({ file, line: lineNo, column: 1 }, `empty line; expected ${C} comma-separated numbers`);
      }
      throw new InputError(
        { file, line: lineNo, column: Math.min(fields.length, C) + 1 },
        `expected ${C} fields (x y z, qx qy qz qw, ${J} joint angles), found ${fields.length}`,
      );
    }
    for (let c = 0; c < C; c++) {
      const f = fields[c];
      const v = Number(f);
      if (!Number.isFinite(v) || !NUMBER_RE.test(f)) {
        const loc = { file, line: lineNo, column: c + 1 };
        if (NONFINITE_RE.test(f) || NUMBER_RE.test(f)) {
          throw new InputError(loc, `value '${f.trim()}' is not finite (NaN and Inf are not allowed)`);
        }
        const looksLikeHeader = k === 0 && fields.filter((x) => !NUMBER_RE.test(x)).length > C / 2;
        const hint = looksLikeHeader ? ' (a header row? LAFAN1-G1 CSV has none)' : '';
        throw new InputError(
          loc,
          f.trim() === '' ? 'empty field, expected a number' : `'${truncate(f)}' is not a number${hint}`,
        );
      }
      const absurd = c < 3 ? boundProblem('root_pos', v) : c >= 7 ? boundProblem('joint_pos', v) : null;
      if (absurd) throw new InputError({ file, line: lineNo, column: c + 1 }, absurd);
      row[c] = v;
    }
    const qProblem = quatNormProblem(row, 3);
    if (qProblem)
      throw new InputError({ file, line: lineNo, column: 4 }, `root ${qProblem} (columns 4-7, qx qy qz qw)`);
    if (k >= rowsBacked)
      throw new Error(`LAFAN1 CSV reader: row ${k} is valid beyond the ${rowsBacked} rows the text can hold`);
    const p = k * 3;
    rootPosM[p] = row[0];
    rootPosM[p + 1] = row[1];
    rootPosM[p + 2] = row[2];
    const q = k * 4;
    rootQuatWxyz[q] = row[6];
    rootQuatWxyz[q + 1] = row[3];
    rootQuatWxyz[q + 2] = row[4];
    rootQuatWxyz[q + 3] = row[5];
    jointPosRad.set(row.subarray(7, C), k * J);
  }

  return finalizeClip(
    {
      name: clipNameFromFile(file),
      format: 'lafan1-csv',
      fps,
      fpsSource,
      frameCount: n,
      rootPosM,
      rootQuatWxyz,
      jointPosRad,
      warnings,
    },
    bytes,
    options,
  );
}

function truncate(s: string): string {
  const t = s.trim();
  return t.length > 40 ? t.slice(0, 37) + '...' : t;
}

/** Encodes a clip as LAFAN1-G1 CSV (xyzw quaternions, no header). The fps is not stored. */
export function encodeLafan1Csv(clip: MotionClip): string {
  const J = G1_NUM_JOINTS;
  const out: string[] = [];
  for (let k = 0; k < clip.frameCount; k++) {
    const p = clip.rootPosM.subarray(k * 3, k * 3 + 3);
    const q = clip.rootQuatWxyz.subarray(k * 4, k * 4 + 4);
    const j = clip.jointPosRad.subarray(k * J, k * J + J);
    out.push([p[0], p[1], p[2], q[1], q[2], q[3], q[0], ...j].map((v) => String(v)).join(','));
  }
  return out.join('\n') + '\n';
}
