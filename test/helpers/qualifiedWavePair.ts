import type { WbcBinding } from '../../src/domain/wbc/wbcBinding';
import { runQualification, type QualificationSummary } from '../../src/services/qualification';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import type { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { openCampaign } from '../../src/services/trace';
import { listAdmittedPairs } from '../../src/services/trial';
import { loadWorkload } from '../../src/services/workload';

// The pair the trial tests run on the emulated robot: core-v1's ub_wave_right (8.5 s, standing)
// under the builtin tracker with 3000 N/m of root assist, which the qualification admits. One
// place for the workload, binding and clip, so that every such test qualifies the same pair.

export const WAVE_CLIP = 'ub_wave_right';
export const WAVE_BINDING_SPEC = 'builtin:assist=3000';

export interface QualifiedWavePair {
  summary: QualificationSummary;
  binding: WbcBinding;
  /** The campaign's admitted pair of the clip. */
  pairId: string;
}

/**
 * Qualifies the wave pair into `campaignDir` (created), on `simulator` when one is given (left
 * open), else on a simulator of its own with `workers` workers; the campaign is closed on return.
 */
export async function qualifyWavePair(
  campaignDir: string,
  on: { simulator: EmbeddedSimulator } | { workers: number },
): Promise<QualifiedWavePair> {
  const binding = await resolveBindingSpec(WAVE_BINDING_SPEC);
  const summary = await runQualification({
    campaignDir,
    workload: loadWorkload('core-v1'),
    bindings: [binding],
    profile: loadRobotProfile(),
    clips: [WAVE_CLIP],
    ...on,
  });
  const store = await openCampaign(campaignDir, { readOnly: true });
  try {
    const pair = listAdmittedPairs(store).find((p) => p.clipName === WAVE_CLIP);
    if (!pair) throw new Error(`the qualification decided no pair of ${WAVE_CLIP}`);
    return { summary, binding, pairId: pair.pairId };
  } finally {
    store.close();
  }
}

/** The same qualification as `motionbench qualify` arguments (one rollout), for tests of the command. */
export function waveQualifyArgs(campaignDir: string, workers: number): string[] {
  return [
    'qualify',
    '--workload',
    'core-v1',
    '--binding',
    WAVE_BINDING_SPEC,
    '--clip',
    WAVE_CLIP,
    '--rollouts',
    '1',
    '--workers',
    String(workers),
    '--campaign',
    campaignDir,
  ];
}
