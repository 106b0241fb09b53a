import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchForwardKinematics } from './fkBench';
import { benchMetrics } from './metricsBench';
import { benchPolicies } from './policyBench';
import { benchQualification } from './qualificationBench';
import { benchSimulator } from './simBench';
import { benchEpisodeFormat } from './episodeFormatBench';
import { benchTraceWrite } from './traceBench';

// `npm run bench`: prints each figure beside a baseline measured in the same run, and the ratio.
// Exits non-zero when a target is missed, so a regression is visible.
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const menagerie = path.resolve(repo, '../shared/data/models/unitree_g1_mjcf/g1.xml');

let failed = false;
console.log(`MotionBench benchmarks — node ${process.version}, ${new Date().toISOString()}`);
for (const [file, label] of [
  [path.join(repo, 'assets/g1/g1.xml'), 'our G1 (assets/g1)'],
  [menagerie, 'Menagerie g1.xml'],
] as const) {
  const r = await benchForwardKinematics(file, label);
  r.lines.forEach((l) => console.log(l));
  if (r.ratio < 2) failed = true;
}
{
  const r = benchMetrics(path.join(repo, 'assets/g1/g1.xml'), 'batch, our G1 (assets/g1)');
  r.lines.forEach((l) => console.log(l));
  if (!r.pass) failed = true;
}
{
  const r = await benchSimulator(repo, path.join(repo, 'assets/g1/g1.xml'), 'our G1 (assets/g1)');
  r.lines.forEach((l) => console.log(l));
  if (!r.pass) failed = true;
  // Menagerie's G1 (meshes, scene.xml for the floor): for information, no target.
  const m = await benchSimulator(
    repo,
    path.resolve(repo, '../shared/data/models/unitree_g1_mjcf/scene.xml'),
    'Menagerie scene.xml',
    { scaling: false, enforce: false },
  );
  m.lines.forEach((l) => console.log(l));
}
{
  const r = await benchPolicies(repo);
  r.lines.forEach((l) => console.log(l));
  if (!r.pass) failed = true;
}
{
  const r = await benchTraceWrite();
  r.lines.forEach((l) => console.log(l));
  if (!r.pass) failed = true;
}
{
  const r = await benchEpisodeFormat();
  r.lines.forEach((l) => console.log(l));
  if (!r.pass) failed = true;
}
{
  const r = await benchQualification();
  r.lines.forEach((l) => console.log(l));
  if (!r.pass) failed = true;
}
if (
  !(await import('./robotLinkLatency')
    .then((m) => m.benchRobotLinkLatency())
    .then((r) => (r.lines.forEach((l) => console.log(l)), r.pass)))
)
  failed = true;
process.exitCode = failed ? 1 : 0;
