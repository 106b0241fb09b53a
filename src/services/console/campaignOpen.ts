import fs from 'node:fs';
import path from 'node:path';
import type { QualificationOpenResult } from '../../api/contract';
import { checkCreatableFolder } from '../files/folders';
import { openCampaign, type CampaignStore } from '../trace';
import { ApiFailure, FieldError } from './apiFailure';

// qualification.open: checks, creates or opens a campaign folder and reports what it holds. Runs
// in the file worker (src/services/console/offThread.ts), off the console's event loop: a big or
// damaged database, a slow disk or a hostile path cannot hold up STOP. A folder to create is
// checked first (src/services/files/folders.ts): never under /proc, /sys or /dev, below a
// writable folder; a recursive mkdir there would spin forever.

/**
 * A campaign store failure, attributed to params.campaignDir: the store's own error (its type, code
 * and message) goes on to the API's error map (apiErrorMap.ts); an ApiFailure already says its field.
 */
export function campaignProblem(err: unknown): never {
  if (err instanceof ApiFailure) throw err;
  throw new FieldError('params.campaignDir', err);
}

export async function openCampaignFolder(campaignDir: string, create: boolean): Promise<QualificationOpenResult> {
  const abs = path.resolve(campaignDir);
  const existed = fs.existsSync(path.join(abs, 'campaign.sqlite'));
  if (!existed && !create) {
    throw new ApiFailure(
      'not_found',
      fs.existsSync(abs)
        ? `${abs} is not a campaign (no campaign.sqlite); press New to start one there`
        : `no campaign at ${abs}; press New to start one there`,
      'params.campaignDir',
    );
  }
  if (fs.existsSync(abs) && !fs.statSync(abs).isDirectory())
    throw new ApiFailure('input_error', `${abs} is a file, not a folder`, 'params.campaignDir');
  if (!existed) {
    try {
      checkCreatableFolder(abs);
    } catch (err) {
      campaignProblem(err);
    }
  }
  let store: CampaignStore;
  try {
    // This thread records nothing, so it must not judge other threads' episodes: no recovery here
    // (a new campaign has none; the next writer's open recovers an old one's).
    store = await openCampaign(abs, existed ? { readOnly: true } : { create: true, recover: false });
  } catch (err) {
    campaignProblem(err);
  }
  try {
    return { campaignDir: store.dir, campaignId: store.campaign.id, name: store.campaign.name, created: !existed };
  } finally {
    store.close();
  }
}

/**
 * Opens the campaign at `dir` read-only for `fn` and closes it after; a missing folder or one that
 * is not a campaign is ApiFailure('not_found') on params.campaignDir.
 */
export async function withReadOnlyCampaign<T>(
  dir: string,
  fn: (s: CampaignStore) => T | Promise<T>,
  /** Said after "is not a campaign (no campaign.sqlite)", e.g. how to make one. */
  notCampaignHint = '',
  /** Open for writing (results stored beside existing ones; no recovery, which is a recorder's job). */
  writable = false,
): Promise<T> {
  const abs = path.resolve(dir);
  if (!fs.existsSync(path.join(abs, 'campaign.sqlite'))) {
    throw new ApiFailure(
      'not_found',
      fs.existsSync(abs)
        ? `${abs} is not a campaign (no campaign.sqlite)${notCampaignHint}`
        : `no campaign at ${abs} (the folder does not exist)`,
      'params.campaignDir',
    );
  }
  let store: CampaignStore;
  try {
    store = await openCampaign(abs, writable ? { recover: false } : { readOnly: true });
  } catch (err) {
    campaignProblem(err);
  }
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}
