import fs from 'node:fs';
import path from 'node:path';
import loadMujocoModule, { type MainModule, type MjData, type MjModel } from 'mujoco-js';

// One MuJoCo WASM instance per thread, loaded lazily. Models are loaded from the host file
// system by copying the model file, everything it <include>s and every mesh it references into
// the WASM module's in-memory file system under a fresh directory, so relative paths (meshdir,
// includes) resolve exactly as they do on disk.

let modulePromise: Promise<MainModule> | undefined;
let mountCounter = 0;

export function loadMujoco(): Promise<MainModule> {
  modulePromise ??= loadMujocoModule();
  return modulePromise;
}

export interface LoadedMujocoModel {
  mujoco: MainModule;
  model: MjModel;
  data: MjData;
  /** Frees the WASM-side model and data. */
  dispose(): void;
}

/** Copies a directory tree into MEMFS (only files below `maxBytes` total, to stay bounded). */
function copyTree(mj: MainModule, hostDir: string, memDir: string, budget: { bytes: number }): void {
  const FS = (mj as unknown as { FS: EmscriptenFS }).FS;
  FS.mkdirTree(memDir);
  for (const entry of fs.readdirSync(hostDir, { withFileTypes: true })) {
    const hostPath = path.join(hostDir, entry.name);
    const memPath = `${memDir}/${entry.name}`;
    if (entry.isDirectory()) {
      copyTree(mj, hostPath, memPath, budget);
    } else if (entry.isFile() && /\.(xml|stl|obj|msh|png)$/i.test(entry.name)) {
      const bytes = fs.readFileSync(hostPath);
      budget.bytes -= bytes.length;
      if (budget.bytes < 0) throw new Error(`${hostDir}: model directory is larger than the 512 MiB load limit`);
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
 * Loads an MJCF file (and the directory it lives in: includes, meshes) into MuJoCo.
 * Throws an Error naming the file and MuJoCo's own message when the model does not compile.
 */
export async function loadMujocoModel(modelFile: string): Promise<LoadedMujocoModel> {
  const mj = await loadMujoco();
  const absolute = path.resolve(modelFile);
  const memRoot = `/models/m${mountCounter++}`;
  copyTree(mj, path.dirname(absolute), memRoot, { bytes: 512 * 1024 * 1024 });
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
