// A user's folder of clips as its own workload snapshot. The folder holds motion files (LAFAN1-G1
// CSV, BeyondMimic/mjlab NPZ, motionbench-clip/1 JSON) and a manifest `workload.json`:
//
//   {
//     "id": "lab-set",                       letters, digits, . _ - (not core-v<N>)
//     "version": "3",                        string (or a non-negative integer)
//     "description": "…",                   optional
//     "clips": {
//       "walk1.csv":        { "group": "locomotion", "fps": 30 },       fps required for CSV
//       "moves/jump.npz":   { "group": "dynamic" },                     fps optional: must match the file
//       "wave.json":        { "group": "upper_body", "name": "wave" }   name optional
//     }
//   }
//
// Keys are paths relative to the folder ('/'-separated, no '..'). Every clip file in the folder
// (recursively; .csv, .npz, .json; hidden entries and workload.json skipped) must be listed, every
// listed file must exist. All problems are collected and reported together, each naming the file
// and key. The snapshot hash is computed over the clip ids (docs/WORKLOAD.md).

import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { MAX_FPS, MIN_FPS } from '../../domain/motion/clipCommon';
import { detectClipFormat } from '../../domain/motion/decodeMotionFile';
import type { CapabilityGroup, MotionClip } from '../../domain/motion/motionClip';
import { InputError, type InputLocation } from '../../domain/problems';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { buildSnapshot, CAPABILITY_GROUPS, type LoadedWorkload } from '../../domain/workload/snapshot';
import { readBoundedText, readFileHead } from '../files/boundedRead';
import { loadClipFile } from '../motion/loadClipFile';

export const WORKLOAD_MANIFEST_FILE = 'workload.json';
const CLIP_EXTENSIONS = new Set(['.csv', '.npz', '.json']);
const MAX_SCAN_ENTRIES = 20_000;
const MAX_SCAN_DEPTH = 8;

/** Several input problems at once (a folder with more than one thing wrong). */
export class WorkloadInputError extends InputError {
  constructor(
    location: InputLocation,
    readonly problems: InputError[],
  ) {
    super(location, `${problems.length} problems:\n${problems.map((p) => `  - ${p.message}`).join('\n')}`);
  }
}

const groupSchema = z.enum(CAPABILITY_GROUPS as [CapabilityGroup, ...CapabilityGroup[]], {
  error: (iss) =>
    `must be one of ${CAPABILITY_GROUPS.join(', ')}${iss.input === undefined ? ' (missing)' : `, found ${JSON.stringify(iss.input)}`}`,
});

const clipEntrySchema = z.strictObject(
  {
    group: groupSchema,
    fps: z
      .number({ error: 'must be a number (frames per second)' })
      .refine(
        (v) => Number.isFinite(v) && v >= MIN_FPS && v <= MAX_FPS,
        `must be a frame rate in [${MIN_FPS}, ${MAX_FPS}] Hz`,
      )
      .optional(),
    name: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .refine((s) => !/[\t\n\r]/.test(s), 'must not contain tabs or line breaks')
      .optional(),
  },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown key${iss.keys.length > 1 ? 's' : ''} ${iss.keys.map((k) => `"${k}"`).join(', ')} (allowed: group, fps, name)`
        : 'must be an object {"group": …, "fps"?: …, "name"?: …}',
  },
);

export const workloadManifestSchema = z.strictObject(
  {
    format: z.literal('mb-workload/1', { error: 'must be "mb-workload/1" when given' }).optional(),
    id: z
      .string({ error: 'must be a string' })
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
        'must be 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit',
      )
      .refine((s) => !/^core-v\d+$/.test(s), 'core-v<N> ids are reserved for the built-in workloads'),
    version: z
      .union([z.string().min(1), z.int().nonnegative()], {
        error: 'must be a non-empty string or a non-negative integer',
      })
      .transform(String),
    description: z.string({ error: 'must be a string' }).optional(),
    clips: z.record(z.string(), clipEntrySchema, { error: 'must be an object mapping clip files to {"group": …}' }),
  },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown key${iss.keys.length > 1 ? 's' : ''} ${iss.keys.map((k) => `"${k}"`).join(', ')} (allowed: format, id, version, description, clips)`
        : 'must be a JSON object with "id", "version" and "clips"',
  },
);

export type WorkloadManifest = z.output<typeof workloadManifestSchema>;

function keyPath(p: readonly PropertyKey[]): string {
  let s = '';
  for (const k of p) {
    if (typeof k === 'number') s += `[${k}]`;
    else if (s === 'clips') s += `[${JSON.stringify(String(k))}]`;
    else s += s ? `.${String(k)}` : String(k);
  }
  return s || '(root)';
}

/** Validates a parsed workload.json; all problems as InputErrors naming `file` and the key. */
export function validateWorkloadManifest(
  json: unknown,
  file: string,
): { manifest: WorkloadManifest | null; problems: InputError[] } {
  const r = workloadManifestSchema.safeParse(json);
  const problems: InputError[] = [];
  if (!r.success) {
    for (const i of r.error.issues) problems.push(new InputError({ file, key: keyPath(i.path) }, i.message));
    return { manifest: null, problems };
  }
  const m = r.data;
  const keys = Object.keys(m.clips);
  if (keys.length === 0) problems.push(new InputError({ file, key: 'clips' }, 'lists no clips'));
  for (const k of keys) {
    const why = relativePathProblem(k);
    if (why) problems.push(new InputError({ file, key: `clips[${JSON.stringify(k)}]` }, why));
  }
  return { manifest: m, problems };
}

function relativePathProblem(p: string): string | null {
  if (p.trim() === '') return 'the file name is empty';
  if (p.includes('\\')) return 'use "/" to separate folders, not "\\"';
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'must be a path relative to the workload folder';
  if (p.split('/').some((s) => s === '..' || s === '.' || s === ''))
    return 'must be a plain relative path inside the workload folder (no "..", "." or empty segments)';
  if (!CLIP_EXTENSIONS.has(path.extname(p).toLowerCase())) return `is not a clip file: expected .csv, .npz or .json`;
  return null;
}

/**
 * Clip files in the folder (relative, '/'-separated), hidden entries and the manifest skipped.
 * Symbolic links to files are entries of the folder. Links to folders are followed only inside the
 * folder (by realpath) and only to a folder not scanned yet (device + inode): a link leading out
 * of the folder, or back to a folder already scanned (a loop), is one problem naming the link.
 */
function scanClipFiles(dir: string): { files: string[]; problems: InputError[] } {
  const out: string[] = [];
  const problems: InputError[] = [];
  let seen = 0;
  let root: string;
  const visited = new Set<string>();
  const idOf = (st: fs.Stats): string => `${st.dev}:${st.ino}`;
  try {
    root = fs.realpathSync(dir);
    visited.add(idOf(fs.statSync(root)));
  } catch {
    return { files: out, problems };
  }
  const inside = (real: string): boolean => {
    const rel = path.relative(root, real);
    return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
  };
  const walk = (rel: string, depth: number) => {
    if (depth > MAX_SCAN_DEPTH) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (++seen > MAX_SCAN_ENTRIES) return;
      if (e.name.startsWith('.')) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      const full = path.join(dir, r);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      let st: fs.Stats | null = null;
      if (e.isSymbolicLink()) {
        try {
          st = fs.statSync(full);
          isDir = st.isDirectory();
          isFile = st.isFile();
        } catch {
          continue; // a dangling link (or a link loop the system itself refuses: ELOOP)
        }
        if (isDir) {
          let real: string;
          try {
            real = fs.realpathSync(full);
          } catch {
            continue;
          }
          if (!inside(real)) {
            problems.push(
              new InputError(
                { file: full },
                `is a symbolic link to ${real}, outside the workload folder ${root}; the folder scan does not follow it (move or copy the clips into the folder)`,
              ),
            );
            continue;
          }
        }
      }
      if (isDir) {
        try {
          st ??= fs.statSync(full);
        } catch {
          continue;
        }
        const id = idOf(st);
        if (visited.has(id)) {
          let real = full;
          try {
            real = fs.realpathSync(full);
          } catch {
            // keep the link's own name
          }
          problems.push(
            new InputError(
              { file: full },
              `leads to ${real}, a folder the scan has already been through (a symbolic-link loop); remove the link`,
            ),
          );
          continue;
        }
        visited.add(id);
        walk(r, depth + 1);
      } else if (isFile && r !== WORKLOAD_MANIFEST_FILE && CLIP_EXTENSIONS.has(path.extname(e.name).toLowerCase()))
        out.push(r);
    }
  };
  walk('', 0);
  return { files: out, problems };
}

const stemOf = (p: string) => p.slice(0, p.length - path.extname(p).length);

export interface FolderWorkloadOptions {
  /** Robot model whose joint limits produce joint_limit warnings on the clips. */
  profile?: RobotProfile;
}

/**
 * Reads a workload folder (a directory with workload.json, or the workload.json itself) into a
 * snapshot with its clips, in manifest order. Throws InputError (one problem) or
 * WorkloadInputError (several), every message naming the file and key.
 */
export function loadFolderWorkload(dirOrManifest: string, options: FolderWorkloadOptions = {}): LoadedWorkload {
  let dir = dirOrManifest;
  let manifestFile = path.join(dir, WORKLOAD_MANIFEST_FILE);
  try {
    // Anything but a folder is taken as the manifest itself (a device or FIFO is then refused by the read).
    if (!fs.statSync(dirOrManifest).isDirectory()) {
      manifestFile = dirOrManifest;
      dir = path.dirname(dirOrManifest);
    }
  } catch (e) {
    throw new InputError(
      { file: dirOrManifest },
      `cannot open the workload folder (${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : (e as Error).message})`,
    );
  }
  let text: string;
  try {
    text = readBoundedText(manifestFile, 'json'); // a regular file within FILE_LIMITS.json
  } catch (e) {
    if (e instanceof InputError) throw new InputError({ file: manifestFile }, `cannot read the manifest (${e.reason})`);
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(
      { file: manifestFile },
      code === 'ENOENT'
        ? `the folder has no ${WORKLOAD_MANIFEST_FILE}; write one: {"id": "<name>", "version": "1", "clips": {"<file>": {"group": "<${CAPABILITY_GROUPS.join('|')}>", "fps": <for CSV>}}}`
        : `cannot read the manifest (${code ?? (e as Error).message})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    throw new InputError({ file: manifestFile }, `not valid JSON (${(e as Error).message})`);
  }
  const { manifest, problems } = validateWorkloadManifest(json, manifestFile);
  const fail = () => {
    if (problems.length === 1) throw problems[0];
    throw new WorkloadInputError({ file: manifestFile }, problems);
  };
  if (!manifest) fail();
  const m = manifest as WorkloadManifest;
  const listed = Object.keys(m.clips);
  const keyOf = (k: string) => `clips[${JSON.stringify(k)}]`;

  // listed files exist; folder files are listed
  const scan = scanClipFiles(dir);
  const onDisk = scan.files;
  problems.push(...scan.problems);
  for (const k of listed) {
    if (relativePathProblem(k)) continue;
    const full = path.join(dir, ...k.split('/'));
    let ok = false;
    try {
      ok = fs.statSync(full).isFile();
    } catch {
      ok = false;
    }
    if (!ok)
      problems.push(
        new InputError(
          { file: manifestFile, key: keyOf(k) },
          `lists ${k}, but ${full} does not exist (or is not a file)`,
        ),
      );
  }
  const listedSet = new Set(listed);
  const listedCsvStems = new Set(listed.filter((k) => path.extname(k).toLowerCase() === '.csv').map(stemOf));
  for (const f of onDisk) {
    if (listedSet.has(f)) continue;
    // a <stem>.json beside a listed <stem>.csv is an fps sidecar, not a clip
    if (path.extname(f).toLowerCase() === '.json' && listedCsvStems.has(stemOf(f))) continue;
    problems.push(
      new InputError(
        { file: path.join(dir, ...f.split('/')) },
        `is in the workload folder but not listed in ${WORKLOAD_MANIFEST_FILE}; add it to "clips" with its group, or move it out of the folder`,
      ),
    );
  }
  if (problems.length > 0) fail();

  // decode every clip
  const jointLimitsRad = options.profile?.joints.map((j) => j.rangeRad);
  const clips: MotionClip[] = [];
  const files: string[] = [];
  for (const k of listed) {
    const entry = m.clips[k];
    const full = path.join(dir, ...k.split('/'));
    try {
      const format = detectClipFormat(readFileHead(full, 64), full).format;
      if (format === 'lafan1-csv' && entry.fps === undefined) {
        problems.push(
          new InputError(
            { file: manifestFile, key: `${keyOf(k)}.fps` },
            `${k} is a CSV clip, which does not state its frame rate: give "fps" (e.g. 30 for LAFAN1 retargeted clips, 60 for G1 Moves)`,
          ),
        );
        continue;
      }
      const clip = loadClipFile(full, {
        ...(entry.fps !== undefined ? { fps: entry.fps } : {}),
        ...(jointLimitsRad ? { jointLimitsRad } : {}),
      });
      if (clip.capabilityGroup && clip.capabilityGroup !== entry.group) {
        problems.push(
          new InputError(
            { file: manifestFile, key: `${keyOf(k)}.group` },
            `is ${entry.group}, but ${k} itself says capability_group "${clip.capabilityGroup}"; make them agree`,
          ),
        );
        continue;
      }
      clip.capabilityGroup = entry.group;
      if (entry.name !== undefined) clip.name = entry.name;
      if (/[\t\n\r]/.test(clip.name)) clip.name = clip.name.replace(/[\t\n\r]+/g, ' ');
      clips.push(clip);
      files.push(k);
    } catch (e) {
      if (e instanceof InputError) problems.push(e);
      else problems.push(new InputError({ file: full }, `cannot read the clip (${(e as Error).message})`));
    }
  }
  // unique names and contents
  const byName = new Map<string, string>();
  const byId = new Map<string, string>();
  clips.forEach((c, i) => {
    const f = files[i];
    const otherByName = byName.get(c.name);
    if (otherByName !== undefined) {
      problems.push(
        new InputError(
          { file: manifestFile, key: keyOf(f) },
          `clip name "${c.name}" is also the name of ${otherByName}; names must be unique (set "name" in the entry)`,
        ),
      );
    } else byName.set(c.name, f);
    const otherById = byId.get(c.id);
    if (otherById !== undefined) {
      problems.push(
        new InputError(
          { file: manifestFile, key: keyOf(f) },
          `${f} holds the same motion as ${otherById} (clip id ${c.id}); list each motion once`,
        ),
      );
    } else byId.set(c.id, f);
  });
  if (problems.length > 0) fail();
  return { snapshot: buildSnapshot(m.id, m.version, 'folder', clips, files), clips };
}
