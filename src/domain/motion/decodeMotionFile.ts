// Chooses the codec for a motion file by its content, with the extension as a cross-check:
//   starts with "PK\x03\x04" (or an empty ZIP)  → a ZIP; its directory decides (zipClipFormat):
//       one <folder>/data.pkl, every member in that folder → ProtoMotions .motion (torch.save)
//       .npy members named as HoloMotion's (ref_dof_pos, ref_global_translation, …)
//                                                → HoloMotion NPZ
//       otherwise                                → BeyondMimic/mjlab NPZ (which reports what is
//                                                  missing, or the damage of an unreadable ZIP)
//       members of two of these kinds at once    → refused: ambiguous, never guessed
//   starts with '{' (after a BOM/whitespace)    → motionbench-clip/1 JSON
//   starts with a pickle PROTO opcode (protocol 2–5) → HumanoidVerse/PBHC motion .pkl (joblib;
//                                                  read by a restricted unpickler, never executed)
//   otherwise                                   → the extension decides (.npz → NPZ, whose reader
//                                                  then reports the bad magic; .motion → the torch
//                                                  archive reader, likewise; .json → JSON, which
//                                                  reports the syntax error), else LAFAN1-G1 CSV.
// When the content and a known extension disagree, the content wins and a warning
// ('extension_mismatch') says so. SONIC reference folders are folders, not files: the services
// read them (src/services/motion/loadClipFile.ts) and decode them with sonicReferenceFolder.ts.

import { InputError, type Warning } from '../problems';
import { checkInputSize, type DecodeOptions, fileExtension, listNames } from './clipCommon';
import { decodeHoloMotionNpz, HOLOMOTION_KEYS } from './holoMotionNpz';
import { decodeHumanoidverseMotionPkl } from './humanoidverseMotionPkl';
import { isPickleMagic } from './joblibPickle';
import { decodeLafan1Csv } from './lafan1Csv';
import { decodeMjlabNpz } from './mjlabNpz';
import type { ClipFileFormat, MotionClip } from './motionClip';
import { decodeMotionbenchJson } from './motionbenchJson';
import { decodeProtoMotionsMotion } from './protoMotionsMotion';
import { isTorchArchiveDirectory } from './torchArchive';
import { isZipMagic, readZipDirectory, type ZipEntry } from './zipArchive';

export type { DecodeOptions, FpsHint, JointLimitsRad } from './clipCommon';

/** What each extension claims; an .npz may be either NPZ format (its members decide). */
const EXTENSION_FORMATS: Record<string, readonly ClipFileFormat[]> = {
  csv: ['lafan1-csv'],
  npz: ['mjlab-npz', 'holomotion-npz'],
  motion: ['protomotions-motion'],
  json: ['motionbench-json'],
  pkl: ['humanoidverse-pkl'],
};

const CONTENT_TEXT: Partial<Record<ClipFileFormat, string>> = {
  'mjlab-npz': 'a ZIP/NPZ archive',
  'holomotion-npz': 'a HoloMotion NPZ archive',
  'protomotions-motion': 'a torch.save archive (ProtoMotions .motion)',
  'motionbench-json': 'JSON',
  'humanoidverse-pkl': 'a pickle (HumanoidVerse motion .pkl)',
};

/** mjlab member names that tell an mjlab NPZ (mjlabNpz.ts). */
const MJLAB_KEYS = ['joint_pos', 'body_pos_w', 'body_quat_w'];
/** HoloMotion member names (holoMotionNpz.ts HOLOMOTION_KEYS). */
const HOLOMOTION_MEMBER_KEYS: readonly string[] = [
  ...HOLOMOTION_KEYS.dofPos,
  ...HOLOMOTION_KEYS.translation,
  ...HOLOMOTION_KEYS.rotation,
];

function startsWithBrace(bytes: Uint8Array): boolean {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return bytes[i] === 0x7b;
}

/**
 * Which ZIP-based clip format a ZIP's directory holds. An unreadable directory (a damaged or
 * truncated file, or only the head of one) is 'mjlab-npz', whose reader reports the damage.
 * Members of two formats at once are refused with an InputError naming them.
 */
export function zipClipFormat(bytes: Uint8Array, file: string): ClipFileFormat {
  let entries: ZipEntry[];
  try {
    entries = readZipDirectory(bytes, file);
  } catch {
    return 'mjlab-npz';
  }
  const npy = new Set(entries.filter((e) => e.name.endsWith('.npy')).map((e) => e.name.slice(0, -4)));
  const kinds: [ClipFileFormat, string[]][] = [
    ['protomotions-motion', isTorchArchiveDirectory(entries) ? ['<archive>/data.pkl'] : []],
    ['holomotion-npz', HOLOMOTION_MEMBER_KEYS.filter((k) => npy.has(k))],
    ['mjlab-npz', MJLAB_KEYS.filter((k) => npy.has(k))],
  ];
  const found = kinds.filter(([, names]) => names.length > 0);
  if (found.length > 1)
    throw new InputError(
      { file },
      `the archive holds members of more than one motion format (${found.map(([f, names]) => `${f}: ${listNames(names)}`).join('; ')}); refused rather than guessed`,
    );
  return found.length === 1 ? found[0][0] : 'mjlab-npz';
}

/** The format a file's content indicates ('lafan1-csv' when neither ZIP nor JSON nor a known extension). */
export function detectClipFormat(bytes: Uint8Array, file: string): { format: ClipFileFormat; byContent: boolean } {
  if (isZipMagic(bytes)) return { format: zipClipFormat(bytes, file), byContent: true };
  if (startsWithBrace(bytes)) return { format: 'motionbench-json', byContent: true };
  if (isPickleMagic(bytes)) return { format: 'humanoidverse-pkl', byContent: true };
  const ext = EXTENSION_FORMATS[fileExtension(file)];
  return { format: ext?.[0] ?? 'lafan1-csv', byContent: false };
}

export function decodeMotionFile(bytes: Uint8Array, options: DecodeOptions): MotionClip {
  checkInputSize(bytes, options.file);
  const { format, byContent } = detectClipFormat(bytes, options.file);
  const ext = fileExtension(options.file);
  const extFormats = EXTENSION_FORMATS[ext];
  const warnings: Warning[] = [];
  if (byContent && extFormats && !extFormats.includes(format)) {
    warnings.push({
      code: 'extension_mismatch',
      message: `the file is named .${ext} but its content is ${CONTENT_TEXT[format] ?? format}; read as ${format}`,
    });
  }
  let clip: MotionClip;
  switch (format) {
    case 'mjlab-npz':
      clip = decodeMjlabNpz(bytes, options);
      break;
    case 'holomotion-npz':
      clip = decodeHoloMotionNpz(bytes, options);
      break;
    case 'protomotions-motion':
      clip = decodeProtoMotionsMotion(bytes, options);
      break;
    case 'motionbench-json':
      clip = decodeMotionbenchJson(bytes, options);
      break;
    case 'lafan1-csv':
      clip = decodeLafan1Csv(bytes, options);
      break;
    case 'humanoidverse-pkl':
      clip = decodeHumanoidverseMotionPkl(bytes, options);
      break;
    case 'sonic-csv-folder':
      throw new InputError(
        { file: options.file },
        'a SONIC reference motion is a folder (joint_pos.csv, body_pos.csv, body_quat.csv, metadata.txt): open the folder',
      );
  }
  if (warnings.length > 0) clip.warnings.unshift(...warnings);
  return clip;
}
