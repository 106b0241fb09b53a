import fs from 'node:fs';
import path from 'node:path';
import type { QualificationOpenResult } from '../../api/contract';
import { FolderRefusedError, checkCreatableFolder } from '../files/folders';
import { openCampaign, type CampaignStore } from '../trace';
import { ApiFailure } from './apiFailure';

// qualification.open: checks, creates or opens a campaign folder and reports what it holds. Runs
// in the file worker (src/services/files/offThread.ts), off the console's event loop: a big or
// damaged database, a slow disk or a hostile path cannot hold up STOP. A folder to create is
// checked first (src/services/files/folders.ts): never under /proc, /sys or /dev, below a
// writable folder; a recursive mkdir there would spin forever.

/** A campaign store failure as the API error the board shows, on params.campaignDir. */
export function campaignProblem(err: unknown, dir: string): never {
  const e = err as { code?: string; message?: string };
  if (e && e.code === 'not_found') throw new ApiFailure('not_found', e.message ?? `no campaign at ${dir}`, 'params.campaignDir');
  if (err instanceof ApiFailure) throw err;
  throw new ApiFailure('input_error', `${dir}: ${e?.message ?? String(err)}`, 'params.campaignDir');
}

export async function openCampaignFolder(campaignDir: string, create: boolean): Promise<QualificationOpenResult> {
  const abs = path.resolve(campaignDir);
  const existed = fs.existsSync(path.join(abs, 'campaign.sqlite'));
  if (!existed && !create) {
    throw new ApiFailure('not_found', fs.existsSync(abs) ? `${abs} is not a campaign (no campaign.sqlite); tick "create" to start one there` : `no campaign at ${abs}; tick "create" to start one`, 'params.campaignDir');
  }
  if (fs.existsSync(abs) && !fs.statSync(abs).isDirectory()) throw new ApiFailure('input_error', `${abs} is a file, not a folder`, 'params.campaignDir');
  if (!existed) {
    try {
      checkCreatableFolder(abs);
    } catch (err) {
      if (err instanceof FolderRefusedError) throw new ApiFailure('input_error', `cannot create a campaign at ${abs}: ${err.message}`, 'params.campaignDir');
      throw err;
    }
  }
  let store: CampaignStore;
  try {
    // This thread records nothing, so it must not judge other threads' episodes: no recovery here
    // (a new campaign has none; the next writer's open recovers an old one's).
    store = await openCampaign(abs, existed ? { readOnly: true } : { create: true, recover: false });
  } catch (err) {
    campaignProblem(err, abs);
  }
  try {
    return { campaignDir: store.dir, campaignId: store.campaign.id, name: store.campaign.name, created: !existed };
  } finally {
    store.close();
  }
}
