import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { toApiError } from '../../src/services/console/apiErrorMap';
import { FieldError } from '../../src/services/console/apiFailure';
import { checkCreatableFolder, FolderRefusedError } from '../../src/services/files/folders';
import { OffThreadFiles } from '../../src/services/console/offThread';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { openCampaign, TraceStoreError } from '../../src/services/trace';

// The console's real file worker (src/services/console/offThread.ts, fileWorker.ts): an error thrown
// in the worker thread reaches the main thread as the SAME TYPE with the same fields, so the API's
// error map, which works by `instanceof`, answers as if it had been thrown on the main thread. Each
// expected error is made again on this thread by the same code, and must equal what came back.

let tmp: string;
let files: OffThreadFiles;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-file-worker-errors-'));
  files = new OffThreadFiles();
});
afterAll(async () => {
  await files?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The rejection of `p`. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** The error `fn` throws (or rejects with) on this thread. */
async function here(fn: () => unknown): Promise<unknown> {
  return rejection(Promise.resolve().then(fn));
}

const row = (cols: string[]) => cols.join(',');
const zeros = (): string[] => Array.from({ length: 36 }, (_, i) => (i === 6 ? '1' : '0'));

describe('file worker: errors come back as their own types', () => {
  it('clips.load of a CSV with a bad number: an InputError with its line and column', async () => {
    const csv = path.join(tmp, 'bad.csv');
    const bad = zeros();
    bad[4] = 'x';
    fs.writeFileSync(csv, `${row(zeros())}\n${row(zeros())}\n${row(bad)}\n`);
    const err = await rejection(files.loadClip(csv, { fps: 30 }));
    expect(err).toBeInstanceOf(InputError);
    const mine = (await here(() => loadClipFile(csv, { fps: 30 }))) as InputError;
    expect((err as InputError).location).toEqual(mine.location);
    expect((err as InputError).location).toMatchObject({ file: csv, line: 3, column: 5 });
    expect(toApiError(err)).toEqual(toApiError(mine));
    // Control: the same file with the number fixed loads.
    fs.writeFileSync(csv, `${row(zeros())}\n${row(zeros())}\n${row(zeros())}\n`);
    await expect(files.loadClip(csv, { fps: 30 })).resolves.toMatchObject({ clip: { frameCount: 3 } });
  });

  it('a campaign under /proc: the FolderRefusedError, on params.campaignDir', async () => {
    const err = await rejection(files.openCampaign('/proc/x/campaign', true));
    expect(err).toBeInstanceOf(FieldError);
    expect((err as FieldError).field).toBe('params.campaignDir');
    expect((err as FieldError).error).toBeInstanceOf(FolderRefusedError);
    const mine = (await here(() => checkCreatableFolder('/proc/x/campaign'))) as FolderRefusedError;
    expect(toApiError(err)).toEqual({ ...toApiError(mine), field: 'params.campaignDir' });
    expect(toApiError(err)).toMatchObject({ code: 'input_error', origin: { code: 'virtual_fs' } });
  });

  it('a folder whose campaign.sqlite is not a database: the store’s own TraceStoreError (not a "cannot read")', async () => {
    const dir = path.join(tmp, 'not-a-campaign');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'campaign.sqlite'), 'this is not an SQLite file, it only has the name'.repeat(50));
    const err = await rejection(files.openCampaign(dir, false));
    expect((err as FieldError).error).toBeInstanceOf(TraceStoreError);
    const mine = (await here(() => openCampaign(dir, { readOnly: true }))) as TraceStoreError;
    expect(mine).toBeInstanceOf(TraceStoreError);
    expect(toApiError(err)).toEqual({ ...toApiError(mine), field: 'params.campaignDir' });
    expect(toApiError(err)).toMatchObject({
      code: 'input_error',
      message: mine.message,
      origin: { type: 'TraceStoreError', code: 'not_a_campaign', path: path.join(dir, 'campaign.sqlite') },
    });
    expect(toApiError(err).message).not.toMatch(/cannot read/);
    // Control: a real campaign there opens.
    const good = path.join(tmp, 'good');
    (await openCampaign(good, { create: true })).close();
    await expect(files.openCampaign(good, false)).resolves.toMatchObject({ campaignDir: good, created: false });
  });
});
