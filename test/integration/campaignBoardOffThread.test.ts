// The board's campaign reads run in the console's file worker (campaignBoardReads.ts): through the
// console API they answer what the same code answers on this thread, on a real campaign (the Gap
// review's stand-in campaign: SQLite, MCAP episodes, two matched pairs), and their refusals keep
// their codes and fields. Their STOP latency under a tampered campaign: hostStopHostile.test.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiOutcome, GapReportDto, QualificationReportDto } from '../../src/api/contract';
import { createConsoleApi, type ConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { GapReview } from '../../src/services/console/gapReview';
import { buildCampaignReport } from '../../src/services/qualification';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { openCampaign } from '../../src/services/trace';
import { buildStandInGapCampaign } from '../helpers/gapCampaign';

let dir: string;
let api: ConsoleApi;
let parentTraceIds: string[];

beforeAll(async () => {
  dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mb-board-off-thread-')), 'campaign');
  const section = await buildStandInGapCampaign(dir);
  parentTraceIds = section.pairs.map((p) => p.parentTraceId);
  api = createConsoleApi({ transport: 'host' });
}, 180_000);
afterAll(async () => {
  await api?.close();
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});

const resultOf = <T>(o: ApiOutcome): T => {
  if (!o.ok) throw new Error(JSON.stringify(o.error));
  return o.result as T;
};
const here = () => new GapReview({ profile: () => loadRobotProfile() });
const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe('the board reads a campaign in the file worker', () => {
  it('gap.report: the same Table 11 as on this thread', async () => {
    const off = resultOf<GapReportDto>(await api.invoke('gap.report', { campaignDir: dir }));
    const on = await here().report({ campaignDir: dir });
    expect(off.matchedPairs).toBe(2);
    expect({ ...off, generatedAt: '' }).toEqual(json({ ...on, generatedAt: '' }));
  });

  it('gap.replay: the same pair on the contract timeline, with its worst frame', async () => {
    const p = { campaignDir: dir, parentTraceId: parentTraceIds[0]! };
    const off = resultOf(await api.invoke('gap.replay', p));
    expect(off).toEqual(json(await here().replay(p)));
  });

  it('gap.replay of a pair not in the campaign: not_found on params.parentTraceId', async () => {
    const r = await api.invoke('gap.replay', { campaignDir: dir, parentTraceId: 'pt-none' });
    expect(r).toMatchObject({ ok: false, error: { code: 'not_found', field: 'params.parentTraceId' } });
  });

  it('qualification.report: one cell per stored pair, clip rows in snapshot order', async () => {
    const off = resultOf<QualificationReportDto>(await api.invoke('qualification.report', { campaignDir: dir }));
    const store = await openCampaign(dir, { readOnly: true });
    try {
      const r = buildCampaignReport(store);
      expect(off.campaignId).toBe(store.campaign.id);
      expect(off.cells).toHaveLength(r.pairs.length);
      expect(off.bindings.map((b) => b.key)).toEqual(r.bindings.map((b) => b.key));
      const order = new Map<string, number>();
      for (const s of r.snapshots)
        store.getWorkloadSnapshot(s.snapshotHash)?.clips.forEach((c, i) => order.has(c.id) || order.set(c.id, i));
      const positions = off.clips.map((c) => order.get(c.id) ?? 1e9);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    } finally {
      store.close();
    }
  });

  it('qualification.report and qualification.replay of a folder that is not a campaign: not_found on params.campaignDir', async () => {
    const notCampaign = path.dirname(dir);
    for (const [method, params] of [
      ['qualification.report', { campaignDir: notCampaign }],
      ['qualification.replay', { campaignDir: notCampaign, bindingKey: 'builtin@x', clipId: 'c' }],
      ['gap.report', { campaignDir: notCampaign }],
    ] as const) {
      const r = await api.invoke(method, params);
      expect(r, method).toMatchObject({ ok: false, error: { code: 'not_found', field: 'params.campaignDir' } });
    }
  });
});
