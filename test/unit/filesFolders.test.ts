// Creating a user-named folder (a campaign) without trusting the path: Node's recursive mkdir
// spins forever under /proc, so src/services/files/folders.ts checks the nearest
// existing ancestor (realpath; /proc, /sys, /dev refused; a writable folder) and creates the
// missing levels one mkdir at a time.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCreatableFolder, createFolderTree, FolderRefusedError } from '../../src/services/files/folders';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-folders-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function refusal(fn: () => unknown): FolderRefusedError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(FolderRefusedError);
    return err as FolderRefusedError;
  }
  throw new Error('expected a FolderRefusedError');
}

describe('creating a campaign folder', () => {
  it('refuses /proc/x/campaign (where a recursive mkdir spins) at once, and /sys and /dev paths', () => {
    const e = refusal(() => createFolderTree('/proc/x/campaign'));
    expect(e.code).toBe('virtual_fs');
    expect(e.message).toBe(
      '/proc/x/campaign is under /proc, a virtual file system of the kernel: choose a folder on a disk',
    );
    expect(refusal(() => checkCreatableFolder('/sys/kernel/nope/c')).code).toBe('virtual_fs');
    expect(refusal(() => checkCreatableFolder('/dev/shm/mb-campaign')).code).toBe('virtual_fs');
  });

  it('judges the nearest existing ancestor after realpath: a symlink into /proc is refused, naming where it leads', () => {
    const link = path.join(root, 'to-proc');
    fs.symlinkSync('/proc/self', link);
    const e = refusal(() => createFolderTree(path.join(link, 'x', 'campaign')));
    expect(e.code).toBe('virtual_fs');
    expect(e.message).toMatch(/to-proc\/x\/campaign is under \/proc \(.*to-proc is \/proc\/\d+\)/);
  });

  it('refuses a path below a file', () => {
    const file = path.join(root, 'plain.txt');
    fs.writeFileSync(file, 'x');
    const e = refusal(() => createFolderTree(path.join(file, 'campaign')));
    expect(e.code).toBe('not_a_folder');
    expect(e.message).toBe(`${file} is a file, not a folder`);
  });

  it('creates the missing levels below a writable folder, one at a time, and accepts one that exists', () => {
    const target = path.join(root, 'a', 'b', 'campaign');
    expect(checkCreatableFolder(target)).toEqual({
      existing: root,
      missing: [path.join(root, 'a'), path.join(root, 'a', 'b'), target],
    });
    createFolderTree(target);
    expect(fs.statSync(target).isDirectory()).toBe(true);
    createFolderTree(target);
    expect(checkCreatableFolder(target)).toEqual({ existing: target, missing: [] });
  });
});
