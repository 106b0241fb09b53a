// `motionbench qualify --workload policies` with the builtin tracker beside a released policy (child
// process: real MuJoCo, SQLite, MCAP, the real wbc-mjlab export from ../shared/data): the policy's
// own clip library is the workload, the builtin binding runs the same clip, and the pair's clip is
// found again from the campaign alone (as `motionbench trial` finds it). Without any released
// policy the workload has no clips, and the command refuses with that reason.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCampaign } from '../../src/services/trace';
import { clipForPairId } from '../../src/services/trial/pairClip';
import { motionbench } from '../helpers/runCli';
import { sharedData } from '../helpers/sharedData';
import { qualifyArgs } from '../helpers/qualifyArgs';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-qualify-policies-'));
const campaign = path.join(root, 'campaign');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const WBC_MJLAB = sharedData('policies/wbc_mjlab');

interface PairDoc {
  binding: string;
  clip: string;
  status: string;
  admitted: boolean | null;
  parent_trace_id: string;
}
let doc: { snapshot: { id: string }; pairs: PairDoc[] };

beforeAll(async () => {
  const bindings = ['builtin:assist=3000', WBC_MJLAB];
  const q = { workload: 'policies', bindings, clips: ['idle_02'], rollouts: 1, campaign, json: true };
  const r = await motionbench(...qualifyArgs(q));
  expect(r.code, r.stderr).toBe(0);
  doc = JSON.parse(r.stdout);
}, 240_000);

describe('qualify --workload policies with a builtin binding beside the policy', () => {
  it("runs the builtin tracker on the policy's own clip, beside the policy", () => {
    expect(doc.snapshot.id).toBe('policies');
    expect(doc.pairs).toHaveLength(2);
    const builtin = doc.pairs.find((p) => p.binding.startsWith('builtin@'));
    const policy = doc.pairs.find((p) => !p.binding.startsWith('builtin@'));
    expect(builtin?.status).toBe('decided');
    expect(policy?.status).toBe('decided');
    expect(builtin!.clip).toBe(policy!.clip);
    // Standing still with 3 kN/m of root assist is admitted: the pair can go on to the robot.
    expect(builtin!.admitted).toBe(true);
  });

  it("finds the builtin pair's clip again from the campaign's policies, by content", async () => {
    const builtin = doc.pairs.find((p) => p.binding.startsWith('builtin@'))!;
    const store = await openCampaign(campaign, { readOnly: true });
    try {
      const { clip, workload } = clipForPairId(store, builtin.parent_trace_id);
      expect(workload.snapshot.id).toBe('policies');
      expect(clip.name).toBe('idle_02');
      expect(clip.name).toBe(builtin.clip);
    } finally {
      store.close();
    }
  });

  it('refuses the policies workload without a released policy among the bindings', async () => {
    const r = await motionbench(
      'qualify',
      '--workload',
      'policies',
      '--binding',
      'builtin',
      '--campaign',
      path.join(root, 'none'),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--workload policies .*give at least one released policy/);
    expect(fs.existsSync(path.join(root, 'none'))).toBe(false);
  });
});
