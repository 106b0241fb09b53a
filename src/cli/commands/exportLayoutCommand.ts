import fs from 'node:fs';
import { episodeTracks, foxgloveLayout, type EpisodeTracks } from '../../services/episode/foxgloveLayout';
import { openCampaign } from '../../services/trace';
import { checkOutputFiles, defineCommand } from '../cliOptions';
import { printJson, UsageError } from '../cliSupport';

const usage = `usage: motionbench export-layout --campaign <dir> --out <file.json> [--force] [--json]
  Writes a Foxglove / Lichtblick layout (Layouts → Import from file…) for the campaign's episodes:
  a 3D panel drawing the executed robot and the reference (translucent) from each episode's own
  tracks (/exec/scene, /ref/scene on the /exec/transforms and /ref/transforms trees, fixed frame
  world), a plot of the live readings (/metrics/live: MPJPE-l, joint-position RMSE; lower is
  better) and a plot of three joints, executed against the reference. One layout opens with any
  episode of the campaign (docs/EPISODE_FORMAT.md §4). Reads the campaign without changing it, and says
  how many of its episodes carry the 3D tracks (motionbench-episode/1 files and episodes recorded
  without the robot's model have only the plots).
  --out     the layout file to write (refused if it exists, unless --force)
  --json    one document: the file written and the episodes by format and 3D tracks`;

export const exportLayoutCommand = defineCommand({
  name: 'export-layout',
  summary: "write a Foxglove layout that draws both robots and plots the live readings of a campaign's episodes",
  usage,
  strings: ['campaign', 'out'],
  flags: ['force', 'json'],
  async run(values, io, { required }) {
    const campaign = required('campaign');
    const out = required('out', 'absent');
    checkOutputFiles([{ option: 'out', file: out }], [], values.force === true);
    const store = await openCampaign(campaign, { readOnly: true });
    const tracks: (EpisodeTracks & { runId: string })[] = [];
    const unreadable: { runId: string; reason: string }[] = [];
    try {
      for (const e of store.findEpisodes()) {
        try {
          tracks.push({ runId: e.runId, ...(await episodeTracks(store.resolve(e.mcapPath))) });
        } catch (err) {
          // an interrupted episode has no summary: it opens in Foxglove all the same (recovered copy)
          unreadable.push({ runId: e.runId, reason: (err as Error).message });
        }
      }
    } finally {
      store.close();
    }
    const roots = [...new Set(tracks.map((t) => t.rootBody).filter((r): r is string => r !== null))];
    if (roots.length > 1)
      throw new UsageError(
        `the campaign's episodes have different root bodies (${roots.join(', ')}): one layout cannot follow them all`,
      );
    const rootBody = roots[0] ?? 'pelvis';
    const layout = foxgloveLayout(rootBody);
    fs.writeFileSync(out, `${JSON.stringify(layout, null, 2)}\n`, { flag: values.force ? 'w' : 'wx' });
    const byFormat: Record<string, number> = {};
    for (const t of tracks) byFormat[t.format || 'unknown'] = (byFormat[t.format || 'unknown'] ?? 0) + 1;
    const with3d = tracks.filter((t) => t.has3d).length;
    if (values.json)
      printJson(io, {
        format: 'motionbench-layout-export/1',
        file: out,
        followFrame: `exec/${rootBody}`,
        episodes: { total: tracks.length + unreadable.length, byFormat, with3dTracks: with3d, unreadable },
      });
    else {
      io.stdout(`wrote ${out}: 3D panel following exec/${rootBody}, plots of /metrics/live and three joints\n`);
      io.stdout(
        `episodes: ${tracks.length + unreadable.length} (${Object.entries(byFormat)
          .map(([f, n]) => `${n} ${f}`)
          .join(', ')}); ${with3d} carry the 3D tracks` +
          (unreadable.length ? `; ${unreadable.length} without a summary (interrupted)` : '') +
          '\n',
      );
    }
    return 0;
  },
});
