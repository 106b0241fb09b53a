import fs from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { buildGapSection, type GapSection } from '../../src/services/report/gapSection';
import { runQualification } from '../../src/services/qualification';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import { openCampaign } from '../../src/services/trace';
import { loadWorkload } from '../../src/services/workload';
import { buildStandInGapCampaign } from '../helpers/gapCampaign';

// Campaigns several e2e files start from, built once per project run and copied into each file's
// own folder (a campaign names its files relative to its folder, so a copy is the same campaign):
// each file still writes only to its copy. Files run one after the other (fileParallelism: false),
// so the first file that needs a fixture builds it and the later ones copy it.

/**
 * Copies fixture `name` into `dir` (which must not exist yet), building it first when this project
 * run has not; resolves with what the build returned (kept beside the fixture as JSON). Without the
 * project's setup, builds into `dir` directly.
 */
async function copyOfFixture<T>(name: string, dir: string, build: (dir: string) => Promise<T>): Promise<T> {
  const root = inject('e2eFixtureDir');
  if (!root) return build(dir);
  const built = path.join(root, name);
  const result = `${built}.result.json`;
  if (!fs.existsSync(result)) {
    fs.rmSync(built, { recursive: true, force: true });
    const value = await build(built);
    fs.writeFileSync(result, JSON.stringify(value ?? null));
  }
  fs.cpSync(built, dir, { recursive: true });
  return JSON.parse(fs.readFileSync(result, 'utf8')) as T;
}

/** The stand-in campaign of Gap review (test/helpers/gapCampaign.ts) in `dir`, and its gap section read from there. */
export async function standInGapCampaign(dir: string): Promise<GapSection> {
  await copyOfFixture('stand-in-gap', dir, async (d) => void (await buildStandInGapCampaign(d)));
  const store = await openCampaign(dir);
  try {
    return buildGapSection(store);
  } finally {
    store.close();
  }
}

/** A campaign in `dir` with core-v1's `clip` qualified against builtin:assist=3000 (runQualification, 2 workers); resolves with the pairs admitted. */
export async function assistQualifiedCampaign(dir: string, clip: string): Promise<{ admitted: number }> {
  return copyOfFixture(`assist-3000-${clip}`, dir, async (d) => {
    const q = await runQualification({
      campaignDir: d,
      workload: loadWorkload('core-v1'),
      bindings: [await resolveBindingSpec('builtin:assist=3000')],
      profile: loadRobotProfile(),
      clips: [clip],
      workers: 2,
    });
    return { admitted: q.admitted };
  });
}
