import { buildGapSection, type GapSection } from '../../src/services/report/gapSection';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { openCampaign } from '../../src/services/trace';
import { loadWorkload } from '../../src/services/workload';
import { buildStandInCampaign } from './standInCampaign';

// The stand-in campaign of the console's Gap review (test/e2e/gapReview.test.ts checks its numbers;
// test/e2e/layout.test.ts lays it out): two clips (2.5 s excerpts of core-v1's ub_wave_right and
// dyn_jump_forward), each with a simulation branch of builtin:assist=3000 and three "real_robot"
// trials that are SYNTHETIC STAND-INS FOR HARDWARE TRIALS (the same clip in the same simulator with
// builtin:assist=1000, builtin:assist=300 and plain builtin; see standInCampaign.ts).

/** Creates the campaign in `dir` (which must not exist yet) and returns its gap section. */
export async function buildStandInGapCampaign(dir: string): Promise<GapSection> {
  const profile = loadRobotProfile();
  const wl = loadWorkload('core-v1', { profile });
  const names = ['ub_wave_right', 'dyn_jump_forward'];
  await buildStandInCampaign({
    dir,
    profile,
    clips: names.map((name) => wl.clips[wl.snapshot.clips.findIndex((c) => c.name === name)]),
    groups: ['upper_body', 'dynamic'],
    excerptS: 2.5,
    simSpec: 'builtin:assist=3000',
    standInSpecs: ['builtin:assist=1000', 'builtin:assist=300', 'builtin'],
  });
  const store = await openCampaign(dir);
  try {
    return buildGapSection(store);
  } finally {
    store.close();
  }
}
