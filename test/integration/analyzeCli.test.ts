// `motionbench analyze` on a real qualification (qualify in this process: real MuJoCo, SQLite, MCAP):
// three builtin bindings (no assist, 1 kN/m, 3 kN/m) × four core-v1 clips × 2 rollouts. The JSON's
// score matrix is recomputed here from the campaign's episodes; the selection path and the
// Bradley–Terry ranking are checked against what the matrix implies (in a complete round robin
// the BT order is the order of pairwise wins); bad usage is refused naming the option.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCampaign } from '../../src/services/trace';
import { motionbenchInProcess as motionbench } from '../helpers/runCli';
import { qualifyArgs } from '../helpers/qualifyArgs';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-analyze-'));
const campaign = path.join(root, 'campaign');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const CLIPS = ['ub_wave_right', 'ip_torso_twist', 'loco_walk_forward', 'ub_arm_circles'];

beforeAll(async () => {
  const bindings = ['builtin', 'builtin:assist=1000', 'builtin:assist=3000'];
  const r = await motionbench(...qualifyArgs({ bindings, clips: CLIPS, rollouts: 2, campaign, json: true }));
  expect(r.code, r.stderr).toBe(0);
}, 240_000);

describe('motionbench analyze (real qualification)', () => {
  it('--json: the matrix is the per-pair mean of the counted episodes; selection and ranking follow from it', async () => {
    const r = await motionbench('analyze', '--campaign', campaign, '--json', '--replicates', '300');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.format).toBe('motionbench-analysis/1');
    expect(doc.reading).toBe('mpjpe_l_mm');
    expect(doc.better).toBe('lower');

    // The matrix, recomputed from the store.
    const store = await openCampaign(campaign, { readOnly: true });
    const rows = store.episodeResults({ executionDomain: 'simulation' });
    store.close();
    const expected = new Map<string, number[]>();
    for (const e of rows) {
      if (e.status !== 'finished' || !['completed', 'hard_failure'].includes(e.outcome ?? '')) continue;
      const k = `${e.bindingId}@${e.bindingVersion} ${e.clipId}`;
      expected.set(k, [...(expected.get(k) ?? []), e.metrics!.mpjpeLMm!]);
    }
    expect(doc.matrix).toHaveLength(12);
    for (const c of doc.matrix) {
      const v = expected.get(`${c.binding} ${c.clip}`)!;
      expect(c.value).toBeCloseTo(v.reduce((a, b) => a + b, 0) / v.length, 3);
    }
    expect(new Set(doc.matrix.map((c: { clip_name: string }) => c.clip_name))).toEqual(new Set(CLIPS));

    // Selection: every clip on the path, shares rising to 1, the minimal set a prefix reaching 80 %.
    const sel = doc.selection;
    expect(sel.path).toHaveLength(4);
    expect(sel.path.at(-1).cumulative_share).toBeCloseTo(1, 5);
    const k = sel.minimal_set.length;
    expect(sel.path.slice(0, k).map((p: { clip: string }) => p.clip)).toEqual(sel.minimal_set);
    expect(sel.path[k - 1].cumulative_share).toBeGreaterThanOrEqual(0.8 - 1e-9);
    if (k > 1) expect(sel.path[k - 2].cumulative_share).toBeLessThan(0.8);
    expect(sel.robustness).toHaveLength(k);

    // Bradley–Terry: with every binding on every clip, the BT order is the order of pairwise wins.
    const byBinding = new Map<string, Map<string, number>>();
    for (const c of doc.matrix) {
      if (!byBinding.has(c.binding)) byBinding.set(c.binding, new Map());
      byBinding.get(c.binding)!.set(c.clip, c.value);
    }
    const bs = [...byBinding.keys()];
    const wins = (b: string) =>
      bs.reduce((s, o) => {
        if (o === b) return s;
        let w = 0;
        for (const [clip, v] of byBinding.get(b)!) {
          const u = byBinding.get(o)!.get(clip)!;
          w += v < u ? 1 : v === u ? 0.5 : 0;
        }
        return s + w;
      }, 0);
    const bt = doc.bradley_terry.strengths as { binding: string; strength: number; ci: [number, number] }[];
    expect(bt).toHaveLength(3);
    for (let i = 1; i < bt.length; i++) expect(wins(bt[i - 1].binding)).toBeGreaterThanOrEqual(wins(bt[i].binding));
    expect(doc.bradley_terry.moves).toHaveLength(3);

    // Readings' redundancy over the 12 cells; no matched pairs, so no gaps.
    expect(doc.redundancy.readings.variables).toHaveLength(7);
    expect(doc.redundancy.readings.observations).toBe(12);
    expect(doc.gaps).toEqual([]);
  });

  it('rollout_reliability: ICC(A,1) of each binding’s qualification rollouts equals the two-way ANOVA formula on the stored metrics', async () => {
    const doc = JSON.parse(
      (await motionbench('analyze', '--campaign', campaign, '--json', '--replicates', '100')).stdout,
    );
    const store = await openCampaign(campaign, { readOnly: true });
    const rows = store.episodeResults({ executionDomain: 'simulation' });
    store.close();
    // Independent ICC(A,1) (McGraw & Wong 1996, case A,1): n targets × k raters.
    const iccA1 = (t: number[][]) => {
      const n = t.length;
      const k = t[0].length;
      const grand = t.flat().reduce((a, b) => a + b, 0) / (n * k);
      const rowM = t.map((r) => r.reduce((a, b) => a + b, 0) / k);
      const colM = t[0].map((_, j) => t.reduce((a, r) => a + r[j], 0) / n);
      const ssr = k * rowM.reduce((a, m) => a + (m - grand) ** 2, 0);
      const ssc = n * colM.reduce((a, m) => a + (m - grand) ** 2, 0);
      const sst = t.flat().reduce((a, v) => a + (v - grand) ** 2, 0);
      const msr = ssr / (n - 1);
      const msc = ssc / (k - 1);
      const mse = (sst - ssr - ssc) / ((n - 1) * (k - 1));
      return (msr - mse) / (msr + (k - 1) * mse + (k * (msc - mse)) / n);
    };
    expect(doc.rollout_reliability).toHaveLength(3);
    for (const b of doc.rollout_reliability as {
      binding: string;
      pairs: number;
      readings: { reading: string; value: number | null; repeats: number; pairs: number }[];
    }[]) {
      expect(b.pairs).toBe(4);
      const mine = rows.filter((r) => `${r.bindingId}@${r.bindingVersion}` === b.binding && r.rolloutIndex !== null);
      const byPair = new Map<string, typeof mine>();
      for (const r of mine) byPair.set(r.parentTraceId, [...(byPair.get(r.parentTraceId) ?? []), r]);
      const table = [...byPair.values()].map((eps) =>
        [...eps].sort((x, y) => x.rolloutIndex! - y.rolloutIndex!).map((e) => e.metrics!.jointPosRmse!),
      );
      const cell = b.readings.find((r) => r.reading === 'joint_pos_rmse')!;
      expect([cell.pairs, cell.repeats]).toEqual([4, 2]);
      expect(cell.value).toBeCloseTo(iccA1(table), 5);
      // negative control: the same values with each pair's rollouts reversed on alternate rows are
      // a different table (rater means move), and the formula sees it unless the rollouts agree
      const scrambled = table.map((r, i) => (i % 2 ? [...r].reverse() : r));
      if (iccA1(scrambled) !== iccA1(table)) expect(cell.value).not.toBeCloseTo(iccA1(scrambled), 12);
    }
  });

  it('Markdown: the sections, the minimal set named, "lower is better" said', async () => {
    const r = await motionbench('analyze', '--campaign', campaign, '--replicates', '200', '--share', '0.9');
    expect(r.code, r.stderr).toBe(0);
    for (const h of [
      '## Sim-to-real gap with uncertainty (Table 11)',
      '## Redundancy of the readings',
      '## Minimal hardware clip set (MPJPE-l)',
      '## Bradley–Terry ranking (MPJPE-l, clips as judges)',
    ])
      expect(r.stdout).toContain(h);
    expect(r.stdout).toMatch(/\*\*Minimal set \(\d of 4 clips/);
    expect(r.stdout).toMatch(/Lower is better/);
    expect(r.stdout).toContain('No matched pairs in this campaign');
    expect(r.stdout).toContain('## Reliability of repeated simulation rollouts (qualification)');
  });

  it('motionbench trial --list --minimal-set lists exactly the minimal set’s pairs, in path order', async () => {
    const a = JSON.parse(
      (await motionbench('analyze', '--campaign', campaign, '--json', '--replicates', '100', '--share', '0.6')).stdout,
    );
    const r = await motionbench('trial', '--campaign', campaign, '--list', '--minimal-set', '--share', '0.6', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/minimal set: \d of 4 clips/);
    const pairs = JSON.parse(r.stdout).pairs as { clipId: string }[];
    const clips = [...new Set(pairs.map((p) => p.clipId))];
    expect(clips).toEqual(a.selection.minimal_set);
    expect(pairs).toHaveLength(3 * clips.length);
    const bad = await motionbench('trial', '--campaign', campaign, '--share', '0.6');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/go with --list/);
  });

  it('refuses bad usage naming the option, and a missing campaign naming its path', async () => {
    const bad = await motionbench('analyze', '--campaign', campaign, '--reading', 'speed');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--reading must be one of .*mpjpe_l_mm/);
    const share = await motionbench('analyze', '--campaign', campaign, '--share', '0');
    expect(share.code).toBe(2);
    expect(share.stderr).toMatch(/--share must be a number in \(0, 1\]/);
    const missing = await motionbench('analyze', '--campaign', path.join(root, 'nowhere'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(path.join(root, 'nowhere'));
  });
});
