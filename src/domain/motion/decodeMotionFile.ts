// Chooses the codec for a motion file by its content, with the extension as a cross-check:
//   starts with "PK\x03\x04" (or an empty ZIP)  → BeyondMimic/mjlab NPZ
//   starts with '{' (after a BOM/whitespace)    → motionbench-clip/1 JSON
//   otherwise                                   → the extension decides (.npz → NPZ, whose reader
//                                                  then reports the bad magic; .json → JSON, which
//                                                  reports the syntax error), else LAFAN1-G1 CSV.
// When the content and a known extension disagree, the content wins and a warning
// ('extension_mismatch') says so.

import type { Warning } from '../problems';
import { checkInputSize, fileExtension, type DecodeOptions } from './clipCommon';
import { decodeLafan1Csv } from './lafan1Csv';
import { decodeMjlabNpz } from './mjlabNpz';
import type { ClipFileFormat, MotionClip } from './motionClip';
import { decodeMotionbenchJson } from './motionbenchJson';
import { isZipMagic } from './zipArchive';

export type { DecodeOptions, FpsHint, JointLimitsRad } from './clipCommon';

const EXTENSION_FORMAT: Record<string, ClipFileFormat> = {
  csv: 'lafan1-csv',
  npz: 'mjlab-npz',
  json: 'motionbench-json',
};

function startsWithBrace(bytes: Uint8Array): boolean {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return bytes[i] === 0x7b;
}

/** The format a file's content indicates ('lafan1-csv' when neither ZIP nor JSON). */
export function detectClipFormat(bytes: Uint8Array, file: string): { format: ClipFileFormat; byContent: boolean } {
  if (isZipMagic(bytes)) return { format: 'mjlab-npz', byContent: true };
  if (startsWithBrace(bytes)) return { format: 'motionbench-json', byContent: true };
  const ext = EXTENSION_FORMAT[fileExtension(file)];
  return { format: ext ?? 'lafan1-csv', byContent: false };
}

export function decodeMotionFile(bytes: Uint8Array, options: DecodeOptions): MotionClip {
  checkInputSize(bytes, options.file);
  const { format, byContent } = detectClipFormat(bytes, options.file);
  const ext = fileExtension(options.file);
  const extFormat = EXTENSION_FORMAT[ext];
  const warnings: Warning[] = [];
  if (byContent && extFormat && extFormat !== format) {
    warnings.push({
      code: 'extension_mismatch',
      message: `the file is named .${ext} but its content is ${format === 'mjlab-npz' ? 'a ZIP/NPZ archive' : 'JSON'}; read as ${format}`,
    });
  }
  let clip: MotionClip;
  switch (format) {
    case 'mjlab-npz':
      clip = decodeMjlabNpz(bytes, options);
      break;
    case 'motionbench-json':
      clip = decodeMotionbenchJson(bytes, options);
      break;
    case 'lafan1-csv':
      clip = decodeLafan1Csv(bytes, options);
      break;
  }
  if (warnings.length > 0) clip.warnings.unshift(...warnings);
  return clip;
}
