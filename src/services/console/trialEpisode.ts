import type { EpisodeOutcome } from '../../domain/backend/backend';
import type { TrialEpisodeDto } from '../../api/contract';
import { readEpisodeFile } from '../episode/episodeReader';
import { openCampaign } from '../trace';
import { ApiFailure } from './apiFailure';

// One recorded episode of a campaign as the console's overlay and replay take it (trial.episode):
// the executed trajectory of its MCAP file. Runs in the file worker (fileWorker.ts, task
// `trial.episode`): parsing a whole episode (tens of thousands of JSON messages) took 50–120 ms of
// the services' event loop, the loop that carries STOP and the safety gate, at the moment the
// console asks for the simulation branch — while the real trial beside it runs.

export async function readTrialEpisode(campaignDir: string, runId: string): Promise<TrialEpisodeDto> {
  const store = await openCampaign(campaignDir, { readOnly: true });
  let file: string;
  let rec: { executionDomain: 'simulation' | 'real_robot'; outcome: EpisodeOutcome | null };
  try {
    const e = store.getEpisode(runId);
    if (!e) throw new ApiFailure('not_found', `no episode ${runId} in this campaign`, 'params.runId');
    rec = { executionDomain: e.executionDomain, outcome: e.outcome };
    file = store.episodeFile(runId);
  } finally {
    store.close();
  }
  const ep = await readEpisodeFile(file);
  const n = ep.executed.length;
  const hasRoot = n > 0 && ep.executed.every((m) => m.rootPosM !== null);
  const hasQuat = n > 0 && ep.executed.every((m) => m.rootQuatWxyz !== null);
  return {
    runId,
    executionDomain: rec.executionDomain,
    outcome: rec.outcome,
    executed: {
      frames: n,
      timeS: ep.executed.map((m) => m.timeS),
      rootPosM: hasRoot ? ep.executed.flatMap((m) => m.rootPosM!) : null,
      rootQuatWxyz: hasQuat ? ep.executed.flatMap((m) => m.rootQuatWxyz!) : null,
      jointPosRad: ep.executed.flatMap((m) => m.jointPosRad),
    },
  };
}
