import fs from 'node:fs';
import path from 'node:path';
import loadMujocoModule, { type MainModule, type MjData, type MjModel } from 'mujoco-js';
import { InputError } from '../../domain/problems';
import { FILE_LIMITS, readBoundedFile } from '../files/boundedRead';
import { modelFileReferences, toPosixPath } from '../robot/loadRobotProfile';

/** Everything copied from a model's directory into MEMFS, MiB. */
const MODEL_TREE_LIMIT_MIB = 512;

// One MuJoCo WASM instance per thread, loaded lazily. Models are loaded from the host file
// system by copying the model file, everything it <include>s and every mesh it references into
// the WASM module's in-memory file system under a fresh directory, so relative paths (meshdir,
// includes) resolve exactly as they do on disk.

let modulePromise: Promise<MainModule> | undefined;
let mountCounter = 0;

/**
 * What the WASM module prints (MuJoCo's warnings, e.g. "Nan, Inf or huge value in QACC", go through
 * printf to Emscripten's `print`) goes to stderr, one line each: stdout belongs to the command's
 * result, which under --json is exactly one JSON document. Blank lines are dropped.
 */
export const MUJOCO_OUTPUT_PREFIX = 'mujoco: ';
const toStderr = (line: string): void => {
  if (line.trim() !== '') process.stderr.write(`${MUJOCO_OUTPUT_PREFIX}${line}\n`);
};

export function loadMujoco(): Promise<MainModule> {
  modulePromise ??= loadMujocoModule({ print: toStderr, printErr: toStderr });
  return modulePromise;
}

export interface LoadedMujocoModel {
  mujoco: MainModule;
  model: MjModel;
  data: MjData;
  /** Frees the WASM-side model and data. */
  dispose(): void;
}

/** The files copyTree copies into MEMFS (models, meshes, images). */
const COPIED_FILE_RE = /\.(xml|stl|obj|msh|png)$/i;

/** Copies a directory tree into MEMFS (only files below `maxBytes` total, to stay bounded). */
function copyTree(mj: MainModule, hostDir: string, memDir: string, budget: { bytes: number }): void {
  const FS = (mj as unknown as { FS: EmscriptenFS }).FS;
  FS.mkdirTree(memDir);
  for (const entry of fs.readdirSync(hostDir, { withFileTypes: true })) {
    const hostPath = path.join(hostDir, entry.name);
    const memPath = `${memDir}/${entry.name}`;
    if (entry.isDirectory()) {
      copyTree(mj, hostPath, memPath, budget);
    } else if (entry.isFile() && COPIED_FILE_RE.test(entry.name)) {
      // A regular file (judged on the open descriptor: a symlink to a device is refused), within
      // the per-file mesh limit and what is left of the directory's budget.
      const left = Math.max(0, budget.bytes);
      const bytes = readBoundedFile(
        hostPath,
        left >= FILE_LIMITS.mesh.bytes
          ? 'mesh'
          : { bytes: left, what: `what is left of the ${MODEL_TREE_LIMIT_MIB} MiB load limit of a model directory` },
      );
      budget.bytes -= bytes.length;
      FS.writeFile(memPath, bytes);
    }
  }
}

interface EmscriptenFS {
  mkdirTree(p: string): void;
  writeFile(p: string, data: Uint8Array | string): void;
  rmdir(p: string): void;
}

/**
 * Every file the model's includes and assets name must exist, inside the model's folder (the only
 * one copied into MuJoCo's file system) and of a type that is copied; otherwise MuJoCo's compiler
 * fails with a bare "mjCError". Throws an InputError at the <include> or asset element (its file,
 * line and column) that names the file, and names the model being loaded when that element is in
 * an included file.
 */
export function checkModelFiles(modelFile: string): void {
  const refs = modelFileReferences(modelFile);
  const folder = path.dirname(path.resolve(modelFile));
  for (const r of refs) {
    const of = r.declaredAt.file === toPosixPath(modelFile) ? '' : ` (in the model ${modelFile})`;
    let isFile = false;
    try {
      isFile = fs.statSync(r.file).isFile();
    } catch {
      isFile = false;
    }
    if (!isFile) throw new InputError(r.declaredAt, `${r.kind} file ${r.file} does not exist${of}`);
    const rel = path.relative(folder, path.resolve(r.file));
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
      throw new InputError(
        r.declaredAt,
        `${r.kind} file ${r.file} is outside the model's folder ${folder}${of}; the simulator loads the model's folder only: move the file into it`,
      );
    }
    if (!COPIED_FILE_RE.test(r.file))
      throw new InputError(
        r.declaredAt,
        `${r.kind} file ${r.file} is not a type the simulator loads (.xml, .stl, .obj, .msh, .png)${of}`,
      );
  }
}

/**
 * Loads an MJCF file (and the directory it lives in: includes, meshes) into MuJoCo.
 * Throws an InputError naming the asset and the MJCF when a file the model needs is missing
 * (checkModelFiles), an Error naming the file and MuJoCo's own message when it does not compile.
 */
export async function loadMujocoModel(modelFile: string): Promise<LoadedMujocoModel> {
  checkModelFiles(modelFile);
  const mj = await loadMujoco();
  const absolute = path.resolve(modelFile);
  const memRoot = `/models/m${mountCounter++}`;
  copyTree(mj, path.dirname(absolute), memRoot, { bytes: MODEL_TREE_LIMIT_MIB * 1024 * 1024 });
  let model: MjModel;
  try {
    model = mj.MjModel.loadFromXML(`${memRoot}/${path.basename(absolute)}`);
  } catch (err) {
    throw new Error(`${modelFile}: MuJoCo could not load the model: ${describeWasmError(err)}`);
  }
  if (!model) throw new Error(`${modelFile}: MuJoCo could not load the model`);
  const data = new mj.MjData(model);
  return {
    mujoco: mj,
    model,
    data,
    dispose() {
      data.delete();
      model.delete();
    },
  };
}

function describeWasmError(err: unknown): string {
  // This WASM build throws CppException objects whose text cannot be read back safely
  // (getExceptionMessage faults), so report the C++ exception type; the MJCF reader in
  // src/domain/robot gives located errors for the structural problems it understands.
  if (typeof err === 'object' && err !== null && 'excPtr' in err) {
    const name = (err as { name?: string }).name ?? 'C++ exception';
    return `${name} (MuJoCo's compiler rejected the model)`;
  }
  return err instanceof Error ? err.message : String(err);
}
