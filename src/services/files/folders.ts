// Creating a folder a user named (a campaign folder) without trusting the path: Node's recursive
// mkdir spins forever on a path under /proc whose parent does not exist (mkdir answers ENOENT,
// the parent answers EEXIST, and it retries), so the path is checked first and created one level
// at a time. Refused: a path whose nearest existing ancestor resolves (realpath) into a kernel
// virtual file system (/proc, /sys, /dev), is not a folder, or is not writable.

import fs from 'node:fs';
import path from 'node:path';

/** Kernel virtual file systems where no campaign folder is ever created. */
export const VIRTUAL_FS_ROOTS = ['/proc', '/sys', '/dev'] as const;

export type FolderRefusal = 'virtual_fs' | 'not_a_folder' | 'not_writable';

export class FolderRefusedError extends Error {
  override readonly name = 'FolderRefusedError';
  constructor(
    readonly code: FolderRefusal,
    /** The path concerned (the ancestor that decided it). */
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** stat, or undefined where nothing is (ENOENT; ENOTDIR: a file on the way). */
function statOrNull(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

const under = (p: string, root: string): boolean => p === root || p.startsWith(`${root}/`);

/** The virtual file system root `p` lies in, or null. */
export function virtualFsRootOf(p: string): string | null {
  if (process.platform === 'win32') return null;
  return VIRTUAL_FS_ROOTS.find((r) => under(p, r)) ?? null;
}

/**
 * Where creating `dir` would start: its nearest existing ancestor (a writable folder outside the
 * virtual file systems, judged after realpath) and the missing levels below it, outermost first.
 * Throws FolderRefusedError.
 */
export function checkCreatableFolder(dir: string): { existing: string; missing: string[] } {
  const abs = path.resolve(dir);
  const missing: string[] = [];
  let p = abs;
  let st: fs.Stats | undefined;
  for (;;) {
    st = statOrNull(p);
    if (st) break;
    const parent = path.dirname(p);
    if (parent === p) throw new FolderRefusedError('not_a_folder', p, `${p} does not exist`);
    missing.unshift(p);
    p = parent;
  }
  let real: string;
  try {
    real = fs.realpathSync(p);
  } catch (err) {
    throw new FolderRefusedError(
      'not_a_folder',
      p,
      `${p} cannot be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  const root = virtualFsRootOf(real);
  if (root) {
    throw new FolderRefusedError(
      'virtual_fs',
      p,
      `${abs} is under ${root}${real !== p ? ` (${p} is ${real})` : ''}, a virtual file system of the kernel: choose a folder on a disk`,
    );
  }
  if (!st.isDirectory()) throw new FolderRefusedError('not_a_folder', p, `${p} is a file, not a folder`);
  try {
    fs.accessSync(p, fs.constants.W_OK);
  } catch {
    throw new FolderRefusedError('not_writable', p, `${p} is not writable by this user`);
  }
  return { existing: p, missing };
}

/** Creates `dir` and its missing parents after checkCreatableFolder, one mkdir per level (never recursive). */
export function createFolderTree(dir: string): void {
  const { missing } = checkCreatableFolder(dir);
  for (const p of missing) {
    try {
      fs.mkdirSync(p);
    } catch (err) {
      // Another process may have made it meanwhile; anything else (ENOENT on a level whose
      // parent exists, as /proc answers) is an error, not a retry.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.statSync(p).isDirectory()) throw err;
    }
  }
}
