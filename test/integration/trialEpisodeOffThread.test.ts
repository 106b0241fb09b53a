import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiFailure } from '../../src/services/console/apiFailure';
import { readTrialEpisode } from '../../src/services/console/trialEpisode';
import { OffThreadFiles } from '../../src/services/console/offThread';
import { openCampaign } from '../../src/services/trace';
import { fixtureEnd, fixtureInputs, fixtureMetrics, syntheticFrames } from '../helpers/traceFixtures';

// trial.episode is parsed in the console's file worker (on the services' event loop a whole
// episode takes up to 120 ms): the real worker on a real campaign (SQLite + MCAP) answers the
// same DTO, as JSON, that the same code makes on this thread, and a missing run is the same typed error.

let tmp: string;
let files: OffThreadFiles;
let runId: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-trial-episode-'));
  const store = await openCampaign(tmp, { create: true, name: 'episode off thread' });
  const parent = store.ensureParentTrace(fixtureInputs());
  const rec = await store.beginEpisode({
    parentTraceId: parent.id,
    executionDomain: 'real_robot',
    backendId: 'g1-link',
    robotUnit: 'g1-unit-7',
    seed: 1,
    rolloutIndex: 0,
  });
  await rec.frames(syntheticFrames(0, 600));
  runId = rec.runId;
  await rec.finish(fixtureEnd(rec.runId, 600), fixtureMetrics());
  store.close();
  files = new OffThreadFiles();
});
afterAll(async () => {
  await files?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('trial.episode in the file worker', () => {
  it('answers the DTO this thread makes, as JSON, with every executed frame', async () => {
    const r = await files.trialEpisode(tmp, runId);
    const here = await readTrialEpisode(tmp, runId);
    expect(JSON.parse(new TextDecoder().decode(r.json))).toEqual(JSON.parse(JSON.stringify(here)));
    expect(r.value()).toEqual(JSON.parse(JSON.stringify(here)));
    expect(here.executed.frames).toBeGreaterThan(0);
    expect(here.executed.jointPosRad).toHaveLength(29 * here.executed.frames);
    expect(here.executionDomain).toBe('real_robot');
  });

  it('a run that is not in the campaign is not_found, the same type as on this thread', async () => {
    const err = await files.trialEpisode(tmp, 'run-does-not-exist').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiFailure);
    expect(err).toMatchObject({ code: 'not_found', field: 'params.runId' });
  });
});
