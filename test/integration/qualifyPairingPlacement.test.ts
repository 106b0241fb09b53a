// `motionbench qualify` (child process: real MuJoCo, SQLite, MCAP, the real released policies in
// ../shared/data) with single-motion policies: BeyondMimic Violin on its own motion is judged
// against its reference as placed for the run (admitted; its episodes name the lift), and a
// unitree_rl_mjlab mimic folder asked onto core-v1 clips is paired with none of them — each
// combination is listed as not paired, with the family's reason, and it runs on its own motion
// instead (same campaign, policies snapshot) — while the builtin tracker beside it takes those
// clips as before (control: pairing is per binding).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openCampaign } from '../../src/services/trace';
import { motionbench } from '../helpers/runCli';
import { sharedData } from '../helpers/sharedData';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-qualify-pairing-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

interface Doc {
  pairs: { binding: string; clip: string; status: string; admitted: boolean | null; reasons: string[] }[];
  not_paired: { binding: string; clip: string; why: string }[];
  episodes_recorded: number;
  own_motions: Doc | null;
}

describe('qualify: single-motion pairing and reference placement', () => {
  it('admits Violin on its own motion, judged against the placed reference; its episode names the lift', async () => {
    const campaign = path.join(root, 'violin');
    const r = await motionbench(
      'qualify',
      '--binding',
      sharedData('policies/beyondmimic/Violin.onnx'),
      '--rollouts',
      '1',
      '--workers',
      '1',
      '--campaign',
      campaign,
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.pairs).toHaveLength(1);
    expect(doc.pairs[0].clip).toBe('Violin');
    expect(doc.pairs[0].reasons).toEqual([]);
    expect(doc.pairs[0].admitted).toBe(true);
    expect(doc.not_paired).toEqual([]);
    expect(doc.own_motions).toBeNull();
    const store = await openCampaign(campaign, { readOnly: true });
    try {
      const [ep] = store.findEpisodes({ executionDomain: 'simulation' });
      const lift = (ep.meta as { reference_lift_m?: number }).reference_lift_m;
      expect(lift).toBeGreaterThan(0.15);
      expect(lift).toBeLessThan(0.16);
    } finally {
      store.close();
    }
  }, 240_000);

  it('pairs a mimic folder with no core-v1 clip, says why and runs it on its own motion; the builtin tracker beside it takes them', async () => {
    const r = await motionbench(
      'qualify',
      '--workload',
      'core-v1',
      '--limit',
      '2',
      '--binding',
      sharedData('policies/unitree_rl_mjlab_mimic_dance1_subject2'),
      '--binding',
      'builtin:assist=3000',
      '--rollouts',
      '1',
      '--workers',
      '1',
      '--campaign',
      path.join(root, 'core'),
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.not_paired).toHaveLength(2);
    for (const n of doc.not_paired) {
      expect(n.binding).toMatch(/^mjlab-deploy\/unitree_rl_mjlab_mimic_dance1_subject2@/);
      expect(n.why).toMatch(
        /single-motion policy: it tracks only the motion file of its deploy folder \(dance1_subject2\)/,
      );
    }
    expect(doc.pairs.every((p) => p.binding.startsWith('builtin@'))).toBe(true);
    expect(doc.pairs).toHaveLength(2);
    expect(doc.pairs.every((p) => p.status === 'decided')).toBe(true);
    expect(doc.episodes_recorded).toBe(2);
    // Its own motion runs too, in the same campaign under the policies snapshot.
    expect(doc.own_motions?.pairs.map((p) => [p.clip, p.status])).toEqual([['dance1_subject2', 'decided']]);
    expect(doc.own_motions?.pairs[0].binding).toBe(doc.not_paired[0].binding);
    const text = await motionbench(
      'qualify',
      '--workload',
      'core-v1',
      '--limit',
      '2',
      '--binding',
      sharedData('policies/beyondmimic/Jump_wose.onnx'),
      '--rollouts',
      '1',
      '--campaign',
      path.join(root, 'core-text'),
    );
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^qualified: 0 pairs — 0 admitted, 0 rejected/);
    expect(text.stdout).toMatch(
      /not paired with 2 clips — a single-motion policy: it tracks only the motion baked into Jump_wose\.onnx/,
    );
    expect(text.stdout).toMatch(
      /own motions of the single-motion policies:\n {2}qualified: 1 pairs — 1 admitted, 0 rejected/,
    );
  }, 240_000);
});
